//! An integrator's first rail, end to end, as the docs say: `relay-plugins
//! new acme` in a clean directory outside the repository (its own
//! workspace, built against this checkout by path), then the generated
//! README's blocks run as written — build both packagings, pass the
//! conformance kit against the generated fixture upstream, package — and
//! `relay rails list` loads both packagings. Nothing generated is edited;
//! the packager and the kit the blocks `cargo run` are the ones the
//! workspace build made ([`cargo_shim`]).

use serde_json::Value;
use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// The ```sh block under the `## {heading}` line of `markdown`.
fn block(markdown: &str, heading: &str) -> String {
    let mut lines = markdown.lines().skip_while(|l| l.trim() != heading);
    assert!(lines.next().is_some(), "no {heading:?} in:\n{markdown}");
    let mut lines = lines.skip_while(|l| l.trim() != "```sh");
    assert!(lines.next().is_some(), "no ```sh block under {heading:?}");
    lines
        .take_while(|l| l.trim() != "```")
        .collect::<Vec<_>>()
        .join("\n")
}

/// The relay binaries the workspace build made (`relay-plugins` and
/// `relay-conformance` have integration tests, so cargo builds them).
fn built(bin: &str) -> PathBuf {
    relay_fixtures::target_dir().join("debug").join(bin)
}

/// A directory holding a `cargo` that runs `cargo run … -p relay-plugins`
/// and `-p relay-conformance` as the binaries the workspace build already
/// made from this checkout, and hands every other command to cargo. Run
/// as written, those two would compile the packager and the kit again
/// (wasmtime and cranelift included) under the feature set cargo resolves
/// for that one package — minutes on a fresh machine, for binaries built
/// from the same sources. Without the built binaries (a lone `cargo test
/// -p relay-host`) the commands go to cargo unchanged.
fn cargo_shim(dir: &Path) -> PathBuf {
    let shim = dir.join("shim");
    std::fs::create_dir_all(&shim).expect("shim dir");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let script = format!(
        r#"#!/usr/bin/env bash
set -euo pipefail
if [[ ${{1:-}} == run ]]; then
  pkg=""; prev=""; i=0
  for arg in "$@"; do
    i=$((i + 1))
    [[ $prev == -p || $prev == --package ]] && pkg=$arg
    if [[ $arg == -- ]]; then
      case $pkg in
        relay-plugins) bin={plugins:?} ;;
        relay-conformance) bin={kit:?} ;;
        *) bin="" ;;
      esac
      [[ -n $bin && -x $bin ]] && exec "$bin" "${{@:$((i + 1))}}"
      break
    fi
    prev=$arg
  done
fi
exec {cargo:?} "$@"
"#,
        plugins = built("relay-plugins").display().to_string(),
        kit = built("relay-conformance").display().to_string(),
    );
    let path = shim.join("cargo");
    std::fs::write(&path, script).expect("write the shim");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    shim
}

/// Runs `script` with bash in `dir` against the shared target directory,
/// `cargo` being [`cargo_shim`]'s; its stdout.
fn sh(dir: &Path, script: &str) -> String {
    let shim = cargo_shim(&relay_fixtures::target_dir().join("relay-rail-scaffold-test"));
    let path = std::env::join_paths(std::iter::once(shim).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", relay_fixtures::target_dir())
        .env("PATH", path)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{script}\nfailed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn rails_list(plugins: &Path, data: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["rails", "list", "--json"])
        .env("RELAY_PLUGINS_DIR", plugins)
        .env("RELAY_DATA_DIR", data)
        .env("RELAY_RUNTIME__RELOAD_INTERVAL_MS", "0")
        .output()
        .expect("relay runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("rails list --json is JSON")
}

/// A clean directory outside the repository at a fixed place under the
/// target directory: cargo names a path dependency's build (the wasm
/// build's `std` too) by its path from the workspace root, so a fixed root
/// lets a second run reuse the first one's builds instead of compiling
/// `std` for wasm again.
fn scaffold_dir() -> PathBuf {
    let dir = relay_fixtures::target_dir().join("relay-rail-scaffold-test");
    for stale in ["acme", "data"] {
        let _ = std::fs::remove_dir_all(dir.join(stale));
    }
    std::fs::create_dir_all(&dir).expect("scaffold dir");
    dir
}

#[test]
fn a_scaffolded_rail_builds_passes_the_kit_and_loads_in_both_packagings() {
    let root = relay_fixtures::workspace_root();
    let tmp = scaffold_dir();
    sh(
        &tmp,
        &format!(
            "cargo run -q --manifest-path {}/Cargo.toml -p relay-plugins -- \
             new acme --lanes base:arbitrum,arbitrum:base",
            root.display()
        ),
    );
    let rail: PathBuf = tmp.join("acme");
    let readme = std::fs::read_to_string(rail.join("README.md")).expect("README");

    sh(&rail, &block(&readme, "## Build both packagings"));
    let kit = sh(&rail, &block(&readme, "## Run the conformance kit"));
    assert!(kit.contains("conformance: PASS"), "{kit}");
    for (packaging, artifact) in [("native", ".so"), ("wasm", "acme.wasm")] {
        let line = kit
            .lines()
            .find(|l| l.contains(artifact) && l.contains(&format!("({packaging}, rail acme)")))
            .unwrap_or_else(|| panic!("no {packaging} report in:\n{kit}"));
        assert!(!line.contains("FAIL"), "{kit}");
    }
    // Both directions of the two-way lane were quoted, in each packaging.
    assert_eq!(
        kit.matches("2 directions of 2 lanes quoted").count(),
        2,
        "{kit}"
    );
    sh(&rail, &block(&readme, "## Hand it to an operator"));

    let v = rails_list(&rail.join("dist"), &tmp.join("data"));
    let mut packagings: Vec<&str> = v["rails"]
        .as_array()
        .expect("rails")
        .iter()
        .filter(|r| r["id"] == "acme")
        .filter_map(|r| r["packaging"].as_str())
        .collect();
    packagings.sort_unstable();
    assert_eq!(packagings, ["native", "wasm"], "{v:#}");
    assert_eq!(v["rejected"].as_array().map(Vec::len), Some(0), "{v:#}");
}
