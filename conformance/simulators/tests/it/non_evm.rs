//! The non-EVM legs: Allbridge Core between EVM and the simulated solana,
//! tron and stellar ledgers, and Chainflip between EVM and the simulated
//! bitcoin ledger. EVM sides move real tokens on anvil; non-EVM sides are
//! simulated ledgers, read back through the control endpoint.

use crate::common;

use alloy::primitives::U256;
use common::{field, mesh, mesh_with, wait_for, Call, Mesh, DST, SRC};
use relay_devnet::{keys, Token};
use relay_simulators::{AllbridgeConfig, Node, SimConfig, Upstream};
use serde_json::{json, Value};

const SOL_USER: &str = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const TRON_USER: &str = "TQ4ge2gH6bHDdYWuXKbGzS3j4ghL3eMdsR";
const BTC_USER: &str = "bcrt1qrelaydevnetuser0000000000000000000000";

async fn ledger(m: &Mesh, base: &str, node: &str, address: &str, asset: &str) -> Value {
    let url = format!("{base}/simulator/ledger?node={node}&address={address}&asset={asset}");
    m.get(&url, &[]).await.1
}

/// The wallet call in an Allbridge EVM raw transaction.
fn raw_call(raw: &Value, token: alloy::primitives::Address, amount: u64) -> Call {
    Call {
        approve: Some(token),
        spender: field(&raw["to"]),
        amount: U256::from(amount),
        to: field(&raw["to"]),
        data: field(&raw["data"]),
        value: field(&raw["value"]),
    }
}

/// The simulated SOL USDC token address the Allbridge simulator lists.
async fn sol_usdc(m: &Mesh, base: &str) -> String {
    let (_, tokens) = m.get(&format!("{base}/tokens"), &[]).await;
    tokens
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["chainSymbol"] == "SOL" && t["symbol"] == "USDC")
        .expect("SOL USDC listed")["tokenAddress"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn allbridge_evm_to_solana_credits_the_simulated_ledger() {
    let m = mesh().await;
    let user = keys::anvil_address(8);
    let usdc = m.token(SRC, Token::Usdc);
    let base = m.url(Upstream::Allbridge);
    let sol_usdc = sol_usdc(&m, &base).await;
    let ask = format!("amount=5000000&sourceToken={usdc}&sourceChain=ETH&destinationToken={sol_usdc}&destinationChain=SOL");
    let (status, quote) = m.get(&format!("{base}/bridge/quote?{ask}"), &[]).await;
    assert_eq!(status, 200, "{quote}");
    common::assert_shape("allbridge/bridge_quote.json", &quote);
    common::assert_vendor_schema("stablebridge", "BridgeQuoteResponse", &quote);
    let pm = &quote["options"][0]["paymentMethods"][0];
    assert_eq!(pm["feePaymentMethod"], "WITH_STABLECOIN");
    assert_eq!(pm["estimatedAmount"]["min"], "4995000");

    let raw_url = format!("{base}/raw/bridge?{ask}&sender={user}&recipient={SOL_USER}&messenger=ALLBRIDGE&feePaymentMethod=WITH_STABLECOIN&fee=5000");
    let (_, raw) = m.get(&raw_url, &[]).await;
    common::assert_shape("allbridge/raw_bridge_evm.json", &raw);
    common::assert_vendor_schema("stablebridge", "EssentialWeb3Transaction", &raw);
    let src_tx = m.execute(SRC, user, &raw_call(&raw, usdc, 5_000_000)).await;
    let url = format!("{base}/transfer/status?chain=ETH&txId={src_tx}");
    let st = wait_for("allbridge receive", || async {
        let (_, v) = m.get(&url, &[]).await;
        v["receive"]["txId"].is_string().then_some(v)
    })
    .await;
    common::assert_shape("allbridge/transfer_status_received.json", &st);
    common::assert_vendor_schema("stablebridge", "TransferStatusResponse", &st);
    let receive = st["receive"]["txId"].as_str().unwrap();
    assert!(receive.starts_with("sim-solana-"), "{receive}");
    let l = ledger(&m, &base, "solana", SOL_USER, "USDC").await;
    assert_eq!(l["simulated"], true);
    assert_eq!(l["balance"], "4995000");
    assert_eq!(l["transactions"][0]["txId"], receive);
    assert_eq!(
        m.sims.ledger_balance(Node::Solana, SOL_USER, "USDC"),
        4_995_000
    );
}

/// The body Allbridge's REST API (>= 3.28) answers for a transaction not
/// indexed yet, as the stable bridge rail's vendor case records it.
fn vendor_not_indexed_body() -> Value {
    let path = format!(
        "{}/../../rails/stablebridge/tests/fixtures/vendor/track_not_indexed_bad_request.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let case: Value = serde_json::from_str(&text).unwrap();
    case["answers"][0]["body"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn allbridge_answers_bad_request_until_a_sent_transfer_is_indexed() {
    let config = SimConfig {
        allbridge: AllbridgeConfig {
            not_indexed_polls: 2,
        },
        // Held back, so that the first indexed answer is still in flight.
        settle_delay: std::time::Duration::from_secs(3),
        ..SimConfig::default()
    };
    let m = mesh_with(config).await;
    let user = keys::anvil_address(7);
    let usdc = m.token(SRC, Token::Usdc);
    let base = m.url(Upstream::Allbridge);
    let sol_usdc = sol_usdc(&m, &base).await;
    let ask = format!("amount=3000000&sourceToken={usdc}&sourceChain=ETH&destinationToken={sol_usdc}&destinationChain=SOL");
    let raw_url = format!("{base}/raw/bridge?{ask}&sender={user}&recipient={SOL_USER}&messenger=ALLBRIDGE&feePaymentMethod=WITH_STABLECOIN");
    let (_, raw) = m.get(&raw_url, &[]).await;
    let src_tx = m.execute(SRC, user, &raw_call(&raw, usdc, 3_000_000)).await;
    let url = format!("{base}/transfer/status?chain=ETH&txId={src_tx}");
    let not_indexed = vendor_not_indexed_body();
    assert_eq!(not_indexed["message"], "Bad request");
    // Sent but not seen yet: the generic 400 (polls are not counted yet).
    let tx = src_tx.to_string();
    wait_for("the deposit seen", || async {
        m.sims.settlement().transfer(&tx).map(drop)
    })
    .await;
    // Seen: the first two polls are still "not indexed", word for word.
    for poll in 1..=2 {
        let (status, body) = m.get(&url, &[]).await;
        assert_eq!(status, 400, "poll {poll}: {body}");
        assert_eq!(body, not_indexed, "poll {poll}");
        common::assert_vendor_schema("stablebridge", "HttpExceptionBody", &body);
    }
    let (status, body) = m.get(&url, &[]).await;
    assert_eq!(status, 200, "indexed after the window: {body}");
    assert_eq!(body["txId"], src_tx.to_string());
    assert!(body.get("receive").is_none(), "still in flight: {body}");
    common::assert_shape("allbridge/transfer_status_pending.json", &body);
    common::assert_vendor_schema("stablebridge", "TransferStatusResponse", &body);
    let received = wait_for("allbridge receive", || async {
        let (_, v) = m.get(&url, &[]).await;
        v["receive"]["txId"].is_string().then_some(v)
    })
    .await;
    common::assert_vendor_schema("stablebridge", "TransferStatusResponse", &received);
}

#[tokio::test(flavor = "multi_thread")]
async fn allbridge_tron_to_evm_pays_out_once_the_simulated_raw_transaction_is_submitted() {
    let m = mesh().await;
    let user = keys::anvil_address(2);
    let usdt = m.token(DST, Token::Usdt);
    let base = m.url(Upstream::Allbridge);
    // The mainnet token id works too (a client configured for the real chain).
    let ask = format!("amount=8000000&sourceToken=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t&sourceChain=TRX&destinationToken={usdt}&destinationChain=BAS");
    let raw_url = format!("{base}/raw/bridge?{ask}&sender={TRON_USER}&recipient={user}&messenger=ALLBRIDGE&feePaymentMethod=WITH_STABLECOIN");
    let (status, raw) = m.get(&raw_url, &[]).await;
    assert_eq!(status, 200, "{raw}");
    let raw_tx = raw.as_str().expect("a non-EVM raw transaction is a string");
    let before = m.balance(DST, Token::Usdt, user).await;
    let (_, sent, _) = m
        .post(
            &format!("{base}/simulator/ledger/submit"),
            &[],
            &json!({"rawTx": raw_tx}),
        )
        .await;
    let tx = sent["txId"]
        .as_str()
        .expect("a simulated tx id")
        .to_string();
    let url = format!("{base}/transfer/status?chain=TRX&txId={tx}");
    let st = wait_for("allbridge receive", || async {
        let (_, v) = m.get(&url, &[]).await;
        v["receive"]["txId"].is_string().then_some(v)
    })
    .await;
    assert_eq!(st["receive"]["amount"], "7992000");
    common::assert_vendor_schema("stablebridge", "TransferStatusResponse", &st);
    assert!(
        m.succeeded(DST, st["receive"]["txId"].as_str().unwrap())
            .await
    );
    assert_eq!(
        m.balance(DST, Token::Usdt, user).await - before,
        U256::from(7_992_000u64)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn allbridge_serves_evm_to_stellar_and_refuses_stellar_sources_in_its_error_shape() {
    let m = mesh().await;
    let base = m.url(Upstream::Allbridge);
    let usdc = m.token(SRC, Token::Usdc);
    let to_stellar = format!("amount=1000000&sourceToken={usdc}&sourceChain=ETH&destinationToken=USDC&destinationChain=SRB");
    let (status, quote) = m
        .get(&format!("{base}/bridge/quote?{to_stellar}"), &[])
        .await;
    assert_eq!(status, 200, "{quote}");
    common::assert_vendor_schema("stablebridge", "BridgeQuoteResponse", &quote);
    // 6-decimal USDC in, 7-decimal stellar USDC out, less the 10 bps fee.
    assert_eq!(
        quote["options"][0]["paymentMethods"][0]["estimatedAmount"]["max"],
        "9990000"
    );

    let from_stellar = format!("amount=1000000&sourceToken=USDC&sourceChain=SRB&destinationToken={usdc}&destinationChain=ETH");
    let (status, err) = m
        .get(&format!("{base}/bridge/quote?{from_stellar}"), &[])
        .await;
    assert_eq!(status, 400);
    common::assert_shape("allbridge/error_bad_request.json", &err);
    common::assert_vendor_schema("stablebridge", "HttpExceptionBody", &err);
    assert!(
        err["message"].as_str().unwrap().contains("Stellar"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn chainflip_vault_swap_moves_usdc_to_the_simulated_bitcoin_ledger() {
    let m = mesh().await;
    let user = keys::anvil_address(9);
    let base = m.url(Upstream::Chainflip);
    let (_, q) = m
        .get(&format!("{base}/v2/quote?srcChain=Ethereum&srcAsset=USDC&destChain=Bitcoin&destAsset=BTC&amount=10000000000"), &[])
        .await;
    common::assert_shape("chainflip/quote.json", &q);
    assert_eq!(
        q[0]["egressAmount"], "9990000",
        "10 000 USDC buy 0.1 BTC less the fee"
    );

    let params = json!([{"chain": "Ethereum", "asset": "USDC"}, {"chain": "Bitcoin", "asset": "BTC"}, BTC_USER, 0,
        {"chain": "Ethereum", "input_amount": "0x2540be400", "refund_parameters": {"retry_duration": 10, "refund_address": user, "min_price": "0x0"}}]);
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "broker_request_swap_parameter_encoding", "params": params});
    let (_, enc, _) = m.post(&format!("{base}/broker"), &[], &rpc).await;
    common::assert_shape("chainflip/broker_vault_swap.json", &enc);
    let r = &enc["result"];
    let call = Call {
        approve: Some(field(&r["source_token_address"])),
        spender: field(&r["to"]),
        amount: U256::from(10_000_000_000u64),
        to: field(&r["to"]),
        data: field(&r["calldata"]),
        value: field(&r["value"]),
    };
    let src_tx = m.execute(SRC, user, &call).await;
    let st = wait_for("chainflip COMPLETED", || async {
        let (_, v) = m.get(&format!("{base}/v2/swaps/{src_tx}"), &[]).await;
        (v["state"] == "COMPLETED").then_some(v)
    })
    .await;
    let egress = st["swapEgress"]["txRef"].as_str().unwrap();
    assert!(egress.starts_with("sim-bitcoin-"), "{egress}");
    assert_eq!(
        m.sims.ledger_balance(Node::Bitcoin, BTC_USER, "BTC"),
        9_990_000
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn chainflip_deposit_channel_pays_out_on_anvil_after_simulated_btc_arrives() {
    let m = mesh().await;
    let user = keys::anvil_address(1);
    let base = m.url(Upstream::Chainflip);
    let params = json!([{"chain": "Bitcoin", "asset": "BTC"}, {"chain": "Ethereum", "asset": "USDC"},
        user.to_string(), 0, null, 0, [], {"retry_duration": 10, "refund_address": BTC_USER, "min_price": "0x0"}]);
    let rpc = json!({"jsonrpc": "2.0", "id": 7, "method": "broker_request_swap_deposit_address", "params": params});
    let (_, opened, _) = m.post(&format!("{base}/broker"), &[], &rpc).await;
    common::assert_shape("chainflip/broker_deposit_address.json", &opened);
    let r = &opened["result"];
    let address = r["address"].as_str().unwrap().to_string();
    let id = format!("{}-Bitcoin-{}", r["issued_block"], r["channel_id"]);
    let (_, waiting) = m.get(&format!("{base}/v2/swaps/{id}"), &[]).await;
    assert_eq!(waiting["state"], "WAITING", "{waiting}");
    common::assert_shape("chainflip/swap_status_waiting.json", &waiting);

    let before = m.balance(SRC, Token::Usdc, user).await;
    let (status, sent, _) = m
        .post(
            &format!("{base}/simulator/bitcoin/send"),
            &[],
            &json!({"to": address, "amountSats": 100_000}),
        )
        .await;
    assert_eq!(status, 200, "{sent}");
    let st = wait_for("chainflip COMPLETED", || async {
        let (_, v) = m.get(&format!("{base}/v2/swaps/{id}"), &[]).await;
        (v["state"] == "COMPLETED").then_some(v)
    })
    .await;
    common::assert_shape("chainflip/swap_status_completed.json", &st);
    assert!(
        m.succeeded(SRC, st["swapEgress"]["txRef"].as_str().unwrap())
            .await
    );
    // 100 000 sats = 0.001 BTC = 100 USDC, less 10 bps.
    assert_eq!(
        m.balance(SRC, Token::Usdc, user).await - before,
        U256::from(99_900_000u64)
    );

    // The library call does the same as the control endpoint.
    let tx = m.sims.send_btc(&address, 50_000).unwrap();
    assert!(tx.starts_with("sim-bitcoin-"));
    wait_for("second payout", || async {
        let paid = m.balance(SRC, Token::Usdc, user).await - before;
        (paid == U256::from(149_850_000u64)).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn chainflip_prices_ether_and_pays_it_out_after_simulated_btc_arrives() {
    let m = mesh().await;
    let user = keys::anvil_address(2);
    let base = m.url(Upstream::Chainflip);
    // 0.001 BTC = 100 USD = 1/30 ETH at the devnet's prices, less 10 bps.
    let (status, q) = m
        .get(&format!("{base}/v2/quote?srcChain=Bitcoin&srcAsset=BTC&destChain=Arbitrum&destAsset=ETH&amount=100000"), &[])
        .await;
    assert_eq!(status, 200, "{q}");
    common::assert_shape("chainflip/quote.json", &q);
    assert_eq!(
        q[0]["destAsset"],
        json!({"chain": "Arbitrum", "asset": "ETH"})
    );
    assert_eq!(q[0]["egressAmount"], "33300000000000000");
    let (_, back) = m
        .get(&format!("{base}/v2/quote?srcChain=Ethereum&srcAsset=ETH&destChain=Bitcoin&destAsset=BTC&amount=3000000000000000000"), &[])
        .await;
    assert_eq!(
        back[0]["egressAmount"], "8991000",
        "3 ETH = 0.09 BTC less the fee"
    );

    let params = json!([{"chain": "Bitcoin", "asset": "BTC"}, {"chain": "Ethereum", "asset": "ETH"},
        user.to_string(), 0, null, 0, [], {"retry_duration": 10, "refund_address": BTC_USER, "min_price": "0x0"}]);
    let rpc = json!({"jsonrpc": "2.0", "id": 8, "method": "broker_request_swap_deposit_address", "params": params});
    let (_, opened, _) = m.post(&format!("{base}/broker"), &[], &rpc).await;
    let r = &opened["result"];
    let id = format!("{}-Bitcoin-{}", r["issued_block"], r["channel_id"]);
    let eth = || async {
        alloy::providers::Provider::get_balance(&m.provider(SRC), user)
            .await
            .unwrap()
    };
    let before = eth().await;
    m.sims
        .send_btc(r["address"].as_str().unwrap(), 100_000)
        .unwrap();
    let st = wait_for("chainflip COMPLETED", || async {
        let (_, v) = m.get(&format!("{base}/v2/swaps/{id}"), &[]).await;
        (v["state"] == "COMPLETED").then_some(v)
    })
    .await;
    assert_eq!(st["destAsset"], "ETH", "{st}");
    assert_eq!(eth().await - before, U256::from(33_300_000_000_000_000u64));
}
