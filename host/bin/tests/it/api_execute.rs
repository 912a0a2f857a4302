//! `POST /api/route/execute` end to end on the devnet, as a wallet uses it:
//! one Permit2 signature, no gas; the float lane pulls with it and pays out
//! from inventory on the destination chain. Balances are asserted on chain;
//! a replayed idempotency key replays the response byte for byte and moves
//! nothing; a reused permit and every malformed field are typed 4xx errors
//! with nothing moved; sandbox and dry runs sign and move nothing (and a
//! dry run's `track` answers `DRY`).

use crate::common;
use alloy::primitives::U256;
use common::{approve_permit2, get, serve, until_terminal as until_done, usdc_balance};
use relay_devnet::{keys, Devnet, DevnetConfig};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;

fn permit_body(devnet: &Devnet, amount: u64, nonce: u64) -> Value {
    common::permit_body(devnet, (SRC, DST), amount, nonce)
}

async fn post(base: &str, body: &Value, headers: &[(&str, &str)]) -> (u16, String) {
    common::post(base, "/api/route/execute", body, headers).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permit2_execute_moves_real_tokens_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let user = keys::anvil_address(1);
    approve_permit2(&devnet, SRC, 1).await;
    let (src0, dst0) = (
        usdc_balance(&devnet, SRC, user).await,
        usdc_balance(&devnet, DST, user).await,
    );

    let body = permit_body(&devnet, 5_000_000, 7);
    let (code, first) = post(&h.base, &body, &[("x-idempotency-key", "k-1")]).await;
    assert_eq!(code, 200, "{first}");
    let receipt: Value = serde_json::from_str(&first).unwrap();
    let id = receipt["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("rt_"), "{receipt}");
    assert_eq!(receipt["bridge"], "floatlane");
    assert_eq!(receipt["relayFee"], "12500");
    let done = until_done(&h.base, &id).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert!(done["destTx"].as_str().unwrap().starts_with("0x"));
    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        src0 - usdc_balance(&devnet, SRC, user).await,
        U256::from(5_000_000u64),
        "pulled once with the signature"
    );
    assert_eq!(
        usdc_balance(&devnet, DST, user).await - dst0,
        delivered,
        "paid out exactly the quoted amount"
    );

    // The same key replays the first response byte for byte, says it is a
    // replay, and moves nothing.
    let replay = reqwest::Client::new()
        .post(format!("{}/api/route/execute", h.base))
        .header("x-idempotency-key", "k-1")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    let (code, again) = (replay.status().as_u16(), replay.text().await.unwrap());
    assert_eq!((code, again.as_str()), (200, first.as_str()));
    // The same key with another body is refused.
    let (code, other) = post(
        &h.base,
        &permit_body(&devnet, 1_000_000, 8),
        &[("x-idempotency-key", "k-1")],
    )
    .await;
    assert_eq!(code, 422, "{other}");
    // The same signed body without the key answers the same route.
    let (code, reused) = post(&h.base, &body, &[]).await;
    assert_eq!(code, 200, "{reused}");
    let reused: Value = serde_json::from_str(&reused).unwrap();
    assert_eq!(reused["id"], id.as_str(), "{reused}");
    // The same permit sent to another recipient: its nonce is spent.
    let mut elsewhere = body.clone();
    elsewhere["toAddress"] = json!(keys::anvil_address(2));
    let (code, refused) = post(&h.base, &elsewhere, &[]).await;
    assert_eq!(code, 409, "{refused}");
    assert!(refused.contains("PERMIT2_NONCE_USED"), "{refused}");
    assert_eq!(
        src0 - usdc_balance(&devnet, SRC, user).await,
        U256::from(5_000_000u64)
    );
    assert_eq!(usdc_balance(&devnet, DST, user).await - dst0, delivered);
    let events = h.host_state.store.outbox_of(&id).await.unwrap();
    assert_eq!(events.last().unwrap().payload["status"], "DONE");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_are_typed_and_move_nothing_and_sandbox_and_dry_sign_nothing() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let user = keys::anvil_address(1);
    let before = usdc_balance(&devnet, SRC, user).await;
    let good = permit_body(&devnet, 5_000_000, 11);
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (
            json!({"toChain": DST, "amount": "1", "fromToken": "USDC"}),
            400,
            "MISSING_FIELD",
            "fromChain",
        ),
        (
            json!({"fromChain": SRC, "toChain": DST, "amount": "1.5", "fromToken": "USDC"}),
            400,
            "INVALID_AMOUNT",
            "amount",
        ),
        (
            json!({"fromChain": SRC, "toChain": "dogecoin", "amount": "1", "fromToken": "USDC"}),
            400,
            "UNKNOWN_CHAIN",
            "toChain",
        ),
        (
            json!({"fromChain": SRC, "toChain": DST, "amount": "1", "fromToken": "NOPE"}),
            400,
            "UNKNOWN_TOKEN",
            "fromToken",
        ),
        (
            json!({"fromChain": SRC, "toChain": SRC, "amount": "1", "fromToken": "USDC"}),
            400,
            "SAME_CHAIN_SAME_TOKEN",
            "",
        ),
        (
            json!({"fromChain": SRC, "toChain": DST, "amount": "1", "fromToken": "USDC", "mode": "magic"}),
            400,
            "INVALID_FIELD",
            "mode",
        ),
        (
            json!({"fromChain": SRC, "toChain": DST, "amount": "1", "fromToken": "USDC", "mode": "permit2"}),
            400,
            "MISSING_FIELD",
            "permit2",
        ),
        (
            json!({"fromChain": SRC, "toChain": DST, "amount": "1000000", "fromToken": "USDC", "toAddress": "nope"}),
            400,
            "INVALID_ADDRESS",
            "toAddress",
        ),
        (json!([1, 2]), 400, "MALFORMED_BODY", ""),
        // fees swallow 1 USDC on the rail asked for (the float lane
        // would carry it): the amount is the caller's to raise, never a 5xx
        // to retry
        (
            {
                let mut b = permit_body(&devnet, 1_000_000, 12);
                b["rail"] = json!("lifi");
                b
            },
            422,
            "AMOUNT_OUT_OF_RANGE",
            "amount",
        ),
    ];
    for (body, status, code, field) in cases {
        let (got, text) = post(&h.base, &body, &[]).await;
        assert_eq!(got, status, "{body} -> {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["errorCode"], code, "{body} -> {text}");
        assert_ne!(v["retryable"], true, "a caller's mistake: {text}");
        assert!(
            v["error"].as_str().unwrap().contains(field),
            "{body} -> {text}"
        );
    }
    let resp = crate::common::http()
        .post(format!("{}/api/route/execute", h.base))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);

    // Sandbox: an sbx_ route on a timer, nothing signed.
    let (code, text) = post(&h.base, &good, &[("x-relay-sandbox", "1")]).await;
    assert_eq!(code, 200, "{text}");
    let sbx: Value = serde_json::from_str(&text).unwrap();
    assert!(sbx["id"].as_str().unwrap().starts_with("sbx_"));
    assert_eq!(
        (sbx["sandbox"].as_bool(), sbx["stage"].as_str()),
        (Some(true), Some("RECEIVING"))
    );
    let (_, st) = get(&format!(
        "{}/api/route/status?id={}",
        h.base,
        sbx["id"].as_str().unwrap()
    ))
    .await;
    assert_eq!(st["status"], "BRIDGING");

    // Dry run: what would be sent, not broadcast.
    let mut dry = good.clone();
    dry["dryRun"] = json!(true);
    let (code, text) = post(&h.base, &dry, &[]).await;
    assert_eq!(code, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["broadcast"].as_bool()),
        (Some("DRY"), Some(false))
    );
    assert_eq!(v["wouldSend"].as_array().unwrap().len(), 2, "{v}");
    // Its track answers DRY while sandbox routes are kept.
    let (code, st) = get(&format!("{}{}", h.base, v["track"].as_str().unwrap())).await;
    assert_eq!((code, st["status"].as_str()), (200, Some("DRY")), "{st}");
    assert_eq!((&st["id"], &st["wouldSend"]), (&v["id"], &v["wouldSend"]));
    // Spec §4.2: on the float lane, omitting `live` is a dry run too.
    let mut unsaid = good.clone();
    unsaid.as_object_mut().unwrap().remove("live");
    let (code, text) = post(&h.base, &unsaid, &[]).await;
    assert_eq!(code, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["broadcast"].as_bool()),
        (Some("DRY"), Some(false)),
        "{v}"
    );
    assert_eq!(
        usdc_balance(&devnet, SRC, user).await,
        before,
        "nothing moved"
    );
    devnet.stop();
}

/// An execute naming a rail whose upstream is down (its health check
/// fails, so it rests out of the quotes) answers a retryable 502
/// `RAILS_UNAVAILABLE` naming the rail and why — not a 404 that tells the
/// client the lane is not routed — and goes through once it is back.
#[tokio::test(flavor = "multi_thread")]
async fn naming_a_rail_whose_upstream_is_down_is_retryable_not_unroutable() {
    use relay_simulators::{FaultConfig, FaultMode, Upstream};
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| c.runtime.health_ttl_ms = 200).await;
    approve_permit2(&devnet, SRC, 1).await;
    h.sims
        .set_faults(Upstream::Lifi, FaultConfig::mode(FaultMode::Error));
    let mut body = permit_body(&devnet, 6_000_000, 4_100);
    body["rail"] = json!("lifi");
    let mut last = (0, Value::Null);
    common::wait_up_to(
        "lifi's health to fail",
        common::SETTLES_WITHIN,
        async || {
            let (status, text) = post(&h.base, &body, &[]).await;
            last = (status, serde_json::from_str(&text).unwrap_or(Value::Null));
            last.1["error"]
                .as_str()
                .is_some_and(|e| e.contains("unavailable now"))
        },
    )
    .await;
    let (status, refused) = last;
    assert_eq!(
        (
            status,
            refused["errorCode"].as_str(),
            refused["retryable"].as_bool()
        ),
        (502, Some("RAILS_UNAVAILABLE"), Some(true)),
        "{refused}"
    );
    assert!(
        refused["error"].as_str().unwrap().contains("lifi"),
        "{refused}"
    );

    h.sims.set_faults(Upstream::Lifi, FaultConfig::default());
    let mut receipt = Value::Null;
    common::wait_up_to("lifi back", common::SETTLES_WITHIN, async || {
        let (status, text) = post(&h.base, &body, &[]).await;
        receipt = serde_json::from_str(&text).unwrap_or(Value::Null);
        status == 200
    })
    .await;
    let done = until_done(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    devnet.stop();
}
