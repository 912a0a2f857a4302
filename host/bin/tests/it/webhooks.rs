//! Webhooks as an integrator sees them (spec §4.5, §6): a receiver
//! written with off-the-shelf code (conformance/tools/webhook_receiver.py:
//! Python's hmac for `x-relay-signature`, the `standardwebhooks` package
//! from PyPI for the Standard Webhooks headers) gets completion events of
//! live and sandbox routes on the devnet, retried with growing gaps while it
//! answers 500; one logical delivery per event across a `kill -9` of the
//! host mid-delivery and across two replicas on Postgres; the SSRF corpus
//! refused; price and balance subscriptions.

use crate::common;

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use alloy::signers::{local::PrivateKeySigner, SignerSync};
use common::{
    execute_to_end, free_port, get, permit_body, post, serve, serve_at, spawn_host, wait_ready,
};
use relay_config::HostConfig;
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_execution::sandbox::SANDBOX_DURATION;
use relay_types::{Clock as _, ManualClock, SystemClock};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const SECRET: &str = "a receiver's shared secret";

/// The Python receiver, killed on drop.
struct Receiver {
    child: Child,
    url: String,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    fn start(args: &[&str]) -> Receiver {
        let py = std::env::var("RELAY_WEBHOOK_PY")
            .expect("RELAY_WEBHOOK_PY (conformance/tools/webhooks.sh prints it)");
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../conformance/tools/webhook_receiver.py"
        );
        let mut child = Command::new(py)
            .arg(script)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the receiver starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line.trim().parse().expect("the receiver prints its port");
        Receiver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    fn signed(extra: &[&str]) -> Receiver {
        let mut args = vec!["--secret", SECRET];
        args.extend_from_slice(extra);
        Receiver::start(&args)
    }

    async fn log(&self) -> Vec<Value> {
        let (_, v) = get(&format!("{}/log", self.url)).await;
        v.as_array().cloned().unwrap_or_default()
    }

    /// Waits (bounded) until `done` holds of the log; returns it.
    async fn until(&self, what: &str, secs: u64, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let log = self.log().await;
            if done(&log) {
                return log;
            }
            assert!(Instant::now() < deadline, "{what}: receiver saw {log:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn fast_notify(c: &mut HostConfig) {
    c.notify.poll_interval_ms = 50;
    c.notify.watch_interval_ms = 200;
    c.notify.base_delay_ms = 400;
    c.notify.max_attempts = 8;
    c.notify.timeout_ms = 3_000;
    c.notify.lease_ms = 4_000;
}

/// The route's sender's proof for hooking `route` with `url` (the devnet
/// user who signs every permit here).
pub(crate) fn hook_signature(signer: &PrivateKeySigner, route: &str, url: &str) -> String {
    let text = format!("relay-hook:v1:route={route}:url={url}");
    signer
        .sign_message_sync(text.as_bytes())
        .unwrap()
        .to_string()
}

async fn hook(base: &str, route: &str, url: &str, secret: Option<&str>) -> Value {
    let signature = hook_signature(&keys::anvil_signer(1), route, url);
    let mut body = json!({"routeId": route, "url": url, "signature": signature});
    if let Some(s) = secret {
        body["secret"] = json!(s);
    }
    let (code, text) = post(base, "/api/hooks", &body, &[]).await;
    assert_eq!(code, 200, "{body} -> {text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["status"], "pending", "{v}");
    assert!(v["id"].as_str().unwrap().starts_with("wh_"), "{v}");
    v
}

async fn hook_state(base: &str, id: &str) -> Value {
    let (code, v) = get(&format!("{base}/api/hooks/{id}")).await;
    assert_eq!(code, 200, "{v}");
    v
}

/// Waits (bounded: 60 s) until `done` holds of the hook's state.
async fn until_state(base: &str, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let v = hook_state(base, id).await;
        if done(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "hook {id} never {what}: {v:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the hook's status is `status`.
async fn until_hook(base: &str, id: &str, status: &str) -> Value {
    until_state(base, id, status, |v| v["status"] == status).await
}

/// Waits until the hook's latest delivery was attempted at least once.
async fn until_attempted(base: &str, id: &str) -> Value {
    until_state(base, id, "attempted", |v| {
        v["deliveries"][0]["attempts"].as_u64() >= Some(1)
    })
    .await
}

fn verified(e: &Value) {
    assert_eq!(e["hmacOk"], true, "x-relay-signature: {e:#}");
    assert_eq!(e["standardOk"], true, "standardwebhooks: {e:#}");
}

async fn live_route(devnet: &Devnet, base: &str, amount: u64, nonce: u64) -> Value {
    let (_, done) = execute_to_end(base, &permit_body(devnet, (SRC, DST), amount, nonce)).await;
    assert_eq!(done["status"], "DONE", "{done}");
    done
}

#[tokio::test(flavor = "multi_thread")]
async fn completion_webhooks_are_verified_off_the_shelf_retried_and_never_redirected() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = serve(&devnet, dir.path(), fast_notify).await;
    common::approve_permit2(&devnet, SRC, 1).await;
    let flaky = Receiver::signed(&["--fail-first", "3"]);
    let target = Receiver::signed(&[]);
    let redirector = Receiver::start(&["--redirect-to", &format!("{}/stolen", target.url)]);

    // A live route; hooks registered after it is DONE still fire.
    let done = live_route(&devnet, &host.base, 3_000_000, 1).await;
    let route = done["id"].as_str().unwrap();
    let h = hook(&host.base, route, &flaky.url, Some(SECRET)).await;
    let r = hook(&host.base, route, &redirector.url, None).await;

    // 500, 500, 500, then 200: one logical delivery, four attempts.
    let log = flaky.until("four attempts", 60, |l| l.len() >= 4).await;
    let ids: Vec<&str> = log
        .iter()
        .map(|e| e["webhookId"].as_str().unwrap())
        .collect();
    assert!(ids.iter().all(|i| *i == ids[0]), "one webhook-id: {ids:?}");
    for e in &log {
        verified(e);
        let p = &e["payload"];
        assert_eq!(p["event"], "done", "{p}");
        assert_eq!(p["routeId"], route, "{p}");
        assert_eq!(p["status"], "DONE", "{p}");
        assert_eq!(p["srcTx"], done["srcTx"], "{p} vs {done}");
        assert_eq!(p["destTx"], done["destTx"], "{p} vs {done}");
        assert_eq!(p["sandbox"], false, "{p}");
        assert!(p["ts"].as_u64().is_some(), "{p}");
    }
    let at: Vec<u64> = log
        .iter()
        .map(|e| e["receivedMs"].as_u64().unwrap())
        .collect();
    let gaps: Vec<u64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.windows(2).all(|g| g[1] > g[0]), "gaps grow: {gaps:?}");
    let state = until_hook(&host.base, h["id"].as_str().unwrap(), "delivered").await;
    assert_eq!(state["attempts"], 4, "{state:#}");
    let codes: Vec<u64> = state["deliveries"][0]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["statusCode"].as_u64().unwrap())
        .collect();
    assert_eq!(codes, [500, 500, 500, 200], "{state:#}");
    assert_eq!(state["deliveries"][0]["id"], ids[0], "{state:#}");

    // A 302 is never followed: the attempt fails and the target hears nothing.
    let rs = redirector
        .until("the redirect attempt", 30, |l| !l.is_empty())
        .await;
    assert!(rs[0]["payload"]["routeId"] == route, "{rs:#?}");
    let state = until_attempted(&host.base, r["id"].as_str().unwrap()).await;
    let err = state["deliveries"][0]["lastError"].as_str().unwrap_or("");
    assert!(err.contains("redirect"), "{state:#}");
    assert_eq!(state["status"], "pending", "retried later: {state:#}");
    assert!(
        target.log().await.is_empty(),
        "the redirect target was reached"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandbox_routes_completion_webhook_says_sandbox() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The sandbox's stages move on the host's clock: the test moves it
    // past the ~40 s a sandbox route takes instead of waiting them out.
    let clock = ManualClock::at(SystemClock.now_ms());
    let host = serve_at(&devnet, dir.path(), clock.clone(), fast_notify).await;
    let sandboxed = Receiver::signed(&[]);
    let body = permit_body(&devnet, (SRC, DST), 2_000_000, 77);
    let sandbox = [("x-relay-sandbox", "1")];
    let (code, text) = post(&host.base, "/api/route/execute", &body, &sandbox).await;
    assert_eq!(code, 200, "{text}");
    let sbx: Value = serde_json::from_str(&text).unwrap();
    let sbx_id = sbx["id"].as_str().unwrap();
    assert!(sbx_id.starts_with("sbx_"), "{sbx}");
    let sbx_hook = hook(&host.base, sbx_id, &sandboxed.url, Some(SECRET)).await;
    assert!(
        sandboxed.log().await.is_empty(),
        "nothing before it is done"
    );
    clock.advance(SANDBOX_DURATION.as_millis() as u64);
    let log = sandboxed
        .until("the sandbox event", 60, |l| !l.is_empty())
        .await;
    verified(&log[0]);
    assert_eq!(log[0]["payload"]["routeId"], sbx_id, "{log:#?}");
    assert_eq!(log[0]["payload"]["status"], "DONE", "{log:#?}");
    assert_eq!(log[0]["payload"]["sandbox"], true, "{log:#?}");
    until_hook(&host.base, sbx_hook["id"].as_str().unwrap(), "delivered").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_hook_requests_are_typed_and_the_ssrf_corpus_is_refused() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // No host is allowed plain http or loopback here (production defaults).
    let host = serve(&devnet, dir.path(), |c| {
        fast_notify(c);
        c.notify.allow_http.clear();
    })
    .await;
    common::approve_permit2(&devnet, SRC, 1).await;
    let done = live_route(&devnet, &host.base, 2_500_000, 3).await;
    let route = done["id"].as_str().unwrap();
    let corpus = [
        ("loopback over http", "http://127.0.0.1:8080/hook"),
        ("loopback", "https://127.0.0.1/hook"),
        ("short loopback 127.1", "https://127.1/hook"),
        ("hex loopback 0x7f.1", "https://0x7f.1/hook"),
        ("IPv6 loopback", "https://[::1]/hook"),
        ("IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/hook"),
        ("10/8", "https://10.1.2.3/hook"),
        ("172.16/12", "https://172.16.5.4/hook"),
        ("192.168/16", "https://192.168.1.1/hook"),
        (
            "cloud metadata 169.254.169.254",
            "https://169.254.169.254/latest/meta-data",
        ),
        ("CGNAT 100.64/10", "https://100.64.0.1/hook"),
        ("ULA fc00::/7", "https://[fd00::1]/hook"),
        ("localhost by name", "https://localhost/hook"),
        ("plain http to a public host", "http://example.com/hook"),
        (
            "credentials in the url",
            "https://user:pass@example.com/hook",
        ),
        ("not a url", "hook"),
    ];
    for (name, url) in corpus {
        let (code, text) = post(
            &host.base,
            "/api/hooks",
            &json!({"routeId": route, "url": url}),
            &[],
        )
        .await;
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(code, 400, "{name}: {url} -> {v}");
        assert_eq!(v["errorCode"], "WEBHOOK_URL_REFUSED", "{name}: {v}");
        assert_eq!(v["field"], "url", "{name}: {v}");
    }
    // Other bad bodies: typed, nothing registered.
    let bad = [
        (
            json!({"url": "https://example.com/h"}),
            400,
            "MISSING_FIELD",
        ),
        (
            json!({"routeId": "rt_nope", "url": "https://example.com/h"}),
            404,
            "UNKNOWN_ROUTE",
        ),
        (
            json!({"routeId": route, "url": "https://example.com/h", "secert": "x"}),
            400,
            "INVALID_FIELD",
        ),
        (
            json!({"routeId": route, "url": "https://example.com/h", "secret": ""}),
            400,
            "INVALID_FIELD",
        ),
        (json!({"routeId": route, "url": 7}), 400, "INVALID_FIELD"),
        (
            json!({"routeId": route, "url": "https://example.com/h", "secret": "whsec_not base64!"}),
            400,
            "INVALID_FIELD",
        ),
    ];
    for (body, status, code) in bad {
        let (got, text) = post(&host.base, "/api/hooks", &body, &[]).await;
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (got, v["errorCode"].as_str().unwrap()),
            (status, code),
            "{body} -> {v}"
        );
    }
    let (code, v) = get(&format!("{}/api/hooks/wh_unknown", host.base)).await;
    assert_eq!(
        (code, v["errorCode"].as_str()),
        (404, Some("UNKNOWN_HOOK")),
        "{v}"
    );

    // A DNS name that resolves to a loopback or private address (this
    // machine's own name, from /etc/hosts) passes the face check and is
    // refused at delivery, before any connection.
    let name = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap();
    let name = name.trim().to_string();
    let ip = std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), 443))
        .expect("this machine's name resolves")
        .next()
        .unwrap()
        .ip();
    let range = match ip {
        std::net::IpAddr::V4(v4) if v4.is_loopback() => "loopback",
        std::net::IpAddr::V4(v4) if v4.is_private() => "private",
        other => panic!("{name} resolves to {other}; the test needs a local name"),
    };
    let receiver = Receiver::signed(&[]);
    let port = receiver.url.rsplit(':').next().unwrap();
    let h = hook(
        &host.base,
        route,
        &format!("https://{name}:{port}/hook"),
        None,
    )
    .await;
    let state = until_attempted(&host.base, h["id"].as_str().unwrap()).await;
    let err = state["deliveries"][0]["lastError"].as_str().unwrap_or("");
    assert!(
        err.contains(&format!("resolves to {ip}")) && err.contains(range),
        "{state:#}"
    );
    assert!(receiver.log().await.is_empty(), "nothing was sent");
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_mid_delivery_then_restart_delivers_each_event_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    common::approve_permit2(&devnet, SRC, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    common::write_host_config(&devnet, &sims, dir.path(), port, fast_notify);
    let base = format!("http://127.0.0.1:{port}");
    let mut child = spawn_host(dir.path());
    wait_ready(&base).await;
    // The receiver holds the first two requests open: the host is killed
    // while both attempts are in flight.
    let receiver = Receiver::signed(&["--hang-first", "2"]);
    let mut hooks = Vec::new();
    for i in 0..2u64 {
        let done = live_route(&devnet, &base, 2_000_000 + i * 1_000, 40 + i).await;
        hooks.push(
            hook(
                &base,
                done["id"].as_str().unwrap(),
                &receiver.url,
                Some(SECRET),
            )
            .await,
        );
    }
    receiver
        .until("both attempts in flight", 30, |l| l.len() >= 2)
        .await;
    child.kill().unwrap(); // SIGKILL, mid-delivery
    child.wait().unwrap();

    let mut child = spawn_host(dir.path());
    wait_ready(&base).await;
    for h in &hooks {
        until_hook(&base, h["id"].as_str().unwrap(), "delivered").await;
    }
    let log = receiver.log().await;
    child.kill().unwrap();
    child.wait().unwrap();
    let mut ids: Vec<&str> = log
        .iter()
        .map(|e| e["webhookId"].as_str().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 2, "one logical delivery per route: {log:#?}");
    for id in ids {
        let of: Vec<&Value> = log.iter().filter(|e| e["webhookId"] == id).collect();
        assert!(
            of.len() >= 2,
            "the interrupted attempt was retried: {of:#?}"
        );
        assert_eq!(
            of.iter().filter(|e| e["answered"] == 200).count(),
            1,
            "{of:#?}"
        );
        let routes: Vec<&Value> = of.iter().map(|e| &e["payload"]["routeId"]).collect();
        assert!(routes.iter().all(|r| *r == routes[0]), "{of:#?}");
        of.iter().for_each(|e| verified(e));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_postgres_send_each_attempt_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let db = relay_fixtures::postgres_database();
    let (da, db_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let on_pg = |c: &mut HostConfig| {
        fast_notify(c);
        c.notify.poll_interval_ms = 20;
        c.database_url = Some(db.clone());
    };
    let a = serve(&devnet, da.path(), on_pg).await;
    let b = serve(&devnet, db_dir.path(), on_pg).await;
    common::approve_permit2(&devnet, SRC, 1).await;
    // Four events; the first four attempts fail, so retries race too.
    let receiver = Receiver::signed(&["--fail-first", "4"]);
    let mut hooks = Vec::new();
    for i in 0..4u64 {
        let base = if i % 2 == 0 { &a.base } else { &b.base };
        let done = live_route(&devnet, base, 2_100_000 + i * 1_000, 60 + i).await;
        hooks.push(
            hook(
                base,
                done["id"].as_str().unwrap(),
                &receiver.url,
                Some(SECRET),
            )
            .await,
        );
    }
    let mut attempts = 0;
    for h in &hooks {
        let s = until_hook(&b.base, h["id"].as_str().unwrap(), "delivered").await;
        attempts += s["attempts"].as_u64().unwrap();
    }
    let log = receiver.log().await;
    assert_eq!(
        log.len() as u64,
        attempts,
        "each recorded attempt was sent exactly once: {log:#?}"
    );
    let mut ids: Vec<&str> = log
        .iter()
        .map(|e| e["webhookId"].as_str().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{log:#?}");
    for id in ids {
        let ok = log
            .iter()
            .filter(|e| e["webhookId"] == id && e["answered"] == 200)
            .count();
        assert_eq!(ok, 1, "one delivery of {id}: {log:#?}");
    }
    log.iter().for_each(verified);
}

#[tokio::test(flavor = "multi_thread")]
async fn price_and_balance_subscriptions_deliver_events() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = serve(&devnet, dir.path(), fast_notify).await;
    let receiver = Receiver::signed(&[]);
    let watched = keys::anvil_address(7);
    let subscribe = |body: Value| {
        let base = host.base.clone();
        async move {
            let (code, text) = post(&base, "/api/events/subscribe", &body, &[]).await;
            let v: Value = serde_json::from_str(&text).unwrap();
            (code, v)
        }
    };
    let with = |mut v: Value| {
        v["url"] = json!(receiver.url);
        v["secret"] = json!(SECRET);
        v
    };
    // Typed refusals.
    for (body, code) in [
        (
            json!({"type": "price", "asset": "ETH", "above": "1", "below": "2"}),
            "INVALID_FIELD",
        ),
        (
            json!({"type": "price", "asset": "NOPE", "above": "1"}),
            "INVALID_FIELD",
        ),
        (
            json!({"type": "balance", "chainId": 999, "token": "USDC", "address": watched}),
            "UNKNOWN_CHAIN",
        ),
        (
            json!({"type": "balance", "chainId": SRC, "token": "USDC", "address": "0x12"}),
            "INVALID_ADDRESS",
        ),
        (json!({"type": "weather"}), "INVALID_FIELD"),
    ] {
        let (status, v) = subscribe(with(body.clone())).await;
        assert_eq!(
            (status, v["errorCode"].as_str().unwrap()),
            (400, code),
            "{body} -> {v}"
        );
    }
    // ETH is priced at 3000 USD on the devnet: above 1 holds at once (an
    // initial event), below 1 never fires.
    let (code, above) = subscribe(with(
        json!({"type": "price", "asset": "ETH", "above": "1.5"}),
    ))
    .await;
    assert_eq!(code, 200, "{above}");
    assert_eq!(above["status"], "active", "{above}");
    let (_, below) = subscribe(with(json!({"type": "price", "asset": "ETH", "below": "1"}))).await;
    let balance_sub = |_: ()| {
        with(json!({"type": "balance", "chainId": SRC, "token": "USDC", "address": watched}))
    };
    let (code, cancelled) = subscribe(balance_sub(())).await;
    assert_eq!(code, 200, "{cancelled}");
    let (_, bal) = subscribe(balance_sub(())).await;
    let log = receiver
        .until("the price event", 30, |l| {
            l.iter().any(|e| e["payload"]["event"] == "price.crossed")
        })
        .await;
    let price = log
        .iter()
        .find(|e| e["payload"]["event"] == "price.crossed")
        .unwrap();
    assert_eq!(price["payload"]["subscriptionId"], above["id"], "{price:#}");
    assert_eq!(price["payload"]["asset"], "ETH", "{price:#}");
    assert_eq!(price["payload"]["initial"], true, "{price:#}");
    assert_eq!(price["payload"]["threshold"], "1.500000", "{price:#}");
    verified(price);

    // Unsubscribing one balance subscription; the other hears the change.
    let a = common::send(crate::common::http().delete(format!(
        "{}/api/events/subscribe/{}",
        host.base,
        cancelled["id"].as_str().unwrap()
    )))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["status"], "cancelled", "{}", a.body);
    // The active watcher has taken its baseline before the balance moves.
    let bal_id = bal["id"].as_str().unwrap().to_string();
    common::wait_for("a balance baseline", async || {
        !hook_state(&host.base, &bal_id).await["observed"].is_null()
    })
    .await;
    let before = common::usdc_balance(&devnet, SRC, watched).await;
    devnet
        .mint(
            SRC,
            relay_devnet::Token::Usdc,
            watched,
            alloy::primitives::U256::from(1_234_567u64),
        )
        .await
        .unwrap();
    let after = common::usdc_balance(&devnet, SRC, watched).await;
    let log = receiver
        .until("the balance event", 30, |l| {
            l.iter().any(|e| e["payload"]["event"] == "balance.changed")
        })
        .await;
    let changes: Vec<&Value> = log
        .iter()
        .filter(|e| e["payload"]["event"] == "balance.changed")
        .collect();
    assert_eq!(
        changes.len(),
        1,
        "only the active subscription: {changes:#?}"
    );
    let p = &changes[0]["payload"];
    assert_eq!(p["subscriptionId"], bal["id"], "{p}");
    assert_eq!(p["previous"], before.to_string(), "{p}");
    assert_eq!(p["balance"], after.to_string(), "{p}");
    assert_eq!(p["chainId"], SRC, "{p}");
    verified(changes[0]);
    assert!(
        log.iter()
            .all(|e| e["payload"]["subscriptionId"] != below["id"]),
        "{log:#?}"
    );
}
