//! Schemathesis (from PyPI, installed by `conformance/test.sh` into
//! `.tools/venv`) against the generated `/api/openapi.json` of a real host
//! on the devnet, in two runs. Rate limits are off for these hosts so the
//! fuzzer reaches the handlers, not the limiter.
//!
//! The stateless run: every operation, its documented examples, the
//! coverage phase's boundary cases and 50 generated inputs each. It fails
//! on any 5xx and on any response that breaks its documented schema.
//!
//! The stateful run: scenarios that follow the document's links
//! (`host/api/src/openapi/links.rs`) with the ids the host answered —
//! quote → intent → execute → status, a key created → read → revoked, a
//! session issued → executed → revoked → read, a schedule created →
//! cancelled → read, netting terms → enrol → deposit → withdraw, … —
//! with the checks above, `ensure_resource_availability` (a record just
//! created reads back) and `ended_stays_ended`
//! (`conformance/tools/schemathesis_hooks.py`: what a revoke or a cancel
//! ended reads back ended). It asserts how many links it followed, so it
//! cannot pass by following none.
//!
//! Both runs are bounded by examples, not by time: under `--max-time`,
//! schemathesis 4 keeps fuzzing until the time is spent (it took 240 s of a
//! core; the bounded stateless run takes about 55 s, the stateful one about
//! 30 s). The module's name sorts it among the first tests the harness
//! starts, so it overlaps the others rather than running alone at the end.

use std::{path::PathBuf, process::Stdio, time::Duration};

use crate::{common, netting};
use alloy::signers::SignerSync;
use relay_api::openapi::links;
use relay_devnet::keys;
use relay_host::devnet::DEVNET_OWNER_TOKEN;
use serde_json::{json, Value};

/// This checkout's root (the tests' own: a dependency built by another
/// checkout sharing the target directory would name that one).
fn repo() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("workspace root")
}

/// Where the schemathesis hooks are (`PYTHONPATH` of a run).
fn hooks_dir() -> PathBuf {
    repo().join("conformance/tools")
}

/// `$RELAY_SCHEMATHESIS`, else `<repo>/.tools/venv/bin/st`.
fn schemathesis() -> PathBuf {
    if let Some(p) = std::env::var_os("RELAY_SCHEMATHESIS").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let repo = repo();
    let st = repo.join(".tools/venv/bin/st");
    assert!(
        st.is_file(),
        "schemathesis not found at {} (run conformance/test.sh, which installs it, or set RELAY_SCHEMATHESIS)",
        st.display()
    );
    st
}

/// How both runs start: `st run` with two workers, a 20 s request
/// timeout, seed 1, no colour.
const EVERY_RUN: [&str; 8] = [
    "run",
    "--workers",
    "2",
    "--request-timeout",
    "20",
    "--seed",
    "1",
    "--no-color",
];

#[tokio::test(flavor = "multi_thread")]
async fn schemathesis_finds_no_server_error_and_no_schema_violation() {
    let st = schemathesis();
    let (devnet, dir, h) = common::devnet_host([8453, 42161]).await;
    let report = dir.path().join("junit.xml");
    let mut run = tokio::process::Command::new(&st);
    run.args(EVERY_RUN);
    run.args([
        &format!("{}/api/openapi.json", h.base),
        "--url",
        &h.base,
        "--checks",
        "not_a_server_error,response_schema_conformance,content_type_conformance",
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        "50",
        "--report",
        "junit",
        "--report-junit-path",
    ])
    .arg(&report)
    // the binary media types the API reads (conformance/tools/schemathesis_hooks.py)
    .env("SCHEMATHESIS_HOOKS", "schemathesis_hooks")
    .env("PYTHONPATH", hooks_dir());
    let text = passed(run, Duration::from_secs(900)).await;
    let junit = std::fs::read_to_string(&report).expect("a junit report");
    let cases = junit.matches("<testcase").count();
    assert!(
        cases >= 20,
        "schemathesis exercised {cases} operations:\n{text}"
    );
    devnet.stop();
}

/// The operations only the owner may call: the stateful run sends them the
/// devnet's owner token (the bearer-authenticated ones get a session's
/// bearer from the links).
const OWNER_ONLY: &[&str] = &[
    "POST /api/session/issue",
    "GET /api/session/list",
    "POST /api/session/revoke",
    "GET /api/session/{id}",
    "POST /api/hooks",
    "POST /api/route/batch/{id}/run",
];

/// The fewest distinct links a stateful run must follow (of the
/// document's [`links::LINKS`]; a run of this size follows 26–36 of them).
const LINKS_FOLLOWED: usize = 20;

/// What a stateful run's NDJSON report says about links.
#[derive(Debug, Default)]
struct Followed {
    /// The links schemathesis loaded (`selected`, `total`): an invalid one
    /// fails the run instead.
    loaded: (u64, u64),
    /// Every link a step was built from (`source -> [200] name -> target`),
    /// and how many steps.
    links: std::collections::BTreeMap<String, usize>,
}

/// Reads [`Followed`] from the events of `ndjson`.
fn followed(ndjson: &str) -> Followed {
    let mut f = Followed::default();
    for e in ndjson
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        if let Some(t) = e.pointer("/LoadingFinished/statistic/transitions") {
            f.loaded = (
                t["selected"].as_u64().unwrap_or_default(),
                t["total"].as_u64().unwrap_or_default(),
            );
        }
        let cases = e.pointer("/ScenarioFinished/recorder/cases");
        for case in cases
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|c| c.values())
        {
            if case["is_transition_applied"] == true {
                if let Some(id) = case.pointer("/transition/id").and_then(Value::as_str) {
                    *f.links.entry(id.to_string()).or_default() += 1;
                }
            }
        }
    }
    f
}

#[tokio::test(flavor = "multi_thread")]
async fn schemathesis_follows_the_links_between_operations() {
    let st = schemathesis();
    let (devnet, dir, h) = common::devnet_host([8453, 42161]).await;
    // What no generator can make: anvil account 2's signature of the
    // netting terms, a USDC transfer of it to the relayer, and a signed
    // withdrawal (hooks: RELAY_STATEFUL_SEEDS).
    let who = keys::anvil_signer(2);
    let (_, terms) = common::get(&format!(
        "{}/api/netting/terms?address={}",
        h.base,
        who.address()
    ))
    .await;
    let text = terms["text"].as_str().expect("the terms text");
    let signature = who.sign_message_sync(text.as_bytes()).unwrap().to_string();
    let tx = netting::send_to_relayer(&devnet, 8453, 2, 5_000_000).await;
    let seeds = json!({
        "POST /api/netting/enroll": [{"address": who.address(), "signature": signature}],
        "POST /api/netting/deposit": [netting::deposit_body(who.address(), 8453, &tx)],
        "POST /api/netting/withdraw": [
            netting::withdraw_body(&who, 1_000_000, (42161, who.address()), 1)
        ],
    });
    let owner: Vec<String> = OWNER_ONLY.iter().map(|o| format!("{o:?}")).collect();
    let config = format!(
        "[phases.stateful]\nmax-steps = 20\n\n\
         # only the document's links, none inferred\n\
         [phases.stateful.inference]\nalgorithms = []\n\n\
         [[operations]]\ninclude-name = [{}]\nheaders = {{ Authorization = \"Bearer {DEVNET_OWNER_TOKEN}\" }}\n",
        owner.join(", ")
    );
    std::fs::write(dir.path().join("schemathesis.toml"), config).unwrap();
    let report = dir.path().join("stateful.ndjson");
    let mut run = tokio::process::Command::new(&st);
    run.arg("--config-file")
        .arg(dir.path().join("schemathesis.toml"))
        .args(EVERY_RUN)
        .args([
            &format!("{}/api/openapi.json", h.base),
            "--url",
            &h.base,
            "--checks",
            "not_a_server_error,response_schema_conformance,content_type_conformance,ensure_resource_availability,ended_stays_ended",
            "--phases",
            "stateful",
            "--max-examples",
            "150",
            "--generation-database",
            "none",
            "--report",
            "ndjson",
            "--report-ndjson-path",
        ])
        .arg(&report)
        // the links' starting points and seeds, the contract hooks
        // (conformance/tools/schemathesis_stateful.py)
        .env("SCHEMATHESIS_HOOKS", "schemathesis_stateful")
        .env("PYTHONPATH", hooks_dir())
        .env("RELAY_STATEFUL_SEEDS", seeds.to_string())
        // its caches (.schemathesis, .hypothesis) stay in the temporary directory
        .current_dir(dir.path())
        ;
    let text = passed(run, Duration::from_secs(600)).await;
    let report = std::fs::read_to_string(&report).expect("an NDJSON report");
    let f = followed(&report);
    let n = links::LINKS.len() as u64;
    assert_eq!(
        f.loaded,
        (n, n),
        "every link of the document is loaded:\n{text}"
    );
    println!("stateful: {} links followed: {:#?}", f.links.len(), f.links);
    let into_execute = f
        .links
        .keys()
        .any(|l| l.ends_with("-> POST /api/route/execute"));
    let out_of_execute = f
        .links
        .keys()
        .any(|l| l.starts_with("POST /api/route/execute ->"));
    assert!(
        f.links.len() >= LINKS_FOLLOWED && into_execute && out_of_execute,
        "the stateful run followed {} links ({LINKS_FOLLOWED} at least, into and out of an execute expected): {:#?}\n{text}",
        f.links.len(),
        f.links
    );
    devnet.stop();
}

#[test]
fn the_links_followed_are_read_from_the_report() {
    let ndjson = [
        r#"{"LoadingFinished":{"statistic":{"transitions":{"total":2,"selected":2}}}}"#,
        r#"{"ScenarioFinished":{"recorder":{"cases":{"a":{"transition":null},"#,
        r#"{"ScenarioFinished":{"recorder":{"cases":{"a":{"transition":null},"b":{"transition":{"id":"POST /x -> [200] y -> GET /y"},"is_transition_applied":true},"c":{"transition":{"id":"POST /x -> [200] z -> GET /z"},"is_transition_applied":false}}}}}"#,
        r#"{"ScenarioFinished":{"recorder":{}}}"#,
    ]
    .join("\n");
    let f = followed(&ndjson);
    assert_eq!(f.loaded, (2, 2));
    assert_eq!(
        f.links.into_iter().collect::<Vec<_>>(),
        vec![("POST /x -> [200] y -> GET /y".to_string(), 1)]
    );
}

/// Runs schemathesis as `run` is set up, for at most `within`: its output
/// (stdout, then stderr), once it passed.
async fn passed(mut run: tokio::process::Command, within: Duration) -> String {
    let out = run.stdin(Stdio::null()).kill_on_drop(true).output();
    let out = tokio::time::timeout(within, out)
        .await
        .unwrap_or_else(|_| panic!("schemathesis finished within {within:?}"))
        .expect("schemathesis runs");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "schemathesis failed:\n{text}");
    text
}
