//! The privacy lane (spec §4.11, §8.2, issue 45) as its users meet it:
//!
//! - an RFC 9458 client nobody here wrote — HPKE from `@hpke/core` with
//!   `@hpke/hybridkem-x-wing`, Binary HTTP from `bhttp-js`, the response
//!   keys from WebCrypto (`conformance/tools/ohttp-client.mjs`) — quotes
//!   through the oblivious relay and the gateway and gets the plain API's
//!   answer, with X-Wing and with the X25519 fallback; the bytes on the
//!   wire have the fixed sizes; a tampered encapsulation is refused in the
//!   clear, a replayed one, an unpadded one, one without a Date and one to
//!   a path off the allowlist inside the encapsulation;
//! - `relay ohttp` (the CLI's client) gets a route's status through the
//!   relay;
//! - a `relay serve` process logging at debug, with the shared rate-limit
//!   store and a trusted proxy, keeps no outer address of gateway traffic
//!   in its log or its database and writes no line for the no-op — while
//!   the same log and database do hold a plain request's address and
//!   path, so the check can fail.

use std::path::Path;

use relay_devnet::{Devnet, DevnetConfig};
use serde_json::{json, Value};

use crate::common::{self, Running};

const SRC: u64 = 8453;
const DST: u64 = 42161;

/// The oblivious relay beside `h`, on a free port; its base URL.
async fn relay_for(base: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let gateway = base.to_string();
    tokio::spawn(async move {
        relay_privacy::relay::serve(listener, &gateway, std::future::pending())
            .await
            .unwrap();
    });
    url
}

/// The gateway's key list (`application/ohttp-keys`) at `base`.
async fn key_list(base: &str) -> Vec<u8> {
    let r = common::http()
        .get(format!("{base}/api/ohttp/keys"))
        .send()
        .await
        .unwrap();
    r.bytes().await.unwrap().to_vec()
}

/// POSTs the encapsulated `body` of `media` to the gateway at `base`, with
/// the outer `headers`.
async fn post_gateway(
    base: &str,
    media: &str,
    body: Vec<u8>,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut req = common::http()
        .post(format!("{base}/api/ohttp/gateway"))
        .header("content-type", media)
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

/// The privacy lane's service of the host `h` (its gateway's counters).
fn lane_of(h: &Running) -> std::sync::Arc<relay_privacy::PrivacyService> {
    h.host_state
        .handles
        .get::<Option<std::sync::Arc<relay_privacy::PrivacyService>>>()
        .flatten()
        .expect("the privacy lane is on")
}

/// The JavaScript client's answers to `cases`, sent through `relay`.
async fn client(relay: &str, cases: Value) -> Vec<Value> {
    let arg = json!({"relay": relay, "cases": cases}).to_string();
    let out = tokio::task::spawn_blocking(move || {
        relay_fixtures::js_oracle("ohttp-client.mjs", "bhttp-js", &[&arg])
    })
    .await
    .unwrap();
    out.as_array().unwrap().clone()
}

fn quote_body() -> Value {
    json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
        "amount": "5000000", "fromAddress": relay_devnet::keys::anvil_address(1).to_string(),
        "toAddress": relay_devnet::keys::anvil_address(1).to_string()})
}

/// What two quotes must agree on.
fn gist(q: &Value) -> Value {
    json!({"bridge": q["bridge"], "estimated": q["to"]["estimated"], "min": q["to"]["min"],
        "rails": q["compared"].as_array().map(|c| c.len())})
}

async fn plain_quote(h: &Running) -> Value {
    let (code, text) = common::post(&h.base, "/api/route/quote", &quote_body(), &[]).await;
    assert_eq!(code, 200, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// The only answer of case `i`, its inner body parsed.
fn answer(results: &[Value], i: usize) -> (Value, Value) {
    let a = results[i]["answers"][0].clone();
    let body = serde_json::from_str(a["body"].as_str().unwrap()).unwrap_or(Value::Null);
    (a, body)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_nobody_here_wrote_quotes_through_the_relay_like_the_plain_api() {
    let (devnet, dir, h) = common::devnet_host([SRC, DST]).await;
    let relay = relay_for(&h.base).await;

    let before = plain_quote(&h).await;
    let chains = json!({"method": "GET", "path": "/api/route/chains"});
    let with = |extra: Value| {
        let mut c = chains.clone();
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };
    let results = client(
        &relay,
        json!([
            {"method": "POST", "path": "/api/route/quote", "body": quote_body()},
            {"method": "POST", "path": "/api/route/quote", "body": quote_body(), "kem": "x25519", "aead": "chacha20poly1305"},
            {"method": "GET", "path": "/api/privacy/noop"},
            {"method": "POST", "path": "/api/keys", "body": {}},
            {"method": "GET", "path": "/admin/api/dashboard"},
            with(json!({"pad": false})),
            with(json!({"date": false})),
            with(json!({"replay": true})),
            with(json!({"tamper": true})),
        ]),
    )
    .await;
    let after = plain_quote(&h).await;

    // The same answer as the plain API, through X-Wing and through X25519.
    for i in [0, 1] {
        let (a, q) = answer(&results, i);
        assert_eq!(
            (a["outerStatus"].as_u64(), a["status"].as_u64()),
            (Some(200), Some(200)),
            "{a}"
        );
        assert_eq!(a["outerType"], "message/ohttp-res");
        assert!(
            gist(&q) == gist(&before) || gist(&q) == gist(&after),
            "{q} vs {before}"
        );
        // Fixed sizes: the inner request is 16,384 bytes, the answer a
        // multiple of 8,192; on the wire, header + enc + 16,384 + tag and
        // response nonce + the padded answer + tag.
        // (X-Wing's enc is 1,120 bytes, X25519's 32; the response nonce is
        // max(Nn, Nk): 16 for AES-128-GCM, 32 for ChaCha20-Poly1305)
        let (enc, nonce) = if i == 0 { (1120, 16) } else { (32, 32) };
        assert_eq!(
            a["requestBytes"].as_u64(),
            Some(7 + enc + 16_384 + 16),
            "{a}"
        );
        let inner = a["innerBytes"].as_u64().unwrap();
        assert_eq!(inner % 8_192, 0, "{a}");
        assert_eq!(a["responseBytes"].as_u64(), Some(nonce + inner + 16), "{a}");
    }
    // The no-op answers 8,192 bytes through the gateway, like a status.
    let (noop, body) = answer(&results, 2);
    assert_eq!(
        (noop["status"].as_u64(), noop["innerBytes"].as_u64()),
        (Some(200), Some(8_192)),
        "{noop}"
    );
    assert_eq!(body["ok"], true);
    // Off the allowlist: refused inside the encapsulation.
    for i in [3, 4] {
        let (a, e) = answer(&results, i);
        assert_eq!(
            (a["outerStatus"].as_u64(), a["status"].as_u64()),
            (Some(200), Some(403)),
            "{a}"
        );
        assert_eq!(e["errorCode"], "OHTTP_TARGET_REFUSED", "{e}");
    }
    let (a, e) = answer(&results, 5);
    assert_eq!(
        (a["status"].as_u64(), e["errorCode"].as_str()),
        (Some(400), Some("OHTTP_PADDING_REQUIRED")),
        "{a}"
    );
    let (a, e) = answer(&results, 6);
    assert_eq!(
        (a["status"].as_u64(), e["errorCode"].as_str()),
        (Some(400), Some("OHTTP_DATE_SKEW")),
        "{a}"
    );
    // A replay: the first copy answered, the second refused inside.
    let replay = &results[7]["answers"];
    assert_eq!(replay[0]["status"], 200, "{replay}");
    assert_eq!(replay[1]["status"], 409, "{replay}");
    assert!(
        replay[1]["body"]
            .as_str()
            .unwrap()
            .contains("OHTTP_REPLAYED"),
        "{replay}"
    );
    // Tampered: nothing opens, refused in the clear.
    let (a, e) = answer(&results, 8);
    assert_eq!(
        (a["outerStatus"].as_u64(), e["errorCode"].as_str()),
        (Some(400), Some("OHTTP_MALFORMED")),
        "{a}"
    );

    // The key list is served as RFC 9540 says and the CLI's client uses it.
    let keys = common::http()
        .get(format!("{}/api/ohttp/keys", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(keys.headers()["content-type"], "application/ohttp-keys");
    let list = ohttp::KeyConfig::decode_list(&keys.bytes().await.unwrap()).unwrap();
    assert_eq!(list.len(), 2, "X-Wing, then X25519");
    let cli =
        |path: &str| common::relay_cli(dir.path(), &["ohttp", "--relay", &relay, "GET", path]);
    let (code, _, err) = cli("/api/privacy/noop");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("HTTP 200 (inner response 8192 bytes)"),
        "{err}"
    );
    let (code, out, err) = cli("/api/route/chains");
    assert_eq!(code, 0, "{err}");
    let chains: Value = serde_json::from_str(&out).unwrap();
    assert!(chains.to_string().contains(&SRC.to_string()), "{chains}");
    let (code, _, err) = cli("/api/keys");
    assert_eq!(code, 1, "refused inside: {err}");
    assert!(err.contains("HTTP 403"), "{err}");
    devnet.stop();
}

/// Every byte of the files under `dir`, as text (lossy).
fn bytes_under(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            all.push_str(&bytes_under(&p));
        } else if let Ok(b) = std::fs::read(&p) {
            all.push_str(&String::from_utf8_lossy(&b));
        }
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn the_host_keeps_no_outer_address_of_gateway_traffic_and_no_line_for_the_noop() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    common::write_host_config(&devnet, &sims, dir.path(), port, |c| {
        c.limits.enabled = true;
        c.limits.backend = relay_config::LimitsBackend::Store;
        c.limits.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    });
    let base = format!("http://127.0.0.1:{port}");
    let mut host = common::spawn_host_with(dir.path(), &[("RELAY_LOG", "debug")]);
    common::wait_ready(&base).await;
    let http = common::http();

    // Gateway traffic from an address the host must not keep.
    let list = key_list(&base).await;
    for _ in 0..3 {
        let request = ohttp::ClientRequest::from_encoded_config_list(&list).unwrap();
        let inner = relay_privacy::client::encode("GET", "/api/route/chains", &[], b"").unwrap();
        let (enc, opener) = request.encapsulate(&inner).unwrap();
        let outer = [
            ("x-forwarded-for", "198.51.100.77"),
            ("user-agent", "outer-marker-7f3a"),
        ];
        let resp = post_gateway(&base, "message/ohttp-req", enc, &outer).await;
        assert_eq!(resp.status(), 200);
        let answer = relay_privacy::client::decode(
            &opener.decapsulate(&resp.bytes().await.unwrap()).unwrap(),
        )
        .unwrap();
        assert_eq!(answer.status, 200);
    }
    // No-ops from another, and plain requests (the control) from a third.
    for _ in 0..20 {
        let r = http
            .get(format!("{base}/api/privacy/noop"))
            .header("x-forwarded-for", "198.51.100.78")
            .send()
            .await
            .unwrap();
        let body = r.bytes().await.unwrap();
        assert_eq!(body.len(), relay_privacy::http::NOOP_BYTES);
    }
    for _ in 0..3 {
        let r = http
            .get(format!("{base}/api/route/chains"))
            .header("x-forwarded-for", "198.51.100.79")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    host.kill().unwrap();
    host.wait().unwrap();

    let log = std::fs::read_to_string(dir.path().join("host.log")).unwrap();
    let store = bytes_under(&dir.path().join("data"));
    // The control: a plain request's path is logged and its address stored.
    assert!(log.contains("/api/route/chains"), "debug logging is on");
    assert!(
        store.contains("198.51.100.79"),
        "the plain caller's rate-limit cell is stored"
    );
    for (what, marker) in [
        ("the gateway's outer address", "198.51.100.77"),
        ("the gateway's outer headers", "outer-marker-7f3a"),
        ("the no-op's caller", "198.51.100.78"),
    ] {
        assert!(!log.contains(marker), "{what} in the log");
        assert!(!store.contains(marker), "{what} in the store");
    }
    assert!(
        !log.contains("/api/privacy/noop") && !log.contains("privacy-noop"),
        "a line for the no-op"
    );
    devnet.stop();
}

/// The independent verifier's verdict on `base`'s policy log.
async fn verify_policy(base: &str) -> Value {
    let out = tokio::process::Command::new("node")
        .arg(relay_fixtures::workspace_root().join("conformance/tools/verify-policy.mjs"))
        .arg(base)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn conformance(base: &str) -> Value {
    let (code, report) = common::get(&format!("{base}/api/privacy/conformance")).await;
    assert_eq!(code, 200, "{report}");
    report
}

fn failed(report: &Value) -> Vec<String> {
    report["invariants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["ok"] != true)
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_policy_log_verifies_independently_a_loosening_waits_and_conformance_catches_a_break() {
    let (devnet, dir, h) = common::devnet_host([SRC, DST]).await;

    let report = conformance(&h.base).await;
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(
        report["invariants"].as_array().unwrap().len(),
        6,
        "{report}"
    );
    let first = verify_policy(&h.base).await;
    assert_eq!(
        first,
        json!({"ok": true, "entries": 1, "kinds": ["neutral"], "why": null})
    );

    // A replica whose operator loosened a promise: logged as loosened,
    // in force only after the notice, and the lane keeps the old value.
    let looser = common::serve_with(
        &devnet,
        dir.path(),
        |_| {},
        |c| {
            c.sections
                .edit(
                    relay_privacy::SECTION,
                    |p: &mut relay_privacy::PrivacyConfig| {
                        p.key_epoch_hours = 48;
                    },
                )
                .unwrap();
        },
    )
    .await;
    let checked = verify_policy(&looser.base).await;
    assert_eq!(
        checked["kinds"],
        json!(["neutral", "loosened"]),
        "{checked}"
    );
    assert_eq!(checked["ok"], true, "{checked}");
    let (_, log) = common::get(&format!("{}/api/privacy/policy", looser.base)).await;
    let entry = &log["entries"][1]["entry"];
    let day = 86_400_000u64;
    assert_eq!(
        entry["effectiveAt"].as_u64().unwrap() - entry["at"].as_u64().unwrap(),
        30 * day,
        "{entry}"
    );
    assert_eq!(log["inForce"]["ohttp.keyEpochHours"], 24, "{log}");
    assert_eq!(log["running"]["ohttp.keyEpochHours"], 24, "{log}");
    assert_eq!(conformance(&looser.base).await["ok"], true);

    // Broken on purpose: a gateway caller's rate-limit cell in the store,
    // then an altered policy entry.
    let store = h.host_state.store.clone();
    sqlx::query("INSERT INTO rate_limit_cells (k, tat_ms) VALUES ('ohttp-gateway|203.0.113.9', 1)")
        .execute(store.pool())
        .await
        .unwrap();
    let report = conformance(&h.base).await;
    assert_eq!(
        (report["ok"].as_bool(), failed(&report)),
        (Some(false), vec!["no-outer-address-stored".to_string()]),
        "{report}"
    );
    sqlx::query("UPDATE privacy_policy SET body = REPLACE(body, '\"neutral\"', '\"tightened\"') WHERE seq = 1")
        .execute(store.pool())
        .await
        .unwrap();
    let report = conformance(&h.base).await;
    assert!(
        failed(&report).contains(&"policy-log-verifies".to_string()),
        "{report}"
    );
    let tampered = verify_policy(&h.base).await;
    assert_eq!(
        (tampered["ok"].as_bool(), tampered["why"].as_str()),
        (Some(false), Some("entry 1: the hash does not chain")),
        "{tampered}"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cover_proof_includes_a_settled_payout_a_user_can_check() {
    use relay_sealed::witness::{verify_inclusion, VerifyingKey};
    let (devnet, _dir, h) = common::devnet_host([SRC, DST]).await;
    let (_, empty) = common::get(&format!("{}/api/stealth/coverproof", h.base)).await;
    assert_eq!(
        (empty["size"].as_u64(), empty["kObserver"].as_u64()),
        (Some(0), Some(0)),
        "{empty}"
    );

    common::approve_permit2(&devnet, SRC, 1).await;
    let body = common::permit_body(&devnet, (SRC, DST), 2_000_000, 45);
    let (receipt, done) = common::execute_to_end(&h.base, &body).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let id = receipt["id"].as_str().unwrap();
    let (code, proof) = common::get(&format!("{}/api/stealth/coverproof?route={id}", h.base)).await;
    assert_eq!(code, 200, "{proof}");
    assert_eq!(
        (
            proof["size"].as_u64(),
            proof["kObserver"].as_u64(),
            proof["kUsers"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{proof}"
    );

    // What a user checks: their leaf, its inclusion under the root, and
    // the host's signature of the commitment.
    let tx = done["destTx"].as_str().unwrap().to_ascii_lowercase();
    let leaf = relay_privacy::coverproof::leaf(id, &DST.to_string(), &tx);
    let inclusion = &proof["inclusion"];
    assert_eq!(inclusion["leaf"], hex::encode(leaf), "{proof}");
    let unhex32 = |v: &Value| -> [u8; 32] {
        hex::decode(v.as_str().unwrap())
            .unwrap()
            .try_into()
            .unwrap()
    };
    verify_inclusion(
        &unhex32(&proof["root"]),
        1,
        inclusion["index"].as_u64().unwrap() + 1,
        &leaf,
        &hex::decode(inclusion["proof"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    let key = VerifyingKey::from_bytes(&unhex32(&proof["publicKey"])).unwrap();
    let sig: [u8; 64] = hex::decode(proof["signature"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    key.verify_strict(
        proof["commitment"].as_str().unwrap().as_bytes(),
        &ed25519_dalek::Signature::from_bytes(&sig),
    )
    .unwrap();
    assert!(
        proof["commitment"]
            .as_str()
            .unwrap()
            .ends_with(&format!("|{}|1|1", proof["root"].as_str().unwrap())),
        "{proof}"
    );
    let (_, other) = common::get(&format!(
        "{}/api/stealth/coverproof?route=rt_nobody",
        h.base
    ))
    .await;
    assert!(other.get("inclusion").is_none(), "{other}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn relay_mcp_sends_its_private_tools_through_the_oblivious_relay() {
    use std::sync::atomic::Ordering;
    let (devnet, _dir, h) = common::devnet_host([SRC, DST]).await;
    let relay = relay_for(&h.base).await;
    let lane = lane_of(&h);
    let opened = || lane.gateway.stats.opened.load(Ordering::Relaxed);
    let before = opened();
    let mut execute = common::permit_body(&devnet, (SRC, DST), 5_000_000, 31);
    execute["x-relay-sandbox"] = json!("1");
    let seen = crate::mcp::reference_client(
        "stdio",
        json!({
            "command": env!("CARGO_BIN_EXE_relay"),
            "args": ["mcp", "--url", h.base, "--ohttp-relay", relay],
            "env": {"RELAY_LOG": "warn", "RELAY_SESSION_TOKEN": ""},
            "calls": [["execute", execute], ["quote", quote_body()]],
        }),
    )
    .await;
    let sbx = &seen["calls"][0];
    assert_eq!(sbx["isError"], false, "{sbx}");
    assert!(
        sbx["structured"]["id"]
            .as_str()
            .unwrap()
            .starts_with("sbx_"),
        "{sbx}"
    );
    assert_eq!(seen["calls"][1]["isError"], false, "{seen}");
    // The execute went through the gateway; the read-only quote did not.
    assert_eq!(opened() - before, 1, "{seen}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_rotate_each_epoch_are_logged_first_and_the_previous_epochs_still_open() {
    use relay_types::clock::{Clock as _, ManualClock, SystemClock};
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(SystemClock.now_ms());
    let h = common::serve_at(&devnet, dir.path(), clock.clone(), |_| {}).await;
    let http = common::http();
    let keys = || key_list(&h.base);
    // One request made with `list` at the host's time.
    let ask = |list: Vec<u8>| {
        let (base, now) = (h.base.clone(), clock.now_ms());
        async move {
            let date = std::time::UNIX_EPOCH + std::time::Duration::from_millis(now);
            let inner =
                relay_privacy::client::encode_at("GET", "/api/privacy/noop", (&[], b""), date)
                    .unwrap();
            let (enc, opener) = ohttp::ClientRequest::from_encoded_config_list(&list)
                .unwrap()
                .encapsulate(&inner)
                .unwrap();
            let resp = post_gateway(&base, "message/ohttp-req", enc, &[]).await;
            let status = resp.status().as_u16();
            let bytes = resp.bytes().await.unwrap();
            match status {
                200 => (
                    200,
                    relay_privacy::client::decode(&opener.decapsulate(&bytes).unwrap())
                        .unwrap()
                        .status,
                ),
                s => (s, 0),
            }
        }
    };
    let day = 86_400_000;
    let first = keys().await;
    assert_eq!(ask(first.clone()).await, (200, 200));
    clock.advance(day);
    let second = keys().await;
    assert_ne!(first, second, "a new epoch, new keys");
    assert_eq!(
        ask(first.clone()).await,
        (200, 200),
        "the previous epoch's keys still open"
    );
    assert_eq!(ask(second.clone()).await, (200, 200));
    clock.advance(day);
    let (code, _) = ask(first.clone()).await;
    assert_eq!(code, 422, "two epochs old: OHTTP_KEY_UNKNOWN in the clear");
    // Every configuration served was logged first: the current epoch's
    // read back from the witness log equal, and the log holds all three
    // epochs' pairs.
    let third = keys().await;
    assert_eq!(conformance(&h.base).await["invariants"][0]["ok"], true);
    let listed = http
        .get(format!("{}/api/ohttp/keys", h.base))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(listed["list"], hex::encode(&third), "{listed}");
    let (_, range) = common::get(&format!(
        "{}/api/messages/v2/witness/range?from=1&limit=20",
        h.base
    ))
    .await;
    let entries = range["entries"].as_array().unwrap();
    for w in listed["witnessed"].as_array().unwrap() {
        // the served configuration is in the body the log's entry hashes
        let body = w["body"].as_str().unwrap();
        let logged = entries.iter().find(|e| e["s"] == w["s"]).unwrap();
        assert_eq!(
            logged["b"],
            hex::encode(<sha2::Sha256 as sha2::Digest>::digest(body.as_bytes())),
            "{w}"
        );
        let config = hex::decode(w["key"]["config"].as_str().unwrap()).unwrap();
        assert!(third.windows(config.len()).any(|c| c == config), "{w}");
    }
    assert!(entries.len() >= 6, "three epochs, two keys each: {range}");
    devnet.stop();
}

/// A writer whose bytes stay readable while the chunked client holds it.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl futures::AsyncWrite for Shared {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0.lock().unwrap().extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_close(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chunked_request_gets_its_answer_in_chunks_of_the_fixed_size() {
    use futures::{AsyncReadExt as _, AsyncWriteExt as _};
    let (devnet, _dir, h) = common::devnet_host([SRC, DST]).await;
    let list = key_list(&h.base).await;
    let body = quote_body().to_string();
    let headers = [("content-type", "application/json")];
    let mut inner =
        relay_privacy::client::encode("POST", "/api/route/quote", &headers, body.as_bytes())
            .unwrap();
    // a larger body than one floor: the next multiple
    inner.resize(2 * relay_privacy::pad::REQUEST_FLOOR, 0);
    let wire = Shared::default();
    let mut request = ohttp::ClientRequest::from_encoded_config_list(&list)
        .unwrap()
        .encapsulate_stream(wire.clone())
        .unwrap();
    request.write_all(&inner).await.unwrap();
    request.close().await.unwrap();
    let sent = wire.0.lock().unwrap().clone();
    let resp = post_gateway(&h.base, "message/ohttp-chunked-req", sent, &[]).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "message/ohttp-chunked-res");
    let sealed = resp.bytes().await.unwrap().to_vec();
    let mut plain = Vec::new();
    request
        .response(futures::io::Cursor::new(sealed))
        .unwrap()
        .read_to_end(&mut plain)
        .await
        .unwrap();
    assert_eq!(plain.len() % 8_192, 0, "padded to the floor's multiple");
    let answer = relay_privacy::client::decode(&plain).unwrap();
    assert_eq!(answer.status, 200);
    let lane: Value = serde_json::from_slice(&answer.body).unwrap();
    let plain_quote = plain_quote(&h).await;
    assert_eq!(gist(&lane), gist(&plain_quote), "{lane}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_copies_of_one_encapsulation_at_once_are_answered_once() {
    use std::sync::atomic::Ordering;
    let (devnet, _dir, h) = common::devnet_host([SRC, DST]).await;
    let lane = lane_of(&h);
    let list = key_list(&h.base).await;
    let inner = relay_privacy::client::encode("GET", "/api/privacy/noop", &[], b"").unwrap();
    let (enc, _opener) = ohttp::ClientRequest::from_encoded_config_list(&list)
        .unwrap()
        .encapsulate(&inner)
        .unwrap();
    let (opened, replayed) = (
        lane.gateway.stats.opened.load(Ordering::Relaxed),
        lane.gateway.stats.replayed.load(Ordering::Relaxed),
    );
    let copies: Vec<_> = (0..20)
        .map(|_| {
            let (base, enc) = (h.base.clone(), enc.clone());
            tokio::spawn(async move {
                let r = post_gateway(&base, "message/ohttp-req", enc, &[]).await;
                (r.status().as_u16(), r.bytes().await.unwrap().len())
            })
        })
        .collect();
    for c in copies {
        // every copy opens and is answered at the one fixed size (a watcher
        // cannot tell the answered one from the refused ones)
        assert_eq!(c.await.unwrap(), (200, 16 + 8_192 + 16));
    }
    let stats = &lane.gateway.stats;
    assert_eq!(stats.opened.load(Ordering::Relaxed) - opened, 20);
    assert_eq!(
        stats.replayed.load(Ordering::Relaxed) - replayed,
        19,
        "one answered, nineteen refused as replays"
    );
    devnet.stop();
}
