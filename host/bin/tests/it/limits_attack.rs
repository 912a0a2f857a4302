//! Issue 40's limit findings, attacked from outside over real HTTP as a
//! stranger would: the endpoints it found unlimited answer 429 past their
//! buckets; token guessing on `/admin/login` is throttled and backs off;
//! issued keys buy no requests their IP did not have, and one IP creates
//! at most ten a day; an MCP `initialize` flood is refused past its caps
//! with the host's memory bounded; a stranger cannot hold a victim's
//! Permit2 nonces past the caps; dashboard cookies made from the token's
//! hash, tampered or expired are refused.

use crate::common::{self, bare_host_at, send, serve, Answer};
use crate::router::{fresh_wallet, signed_body};
use alloy::primitives::U256;
use relay_admin::login::{LoginKeys, COOKIE};
use relay_api::auth::OwnerTokenHash;
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_host::devnet::DEVNET_OWNER_TOKEN;
use relay_types::{Clock as _, ManualClock, SystemClock};
use serde_json::{json, Value};
use std::{collections::BTreeMap, net::IpAddr};

/// A client whose requests come from `127.0.0.<n>`: one per address for
/// the whole run (building one loads the trust store), keeping no idle
/// connection (as `common::http`).
fn from(n: u8) -> reqwest::Client {
    static CLIENTS: std::sync::Mutex<BTreeMap<u8, reqwest::Client>> =
        std::sync::Mutex::new(BTreeMap::new());
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    clients
        .entry(n)
        .or_insert_with(|| {
            reqwest::Client::builder()
                .local_address(IpAddr::from([127, 0, 0, n]))
                .pool_max_idle_per_host(0)
                .build()
                .unwrap()
        })
        .clone()
}

/// Asserts `a` is the API's 429, headers and body exactly as every limit
/// answers it.
fn assert_rate_limited(a: &Answer, what: &str) {
    assert_eq!(a.status, 429, "{what}: {}", a.body);
    assert_eq!(a.body["errorCode"], "RATE_LIMITED", "{what}: {}", a.body);
    assert_eq!(a.body["retryable"], true, "{what}");
    assert!(a.body["error"].is_string(), "{what}");
    assert!(
        a.body["retryAfterMs"].as_u64().is_some_and(|ms| ms > 0),
        "{what}: {}",
        a.body
    );
    assert!(a.header("retry-after").is_some(), "{what}: retry-after");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_endpoints_issue_40_found_unlimited_answer_429_past_their_buckets() {
    let dir = tempfile::tempdir().unwrap();
    // The host's time stands still: a bucket refills only as its clock
    // moves, so however slowly the requests go, the one past a bucket is
    // refused.
    let clock = ManualClock::at(SystemClock.now_ms());
    let h = bare_host_at(dir.path(), clock, |_| {}).await;
    let c = crate::common::http();
    let url = |p: &str| format!("{}{p}", h.base);
    let victim = "0x000000000000000000000000000000000000bEEF";
    let cases: Vec<(&str, reqwest::RequestBuilder, u32)> = vec![
        (
            "intent",
            c.post(url("/api/route/intent")).json(&json!({})),
            20,
        ),
        (
            "conditional",
            c.post(url("/api/route/conditional")).json(&json!({})),
            30,
        ),
        (
            "improve",
            c.post(url("/api/route/improve")).json(&json!({})),
            20,
        ),
        (
            "preflight/full",
            c.post(url("/api/preflight/full")).json(&json!({})),
            20,
        ),
        ("balance", c.get(url(&format!("/api/balance/{victim}"))), 30),
        ("account", c.get(url(&format!("/api/account/{victim}"))), 30),
        (
            "an unlisted route (default bucket)",
            c.get(url("/api/route/status?id=nope")),
            120,
        ),
    ];
    for (what, req, limit) in cases {
        for i in 0..limit {
            let a = send(req.try_clone().unwrap()).await;
            assert_ne!(a.status, 429, "{what} {i}: {}", a.body);
            assert_eq!(
                a.header("x-ratelimit-limit"),
                Some(limit.to_string().as_str()),
                "{what}"
            );
        }
        let refused = send(req).await;
        assert_rate_limited(&refused, what);
        assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn token_guessing_on_admin_login_backs_off_and_is_bucketed_per_ip() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(SystemClock.now_ms());
    let h = bare_host_at(dir.path(), clock.clone(), |_| {}).await;
    let login = |client: &reqwest::Client, token: &str| {
        client
            .post(format!("{}/admin/login", h.base))
            .json(&json!({ "token": token }))
    };
    let me = from(1);
    // Two typos are free; the third wrong token starts the back-off.
    for guess in ["guess-0", "guess-0b", "guess-1"] {
        let wrong = send(login(&me, guess)).await;
        assert_eq!(wrong.status, 401, "{}", wrong.body);
    }
    // At once again: refused without the token being looked at — even
    // the right one.
    for token in ["guess-2", DEVNET_OWNER_TOKEN] {
        let a = send(login(&me, token)).await;
        assert_rate_limited(&a, "during the back-off");
        assert_eq!(a.body["retryAfterMs"], 1_000, "{}", a.body);
    }
    let elsewhere = send(login(&from(2), DEVNET_OWNER_TOKEN)).await;
    assert_eq!(elsewhere.status, 200, "the back-off is per IP");
    // One millisecond short of the wait it announced: still refused.
    clock.advance(999);
    let early = send(login(&me, DEVNET_OWNER_TOKEN)).await;
    assert_rate_limited(&early, "1 ms before the back-off ends");
    assert_eq!(early.body["retryAfterMs"], 1, "{}", early.body);
    clock.advance(1);
    assert_eq!(send(login(&me, "guess-3")).await.status, 401);
    let doubled = send(login(&me, "guess-4")).await;
    assert_rate_limited(&doubled, "the second back-off");
    assert_eq!(doubled.body["retryAfterMs"], 2_000, "doubled");

    // The bucket: ten sign-ins a minute per IP, right token or not.
    let third = from(3);
    for i in 0..10 {
        let a = send(login(&third, DEVNET_OWNER_TOKEN)).await;
        assert_eq!(a.status, 200, "{i}: {}", a.body);
        assert_eq!(a.header("x-ratelimit-limit"), Some("10"));
    }
    assert_rate_limited(&send(login(&third, DEVNET_OWNER_TOKEN)).await, "11th");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_buys_no_request_its_ip_did_not_have() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(SystemClock.now_ms());
    let h = bare_host_at(dir.path(), clock, |c| {
        c.limits.per_minute.insert("status".into(), 5);
    })
    .await;
    let c = crate::common::http();
    let mut keys = Vec::new();
    for i in 0..3 {
        let a = send(
            c.post(format!("{}/api/keys/create", h.base))
                .json(&json!({ "label": format!("k{i}") })),
        )
        .await;
        assert_eq!(a.status, 200, "{}", a.body);
        keys.push(a.body["key"].as_str().unwrap().to_string());
    }
    let mut passed = 0;
    for key in &keys {
        for _ in 0..5 {
            let a = send(
                c.get(format!("{}/api/status", h.base))
                    .header("x-relay-key", key),
            )
            .await;
            assert_eq!(a.header("x-relay-key-status"), Some("issued"));
            match a.status {
                200 => passed += 1,
                _ => assert_rate_limited(&a, "a key past its IP's limit"),
            }
        }
    }
    assert_eq!(
        passed, 5,
        "three keys, fifteen requests: the IP's five pass"
    );
    let keyless = send(c.get(format!("{}/api/status", h.base))).await;
    assert_rate_limited(&keyless, "the IP itself");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_ip_creates_ten_keys_a_day_the_eleventh_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(SystemClock.now_ms());
    let h = bare_host_at(dir.path(), clock, |_| {}).await;
    let create = |client: &reqwest::Client| {
        client
            .post(format!("{}/api/keys/create", h.base))
            .json(&json!({}))
    };
    let me = from(1);
    for i in 0..10 {
        let a = send(create(&me)).await;
        assert_eq!(a.status, 200, "key {i}: {}", a.body);
        assert_eq!(a.header("x-ratelimit-limit"), Some("10"));
    }
    let eleventh = send(create(&me)).await;
    assert_rate_limited(&eleventh, "the 11th key of the day");
    let wait = eleventh.body["retryAfterMs"].as_u64().unwrap();
    assert!(
        (8_000_000..=8_640_000).contains(&wait),
        "a tenth of a day: {wait}"
    );
    // An issued key does not help: creating keys counts per IP.
    let key = send(create(&from(2))).await.body["key"]
        .as_str()
        .unwrap()
        .to_string();
    let keyed = send(create(&me).header("x-relay-key", key)).await;
    assert_rate_limited(&keyed, "a key creating keys");
}

/// The resident set of process `pid`, KiB.
fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// `initialize` once from `client`: the status and, on 200, the session.
pub(crate) async fn initialize(
    client: &reqwest::Client,
    base: &str,
) -> (u16, Option<String>, String) {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}});
    let resp = client
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, session, resp.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_initialize_flood_is_refused_past_its_caps_and_memory_stays_bounded() {
    // the host in a process of its own: the flood's memory is measured
    // there, never mixed with the other tests this binary runs at once
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    std::fs::create_dir_all(dir.path().join("plugins")).unwrap();
    let mut config = relay_config::HostConfig {
        listen: format!("127.0.0.1:{port}").parse().unwrap(),
        data_dir: relay_fixtures::data_dir(&dir.path().join("data")),
        plugins_dir: dir.path().join("plugins"),
        ..Default::default()
    };
    config.runtime.reload_interval_ms = 0;
    config.limits.mcp_sessions_total = 40;
    std::fs::write(
        dir.path().join("relay.toml"),
        toml::to_string(&config).unwrap(),
    )
    .unwrap();
    let host = common::spawn_host(dir.path());
    let base = format!("http://127.0.0.1:{port}");
    common::wait_ready(&base).await;
    let vm_rss_kib = || vm_rss_kib(host.id());
    let me = from(1);
    let before = vm_rss_kib();
    // The issue's flood: 4,000 initialize calls from one IP, 32 at a time.
    let mut opened = Vec::new();
    let mut refused = 0;
    let mut sample = None;
    for _ in 0..125 {
        let round = (0..32).map(|_| initialize(&me, &base));
        for (status, session, text) in futures::future::join_all(round).await {
            match status {
                200 => opened.push(session.expect("a session id")),
                429 => {
                    refused += 1;
                    sample.get_or_insert(text);
                }
                other => panic!("{other}: {text}"),
            }
        }
    }
    let grown = vm_rss_kib().saturating_sub(before);
    eprintln!(
        "MCP flood: 4000 initialize, {} opened, {refused} refused, RSS +{grown} KiB",
        opened.len()
    );
    assert_eq!(opened.len(), 8, "limits.mcp_sessions_per_ip");
    let body: Value = serde_json::from_str(sample.as_deref().unwrap()).unwrap();
    assert_eq!(
        (&body["errorCode"], &body["retryable"]),
        (&json!("RATE_LIMITED"), &json!(true)),
        "{body}"
    );
    assert!(body["retryAfterMs"].as_u64().is_some_and(|ms| ms > 0));
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("mcp_sessions_per_ip"),
        "{body}"
    );
    assert!(grown < 64 * 1024, "RSS grew {grown} KiB under the flood");

    // Many IPs: the host's total holds (40 here), whoever asks.
    let mut total = opened.len();
    for n in 2..12u8 {
        let c = from(n);
        for _ in 0..8 {
            if initialize(&c, &base).await.0 == 200 {
                total += 1;
            }
        }
    }
    assert_eq!(total, 40, "limits.mcp_sessions_total");
    let (status, _, text) = initialize(&from(20), &base).await;
    assert_eq!(status, 429, "{text}");
    assert!(text.contains("mcp_sessions_total"), "{text}");

    // Closing a session gives its place back.
    let closed = me
        .delete(format!("{base}/mcp"))
        .header("mcp-session-id", &opened[0])
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    let (status, _, text) = initialize(&me, &base).await;
    assert_eq!(status, 200, "a place was freed: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn expired_tampered_and_token_derived_admin_cookies_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(SystemClock.now_ms());
    let h = bare_host_at(dir.path(), clock.clone(), |c| c.admin.session_ttl_secs = 2).await;
    let c = crate::common::http();
    let snapshot = |cookie: &str| {
        c.get(format!("{}/admin/api/snapshot", h.base))
            .header("cookie", format!("{COOKIE}={cookie}"))
    };
    let signed_in = c
        .post(format!("{}/admin/login", h.base))
        .json(&json!({ "token": DEVNET_OWNER_TOKEN }))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200);
    let set = signed_in.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        set.contains("Max-Age=2;") || set.ends_with("Max-Age=2"),
        "{set}"
    );
    let cookie = set
        .split(';')
        .next()
        .and_then(|kv| kv.split_once('='))
        .map(|(_, v)| v.to_string())
        .unwrap();
    assert_eq!(send(snapshot(&cookie)).await.status, 200, "the real cookie");

    // The old way: a cookie keyed by a key derived from the token's hash
    // (which sits in the environment and config tooling).
    let hash = OwnerTokenHash::of_token(DEVNET_OWNER_TOKEN);
    let derived = LoginKeys::new(hash.derive_key("relay-admin-login-v1"), 3_600);
    let forged = derived.issue(clock.now_ms());
    let a = send(snapshot(&forged)).await;
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (401, Some("ADMIN_AUTH_REQUIRED")),
        "{}",
        a.body
    );
    // The real cookie, its expiry pushed out a year: the signature breaks.
    let mut parts: Vec<String> = cookie.split('.').map(str::to_owned).collect();
    parts[2] = (clock.now_ms() + 365 * 86_400_000).to_string();
    let tampered = parts.join(".");
    assert_eq!(send(snapshot(&tampered)).await.status, 401);
    // Until its age (2 s here) it serves; past it, whatever the browser
    // keeps, it is refused.
    clock.advance(1_999);
    assert_eq!(send(snapshot(&cookie)).await.status, 200, "within its age");
    clock.advance(1);
    let a = send(snapshot(&cookie)).await;
    assert_eq!(a.status, 401, "expired: {}", a.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stranger_cannot_hold_a_victims_nonces_past_the_caps() {
    const SRC: u64 = 8453;
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.limits.enabled = true;
        // the per-minute bucket is not what this test is about
        c.limits.per_minute.insert("intent".into(), 1_000);
        c.limits.intent_nonces_per_owner = 16;
    })
    .await;
    let victim = fresh_wallet(&devnet, "limits-attack-victim").await;
    let body = json!({
        "fromChain": SRC, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC",
        "amount": "5000000", "fromAddress": victim.address(),
        "toAddress": keys::seeded_signer("limits-attack-recipient").address(),
    });
    let prepare = |client: reqwest::Client| {
        let req = client
            .post(format!("{}/api/route/intent", h.base))
            .json(&body);
        async move { send(req).await }
    };
    let nonce = |a: &Answer| -> U256 {
        let signed = signed_body(&a.body["forms"]["permit2Witness"], &victim);
        signed["permit2"]["nonce"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut nonces = Vec::new();
    for i in 0..16 {
        let a = prepare(from(1)).await;
        assert_eq!(a.status, 200, "prepare {i}: {}", a.body);
        nonces.push(nonce(&a));
    }
    let refused = prepare(from(1)).await;
    assert_rate_limited(&refused, "the 17th open intent of one IP");
    assert!(
        refused.body["error"]
            .as_str()
            .unwrap()
            .contains("intents_per_ip"),
        "{}",
        refused.body
    );
    // Another IP gets in, but the victim's low nonces are not pushed
    // further: 16 are held, so its intents are handed random ones, each
    // its own (two routes sharing a nonce: the later would revert on chain).
    assert_eq!(nonces, (0..16u64).map(U256::from).collect::<Vec<_>>());
    let mut past = Vec::new();
    for _ in 0..3 {
        let a = prepare(from(2)).await;
        assert_eq!(a.status, 200, "{}", a.body);
        past.push(nonce(&a));
    }
    for n in &past {
        assert!(*n > U256::from(1u64 << 20), "a random nonce: {past:?}");
    }
    past.sort();
    past.dedup();
    assert_eq!(past.len(), 3, "never one nonce twice: {past:?}");
    devnet.stop();
}
