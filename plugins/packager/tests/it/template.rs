//! `plugins/template/README.md` step 1, run as written: on a copy of the
//! workspace (the root manifest and lock file, `plugin-api/`, no template),
//! `relay-plugins new` leaves crates that compile without a warning and are
//! formatted, with no name of the template left in them; a name that is
//! not a rail id, or a directory that exists, is refused with nothing
//! written.

use std::{fs, path::Path, process::Command};

use super::repo::{self, run};
use super::workspace::{self, check_formatted_and_lint_free};

/// The heading of the step under test.
const STEP: &str = "## 1. Start a rail";

/// The `relay-plugins` binary under test.
fn relay_plugins() -> Command {
    Command::new(env!("CARGO_BIN_EXE_relay-plugins"))
}

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

/// Files under `dir` whose text still names the template (the README,
/// which points at the template's guide, aside).
fn naming_the_template(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            found.extend(naming_the_template(&path));
        } else if path.file_name() != Some("README.md".as_ref())
            && fs::read_to_string(&path).is_ok_and(|text| text.to_lowercase().contains("template"))
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn relay_plugins_new_from_the_readme_writes_a_rail_that_compiles_and_is_formatted() {
    let readme = fs::read_to_string(repo::root().join("plugins/template/README.md"))
        .expect("template README");
    let script = shell_block(&readme, STEP);
    let name = name_set_by(&script);
    let ws = workspace::fresh("relay-template-new");
    workspace::copy(&ws, &[]);

    let bin_dir = Path::new(env!("CARGO_BIN_EXE_relay-plugins"))
        .parent()
        .expect("the binary's directory");
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    run(Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(&ws)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", workspace::target(&ws)));

    let rail = ws.join("plugins").join(&name);
    let left = naming_the_template(&rail);
    assert!(left.is_empty(), "still naming the template: {left:?}");
    let guide = fs::read_to_string(rail.join("README.md")).expect("the rail's README");
    assert!(
        guide.contains(&format!("cargo build -p relay-rail-{name}-native")),
        "{guide}"
    );
    check_formatted_and_lint_free(&ws, &name);
}

#[test]
fn relay_plugins_new_refuses_a_bad_name_or_an_existing_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for bad in ["Acme", "1acme", "acme_bridge", "acme-", "../acme"] {
        let out = tmp.path().join("rail");
        let res = relay_plugins()
            .args(["new", bad, "--out"])
            .arg(&out)
            .output()
            .expect("relay-plugins runs");
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(!res.status.success(), "{bad} accepted: {stderr}");
        assert!(
            stderr.contains(&format!("invalid rail name {bad:?}"))
                && stderr.contains("lower-case letters, digits and '-'"),
            "{bad}: {stderr}"
        );
        assert!(!out.exists(), "{bad}: wrote {}", out.display());
    }
    let taken = tmp.path().join("taken");
    fs::create_dir(&taken).expect("mkdir");
    let res = relay_plugins()
        .args(["new", "acme", "--out"])
        .arg(&taken)
        .output()
        .expect("relay-plugins runs");
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(
        !res.status.success() && stderr.contains("already exists"),
        "{stderr}"
    );
    assert_eq!(
        fs::read_dir(&taken).expect("read dir").count(),
        0,
        "wrote into it"
    );
}
