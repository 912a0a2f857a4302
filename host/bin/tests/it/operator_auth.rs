//! Closing the holes that let a stranger spend the operator's money, tried
//! from outside through the real HTTP server on the devnet:
//! - `mode: self` (the default) pays from the relayer's float: without the
//!   owner token (or with a wrong one) it is a 401 `OPERATOR_AUTH_REQUIRED`
//!   and nothing moves on chain, no route is created, the idempotency key
//!   stays unspent; with the token the same request runs to DONE. Sandbox
//!   and dry runs need no token, and a dry run's `track` answers `DRY`.
//! - A Permit2 execute whose pull must revert is refused before anything is
//!   signed, naming the cause (`PERMIT2_ALLOWANCE_MISSING`,
//!   `INSUFFICIENT_BALANCE`): the relayer's nonce and native balance are
//!   unchanged on chain, no route exists; preflight says the same.
//! - A later step that would revert is never broadcast: the route fails
//!   `STEP_REFUSED` and the pulled funds are refunded.

use crate::common;
use alloy::{
    primitives::{address, Address, U256},
    providers::Provider,
};
use common::{approve_permit2, get, permit_body, post, serve, until_terminal, usdc_balance};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_host::devnet::DEVNET_OWNER_TOKEN;
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const BEEF: Address = address!("0x000000000000000000000000000000000000bEEF");

/// What the relayer holds and has sent on both chains, and what the
/// recipient holds on the destination.
#[derive(Debug, PartialEq, Eq)]
struct Chain {
    relayer_nonce: [u64; 2],
    relayer_native: [U256; 2],
    relayer_usdc: [U256; 2],
    recipient_usdc: U256,
}

async fn chain_state(devnet: &Devnet, recipient: Address) -> Chain {
    let relayer = keys::relayer().address();
    let mut s = Chain {
        relayer_nonce: [0; 2],
        relayer_native: [U256::ZERO; 2],
        relayer_usdc: [U256::ZERO; 2],
        recipient_usdc: usdc_balance(devnet, DST, recipient).await,
    };
    for (i, id) in [SRC, DST].into_iter().enumerate() {
        let p = devnet.chain(id).unwrap().provider();
        s.relayer_nonce[i] = p.get_transaction_count(relayer).await.unwrap();
        s.relayer_native[i] = p.get_balance(relayer).await.unwrap();
        s.relayer_usdc[i] = usdc_balance(devnet, id, relayer).await;
    }
    s
}

async fn no_routes(h: &common::Running) {
    let routes = h.host_state.store.recent_routes(100).await.unwrap();
    assert!(routes.is_empty(), "no route was created: {routes:?}");
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// An execute with an `Authorization` header; status, headers, body.
async fn execute_as(
    base: &str,
    body: &Value,
    auth: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut req = crate::common::http()
        .post(format!("{base}/api/route/execute"))
        .header("x-idempotency-key", "self-1")
        .json(body);
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let resp = req.send().await.unwrap();
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    (status, headers, resp.json().await.unwrap())
}

fn codes(blockers: &Value) -> Vec<&str> {
    let list = blockers.as_array().unwrap();
    list.iter().map(|b| b["code"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn self_mode_needs_the_owner_token_and_without_it_nothing_moves() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    // No mode: the spec's default, self — the relayer pays from its float.
    let body = json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
        "amount": "5000000", "toAddress": BEEF, "live": true,
    });
    let before = chain_state(&devnet, BEEF).await;

    for auth in [None, Some("Bearer not-the-owner-token".to_string())] {
        let (code, headers, v) = execute_as(&h.base, &body, auth.as_deref()).await;
        assert_eq!(
            (code, v["errorCode"].as_str()),
            (401, Some("OPERATOR_AUTH_REQUIRED")),
            "{auth:?}: {v}"
        );
        let said = format!("{} {}", v["error"], v["suggestedAction"]);
        assert!(
            said.contains("permit2"),
            "tells a keyless client what to send: {said}"
        );
        assert!(headers.contains_key("www-authenticate"), "{headers:?}");
    }
    let (_, pf) = post(&h.base, "/api/route/preflight", &body, &[]).await;
    let pf = parsed(&pf);
    assert_eq!(pf["decision"], "NO_GO", "{pf}");
    assert!(
        codes(&pf["blockers"]).contains(&"OPERATOR_AUTH_REQUIRED"),
        "{pf}"
    );
    // Sandbox and dry runs move nothing and need no token; a dry run's
    // track answers DRY.
    let sandbox = [("x-relay-sandbox", "1")];
    let (code, text) = post(&h.base, "/api/route/execute", &body, &sandbox).await;
    assert_eq!(code, 200, "{text}");
    let mut dry = body.clone();
    dry["dryRun"] = json!(true);
    let (code, text) = post(&h.base, "/api/route/execute", &dry, &[]).await;
    assert_eq!(code, 200, "{text}");
    let receipt = parsed(&text);
    let (code, tracked) = get(&format!("{}{}", h.base, receipt["track"].as_str().unwrap())).await;
    assert_eq!(code, 200, "{tracked}");
    assert_eq!(
        (
            &tracked["id"],
            tracked["status"].as_str(),
            tracked["broadcast"].as_bool()
        ),
        (&receipt["id"], Some("DRY"), Some(false)),
        "{tracked}"
    );
    assert_eq!(tracked["wouldSend"], receipt["wouldSend"]);
    assert_eq!(
        chain_state(&devnet, BEEF).await,
        before,
        "nothing moved on chain"
    );
    no_routes(&h).await;

    // The operator, with the same idempotency key (never spent above).
    let owner = format!("Bearer {DEVNET_OWNER_TOKEN}");
    let (code, _, receipt) = execute_as(&h.base, &body, Some(&owner)).await;
    assert_eq!(code, 200, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let paid: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert!(!paid.is_zero());
    assert_eq!(
        usdc_balance(&devnet, DST, BEEF).await - before.recipient_usdc,
        paid
    );
    let auth = [("authorization", owner.as_str())];
    let (_, pf) = post(&h.base, "/api/route/preflight", &body, &auth).await;
    let pf = parsed(&pf);
    assert!(
        !codes(&pf["blockers"]).contains(&"OPERATOR_AUTH_REQUIRED"),
        "{pf}"
    );
    devnet.stop();
}

/// Moves all but `keep` of anvil account `index`'s USDC on `chain` away.
async fn drain_usdc(devnet: &Devnet, chain: u64, index: usize, keep: U256) {
    let c = devnet.chain(chain).unwrap();
    let who = keys::anvil_address(index);
    let have = usdc_balance(devnet, chain, who).await;
    relay_devnet::contracts::TestToken::new(c.deployment.usdc, c.provider())
        .transfer(keys::anvil_address(9), have - keep)
        .from(who)
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permit2_pull_that_must_revert_is_named_and_never_sent() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let user = keys::anvil_address(1);
    let before = chain_state(&devnet, user).await;

    // The owner never approved Permit2.
    let body = permit_body(&devnet, (SRC, DST), 5_000_000, 31);
    let (code, text) = post(&h.base, "/api/route/execute", &body, &[]).await;
    let v = parsed(&text);
    assert_eq!(
        (code, v["errorCode"].as_str()),
        (422, Some("PERMIT2_ALLOWANCE_MISSING")),
        "{v}"
    );
    assert!(
        v["suggestedAction"].as_str().unwrap().contains("approve"),
        "{v}"
    );
    let (_, pf) = post(&h.base, "/api/route/preflight", &body, &[]).await;
    let pf = parsed(&pf);
    assert_eq!(
        codes(&pf["blockers"]),
        ["PERMIT2_ALLOWANCE_MISSING"],
        "{pf}"
    );
    let (_, pf) = post(&h.base, "/api/route/preflight?deep=1", &body, &[]).await;
    let pf = parsed(&pf);
    assert_eq!(
        codes(&pf["blockers"]),
        ["PERMIT2_ALLOWANCE_MISSING"],
        "one blocker per cause: {pf}"
    );

    // Approved, but the owner holds less than the amount.
    approve_permit2(&devnet, SRC, 1).await;
    drain_usdc(&devnet, SRC, 1, U256::from(1_000_000u64)).await;
    let body = permit_body(&devnet, (SRC, DST), 5_000_000, 32);
    let (code, text) = post(&h.base, "/api/route/execute", &body, &[]).await;
    let v = parsed(&text);
    assert_eq!(
        (code, v["errorCode"].as_str()),
        (422, Some("INSUFFICIENT_BALANCE")),
        "{v}"
    );

    let after = chain_state(&devnet, user).await;
    assert_eq!(
        (after.relayer_nonce, after.relayer_native),
        (before.relayer_nonce, before.relayer_native),
        "the relayer sent nothing and spent no gas"
    );
    no_routes(&h).await;
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_later_step_that_would_revert_is_never_broadcast_and_the_pull_is_refunded() {
    use relay_plugin_api::{Amount, ChainRef, PlanAction};
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.execution.resume_interval_ms = 600_000
    })
    .await;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_address(1);
    let relayer = keys::relayer().address();
    let provider = devnet.chain(SRC).unwrap().provider();
    let (nonce0, user0) = (
        provider.get_transaction_count(relayer).await.unwrap(),
        usdc_balance(&devnet, SRC, user).await,
    );
    // A permit2 route whose deposit call (to a contract the rails may
    // call) reverts: an unknown selector.
    let body = permit_body(&devnet, (SRC, DST), 4_000_000, 41);
    let request = relay_wire::ExecuteRequest::decode(&body).unwrap();
    let ask =
        relay_engine::request::ExecuteAsk::from_request(&request, &h.host_state.config).unwrap();
    let d = &devnet.chain(SRC).unwrap().deployment;
    let mut route = common::sample_route("rt_laterrevert0001");
    route.rail = "lifi".into();
    route.amount = Amount::from_u128(4_000_000);
    route.gas_fee = Amount::from_u128(10_000);
    route.sender = user.to_string();
    route.permit = ask.permit.clone();
    route.plan.steps = vec![
        PlanAction::Permit2Pull {
            chain: ChainRef::Evm(SRC),
            token: d.usdc.to_string(),
            amount: route.amount,
        },
        PlanAction::ContractCall {
            chain: ChainRef::Evm(SRC),
            to: d.bridge_deposit.to_string(),
            data: "0xdeadbeef".into(),
            value: Amount::ZERO,
            gas_limit: None,
        },
    ];
    h.host_state.store.insert_route(&route).await.unwrap();
    let ran = h.host_state.executor.clone().unwrap().run(&route.id).await;
    let r = ran.unwrap().unwrap();
    let f = r.failure.clone().unwrap();
    assert_eq!(f.code, "STEP_REFUSED", "{f:?}");
    assert!(f.message.contains("would revert"), "{f:?}");
    assert!(f.refund_tx.is_some(), "the pull was refunded: {f:?}");
    let journal = h.host_state.store.journal_of(&route.id).await.unwrap();
    assert!(
        journal.iter().all(|e| e.step != 1),
        "step 1 was never signed: {journal:?}"
    );
    assert_eq!(
        provider.get_transaction_count(relayer).await.unwrap() - nonce0,
        2,
        "the pull and the refund; no reverting transaction"
    );
    assert_eq!(
        user0 - usdc_balance(&devnet, SRC, user).await,
        U256::from(10_000u64),
        "refunded all but the relayer's gas fee"
    );
    devnet.stop();
}
