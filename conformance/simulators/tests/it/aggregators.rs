//! The aggregator simulators (LI.FI, Squid, Bungee) settle for real: a
//! quote fetched over HTTP in the upstream's own format, executed as a
//! wallet would (approve, then the transaction request) by an anvil test
//! account, is paid out on the destination anvil, and the status endpoint
//! reports it done with the real receiving transaction.

use crate::common;

use alloy::primitives::{Address, U256};
use common::{field, mesh, mesh_with, wait_for, Call, Mesh, DST, SRC};
use relay_devnet::{keys, Token};
use relay_simulators::{SimConfig, Upstream};
use serde_json::{json, Value};
use std::time::Duration;

fn lifi_quote_url(m: &Mesh, from: Address, token: &str, amount: u64) -> String {
    format!(
        "{}/v1/quote?fromChain={SRC}&toChain={DST}&fromToken={token}&toToken={token}&fromAmount={amount}&fromAddress={from}&slippage=0.005",
        m.url(Upstream::Lifi)
    )
}

/// The wallet call a LI.FI quote describes.
fn lifi_call(quote: &Value, approve: Option<Address>) -> Call {
    let tx = &quote["transactionRequest"];
    Call {
        approve,
        spender: field(&quote["estimate"]["approvalAddress"]),
        amount: field(&quote["estimate"]["fromAmount"]),
        to: field(&tx["to"]),
        data: field(&tx["data"]),
        value: field(&tx["value"]),
    }
}

async fn lifi_status(m: &Mesh, tx: impl std::fmt::Display, want: &str) -> Value {
    let url = format!(
        "{}/v1/status?txHash={tx}&fromChain={SRC}&toChain={DST}",
        m.url(Upstream::Lifi)
    );
    wait_for(&format!("LI.FI status {want}"), || async {
        let (_, v) = m.get(&url, &[]).await;
        (v["status"] == want).then_some(v)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn lifi_quote_executes_and_pays_out_on_the_destination_chain() {
    let m = mesh().await;
    let user = keys::anvil_address(3);
    let usdc = m.token(SRC, Token::Usdc);
    let (status, quote) = m
        .get(&lifi_quote_url(&m, user, "USDC", 10_000_000), &[])
        .await;
    assert_eq!(status, 200, "{quote}");
    common::assert_shape("lifi/quote.json", &quote);
    common::assert_vendor_schema("lifi", "Step", &quote);
    assert_eq!(quote["estimate"]["toAmount"], "9990000");
    assert_eq!(quote["estimate"]["toAmountMin"], "9940050");
    assert_eq!(quote["transactionRequest"]["chainId"], SRC);

    let before = m.balance(DST, Token::Usdc, user).await;
    let src_tx = m.execute(SRC, user, &lifi_call(&quote, Some(usdc))).await;
    let done = lifi_status(&m, src_tx, "DONE").await;
    common::assert_shape("lifi/status_done.json", &done);
    common::assert_vendor_schema("lifi", "StatusResponse", &done);
    assert_eq!(done["substatus"], "COMPLETED");
    assert_eq!(done["receiving"]["chainId"], DST);
    assert_eq!(
        m.balance(DST, Token::Usdc, user).await - before,
        U256::from(9_990_000u64),
        "paid exactly the quoted toAmount"
    );
    let receiving = done["receiving"]["txHash"].as_str().unwrap();
    assert!(
        m.succeeded(DST, receiving).await,
        "the receiving hash is a real payout"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lifi_native_eth_quote_settles_with_value() {
    let m = mesh().await;
    let user = keys::anvil_address(4);
    let zero = Address::ZERO.to_string();
    let (_, quote) = m
        .get(
            &lifi_quote_url(&m, user, &zero, 2_000_000_000_000_000_000),
            &[],
        )
        .await;
    assert_eq!(
        quote["transactionRequest"]["value"], "0x1bc16d674ec80000",
        "{quote}"
    );
    common::assert_vendor_schema("lifi", "Step", &quote);
    let dst = m.provider(DST);
    let before = alloy::providers::Provider::get_balance(&dst, user)
        .await
        .unwrap();
    let src_tx = m.execute(SRC, user, &lifi_call(&quote, None)).await;
    let done = lifi_status(&m, src_tx, "DONE").await;
    common::assert_vendor_schema("lifi", "StatusResponse", &done);
    let after = alloy::providers::Provider::get_balance(&dst, user)
        .await
        .unwrap();
    assert_eq!(after - before, U256::from(1_998_000_000_000_000_000u128));
}

#[tokio::test(flavor = "multi_thread")]
async fn lifi_same_chain_swap_pays_the_other_token_out_on_the_source_chain() {
    let m = mesh().await;
    let user = keys::anvil_address(6);
    let base = m.url(Upstream::Lifi);
    let url = |to: &str| {
        format!("{base}/v1/quote?fromChain={SRC}&toChain={SRC}&fromToken=USDC&toToken={to}&fromAmount=4000000&fromAddress={user}")
    };
    let (status, same) = m.get(&url("USDC"), &[]).await;
    assert_eq!(status, 404, "no route from a token into itself: {same}");
    assert_eq!(same["code"], 1002, "{same}");
    common::assert_vendor_schema("lifi", "QuoteNotFound", &same);

    let (status, quote) = m.get(&url("USDT"), &[]).await;
    assert_eq!(status, 200, "{quote}");
    common::assert_shape("lifi/quote.json", &quote);
    common::assert_vendor_schema("lifi", "Step", &quote);
    assert_eq!(quote["action"]["toChainId"], SRC);
    assert_eq!(quote["action"]["toToken"]["symbol"], "USDT");
    assert_eq!(quote["includedSteps"][0]["type"], "swap");
    assert_eq!(quote["estimate"]["toAmount"], "3996000");
    assert_eq!(quote["transactionRequest"]["chainId"], SRC);

    let before = m.balance(SRC, Token::Usdt, user).await;
    let usdc = m.token(SRC, Token::Usdc);
    let src_tx = m.execute(SRC, user, &lifi_call(&quote, Some(usdc))).await;
    let done = lifi_status(&m, src_tx, "DONE").await;
    assert_eq!(done["receiving"]["chainId"], SRC, "{done}");
    common::assert_vendor_schema("lifi", "StatusResponse", &done);
    assert_eq!(
        m.balance(SRC, Token::Usdt, user).await - before,
        U256::from(3_996_000u64),
        "paid the quoted USDT on the source chain"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn squid_route_executes_and_status_reports_success() {
    let m = mesh().await;
    let user = keys::anvil_address(5);
    let (usdc_src, usdc_dst) = (m.token(SRC, Token::Usdc), m.token(DST, Token::Usdc));
    let base = m.url(Upstream::Squid);
    let body = json!({"fromChain": SRC.to_string(), "toChain": DST.to_string(), "fromToken": usdc_src,
        "toToken": usdc_dst, "fromAmount": "2000000", "fromAddress": user, "toAddress": user, "slippage": 1});
    let (status, refused, _) = m.post(&format!("{base}/v2/route"), &[], &body).await;
    assert_eq!(status, 401, "x-integrator-id is required");
    common::assert_vendor_schema("squid", "SquidError", &refused);

    let auth = [("x-integrator-id", "relay-devnet")];
    let (status, route, headers) = m.post(&format!("{base}/v2/route"), &auth, &body).await;
    assert_eq!(status, 200, "{route}");
    assert!(headers.contains_key("x-request-id"));
    common::assert_shape("squid/route.json", &route);
    common::assert_vendor_schema("squid", "RouteResponse", &route);
    let tx = &route["route"]["transactionRequest"];
    let call = Call {
        approve: Some(usdc_src),
        spender: field(&tx["target"]),
        amount: U256::from(2_000_000u64),
        to: field(&tx["target"]),
        data: field(&tx["data"]),
        value: field(&tx["value"]),
    };
    let before = m.balance(DST, Token::Usdc, user).await;
    let src_tx = m.execute(SRC, user, &call).await;
    let url = format!("{base}/v2/status?transactionId={src_tx}&fromChainId={SRC}&toChainId={DST}");
    let st = wait_for("squid success", || async {
        let (_, v) = m.get(&url, &auth).await;
        (v["squidTransactionStatus"] == "success").then_some(v)
    })
    .await;
    common::assert_shape("squid/status_success.json", &st);
    common::assert_vendor_schema("squid", "StatusResponse", &st);
    assert!(
        m.succeeded(DST, st["toChain"]["transactionId"].as_str().unwrap())
            .await
    );
    assert_eq!(
        m.balance(DST, Token::Usdc, user).await - before,
        U256::from(1_997_000u64),
        "2 USDC less Squid's simulated 15 bps"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bungee_v3_quote_transaction_executes_and_swap_status_completes() {
    let m = mesh().await;
    let user = keys::anvil_address(6);
    let (usdc_src, usdc_dst) = (m.token(SRC, Token::Usdc), m.token(DST, Token::Usdc));
    let base = m.url(Upstream::Bungee);
    let url = format!("{base}/v3/swap/quote?userOps=tx&originChainId={SRC}&destinationChainId={DST}&inputToken={usdc_src}&inputAmount=4000000&outputToken={usdc_dst}&receiverAddress={user}&userAddress={user}&slippage=0.5");
    assert_eq!(m.get(&url, &[]).await.0, 401, "x-api-key is required");
    let key = [("x-api-key", "devnet")];
    let (_, q) = m.get(&url, &key).await;
    assert_eq!(q["success"], true, "{q}");
    common::assert_shape("bungee/quote.json", &q);
    let route = &q["result"]["routes"][0];
    let quote_id = route["quoteId"].as_str().unwrap().to_string();
    let tx = &route["txData"]["object"];
    let call = Call {
        approve: Some(field(&route["approval"]["tokenAddress"])),
        spender: field(&route["approval"]["spenderAddress"]),
        amount: field(&route["approval"]["amount"]),
        to: field(&tx["to"]),
        data: field(&tx["data"]),
        value: field(&tx["value"]),
    };
    let before = m.balance(DST, Token::Usdc, user).await;
    m.execute(SRC, user, &call).await;
    let url = format!("{base}/v3/swap/status?quoteId={quote_id}");
    let st = wait_for("bungee COMPLETED", || async {
        let (_, v) = m.get(&url, &key).await;
        (v["result"]["status"] == "COMPLETED").then_some(v)
    })
    .await;
    common::assert_shape("bungee/swap_status_completed.json", &st);
    let dest_tx = st["result"]["destination"]["txHash"].as_str().unwrap();
    assert!(m.succeeded(DST, dest_tx).await);
    assert_eq!(
        m.balance(DST, Token::Usdc, user).await - before,
        U256::from(3_995_200u64),
        "4 USDC less Bungee's simulated 12 bps"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deposit_that_matches_no_quote_is_refunded_in_full() {
    let m = mesh().await;
    let user = keys::anvil_address(7);
    let usdc = m.token(SRC, Token::Usdc);
    let (_, quote) = m
        .get(&lifi_quote_url(&m, user, "USDC", 5_000_000), &[])
        .await;
    // Replay the quote's deposit: the first settles, the second matches no
    // open quote and comes back.
    let call = lifi_call(&quote, Some(usdc));
    let first = m.execute(SRC, user, &call).await;
    lifi_status(&m, first, "DONE").await;
    let before = m.balance(SRC, Token::Usdc, user).await;
    let second = m.execute(SRC, user, &call).await;
    // LI.FI reports a refund as DONE / REFUNDED, `receiving` the refund.
    let refunded = lifi_status(&m, second, "DONE").await;
    assert_eq!(refunded["substatus"], "REFUNDED");
    common::assert_shape("lifi/status_refunded.json", &refunded);
    common::assert_vendor_schema("lifi", "StatusResponse", &refunded);
    let refund = refunded["receiving"]["txHash"].as_str().unwrap();
    assert!(m.succeeded(SRC, refund).await);
    assert_eq!(
        m.balance(SRC, Token::Usdc, user).await,
        before,
        "refunded in full"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_statuses_and_quote_only_routes_are_valid_vendor_answers() {
    // Settlement held back, so that the in-flight statuses can be read.
    let m = mesh_with(SimConfig {
        settle_delay: Duration::from_secs(5),
        ..SimConfig::default()
    })
    .await;
    let user = keys::anvil_address(8);
    let usdc = m.token(SRC, Token::Usdc);

    // LI.FI: PENDING / WAIT_DESTINATION_TRANSACTION.
    let (_, quote) = m
        .get(&lifi_quote_url(&m, user, "USDC", 1_000_000), &[])
        .await;
    let src_tx = m.execute(SRC, user, &lifi_call(&quote, Some(usdc))).await;
    let pending = lifi_status(&m, src_tx, "PENDING").await;
    common::assert_shape("lifi/status_pending.json", &pending);
    common::assert_vendor_schema("lifi", "StatusResponse", &pending);
    assert_eq!(pending["receiving"]["chainId"], DST, "{pending}");

    // Squid: `ongoing`, and a `quoteOnly` route (no transactionRequest).
    let base = m.url(Upstream::Squid);
    let auth = [("x-integrator-id", "relay-devnet")];
    let mut body = json!({"fromChain": SRC.to_string(), "toChain": DST.to_string(), "fromToken": "USDC",
        "toToken": "USDC", "fromAmount": "1000000", "fromAddress": user, "toAddress": user, "slippage": 1});
    let (_, route, _) = m.post(&format!("{base}/v2/route"), &auth, &body).await;
    let tx = &route["route"]["transactionRequest"];
    let call = Call {
        approve: Some(usdc),
        spender: field(&tx["target"]),
        amount: U256::from(1_000_000u64),
        to: field(&tx["target"]),
        data: field(&tx["data"]),
        value: field(&tx["value"]),
    };
    let src_tx = m.execute(SRC, user, &call).await;
    let url = format!("{base}/v2/status?transactionId={src_tx}&fromChainId={SRC}&toChainId={DST}");
    let ongoing = wait_for("squid ongoing", || async {
        let (_, v) = m.get(&url, &auth).await;
        (v["squidTransactionStatus"] == "ongoing").then_some(v)
    })
    .await;
    common::assert_shape("squid/status_ongoing.json", &ongoing);
    common::assert_vendor_schema("squid", "StatusResponse", &ongoing);

    body["quoteOnly"] = json!(true);
    let (status, quote_only, _) = m.post(&format!("{base}/v2/route"), &auth, &body).await;
    assert_eq!(status, 200, "{quote_only}");
    assert!(quote_only["route"].get("transactionRequest").is_none());
    common::assert_vendor_schema("squid", "RouteResponse", &quote_only);
}
