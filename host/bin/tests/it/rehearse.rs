//! `x-relay-rehearse: 1` on execute (spec §5.4): every real check runs and
//! the answer is the real call's — refusals, 401 and 429 included — while
//! nothing moves, no nonce and no idempotency key is spent, and the rate
//! limit still counts the request.

use alloy::{primitives::U256, providers::Provider};
use relay_devnet::{keys, Devnet, DevnetConfig};
use serde_json::{json, Value};

use crate::common::{
    approve_permit2, permit_body, send, serve, until_terminal, usdc_balance, Answer,
};

const SRC: u64 = 8453;
const DST: u64 = 42161;

async fn execute(base: &str, body: &Value, headers: &[(&str, &str)]) -> Answer {
    let mut req = crate::common::http()
        .post(format!("{base}/api/route/execute"))
        .json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    send(req).await
}

const REHEARSE: (&str, &str) = ("x-relay-rehearse", "1");

#[tokio::test(flavor = "multi_thread")]
async fn a_rehearsal_answers_like_the_real_call_and_moves_nothing() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Rate limits on, at the spec's execute limit (8 a minute).
    let h = serve(&devnet, dir.path(), |c| c.limits.enabled = true).await;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_address(1);
    let relayer_nonce = || async {
        let p = devnet.chain(SRC).unwrap().provider();
        p.get_transaction_count(devnet.relayer)
            .pending()
            .await
            .unwrap()
    };
    let (src_before, dst_before, nonce_before) = (
        usdc_balance(&devnet, SRC, user).await,
        usdc_balance(&devnet, DST, user).await,
        relayer_nonce().await,
    );

    // 1-2. A bad signature: the rehearsal answers what the real call does.
    let mut bad = permit_body(&devnet, (SRC, DST), 2_000_000, 611);
    bad["permit2"]["signature"] = json!(format!("0x{}", "22".repeat(65)));
    let rehearsed = execute(&h.base, &bad, &[REHEARSE]).await;
    let real = execute(&h.base, &bad, &[]).await;
    assert!((400..500).contains(&real.status), "{}", real.body);
    assert_eq!(
        (rehearsed.status, &rehearsed.body["errorCode"]),
        (real.status, &real.body["errorCode"]),
        "{}",
        rehearsed.body
    );
    assert_eq!(rehearsed.header("x-relay-rehearsal"), Some("1"));

    // 3. A good one under an idempotency key: the route a live call would
    // start, nothing sent.
    let good = permit_body(&devnet, (SRC, DST), 2_000_000, 612);
    let key = ("x-idempotency-key", "rehearse-then-real");
    let r = execute(&h.base, &good, &[REHEARSE, key]).await;
    assert_eq!(
        (r.status, &r.body["status"]),
        (200, &json!("BRIDGING")),
        "{}",
        r.body
    );
    assert_eq!(r.body["broadcast"], false);
    assert!(r.body["note"].as_str().unwrap().contains("rehearsal"));
    assert_eq!(usdc_balance(&devnet, SRC, user).await, src_before);
    assert_eq!(
        relayer_nonce().await,
        nonce_before,
        "the relayer sent nothing"
    );
    let id = r.body["id"].as_str().unwrap();
    let (code, _) = crate::common::get(&format!("{}/api/route/status?id={id}", h.base)).await;
    assert_eq!(code, 404, "a rehearsal stores no route");

    // 4. The real call with the same key and Permit2 nonce: neither was spent.
    let real = execute(&h.base, &good, &[key]).await;
    assert_eq!(real.status, 200, "{}", real.body);
    assert_ne!(real.body["id"], r.body["id"]);
    let done = until_terminal(&h.base, real.body["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        usdc_balance(&devnet, DST, user).await - dst_before,
        delivered
    );
    assert_eq!(
        src_before - usdc_balance(&devnet, SRC, user).await,
        U256::from(2_000_000)
    );

    // 5. Rehearsals count against the limit: past it, a rehearsal and then a
    // real call are both 429.
    let fresh = permit_body(&devnet, (SRC, DST), 1_000_000, 613);
    let mut last = execute(&h.base, &fresh, &[REHEARSE]).await;
    for _ in 0..8 {
        if last.status == 429 {
            break;
        }
        last = execute(&h.base, &fresh, &[REHEARSE]).await;
    }
    assert_eq!(
        (last.status, &last.body["errorCode"]),
        (429, &json!("RATE_LIMITED")),
        "{}",
        last.body
    );
    let real = execute(&h.base, &fresh, &[]).await;
    assert_eq!(real.status, 429, "{}", real.body);
    let after = usdc_balance(&devnet, SRC, user).await;
    assert_eq!(
        src_before - after,
        U256::from(2_000_000),
        "only the real route moved funds"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rehearsal_of_self_mode_without_the_owner_token_is_401() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let body = json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
        "amount": "1000000", "mode": "self", "toAddress": keys::anvil_address(2), "live": true});
    let rehearsed = execute(&h.base, &body, &[REHEARSE]).await;
    let real = execute(&h.base, &body, &[]).await;
    assert_eq!(real.status, 401, "{}", real.body);
    assert_eq!(
        (rehearsed.status, &rehearsed.body["errorCode"]),
        (401, &real.body["errorCode"])
    );
    let owner = format!("Bearer {}", relay_host::devnet::DEVNET_OWNER_TOKEN);
    let ok = execute(
        &h.base,
        &body,
        &[REHEARSE, ("authorization", owner.as_str())],
    )
    .await;
    assert_eq!(
        (ok.status, &ok.body["broadcast"]),
        (200, &json!(false)),
        "{}",
        ok.body
    );
    devnet.stop();
}
