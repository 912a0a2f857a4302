//! The componentizer as `plugins/build-wasm.sh` runs it: a module that is
//! not a rail's (no relay:rail world), a missing input or a wrong call is
//! refused with a message saying which, and nothing is written.

use std::process::{Command, Output};

fn componentize(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_relay-componentize"))
        .args(args)
        .output()
        .expect("relay-componentize runs")
}

fn refused_with(out: &Output, message: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "accepted: {stderr}");
    assert!(stderr.contains(message), "{stderr}");
}

#[test]
fn a_module_without_the_rail_world_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let core = dir.path().join("core.wasm");
    // the smallest valid core module: magic and version, no sections
    std::fs::write(&core, b"\0asm\x01\0\0\0").expect("write");
    let out_path = dir.path().join("out.wasm");
    let out = componentize(&[core.as_os_str(), out_path.as_os_str()]);
    refused_with(&out, "the module has no relay:rail world");
    assert!(!out_path.exists());
    let leftovers = std::fs::read_dir(dir.path()).expect("dir").count();
    assert_eq!(leftovers, 1, "only the input is there");
}

#[test]
fn a_missing_input_or_a_wrong_call_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.wasm");
    let out = dir.path().join("out.wasm");
    refused_with(
        &componentize(&[missing.as_os_str(), out.as_os_str()]),
        "reading",
    );
    refused_with(
        &componentize(&[missing.as_os_str()]),
        "usage: relay-componentize <core.wasm> <out.wasm>",
    );
}
