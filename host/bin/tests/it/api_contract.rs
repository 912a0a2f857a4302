//! Schemathesis (from PyPI, installed by `conformance/test.sh` into
//! `.tools/venv`) against the generated `/api/openapi.json` of a real host
//! on the devnet: every operation, its documented examples, the coverage
//! phase's boundary cases and 50 generated inputs each. It fails on any
//! 5xx and on any response that breaks its documented schema. Rate limits
//! are off for this host so the fuzzer reaches the handlers, not the
//! limiter.
//!
//! The run is bounded by examples per operation, not by time: under
//! `--max-time`, schemathesis 4 keeps fuzzing until the time is spent (it
//! took 240 s of a core; the bounded run takes about 55 s). The module's
//! name sorts it among the first tests the harness starts, so it overlaps
//! the others rather than running alone at the end.

use std::{path::PathBuf, process::Stdio, time::Duration};

use crate::common;
use common::serve;
use relay_devnet::{Devnet, DevnetConfig};

/// `$RELAY_SCHEMATHESIS`, else `<repo>/.tools/venv/bin/st`.
fn schemathesis() -> PathBuf {
    if let Some(p) = std::env::var_os("RELAY_SCHEMATHESIS").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("workspace root");
    let st = repo.join(".tools/venv/bin/st");
    assert!(
        st.is_file(),
        "schemathesis not found at {} (run conformance/test.sh, which installs it, or set RELAY_SCHEMATHESIS)",
        st.display()
    );
    st
}

#[tokio::test(flavor = "multi_thread")]
async fn schemathesis_finds_no_server_error_and_no_schema_violation() {
    let st = schemathesis();
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| c.limits.enabled = false).await;
    let report = dir.path().join("junit.xml");
    let run = tokio::process::Command::new(&st)
        .args([
            "run",
            &format!("{}/api/openapi.json", h.base),
            "--url",
            &h.base,
            "--checks",
            "not_a_server_error,response_schema_conformance,content_type_conformance",
            "--phases",
            "examples,coverage,fuzzing",
            "--max-examples",
            "50",
            "--workers",
            "2",
            "--request-timeout",
            "20",
            "--seed",
            "1",
            "--no-color",
            "--report",
            "junit",
            "--report-junit-path",
        ])
        .arg(&report)
        // the binary media types the API reads (conformance/tools/schemathesis_hooks.py)
        .env("SCHEMATHESIS_HOOKS", "schemathesis_hooks")
        .env(
            "PYTHONPATH",
            relay_fixtures::workspace_root().join("conformance/tools"),
        )
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(900), run)
        .await
        .expect("schemathesis finished within 15 minutes")
        .expect("schemathesis runs");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "schemathesis failed:\n{text}");
    let junit = std::fs::read_to_string(&report).expect("a junit report");
    let cases = junit.matches("<testcase").count();
    assert!(
        cases >= 20,
        "schemathesis exercised {cases} operations:\n{text}"
    );
    devnet.stop();
}
