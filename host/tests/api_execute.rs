//! `POST /api/route/execute` end to end on the devnet, as a wallet uses it:
//! one Permit2 signature, no gas; the float lane pulls with it and pays out
//! from inventory on the destination chain. Balances are asserted on chain;
//! a replayed idempotency key replays the response byte for byte and moves
//! nothing; a reused permit and every malformed field are typed 4xx errors
//! with nothing moved; sandbox and dry runs sign and move nothing.

mod common;

use alloy::primitives::{Address, U256};
use common::{get, serve};
use relay_devnet::{
    contracts::{eip712, permit2_domain, sign_typed, TestToken, PERMIT2_ADDRESS},
    keys, Devnet, DevnetConfig,
};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;

async fn usdc_balance(devnet: &Devnet, chain: u64, who: Address) -> U256 {
    let c = devnet.chain(chain).unwrap();
    TestToken::new(c.deployment.usdc, c.provider())
        .balanceOf(who)
        .call()
        .await
        .unwrap()
}

fn permit_body(devnet: &Devnet, amount: u64, nonce: u64) -> Value {
    let owner = keys::anvil_signer(1);
    let usdc = devnet.chain(SRC).unwrap().deployment.usdc;
    let deadline = relay_host::capabilities::now_ms() / 1000 + 600;
    let msg = eip712::PermitTransferFrom {
        permitted: eip712::TokenPermissions {
            token: usdc,
            amount: U256::from(amount),
        },
        spender: keys::relayer().address(),
        nonce: U256::from(nonce),
        deadline: U256::from(deadline),
    };
    let sig = sign_typed(&owner, &msg, &permit2_domain(SRC));
    json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC", "amount": amount.to_string(),
        "mode": "permit2", "toAddress": owner.address(),
        "permit2": {
            "owner": owner.address(), "permitted": {"token": usdc, "amount": amount.to_string()},
            "nonce": nonce.to_string(), "deadline": deadline.to_string(),
            "signature": format!("0x{}", hex::encode(sig)),
        },
    })
}

async fn post(base: &str, body: &Value, headers: &[(&str, &str)]) -> (u16, String) {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/api/route/execute"))
        .json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

async fn until_done(base: &str, id: &str) -> Value {
    for _ in 0..200 {
        let (_, r) = get(&format!("{base}/api/route/status?id={id}")).await;
        if r["status"] != "BRIDGING" {
            return r;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("route {id} never finished");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permit2_execute_moves_real_tokens_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let user = keys::anvil_address(1);
    let src = devnet.chain(SRC).unwrap();
    TestToken::new(src.deployment.usdc, src.provider())
        .approve(PERMIT2_ADDRESS, U256::MAX)
        .from(user)
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
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

    // The same key replays the first response byte for byte and moves nothing.
    let (code, again) = post(&h.base, &body, &[("x-idempotency-key", "k-1")]).await;
    assert_eq!((code, again.as_str()), (200, first.as_str()));
    // The same key with another body is refused.
    let (code, other) = post(
        &h.base,
        &permit_body(&devnet, 1_000_000, 8),
        &[("x-idempotency-key", "k-1")],
    )
    .await;
    assert_eq!(code, 422, "{other}");
    // The same permit without the key: its nonce is spent, refused before anything is sent.
    let (code, reused) = post(&h.base, &body, &[]).await;
    assert_eq!(code, 400, "{reused}");
    assert!(
        reused.contains("PERMIT2_INVALID") && reused.contains("nonce"),
        "{reused}"
    );
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
            "INVALID_FIELD",
            "amount",
        ),
        (
            json!({"fromChain": SRC, "toChain": "dogecoin", "amount": "1", "fromToken": "USDC"}),
            400,
            "INVALID_FIELD",
            "toChain",
        ),
        (
            json!({"fromChain": SRC, "toChain": DST, "amount": "1", "fromToken": "NOPE"}),
            400,
            "INVALID_FIELD",
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
            "INVALID_FIELD",
            "toAddress",
        ),
        (json!([1, 2]), 400, "MALFORMED_BODY", ""),
    ];
    for (body, status, code, field) in cases {
        let (got, text) = post(&h.base, &body, &[]).await;
        assert_eq!(got, status, "{body} -> {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["errorCode"], code, "{body} -> {text}");
        assert!(
            v["error"].as_str().unwrap().contains(field),
            "{body} -> {text}"
        );
    }
    let resp = reqwest::Client::new()
        .post(format!("{}/api/route/execute", h.base))
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
    assert_eq!(
        usdc_balance(&devnet, SRC, user).await,
        before,
        "nothing moved"
    );
    devnet.stop();
}
