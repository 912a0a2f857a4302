//! Issue #40 as an attacker plays it, with fresh wallets against a devnet
//! host: a stranger cannot cancel someone's schedule or conditional (it
//! stays live and still fires; the owner's credential and the record's own
//! cancel token do cancel), cannot fill a route's hook limit, cannot get a
//! dry run to vouch for a forged permit; and the caller's mistakes —
//! bitcoin → EVM without a usable refund address, a netting withdrawal to
//! the zero address — are typed, signed, non-retryable 4xx answers that
//! send nothing, and the served `/api/errors` catalogue has no code for a
//! caller's mistake that is a 5xx or retryable.

use crate::{
    common::{self, permit_body, post, serve, Running},
    netting::{self, deposit_body, enrol, relayer_nonce, send_to_relayer, withdraw_body},
    webhooks::hook_signature,
};
use alloy::{
    primitives::{Address, U256},
    signers::local::PrivateKeySigner,
};
use relay_api::Blame;
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_host::devnet::DEVNET_OWNER_TOKEN;
use relay_types::{Clock as _, SystemClock};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const USDC: u64 = 1_000_000;

async fn up(
    tweak: impl FnOnce(&mut relay_config::HostConfig),
) -> (Devnet, tempfile::TempDir, Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), tweak).await;
    (devnet, dir, h)
}

fn owner() -> String {
    format!("Bearer {DEVNET_OWNER_TOKEN}")
}

/// `method` `path` with `headers` (and a JSON `body`); the answer.
async fn call(
    h: &Running,
    (method, path): (reqwest::Method, &str),
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> common::Answer {
    let mut req = crate::common::http().request(method, format!("{}{path}", h.base));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    common::send(req).await
}

/// A refusal as a client must be able to trust it: the status, the code,
/// not retryable, and signed by the host.
fn refused(a: &common::Answer, status: u16, code: &str) {
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (status, Some(code)),
        "{}",
        a.body
    );
    assert_eq!(a.body["retryable"], false, "{}", a.body);
    assert!(
        a.body["refusal"]["signature"].is_string(),
        "a signed refusal: {}",
        a.body
    );
}

fn route_to(to: Address) -> Value {
    json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
           "amount": "1000000", "toAddress": to})
}

/// Polls `path` (bounded: `secs`) until `done` holds of it.
async fn until(h: &Running, path: &str, secs: u64, done: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let a = call(h, (reqwest::Method::GET, path), &[], None).await;
        if done(&a.body) {
            return a.body;
        }
        assert!(Instant::now() < end, "{path}: {}", a.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stranger_cannot_cancel_a_live_schedule_or_conditional_and_they_still_fire() {
    let (devnet, _dir, h) = up(|c| c.primitives.tick_interval_ms = 200).await;
    let auth = owner();
    let post_json = |path: &'static str, body: Value, hs: Vec<(&'static str, String)>| {
        let h = &h;
        async move {
            let hs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            call(h, (reqwest::Method::POST, path), &hs, Some(&body)).await
        }
    };
    let delete = |path: String, hs: Vec<(&'static str, String)>| {
        let h = &h;
        async move {
            let hs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            call(h, (reqwest::Method::DELETE, &path), &hs, None).await
        }
    };
    let now = SystemClock.now_ms() / 1000;
    let payee = PrivateKeySigner::random().address();

    // The owner's live schedule: first run in 3 s, then every 10 s.
    let body = json!({"route": route_to(payee), "everySeconds": 10, "count": 3,
                      "at": now + 3, "live": true});
    let s = post_json(
        "/api/route/schedule",
        body,
        vec![("authorization", auth.clone())],
    )
    .await;
    assert_eq!(s.status, 200, "{}", s.body);
    let sched = format!("/api/route/schedule/{}", s.body["id"].as_str().unwrap());
    assert!(s.body["cancelToken"].as_str().unwrap().starts_with("pct_"));

    // A user's conditional (no owner credential): it fires in 4 s.
    let body = json!({"route": route_to(payee), "when": {"type": "timeAfter", "at": now + 4}});
    let c = post_json("/api/route/conditional", body, vec![]).await;
    assert_eq!(c.status, 200, "{}", c.body);
    let cond = format!("/api/route/conditional/{}", c.body["id"].as_str().unwrap());
    let cond_token = c.body["cancelToken"].as_str().unwrap().to_string();

    // The attacker: anonymous, a made-up bearer, a made-up token, and the
    // token of a record of their own.
    let body = json!({"route": route_to(payee), "when": {"type": "timeAfter", "at": now + 3600}});
    let own = post_json("/api/route/conditional", body, vec![]).await;
    let own_token = own.body["cancelToken"].as_str().unwrap().to_string();
    for path in [&sched, &cond] {
        let anonymous = delete(path.clone(), vec![]).await;
        refused(&anonymous, 401, "PRIMITIVE_CANCEL_UNAUTHORIZED");
        let bearer = delete(path.clone(), vec![("authorization", "Bearer guess".into())]).await;
        refused(&bearer, 401, "PRIMITIVE_CANCEL_UNAUTHORIZED");
        for token in [own_token.clone(), "pct_00".into()] {
            let wrong = delete(path.clone(), vec![("x-cancel-token", token)]).await;
            refused(&wrong, 403, "PRIMITIVE_CANCEL_FORBIDDEN");
        }
    }
    let read = call(&h, (reqwest::Method::GET, &sched), &[], None).await;
    assert_eq!(read.body["status"], "active", "{}", read.body);
    assert!(
        read.body["cancelToken"].is_null(),
        "shown once: {}",
        read.body
    );

    // Both still fire.
    let fired = until(&h, &sched, 30, |v| {
        !v["runs"].as_array().unwrap().is_empty()
    })
    .await;
    assert_eq!(fired["status"], "active", "{fired}");
    let fired = until(&h, &cond, 30, |v| v["status"] == "executed").await;
    assert_eq!(fired["runs"][0]["event"], "triggered", "{fired}");

    // The owner cancels the schedule; the user cancels with the record's token.
    let gone = delete(sched.clone(), vec![("authorization", auth.clone())]).await;
    assert_eq!(
        (gone.status, gone.body["status"].as_str()),
        (200, Some("cancelled")),
        "{}",
        gone.body
    );
    let own_path = format!(
        "/api/route/conditional/{}",
        own.body["id"].as_str().unwrap()
    );
    let mine = delete(own_path.clone(), vec![("x-cancel-token", own_token)]).await;
    assert_eq!(
        (mine.status, mine.body["status"].as_str()),
        (200, Some("cancelled"))
    );
    let late = delete(cond.clone(), vec![("x-cancel-token", cond_token)]).await;
    assert_eq!(
        late.body["errorCode"], "PRIMITIVE_FINISHED",
        "{}",
        late.body
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_strangers_hooks_on_someone_elses_route_are_refused_and_fill_nothing() {
    let (devnet, _dir, h) = up(|c| c.notify.max_hooks_per_route = 2).await;
    // The victim's route (sandbox: nothing moves, and it can be hooked).
    let body = permit_body(&devnet, (SRC, DST), 2_000_000, 91);
    let (code, text) = post(
        &h.base,
        "/api/route/execute",
        &body,
        &[("x-relay-sandbox", "1")],
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let route: Value = serde_json::from_str(&text).unwrap();
    let route = route["id"].as_str().unwrap();
    let url = "http://127.0.0.1:9/hook";
    let stranger = PrivateKeySigner::random();
    let register = |body: Value| {
        let h = &h;
        async move { call(h, (reqwest::Method::POST, "/api/hooks"), &[], Some(&body)).await }
    };
    for _ in 0..3 {
        let bare = register(json!({"routeId": route, "url": url})).await;
        refused(&bare, 401, "HOOK_PROOF_REQUIRED");
        let signature = hook_signature(&stranger, route, url);
        let theirs = register(json!({"routeId": route, "url": url, "signature": signature})).await;
        refused(&theirs, 403, "HOOK_PROOF_INVALID");
    }
    // The victim signed for another URL: no use for this one.
    let other = hook_signature(&keys::anvil_signer(1), route, "http://127.0.0.1:9/other");
    let replayed = register(json!({"routeId": route, "url": url, "signature": other})).await;
    refused(&replayed, 403, "HOOK_PROOF_INVALID");
    // The route's own proof still registers up to the full limit.
    for _ in 0..2 {
        let signature = hook_signature(&keys::anvil_signer(1), route, url);
        let ok = register(json!({"routeId": route, "url": url, "signature": signature})).await;
        assert_eq!(
            (ok.status, ok.body["status"].as_str()),
            (200, Some("pending")),
            "{}",
            ok.body
        );
    }
    devnet.stop();
}

/// `body` with its permit signed by `who` instead of its owner.
fn forged(devnet: &Devnet, mut body: Value, who: &PrivateKeySigner) -> Value {
    use relay_devnet::contracts::{eip712, permit2_domain, sign_typed};
    let p = &body["permit2"];
    let n = |v: &Value| U256::from_str_radix(v.as_str().unwrap(), 10).unwrap();
    let msg = eip712::PermitTransferFrom {
        permitted: eip712::TokenPermissions {
            token: devnet.chain(SRC).unwrap().deployment.usdc,
            amount: n(&p["permitted"]["amount"]),
        },
        spender: keys::relayer().address(),
        nonce: n(&p["nonce"]),
        deadline: n(&p["deadline"]),
    };
    let sig = sign_typed(who, &msg, &permit2_domain(SRC));
    body["permit2"]["signature"] = json!(format!("0x{}", hex::encode(sig)));
    body
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_checks_the_signature_and_would_pull_what_the_route_pulls() {
    let (devnet, _dir, h) = up(|_| {}).await;
    common::approve_permit2(&devnet, SRC, 1).await;
    let amount = 3_000_000u64;
    let mut body = permit_body(&devnet, (SRC, DST), amount, 93);
    body["dryRun"] = json!(true);
    let mut live_false = body.clone();
    live_false.as_object_mut().unwrap().remove("dryRun");
    live_false["live"] = json!(false);
    let stranger = PrivateKeySigner::random();
    let forgeries = [
        ("dryRun", forged(&devnet, body.clone(), &stranger)),
        ("live:false", forged(&devnet, live_false, &stranger)),
    ];
    for (name, dry) in forgeries {
        let (code, text) = post(&h.base, "/api/route/execute", &dry, &[]).await;
        let a: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (code, a["errorCode"].as_str()),
            (400, Some("PERMIT2_INVALID")),
            "{name}: {a}"
        );
    }
    let (code, text) = post(&h.base, "/api/route/execute", &body, &[]).await;
    assert_eq!(code, 200, "{text}");
    let dry: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(dry["status"], "DRY", "{dry}");
    let pull = dry["wouldSend"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["action"] == "permit2-pull")
        .unwrap_or_else(|| panic!("a pull: {dry}"));
    assert_eq!(
        pull["amount"],
        amount.to_string(),
        "the amount the live route pulls: {dry}"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn bitcoin_to_evm_mistakes_are_typed_signed_4xx_answers() {
    let (devnet, _dir, h) = up(|_| {}).await;
    let to = PrivateKeySigner::random().address();
    let base = json!({"fromChain": "bitcoin", "toChain": DST, "fromToken": "BTC", "toToken": "USDC",
                      "amount": "150000", "toAddress": to, "live": true});
    let mut mainnet = base.clone();
    mainnet["fromAddress"] = json!("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq");
    for (name, body) in [
        ("without fromAddress", base),
        ("a mainnet bech32 fromAddress", mainnet),
    ] {
        let a = call(
            &h,
            (reqwest::Method::POST, "/api/route/execute"),
            &[],
            Some(&body),
        )
        .await;
        assert!(
            (400..500).contains(&a.status),
            "{name}: {} {}",
            a.status,
            a.body
        );
        assert_eq!(a.body["retryable"], false, "{name}: {}", a.body);
        assert_eq!(a.body["field"], "fromAddress", "{name}: {}", a.body);
        assert!(
            a.body["refusal"]["signature"].is_string(),
            "{name}: {}",
            a.body
        );
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_served_error_catalogue_never_answers_a_callers_mistake_as_5xx_or_retryable() {
    let (devnet, _dir, h) = up(|_| {}).await;
    let served = call(&h, (reqwest::Method::GET, "/api/errors"), &[], None).await;
    let mut wrong = Vec::new();
    for e in served.body["errors"].as_array().unwrap() {
        let wire = e["errorCode"].as_str().unwrap();
        let code = relay_api::error_codes()
            .into_iter()
            .find(|c| c.as_str() == wire)
            .unwrap_or_else(|| panic!("{wire} served but not in the table"));
        let status = e["status"].as_u64().unwrap();
        let fine = match code.blame() {
            Blame::Input => (400..500).contains(&status) && e["retryable"] == false,
            Blame::State => (400..500).contains(&status),
            Blame::Host => (500..600).contains(&status),
            Blame::Unclassified => false,
        };
        if !fine {
            wrong.push(format!("{e}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_netting_withdrawal_to_the_zero_address_is_refused_and_sends_nothing() {
    let (devnet, _dir, h) = up(|_| {}).await;
    let base = &h.base;
    let who = keys::anvil_signer(5);
    let e = enrol(base, &who).await;
    assert_eq!(e.status, 200, "{}", e.body);
    let tx = send_to_relayer(&devnet, SRC, 5, 5 * USDC).await;
    let d = netting::post(
        base,
        "/api/netting/deposit",
        &deposit_body(who.address(), SRC, &tx),
    )
    .await;
    assert_eq!(d.status, 200, "{}", d.body);
    let before = (
        relayer_nonce(&devnet, DST).await,
        netting::balance_of(base, who.address()).await,
    );
    let w = netting::post(
        base,
        "/api/netting/withdraw",
        &withdraw_body(&who, 2 * USDC, (DST, Address::ZERO), 1),
    )
    .await;
    refused(&w, 400, "INVALID_FIELD");
    assert_eq!(w.body["field"], "toAddress", "{}", w.body);
    let after = (
        relayer_nonce(&devnet, DST).await,
        netting::balance_of(base, who.address()).await,
    );
    assert_eq!(after, before, "no transaction sent, nothing debited");
    devnet.stop();
}
