//! The repository as a clone has it: its root, its files, and the tools the
//! tests run in it.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::Command,
};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Every file a clone has, relative to the root with `/` separators: the
/// tracked files and the new ones not ignored (`git ls-files`), that exist.
pub fn files() -> BTreeSet<String> {
    let root = root();
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(&root)
        .output()
        .expect("git runs (these tests read the repository through git)");
    assert!(out.status.success(), "git ls-files: {out:?}");
    String::from_utf8(out.stdout)
        .expect("utf-8 paths")
        .split('\0')
        .filter(|p| !p.is_empty() && root.join(p).is_file())
        .map(str::to_string)
        .collect()
}

/// Whether git ignores `path` (a generated location such as `plugins/dist`).
pub fn ignored(path: &str) -> bool {
    Command::new("git")
        .args(["check-ignore", "-q", "--no-index", path])
        .current_dir(root())
        .status()
        .is_ok_and(|s| s.success())
}

/// The cargo running these tests.
pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// The target directory the tests were built in: `CARGO_TARGET_DIR` (a
/// relative one taken from the root), else the workspace's `target/`.
pub fn target_dir() -> PathBuf {
    let dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| "target".into(), PathBuf::from);
    root().join(dir)
}

/// Runs `cmd`, failing the test with its output when it fails.
pub fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
