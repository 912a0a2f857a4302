//! `plugins/template/README.md` step 1, run as written: on a copy of the
//! workspace (the root manifest and lock file, `plugin-api/`, the template),
//! the README's copy-and-rename block leaves crates that compile without a
//! warning and are formatted, with no name of the template left in them.

use std::{fs, path::Path};

use super::repo::{self, cargo, run};

/// The heading of the step under test.
const STEP: &str = "## 1. Copy and rename";

/// The first ```sh block after the `heading` line of `markdown`.
fn shell_block(markdown: &str, heading: &str) -> String {
    let mut lines = markdown.lines().skip_while(|l| l.trim() != heading);
    assert!(lines.next().is_some(), "no {heading:?} in the README");
    let mut lines = lines.skip_while(|l| l.trim() != "```sh");
    assert!(lines.next().is_some(), "no ```sh block under {heading:?}");
    let block: Vec<&str> = lines.take_while(|l| l.trim() != "```").collect();
    block.join("\n") + "\n"
}

/// The rail name the block sets (`name=acme …`).
fn name_set_by(script: &str) -> String {
    script
        .lines()
        .find_map(|l| l.trim().strip_prefix("name="))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the block sets name=")
        .to_string()
}

/// A workspace in `dir` holding what the template builds against: the root
/// manifest with its members cut to the copied crates (its globs kept), the
/// lock file, `plugin-api/` and `plugins/template/`.
fn workspace_copy(dir: &Path) {
    let root = repo::root();
    let wanted = |p: &str| {
        ["Cargo.toml", "Cargo.lock"].contains(&p)
            || p.starts_with("plugin-api/")
            || p.starts_with("plugins/template/")
    };
    for file in repo::files().iter().filter(|p| wanted(p)) {
        let to = dir.join(file);
        fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
        fs::copy(root.join(file), &to).unwrap_or_else(|e| panic!("copying {file}: {e}"));
    }
    let manifest = dir.join("Cargo.toml");
    let mut doc: toml::Table = fs::read_to_string(&manifest)
        .expect("root manifest")
        .parse()
        .expect("root manifest is TOML");
    let members = doc["workspace"]["members"]
        .as_array_mut()
        .expect("workspace.members");
    members.retain(|m| {
        let m = m.as_str().expect("a member path");
        m.contains('*') || dir.join(m).join("Cargo.toml").is_file()
    });
    fs::write(&manifest, toml::to_string(&doc).expect("TOML")).expect("write manifest");
}

/// Files under `dir` whose text still names the template.
fn naming_the_template(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            found.extend(naming_the_template(&path));
        } else if fs::read_to_string(&path)
            .is_ok_and(|text| text.to_lowercase().contains("template"))
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn the_readme_rename_leaves_a_rail_that_compiles_and_is_formatted() {
    let readme = fs::read_to_string(repo::root().join("plugins/template/README.md"))
        .expect("template README");
    let script = shell_block(&readme, STEP);
    let name = name_set_by(&script);
    // A fixed place in the target directory, so the copy's crates keep one
    // set of build artifacts from run to run.
    let ws = repo::target_dir().join("relay-template-rename");
    if ws.exists() {
        fs::remove_dir_all(&ws).expect("clear the last copy");
    }
    workspace_copy(&ws);

    run(std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(&ws)
        .env("CARGO_TARGET_DIR", repo::target_dir()));

    let copy = ws.join("plugins").join(&name);
    let left = naming_the_template(&copy);
    assert!(left.is_empty(), "still naming the template: {left:?}");
    let packages = [
        format!("relay-rail-{name}"),
        format!("relay-rail-{name}-native"),
        format!("relay-rail-{name}-wasm"),
    ];
    let selected: Vec<&str> = packages.iter().flat_map(|p| ["-p", p.as_str()]).collect();
    // `cargo check` and every lint, warnings denied (clippy checks first).
    run(cargo()
        .arg("clippy")
        .args(&selected)
        .args(["--", "-D", "warnings"])
        .current_dir(&ws)
        .env("CARGO_TARGET_DIR", repo::target_dir()));
    run(cargo()
        .arg("fmt")
        .args(&selected)
        .args(["--", "--check"])
        .current_dir(&ws));
}
