//! Chainflip's fill-or-kill refund, the vendor's way: under
//! `accept-then-fail` a swap that takes the deposit reports `COMPLETED`
//! with a witnessed `refundEgress` and no `swapEgress` (chainflip-sdk-monorepo
//! `routes/v2/__tests__/__snapshots__/swap.test.ts.snap`, "retrieves a swap
//! with FillOrKillParams in COMPLETED"), and the deposit goes back on chain
//! to the refund address.

use crate::common;

use alloy::primitives::U256;
use common::{field, mesh, wait_for, Call, Mesh, SRC};
use relay_devnet::{keys, Token};
use relay_simulators::{Node, Upstream};
use serde_json::{json, Value};

const BTC_DEST: &str = "bcrt1qrelaydevnetfokdest00000000000000000000";
const BTC_REFUND: &str = "bcrt1qrelaydevnetfokrefund000000000000000000";

async fn settled(m: &Mesh, url: &str) -> Value {
    wait_for("chainflip COMPLETED", || async {
        let (_, v) = m.get(url, &[]).await;
        (v["state"] == "COMPLETED").then_some(v)
    })
    .await
}

fn assert_refund_only(st: &Value) {
    assert!(st.get("swapEgress").is_none(), "no swap egress: {st}");
    assert_eq!(st["swap"]["swappedOutputAmount"], "0", "{st}");
    assert!(st["refundEgress"]["witnessedAt"].is_u64(), "{st}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fill_or_kill_refund_is_completed_with_a_refund_egress_and_pays_the_refund_address() {
    let m = mesh().await;
    let base = m.url(Upstream::Chainflip);
    let (status, echoed, _) = m
        .post(
            &format!("{base}/simulator/faults"),
            &[],
            &json!({"mode": "accept-then-fail"}),
        )
        .await;
    assert_eq!(status, 200, "{echoed}");

    // Bitcoin → EVM through a deposit channel: the BTC goes back to the
    // channel's refund address on the bitcoin ledger.
    let user = keys::anvil_address(5);
    let params = json!([{"chain": "Bitcoin", "asset": "BTC"}, {"chain": "Ethereum", "asset": "USDC"},
        user.to_string(), 0, null, 0, [], {"retry_duration": 10, "refund_address": BTC_REFUND, "min_price": "0x0"}]);
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "broker_request_swap_deposit_address", "params": params});
    let (_, opened, _) = m.post(&format!("{base}/broker"), &[], &rpc).await;
    let r = &opened["result"];
    let id = format!("{}-Bitcoin-{}", r["issued_block"], r["channel_id"]);
    let usdc_before = m.balance(SRC, Token::Usdc, user).await;
    m.sims
        .send_btc(r["address"].as_str().unwrap(), 100_000)
        .unwrap();
    let st = settled(&m, &format!("{base}/v2/swaps/{id}")).await;
    common::assert_shape("chainflip/swap_status_refunded.json", &st);
    assert_refund_only(&st);
    assert_eq!(st["refundEgress"]["amount"], "100000");
    assert_eq!(st["fillOrKillParams"]["refundAddress"], BTC_REFUND);
    assert_eq!(
        m.sims.ledger_balance(Node::Bitcoin, BTC_REFUND, "BTC"),
        100_000
    );
    assert_eq!(
        m.balance(SRC, Token::Usdc, user).await,
        usdc_before,
        "nothing paid out"
    );

    // EVM → bitcoin through a vault swap: the USDC goes back on anvil.
    let sender = keys::anvil_address(6);
    let params = json!([{"chain": "Ethereum", "asset": "USDC"}, {"chain": "Bitcoin", "asset": "BTC"}, BTC_DEST, 0,
        {"chain": "Ethereum", "input_amount": "0x3b9aca00", "refund_parameters": {"retry_duration": 10, "refund_address": sender, "min_price": "0x0"}}]);
    let rpc = json!({"jsonrpc": "2.0", "id": 2, "method": "broker_request_swap_parameter_encoding", "params": params});
    let (_, enc, _) = m.post(&format!("{base}/broker"), &[], &rpc).await;
    let r = &enc["result"];
    let before = m.balance(SRC, Token::Usdc, sender).await;
    let call = Call {
        approve: Some(field(&r["source_token_address"])),
        spender: field(&r["to"]),
        amount: U256::from(1_000_000_000u64),
        to: field(&r["to"]),
        data: field(&r["calldata"]),
        value: field(&r["value"]),
    };
    let src_tx = m.execute(SRC, sender, &call).await;
    let st = settled(&m, &format!("{base}/v2/swaps/{src_tx}")).await;
    assert_refund_only(&st);
    assert!(
        m.succeeded(SRC, st["refundEgress"]["txRef"].as_str().unwrap())
            .await,
        "refunded on chain: {st}"
    );
    assert_eq!(
        m.balance(SRC, Token::Usdc, sender).await,
        before,
        "refunded in full"
    );
    assert_eq!(m.sims.ledger_balance(Node::Bitcoin, BTC_DEST, "BTC"), 0);
}
