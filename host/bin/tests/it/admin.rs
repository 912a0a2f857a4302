//! The operator's dashboard (`/admin`) on the devnet mesh: a real browser
//! (Debian's headless Chromium driven by Playwright for Python,
//! `conformance/tools/admin_dashboard.py`) signs in with the owner token,
//! sees every rail, switches a lane's executeReady off — a quote on that
//! lane then skips the rail — and back on with the keyboard; both changes
//! are in the audit log as `owner-token`, a CLI change as `cli:<user>`.
//! Without the credential the page and its API answer 401; a change made
//! with the login cookie needs its CSRF token.

use crate::common;
use common::{post, relay_cli, send, serve, Running};
use relay_devnet::{Devnet, DevnetConfig};
use relay_host::devnet::DEVNET_OWNER_TOKEN;
use serde_json::{json, Value};
use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const BASE: u64 = 8453;
const ARB: u64 = 42161;
const RAIL: &str = "lifi";
const LANE: &str = "evm->evm";
const CHROMIUM: &str = "/usr/bin/chromium";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("workspace root")
}

/// `$RELAY_PLAYWRIGHT_PY`, else `<repo>/.tools/venv/bin/python`.
fn playwright_python() -> PathBuf {
    let py = std::env::var_os("RELAY_PLAYWRIGHT_PY")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".tools/venv/bin/python"));
    assert!(
        py.is_file() && Path::new(CHROMIUM).is_file(),
        "Playwright's python ({}) or {CHROMIUM} is missing: run conformance/tools/playwright.sh (conformance/test.sh does)",
        py.display()
    );
    py
}

async fn mesh() -> (Devnet, tempfile::TempDir, Running) {
    mesh_with(|_| {}).await
}

async fn mesh_with(
    tweak: impl FnOnce(&mut relay_config::HostConfig),
) -> (Devnet, tempfile::TempDir, Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), tweak).await;
    (devnet, dir, h)
}

/// The rails that priced a quote on the lane.
async fn rails_quoted(h: &Running) -> Vec<String> {
    let quote =
        json!({"fromChain": BASE, "toChain": ARB, "fromToken": "USDC", "amount": "6000000"});
    let (code, text) = post(&h.base, "/api/route/quote", &quote, &[]).await;
    assert_eq!(code, 200, "{text}");
    let q: Value = serde_json::from_str(&text).unwrap();
    q["compared"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == true)
        .map(|c| c["rail"].as_str().unwrap().to_string())
        .collect()
}

fn installed_rails(h: &Running) -> BTreeSet<String> {
    relay_runtime::rails::listing(&h.host_state.rails.snapshot())
        .into_iter()
        .map(|r| r.id)
        .collect()
}

async fn with_owner(req: reqwest::RequestBuilder) -> common::Answer {
    send(req.bearer_auth(DEVNET_OWNER_TOKEN)).await
}

async fn audit(h: &Running) -> Vec<Value> {
    let a = with_owner(crate::common::http().get(format!("{}/admin/api/audit", h.base))).await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["entries"].as_array().unwrap().clone()
}

/// Reads the script's next JSON line.
async fn next_event(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(120), lines.next_line())
        .await
        .expect("the browser script answers within 2 minutes")
        .expect("stdout readable")
        .expect("the browser script ended early (its stderr is above)");
    serde_json::from_str(&line).unwrap_or_else(|_| panic!("not an event: {line}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_browser_signs_in_sees_every_rail_and_switches_a_lane_off_and_on() {
    let py = playwright_python();
    let (devnet, _dir, h) = mesh().await;
    assert!(rails_quoted(&h).await.contains(&RAIL.to_string()));
    // a finished route, for the recent routes' table
    common::approve_permit2(&devnet, BASE, 1).await;
    let body = common::permit_body(&devnet, (BASE, ARB), 2_000_000, 7);
    let (receipt, done) = common::execute_to_end(&h.base, &body).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let route = receipt["id"].as_str().unwrap().to_string();
    let mut cmd = tokio::process::Command::new(py);
    cmd.arg(repo().join("conformance/tools/admin_dashboard.py"))
        .args([
            "--url",
            &h.base,
            "--token",
            DEVNET_OWNER_TOKEN,
            "--rail",
            RAIL,
        ])
        .args(["--lane", LANE, "--route", &route, "--chromium", CHROMIUM])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    cmd.args(common::screenshot_args("RELAY_DASHBOARD_SCREENSHOT"));
    let mut child = cmd.spawn().expect("python runs");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();

    let seen = next_event(&mut lines).await;
    assert_eq!(seen["event"], "rails", "{seen}");
    let listed: BTreeSet<String> = seen["rails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, installed_rails(&h), "the page lists every rail");
    assert!(listed.len() >= 9, "{listed:?}");

    let off = next_event(&mut lines).await;
    assert_eq!(off["event"], "off", "{off}");
    assert!(
        !rails_quoted(&h).await.contains(&RAIL.to_string()),
        "a quote on the lane skips the rail once the page switched it off"
    );
    stdin.write_all(b"continue\n").await.unwrap();
    stdin.flush().await.unwrap();

    let on = next_event(&mut lines).await;
    assert_eq!(on["event"], "on", "{on}");
    assert!(
        rails_quoted(&h).await.contains(&RAIL.to_string()),
        "back in quotes once switched on"
    );
    let done = next_event(&mut lines).await;
    assert_eq!(done["event"], "done", "{done}");
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "the browser script failed: {status}");

    let log = audit(&h).await;
    let mine: Vec<&Value> = log
        .iter()
        .filter(|e| e["rail"] == RAIL && e["lane"] == LANE)
        .collect();
    assert_eq!(mine.len(), 2, "{log:?}");
    for (entry, (before, after)) in mine.iter().zip([(false, true), (true, false)]) {
        assert_eq!(entry["actor"], "owner-token", "{entry}");
        assert_eq!(entry["action"], "lane.executeReady");
        assert_eq!(
            (entry["before"].as_bool(), entry["after"].as_bool()),
            (Some(before), Some(after))
        );
        assert!(entry["atMs"].as_u64().unwrap() > 0);
    }
    devnet.stop();
}

fn cookie_of(a: &reqwest::Response) -> String {
    let set = a
        .headers()
        .get("set-cookie")
        .expect("a login cookie")
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(
        !set.contains(DEVNET_OWNER_TOKEN),
        "the cookie is not the token: {set}"
    );
    set.split(';').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_owner_credential_the_page_and_its_api_answer_401() {
    let (devnet, dir, h) = mesh().await;
    let c = crate::common::http();
    let url = |p: &str| format!("{}{p}", h.base);

    let page = c.get(url("/admin")).send().await.unwrap();
    assert_eq!(page.status(), 401);
    assert!(page.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Bearer"));
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(page.text().await.unwrap().contains("id=\"login\""));
    for path in [
        "/admin/api/snapshot",
        "/admin/api/audit",
        "/admin/api/events",
    ] {
        for req in [
            c.get(url(path)),
            c.get(url(path)).bearer_auth("not-the-owner-token"),
            c.get(url(path))
                .header("cookie", "relay_admin=v1.99999999999999.00.forged"),
        ] {
            let a = send(req).await;
            assert_eq!(
                (a.status, &a.body["errorCode"]),
                (401, &json!("ADMIN_AUTH_REQUIRED")),
                "{path}"
            );
        }
    }
    let lane = json!({"rail": RAIL, "lane": LANE, "executeReady": false});
    let a = send(c.post(url("/admin/api/lane")).json(&lane)).await;
    assert_eq!(a.status, 401, "{}", a.body);
    let a = send(c.post(url("/admin/login")).json(&json!({"token": "nope"}))).await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert!(
        rails_quoted(&h).await.contains(&RAIL.to_string()),
        "nothing changed"
    );

    // Signed in by cookie: the page carries its CSRF token; a change
    // without it is refused, with it applied.
    let login = c
        .post(url("/admin/login"))
        .json(&json!({"token": DEVNET_OWNER_TOKEN}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
    let cookie = cookie_of(&login);
    let page = c
        .get(url("/admin"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let csrf = html
        .split("name=\"relay-csrf\" content=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .to_string();
    assert_eq!(csrf.len(), 64, "{csrf}");
    let a = send(
        c.post(url("/admin/api/lane"))
            .header("cookie", &cookie)
            .json(&lane),
    )
    .await;
    assert_eq!(
        (a.status, &a.body["errorCode"]),
        (403, &json!("CSRF_INVALID"))
    );
    let a = send(
        c.post(url("/admin/api/lane"))
            .header("cookie", &cookie)
            .header("x-relay-csrf", &csrf)
            .json(&lane),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["audit"]["actor"], "owner-token");
    assert!(!rails_quoted(&h).await.contains(&RAIL.to_string()), "off");

    // The CLI takes the same path and is audited as cli:<user>.
    let (code, _, err) = relay_cli(dir.path(), &["rails", "execute-ready", RAIL, LANE, "on"]);
    assert_eq!(code, 0, "{err}");
    assert!(rails_quoted(&h).await.contains(&RAIL.to_string()), "on");
    let log = audit(&h).await;
    assert!(
        log[0]["actor"].as_str().unwrap().starts_with("cli:"),
        "{log:?}"
    );
    assert_eq!(
        (log[0]["before"].as_bool(), log[0]["after"].as_bool()),
        (Some(false), Some(true))
    );

    // Bearer: the snapshot; unknown rails and lanes are refused by name;
    // the 401s above are among the recent errors.
    let snap = with_owner(c.get(url("/admin/api/snapshot"))).await;
    assert_eq!(snap.status, 200);
    let rails: BTreeSet<String> = snap.body["rails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(rails, installed_rails(&h));
    let balances = snap.body["chain"]["balances"].as_array().unwrap();
    assert_eq!(balances.len(), 2, "{balances:?}");
    assert!(balances
        .iter()
        .all(|b| b["wei"].is_string() && b["low"] == false));
    let errors = snap.body["signals"]["recentErrors"].as_array().unwrap();
    assert!(errors.iter().any(|e| e["status"] == 401
        && e["route"] == "/admin/api/snapshot"
        && e["errorCode"] == "ADMIN_AUTH_REQUIRED"));
    for (body, field) in [
        (
            json!({"rail": "nosuchrail", "lane": LANE, "executeReady": true}),
            "rail",
        ),
        (
            json!({"rail": RAIL, "lane": "evm->mars", "executeReady": true}),
            "lane",
        ),
    ] {
        let a = with_owner(c.post(url("/admin/api/lane")).json(&body)).await;
        assert_eq!(
            (a.status, &a.body["field"]),
            (404, &json!(field)),
            "{}",
            a.body
        );
    }
    let a = with_owner(c.post(url("/admin/api/rail")).json(&json!({"rail": RAIL}))).await;
    assert_eq!(
        (a.status, &a.body["errorCode"]),
        (400, &json!("MISSING_FIELD"))
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_live_stream_pushes_a_snapshot_at_once_and_after_a_change() {
    // The periodic refresh is far off: what arrives is pushed by the change.
    let (devnet, _dir, h) = mesh_with(|c| c.admin.refresh_ms = 600_000).await;
    let c = crate::common::http();
    let mut resp = c
        .get(format!("{}/admin/api/events", h.base))
        .bearer_auth(DEVNET_OWNER_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut buf = String::new();
    let mut snapshots = 0;
    let switched = json!({"rail": RAIL, "lane": LANE, "executeReady": false});
    while snapshots < 2 {
        let chunk = tokio::time::timeout(Duration::from_secs(20), resp.chunk())
            .await
            .expect("an event within 20 s (the refresh period is 10 minutes)")
            .unwrap()
            .expect("the stream stays open");
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) else {
                continue;
            };
            let d: Value = serde_json::from_str(data).unwrap();
            let lane_ready = d["rails"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["id"] == RAIL)
                .and_then(|r| {
                    r["lanes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|l| l["lane"] == LANE)
                })
                .map(|l| l["executeReady"].clone())
                .unwrap();
            snapshots += 1;
            if snapshots == 1 {
                assert_eq!(lane_ready, true, "the first snapshot comes at once");
                let a =
                    with_owner(c.post(format!("{}/admin/api/lane", h.base)).json(&switched)).await;
                assert_eq!(a.status, 200);
            } else {
                assert_eq!(lane_ready, false, "the change is pushed");
            }
        }
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_audit_log_and_backlog_queries_run_on_postgres_too() {
    use relay_store::{AuditRow, DeliveryBacklog, Store};
    let store = Store::connect(&relay_fixtures::postgres_database())
        .await
        .unwrap();
    for (i, after) in [false, true].into_iter().enumerate() {
        let row = AuditRow {
            id: format!("aud_{i}"),
            at_ms: 1_000 + i as u64,
            actor: "owner-token".into(),
            action: "lane.executeReady".into(),
            rail: RAIL.into(),
            lane: (i == 0).then(|| LANE.into()),
            before: !after,
            after,
        };
        store.record_audit(&row).await.unwrap();
    }
    let log = store.audit_log(10).await.unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(
        (log[0].id.as_str(), log[0].lane.as_deref()),
        ("aud_1", None)
    );
    assert_eq!((log[1].lane.as_deref(), log[1].before), (Some(LANE), true));
    assert_eq!(
        store.delivery_backlog().await.unwrap(),
        DeliveryBacklog::default()
    );
    let route = common::sample_route("rt_admin_pg");
    common::store_idle_route(&store, &route).await;
    let flying = store.routes_in_flight(10).await.unwrap();
    assert_eq!(flying.len(), 1);
    assert_eq!(flying[0].id, "rt_admin_pg");
    let mut failed = common::sample_route("rt_admin_pg_failed");
    failed.status = relay_types::RouteStatus::Failed;
    common::store_idle_route(&store, &failed).await;
    let failures = store.recent_failed_routes(10).await.unwrap();
    let ids: Vec<&str> = failures.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["rt_admin_pg_failed"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_refusals_are_counted_per_route_on_the_dashboard() {
    let (devnet, _dir, h) = mesh_with(|c| {
        c.limits.enabled = true;
        c.limits.per_minute.insert("status".into(), 2);
    })
    .await;
    let c = crate::common::http();
    let mut refused = 0;
    for _ in 0..5 {
        let r = c
            .get(format!("{}/api/status", h.base))
            .send()
            .await
            .unwrap();
        refused += u64::from(r.status() == 429);
    }
    assert!(refused >= 3, "{refused} refused");
    let snap = with_owner(c.get(format!("{}/admin/api/snapshot", h.base))).await;
    assert_eq!(snap.status, 200, "{}", snap.body);
    let limits = &snap.body["signals"]["rateLimits"];
    assert_eq!(limits["total"], refused, "{limits}");
    assert_eq!(limits["byRoute"]["/api/status"], refused, "{limits}");
    let errors = snap.body["signals"]["recentErrors"].as_array().unwrap();
    assert!(errors
        .iter()
        .any(|e| e["status"] == 429 && e["errorCode"] == "RATE_LIMITED"));
    devnet.stop();
}
