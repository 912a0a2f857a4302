//! A trimmed copy of the workspace for building a new rail the way an
//! integrator would: the root manifest and lock file, `plugin-api/`, the
//! rail SDK (`rails/sdk/`), and
//! whatever else a test names; then the new rail's crates checked with
//! clippy (warnings denied) and rustfmt.

use std::{
    fs,
    path::{Path, PathBuf},
};

use super::repo::{self, cargo, run};

/// Copies into `dir` what a rail builds against — the root manifest with
/// its members cut to the copied crates (its `plugins/*/…` globs kept), the
/// lock file, `plugin-api/`, `rails/sdk/` — and the files under each of `extra` (path
/// prefixes such as `plugins/template/`).
pub fn copy(dir: &Path, extra: &[&str]) {
    let root = repo::root();
    let wanted = |p: &str| {
        ["Cargo.toml", "Cargo.lock"].contains(&p)
            || p.starts_with("plugin-api/")
            || p.starts_with("rails/sdk/")
            || extra.iter().any(|e| p.starts_with(e))
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

/// A fresh workspace directory `name` in the target directory, its
/// `target/` kept from the last run so dependencies build once. The copy
/// builds into its own `target/`, not the shared one: cargo keys a path
/// crate's fingerprint by its path inside the workspace and records the
/// sources of a crate living under the target directory relative to it, so
/// two copies sharing a target directory would each see the other's
/// build as fresh and check nothing.
pub fn fresh(name: &str) -> PathBuf {
    let ws = repo::target_dir().join(name);
    if let Ok(entries) = fs::read_dir(&ws) {
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.file_name() == Some("target".as_ref()) {
                continue;
            }
            let cleared = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            cleared.unwrap_or_else(|e| panic!("clearing {}: {e}", path.display()));
        }
    }
    ws
}

/// The target directory of the copy `ws`.
pub fn target(ws: &Path) -> PathBuf {
    ws.join("target")
}

/// `cargo clippy -D warnings` (which checks first) and `cargo fmt --check`
/// on the rail `name`'s three crates in the workspace `ws`.
pub fn check_formatted_and_lint_free(ws: &Path, name: &str) {
    let packages = [
        format!("relay-rail-{name}"),
        format!("relay-rail-{name}-native"),
        format!("relay-rail-{name}-wasm"),
    ];
    let selected: Vec<&str> = packages.iter().flat_map(|p| ["-p", p.as_str()]).collect();
    run(cargo()
        .arg("clippy")
        .args(&selected)
        .args(["--", "-D", "warnings"])
        .current_dir(ws)
        .env("CARGO_TARGET_DIR", target(ws)));
    run(cargo()
        .arg("fmt")
        .args(&selected)
        .args(["--", "--check"])
        .current_dir(ws));
}
