//! The soak's command line, as an operator starting a long run types it.
//! (Having an integration test also makes `cargo test --no-run` build the
//! `relay-soak` binary that `conformance/test.sh` runs.)

use std::process::Command;

fn soak(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_relay-soak"))
        .args(args)
        .output()
        .expect("relay-soak runs")
}

#[test]
fn without_the_relay_and_its_rails_it_says_what_it_needs() {
    let out = soak(&[]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--relay") && err.contains("--plugins"),
        "{err}"
    );
}

#[test]
fn its_help_lists_the_knobs_of_a_long_run() {
    let out = soak(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for knob in [
        "--minutes",
        "--replicas",
        "--pool-keys",
        "--workers",
        "--fault-every",
        "--fault-hold",
        "--report",
        "--seed",
        "--dir",
    ] {
        assert!(help.contains(knob), "{knob} missing: {help}");
    }
}
