//! Policy-gated agent sessions end to end on the devnet: the owner issues
//! a session, funds its own address with USDC, and the agent's bearer
//! moves routes from it — within the policy, under the caps — through the
//! router, the address never holding gas. Refusals are typed and move
//! nothing; 1,000 concurrent executes against the caps never spend more
//! than the caps allow (in the store and on chain, on SQLite and on
//! Postgres); revoked and expired sessions are refused, and their unspent
//! balance returns to `refundTo` on chain.

use crate::common::{self, post, serve, until_terminal, usdc_balance, Running};
use alloy::{
    primitives::{Address, U256},
    providers::Provider,
};
use relay_devnet::{keys, Devnet, DevnetConfig, Token};
use relay_host::devnet::DEVNET_OWNER_TOKEN;
use relay_types::{Clock as _, SystemClock};
use serde_json::{json, Value};
use std::time::Duration;

const SRC: u64 = 8453;
const DST: u64 = 42161;
const USDC: u64 = 1_000_000;

fn owner() -> String {
    format!("Bearer {DEVNET_OWNER_TOKEN}")
}

fn addr(v: &Value) -> Address {
    v.as_str().unwrap().parse().unwrap()
}

fn units(v: &Value) -> U256 {
    v.as_str().unwrap().parse().unwrap()
}

/// A devnet on `chains` and a host serving it (sweeps every 100 ms).
async fn up<const N: usize>(
    chains: [u64; N],
    tweak: impl FnOnce(&mut relay_config::HostConfig),
) -> (Devnet, tempfile::TempDir, Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains(chains))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.sessions.sweep_interval_ms = 100;
        c.sessions.sweep_lease_ms = 1_000;
        tweak(c)
    })
    .await;
    (devnet, dir, h)
}

/// POSTs `body` with `auth` (an `Authorization` value); status, JSON body.
async fn call(h: &Running, path: &str, body: &Value, auth: Option<&str>) -> (u16, Value) {
    let headers: Vec<(&str, &str)> = auth.map(|a| ("authorization", a)).into_iter().collect();
    let (code, text) = post(&h.base, path, body, &headers).await;
    let v = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{code}: {text}"));
    (code, v)
}

/// GET with `auth`; the status, a header, the JSON body.
async fn read(h: &Running, path: &str, auth: Option<&str>) -> (u16, Option<String>, Value) {
    let mut req = crate::common::http().get(format!("{}{path}", h.base));
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let a = common::send(req).await;
    let challenge = a.header("www-authenticate").map(str::to_string);
    (a.status, challenge, a.body)
}

fn policy(recipient: Address, per_tx: u64, rolling: u64, ttl_secs: u64) -> Value {
    json!({
        "chains": [SRC, DST], "tokens": ["USDC"], "recipients": [recipient],
        "perTxCap": per_tx.to_string(), "rolling24hCap": rolling.to_string(),
        "expiresAt": SystemClock.now_ms() / 1000 + ttl_secs,
    })
}

/// Issues a session as the owner; its answer.
async fn issue(h: &Running, policy: Value, refund_to: Address) -> Value {
    let body = json!({"label": "agent", "policy": policy, "refundTo": refund_to});
    let (code, s) = call(h, "/api/session/issue", &body, Some(&owner())).await;
    assert_eq!(code, 200, "{s}");
    s
}

fn bearer(session: &Value) -> String {
    format!("Bearer {}", session["bearer"].as_str().unwrap())
}

fn route(amount: u64, to: Address) -> Value {
    json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC", "amount": amount.to_string(), "toAddress": to})
}

async fn relayer_nonce(devnet: &Devnet) -> u64 {
    let c = devnet.chain(SRC).unwrap();
    let relayer = keys::relayer().address();
    c.provider().get_transaction_count(relayer).await.unwrap()
}

/// A session execute that must be refused with `(status, code, field)`;
/// nothing is sent and the session's balance does not move.
async fn refused(h: &Running, devnet: &Devnet, s: &Value, body: &Value, want: (u16, &str, &str)) {
    let fund = addr(&s["fundAddress"]);
    let (nonce, held) = (
        relayer_nonce(devnet).await,
        usdc_balance(devnet, SRC, fund).await,
    );
    let (code, err) = call(h, "/api/session/execute", body, Some(&bearer(s))).await;
    assert_eq!(
        (code, err["errorCode"].as_str(), err["field"].as_str()),
        (want.0, Some(want.1), Some(want.2)),
        "{body} -> {err}"
    );
    assert_eq!(relayer_nonce(devnet).await, nonce, "nothing sent for {err}");
    assert_eq!(usdc_balance(devnet, SRC, fund).await, held);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_pays_an_allowed_recipient_from_its_own_funded_address() {
    let (devnet, _dir, h) = up([SRC, DST], |_| {}).await;
    let recipient = keys::seeded_signer("session-recipient").address();
    let refund_to = keys::seeded_signer("session-owner-refund").address();
    let s = issue(&h, policy(recipient, 2 * USDC, 5 * USDC, 3_600), refund_to).await;
    assert!(s["id"].as_str().unwrap().starts_with("ses_"), "{s}");
    assert!(s["bearer"].as_str().unwrap().len() >= 4 + 32, "{s}");
    assert_eq!(s["status"], "active");
    let fund = addr(&s["fundAddress"]);
    devnet
        .mint(SRC, Token::Usdc, fund, U256::from(4 * USDC))
        .await
        .unwrap();

    // The first route approves the router by permit (erc2612), the second
    // rides that approval (intent form); both under one idempotency key each.
    let mut delivered = U256::ZERO;
    for (i, amount) in [2 * USDC, USDC + 500_000].into_iter().enumerate() {
        let key = format!("session-pay-{i}");
        let headers = [("authorization", bearer(&s)), ("x-idempotency-key", key)];
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (code, text) = post(
            &h.base,
            "/api/session/execute",
            &route(amount, recipient),
            &headers,
        )
        .await;
        assert_eq!(code, 200, "{text}");
        let receipt: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(receipt["session"]["id"], s["id"], "{receipt}");
        // The same key again replays the answer: nothing reserved twice.
        let (again, replay) = post(
            &h.base,
            "/api/session/execute",
            &route(amount, recipient),
            &headers,
        )
        .await;
        assert_eq!((again, replay.as_str()), (200, text.as_str()));
        let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "DONE", "{done}");
        delivered += units(&done["to"]["estimated"]);
    }
    let spent = U256::from(3 * USDC + 500_000);
    assert_eq!(
        usdc_balance(&devnet, DST, recipient).await,
        delivered,
        "paid what was quoted"
    );
    assert_eq!(
        usdc_balance(&devnet, SRC, fund).await,
        U256::from(4 * USDC) - spent
    );
    let eth = devnet
        .chain(SRC)
        .unwrap()
        .provider()
        .get_balance(fund)
        .await
        .unwrap();
    assert_eq!(eth, U256::ZERO, "the session's address never holds gas");

    // Its state, for the bearer and for the owner; the list never shows bearers.
    let path = format!("/api/session/{}", s["id"].as_str().unwrap());
    for auth in [bearer(&s), owner()] {
        let (code, _, view) = read(&h, &path, Some(&auth)).await;
        assert_eq!(code, 200, "{view}");
        assert_eq!(view["status"], "active");
        assert_eq!(units(&view["spent24h"]), spent, "{view}");
        assert_eq!(units(&view["remaining24h"]), U256::from(5 * USDC) - spent);
        assert_eq!(view["routes"].as_array().unwrap().len(), 2, "{view}");
        assert_eq!(addr(&view["fundAddress"]), fund);
        assert!(view.get("bearer").is_none());
    }
    let (code, _, list) = read(&h, "/api/session/list", Some(&owner())).await;
    assert_eq!((code, list["count"].as_u64()), (200, Some(1)), "{list}");
    assert!(!list.to_string().contains(s["bearer"].as_str().unwrap()));
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn routes_outside_the_policy_and_bad_credentials_are_refused_typed_and_move_nothing() {
    let (devnet, _dir, h) = up([SRC, DST, 10], |_| {}).await;
    let recipient = keys::seeded_signer("session-policy-recipient").address();
    let s = issue(&h, policy(recipient, 2 * USDC, 5 * USDC, 3_600), recipient).await;
    let fund = addr(&s["fundAddress"]);
    devnet
        .mint(SRC, Token::Usdc, fund, U256::from(5 * USDC))
        .await
        .unwrap();
    devnet
        .mint(SRC, Token::Usdt, fund, U256::from(5 * USDC))
        .await
        .unwrap();

    let mut b = route(USDC, recipient);
    b["toChain"] = json!(10);
    refused(&h, &devnet, &s, &b, (403, "SESSION_POLICY", "toChain")).await;
    let mut b = route(USDC, recipient);
    b["fromToken"] = json!("USDT");
    refused(&h, &devnet, &s, &b, (403, "SESSION_POLICY", "fromToken")).await;
    let stranger = keys::seeded_signer("session-stranger").address();
    refused(
        &h,
        &devnet,
        &s,
        &route(USDC, stranger),
        (403, "SESSION_POLICY", "toAddress"),
    )
    .await;
    refused(
        &h,
        &devnet,
        &s,
        &route(2 * USDC + 1, recipient),
        (403, "SESSION_CAP_EXCEEDED", "amount"),
    )
    .await;
    let mut b = route(USDC, recipient);
    b["fromAddress"] = json!(recipient);
    refused(&h, &devnet, &s, &b, (400, "INVALID_FIELD", "fromAddress")).await;
    let mut b = route(USDC, recipient);
    b.as_object_mut().unwrap().remove("toAddress");
    refused(&h, &devnet, &s, &b, (400, "MISSING_FIELD", "toAddress")).await;
    let (_, _, view) = read(
        &h,
        &format!("/api/session/{}", s["id"].as_str().unwrap()),
        Some(&owner()),
    )
    .await;
    assert_eq!(view["spent24h"], "0", "refusals reserve nothing: {view}");

    // Bearers: none, made up, another session's (for reading).
    for auth in [None, Some("Bearer rsk_made_up"), Some("Basic abc")] {
        let (code, err) = call(&h, "/api/session/execute", &route(USDC, recipient), auth).await;
        assert_eq!(
            (code, err["errorCode"].as_str()),
            (401, Some("SESSION_UNAUTHORIZED")),
            "{err}"
        );
    }
    let other = issue(&h, policy(recipient, USDC, USDC, 3_600), recipient).await;
    let path = format!("/api/session/{}", s["id"].as_str().unwrap());
    let (code, challenge, err) = read(&h, &path, Some(&bearer(&other))).await;
    assert_eq!(
        (code, err["errorCode"].as_str()),
        (401, Some("SESSION_UNAUTHORIZED")),
        "{err}"
    );
    assert_eq!(challenge.as_deref(), Some("Bearer realm=\"relay session\""));
    let (code, _, err) = read(&h, "/api/session/ses_nope", Some(&owner())).await;
    assert_eq!(
        (code, err["errorCode"].as_str()),
        (404, Some("UNKNOWN_SESSION")),
        "{err}"
    );

    // Owner calls need the owner token.
    let body = json!({"policy": policy(recipient, USDC, USDC, 60), "refundTo": recipient});
    for auth in [None, Some(bearer(&s))] {
        let (code, err) = call(&h, "/api/session/issue", &body, auth.as_deref()).await;
        assert_eq!(
            (code, err["errorCode"].as_str()),
            (401, Some("OPERATOR_AUTH_REQUIRED")),
            "{err}"
        );
        let (code, challenge, err) = read(&h, "/api/session/list", auth.as_deref()).await;
        assert_eq!(
            (code, err["errorCode"].as_str()),
            (401, Some("OPERATOR_AUTH_REQUIRED")),
            "{err}"
        );
        assert_eq!(
            challenge.as_deref(),
            Some("Bearer realm=\"relay operator\"")
        );
        let (code, err) = call(
            &h,
            "/api/session/revoke",
            &json!({"id": s["id"]}),
            auth.as_deref(),
        )
        .await;
        assert_eq!(
            (code, err["errorCode"].as_str()),
            (401, Some("OPERATOR_AUTH_REQUIRED")),
            "{err}"
        );
    }
    // Bad policies name the field.
    for (edit, field) in [
        (json!({"chains": [SRC, 999]}), "policy.chains[1]"),
        (json!({"tokens": ["USDC", "WBTC"]}), "policy.tokens"),
        (json!({"recipients": ["0x12"]}), "policy.recipients[0]"),
        (
            json!({"perTxCap": "6000000", "rolling24hCap": "5000000"}),
            "policy.perTxCap",
        ),
        (json!({"perTxCap": "0"}), "policy.perTxCap"),
        (json!({"expiresAt": 1_000}), "policy.expiresAt"),
    ] {
        let mut p = policy(recipient, USDC, USDC, 60);
        for (k, v) in edit.as_object().unwrap() {
            p[k] = v.clone();
        }
        let body = json!({"policy": p, "refundTo": recipient});
        let (code, err) = call(&h, "/api/session/issue", &body, Some(&owner())).await;
        assert_eq!((code, err["field"].as_str()), (400, Some(field)), "{err}");
    }
    assert_eq!(usdc_balance(&devnet, SRC, fund).await, U256::from(5 * USDC));
    devnet.stop();
}

/// 1,000 executes at once of 1–3 USDC against perTxCap 2 and
/// rolling24hCap 5 USDC: every refusal is SESSION_CAP_EXCEEDED, what the
/// store reserved and what left the session's address on chain are the
/// accepted routes' amounts, never more than the rolling cap.
async fn a_thousand_concurrent_executes_stay_within_the_caps(database_url: Option<String>) {
    let (devnet, _dir, h) = up([SRC, DST], |c| c.database_url = database_url).await;
    let recipient = keys::seeded_signer("session-race-recipient").address();
    let s = issue(&h, policy(recipient, 2 * USDC, 5 * USDC, 3_600), recipient).await;
    let fund = addr(&s["fundAddress"]);
    let funded = U256::from(20 * USDC);
    devnet.mint(SRC, Token::Usdc, fund, funded).await.unwrap();
    let auth = bearer(&s);
    let client = crate::common::http();
    let sends = (0..1_000u64).map(|i| {
        let amount = USDC * (1 + i % 3);
        let req = client
            .post(format!("{}/api/session/execute", h.base))
            .header("authorization", &auth)
            .json(&route(amount, recipient));
        async move { (amount, common::send(req).await) }
    });
    let answers = futures::future::join_all(sends).await;
    let (mut accepted, mut total) = (Vec::new(), U256::ZERO);
    for (amount, a) in &answers {
        match a.status {
            200 => {
                accepted.push(a.body["id"].as_str().unwrap().to_string());
                total += U256::from(*amount);
                assert!(
                    units(&a.body["session"]["spent"]) <= U256::from(5 * USDC),
                    "{}",
                    a.body
                );
            }
            403 => assert_eq!(a.body["errorCode"], "SESSION_CAP_EXCEEDED", "{}", a.body),
            other => panic!("{other}: {}", a.body),
        }
    }
    assert!(!accepted.is_empty(), "nothing was accepted");
    assert!(total <= U256::from(5 * USDC), "accepted {total}");
    let (_, _, view) = read(
        &h,
        &format!("/api/session/{}", s["id"].as_str().unwrap()),
        Some(&owner()),
    )
    .await;
    assert_eq!(
        units(&view["spent24h"]),
        total,
        "the store holds what was accepted: {view}"
    );
    for id in &accepted {
        let done = until_terminal(&h.base, id).await;
        assert_eq!(done["status"], "DONE", "{done}");
    }
    let left = usdc_balance(&devnet, SRC, fund).await;
    assert_eq!(
        funded - left,
        total,
        "on chain: exactly the accepted routes left"
    );
    assert!(funded - left <= U256::from(5 * USDC));
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_concurrent_executes_stay_within_the_caps_on_sqlite() {
    a_thousand_concurrent_executes_stay_within_the_caps(None).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_concurrent_executes_stay_within_the_caps_on_postgres() {
    a_thousand_concurrent_executes_stay_within_the_caps(Some(relay_fixtures::postgres_database()))
        .await;
}

/// Polls `probe` (bounded: 60 s) until it holds.
async fn eventually(what: &str, mut probe: impl AsyncFnMut() -> bool) {
    for _ in 0..600 {
        if probe().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread")]
async fn revoked_and_expired_sessions_are_refused_and_their_balance_returns_to_refund_to() {
    let (devnet, _dir, h) = up([SRC, DST], |_| {}).await;
    let recipient = keys::seeded_signer("session-revoke-recipient").address();
    let refund_to = keys::seeded_signer("session-revoke-refund").address();
    let s = issue(&h, policy(recipient, 2 * USDC, 5 * USDC, 3_600), refund_to).await;
    let fund = addr(&s["fundAddress"]);
    devnet
        .mint(SRC, Token::Usdc, fund, U256::from(5 * USDC))
        .await
        .unwrap();

    // A route in flight when the owner revokes completes; the rest returns.
    let (code, receipt) = call(
        &h,
        "/api/session/execute",
        &route(2 * USDC, recipient),
        Some(&bearer(&s)),
    )
    .await;
    assert_eq!(code, 200, "{receipt}");
    let (code, revoked) = call(
        &h,
        "/api/session/revoke",
        &json!({"id": s["id"]}),
        Some(&owner()),
    )
    .await;
    assert_eq!(
        (code, revoked["status"].as_str()),
        (200, Some("revoked")),
        "{revoked}"
    );
    let (code, err) = call(
        &h,
        "/api/session/execute",
        &route(USDC, recipient),
        Some(&bearer(&s)),
    )
    .await;
    assert_eq!(
        (code, err["errorCode"].as_str()),
        (403, Some("SESSION_REVOKED")),
        "{err}"
    );
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(
        done["status"], "DONE",
        "the started route completes: {done}"
    );
    assert_eq!(
        usdc_balance(&devnet, DST, recipient).await,
        units(&done["to"]["estimated"])
    );
    eventually("the unspent balance at refundTo", async || {
        usdc_balance(&devnet, SRC, refund_to).await == U256::from(3 * USDC)
    })
    .await;
    assert_eq!(usdc_balance(&devnet, SRC, fund).await, U256::ZERO);
    let path = format!("/api/session/{}", s["id"].as_str().unwrap());
    let (_, _, view) = read(&h, &path, Some(&bearer(&s))).await;
    assert_eq!(view["status"], "revoked", "{view}");
    assert!(view["revokedAt"].is_u64(), "{view}");

    // A session past expiresAt is refused; what it held returns too.
    let e = issue(&h, policy(recipient, USDC, USDC, 2), refund_to).await;
    devnet
        .mint(SRC, Token::Usdc, addr(&e["fundAddress"]), U256::from(USDC))
        .await
        .unwrap();
    let path = format!("/api/session/{}", e["id"].as_str().unwrap());
    eventually("the session to expire", async || {
        read(&h, &path, Some(&bearer(&e))).await.2["status"] == "expired"
    })
    .await;
    let (code, err) = call(
        &h,
        "/api/session/execute",
        &route(USDC, recipient),
        Some(&bearer(&e)),
    )
    .await;
    assert_eq!(
        (code, err["errorCode"].as_str()),
        (403, Some("SESSION_EXPIRED")),
        "{err}"
    );
    eventually("the expired session's balance at refundTo", async || {
        usdc_balance(&devnet, SRC, refund_to).await == U256::from(4 * USDC)
    })
    .await;
    assert_eq!(
        usdc_balance(&devnet, SRC, addr(&e["fundAddress"])).await,
        U256::ZERO
    );
    let (_, _, view) = read(&h, &path, Some(&owner())).await;
    assert_eq!(view["status"], "expired", "{view}");
    devnet.stop();
}

/// Twenty copies of one session execute under one idempotency key, sent at
/// once: one route, one reservation against the caps, no 5xx.
#[tokio::test(flavor = "multi_thread")]
async fn twenty_copies_of_one_keyed_session_execute_make_one_route() {
    let (devnet, _dir, h) = up([SRC, DST], |c| c.limits.enabled = false).await;
    let recipient = keys::seeded_signer("session-twenty-recipient").address();
    let refund_to = keys::seeded_signer("session-twenty-refund").address();
    let s = issue(&h, policy(recipient, 2 * USDC, 5 * USDC, 3_600), refund_to).await;
    let fund = addr(&s["fundAddress"]);
    devnet
        .mint(SRC, Token::Usdc, fund, U256::from(4 * USDC))
        .await
        .unwrap();
    let auth = bearer(&s);
    let headers = [
        ("authorization", auth.as_str()),
        ("x-idempotency-key", "session-twenty"),
    ];
    let body = route(USDC, recipient);
    let answers = futures::future::join_all(
        (0..20).map(|_| post(&h.base, "/api/session/execute", &body, &headers)),
    )
    .await;
    let mut ids = std::collections::BTreeSet::new();
    for (code, text) in &answers {
        assert!(*code < 500, "{code} {text}");
        let v: Value = serde_json::from_str(text).unwrap();
        match code {
            200 => {
                ids.insert(v["id"].as_str().unwrap().to_string());
            }
            _ => assert_eq!(v["errorCode"], "IDEMPOTENCY_IN_FLIGHT", "{code} {v}"),
        }
    }
    assert_eq!(ids.len(), 1, "{answers:?}");
    let done = until_terminal(&h.base, ids.first().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(
        usdc_balance(&devnet, SRC, fund).await,
        U256::from(3 * USDC),
        "pulled once"
    );
    let path = format!("/api/session/{}", s["id"].as_str().unwrap());
    let (code, _, view) = read(&h, &path, Some(&auth)).await;
    assert_eq!(code, 200, "{view}");
    assert_eq!(
        units(&view["spent24h"]),
        U256::from(USDC),
        "reserved once: {view}"
    );
    assert_eq!(view["routes"].as_array().unwrap().len(), 1, "{view}");
    devnet.stop();
}
