//! Fault injection is what a client sees: the upstream's own error body and
//! status, a truncated body, a hang that only the client's timeout ends —
//! on every simulator, set at runtime or at start — and accept-then-fail
//! takes the deposit, reports the upstream's failed status and refunds;
//! fail-on-destination takes it and reports Squid's destination failure; a
//! payout whose receipt is late is paid once and never refunded.

use crate::common;

use alloy::{primitives::U256, providers::Provider};
use common::{field, mesh, mesh_with, wait_for, Call, Mesh, DST, SRC};
use relay_devnet::{keys, Token};
use relay_simulators::{FaultConfig, FaultMode, SimConfig, Upstream};
use reqwest::Method;
use serde_json::{json, Value};
use std::{collections::HashMap, time::Duration};

/// A request each simulator answers normally: method, path, headers, body.
fn probe(
    u: Upstream,
) -> (
    Method,
    &'static str,
    Vec<(&'static str, &'static str)>,
    Option<Value>,
) {
    match u {
        Upstream::Lifi => (Method::GET, "/v1/quote?fromChain=1&toChain=8453&fromToken=USDC&toToken=USDC&fromAmount=1000000&fromAddress=0x00000000000000000000000000000000000000aa", vec![], None),
        Upstream::Squid => (Method::POST, "/v2/route", vec![("x-integrator-id", "devnet")],
            Some(json!({"fromChain": "1", "toChain": "8453", "fromToken": "USDC", "toToken": "USDC", "fromAmount": "1000000",
                        "fromAddress": "0x00000000000000000000000000000000000000aa"}))),
        Upstream::Bungee => (Method::GET, "/v3/swap/quote?userOps=tx&originChainId=1&destinationChainId=8453&inputToken=USDC&inputAmount=1000000&outputToken=USDC&receiverAddress=0x00000000000000000000000000000000000000aa&userAddress=0x00000000000000000000000000000000000000aa", vec![("x-api-key", "devnet")], None),
        Upstream::Allbridge => (Method::GET, "/tokens", vec![], None),
        Upstream::Chainflip => (Method::GET, "/v2/quote?srcChain=Ethereum&srcAsset=USDC&destChain=Bitcoin&destAsset=BTC&amount=100000000", vec![], None),
        Upstream::Circle => (Method::GET, "/v2/messages/0?transactionHash=0x0000000000000000000000000000000000000000000000000000000000000000", vec![], None),
    }
}

async fn send(m: &Mesh, u: Upstream, timeout: Duration) -> Result<(u16, String), reqwest::Error> {
    let (method, path, headers, body) = probe(u);
    let mut req = m
        .http
        .request(method, format!("{}{path}", m.url(u)))
        .timeout(timeout);
    for (k, v) in headers {
        req = req.header(k, v);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await?;
    let status = resp.status().as_u16();
    Ok((status, resp.text().await?))
}

async fn set_faults(m: &Mesh, u: Upstream, c: Value) {
    let (status, echoed, _) = m
        .post(&format!("{}/simulator/faults", m.url(u)), &[], &c)
        .await;
    assert_eq!(status, 200, "{echoed}");
}

/// The documented error body each upstream answers with.
fn error_fixture(u: Upstream) -> &'static str {
    match u {
        Upstream::Lifi => "lifi/error_server.json",
        Upstream::Squid => "squid/error_internal.json",
        Upstream::Bungee => "bungee/error_server.json",
        Upstream::Allbridge => "allbridge/error_bad_request.json",
        Upstream::Chainflip => "chainflip/error_bad_request.json",
        Upstream::Circle => "circle/error_not_found.json",
    }
}

/// The vendor schema (rail directory, component) of each upstream's error
/// body, for the upstreams that publish one.
fn vendor_error(u: Upstream) -> Option<(&'static str, &'static str)> {
    match u {
        Upstream::Lifi => Some(("lifi", "QuoteNotFound")),
        Upstream::Squid => Some(("squid", "SquidError")),
        Upstream::Allbridge => Some(("stablebridge", "HttpExceptionBody")),
        _ => None,
    }
}

/// `body` is valid against `u`'s published error schema, if it has one.
fn assert_vendor_error(u: Upstream, body: &str) {
    if let Some((rail, component)) = vendor_error(u) {
        let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{u:?}: {e}: {body}"));
        common::assert_vendor_schema(rail, component, &v);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn error_garbage_and_hang_are_what_a_client_with_a_timeout_sees() {
    let m = mesh().await;
    let timeout = Duration::from_millis(400);
    for u in Upstream::ALL {
        let (status, body) = send(&m, u, timeout).await.unwrap();
        assert!(status < 500, "{u:?} behaves by default: {status} {body}");

        set_faults(&m, u, json!({"mode": "error"})).await;
        let (status, body) = send(&m, u, timeout).await.unwrap();
        assert_eq!(status, 500, "{u:?}");
        common::assert_shape(error_fixture(u), &serde_json::from_str(&body).unwrap());
        assert_vendor_error(u, &body);

        set_faults(&m, u, json!({"mode": "error", "status": 429})).await;
        let (status, body) = send(&m, u, timeout).await.unwrap();
        assert_eq!(status, 429, "{u:?}");
        assert_vendor_error(u, &body);

        set_faults(&m, u, json!({"mode": "garbage"})).await;
        let (status, body) = send(&m, u, timeout).await.unwrap();
        assert_eq!(status, 200, "{u:?}");
        assert!(
            serde_json::from_str::<Value>(&body).is_err(),
            "{u:?}: {body}"
        );

        set_faults(&m, u, json!({"mode": "hang"})).await;
        let err = send(&m, u, timeout).await.unwrap_err();
        assert!(err.is_timeout(), "{u:?}: {err}");

        set_faults(&m, u, json!({"mode": "none"})).await;
        assert!(
            send(&m, u, timeout).await.unwrap().0 < 500,
            "{u:?} recovers"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn faults_configured_at_start_apply_from_the_first_request() {
    let mut faults = HashMap::new();
    faults.insert(
        Upstream::Squid,
        FaultConfig {
            status: Some(503),
            ..FaultConfig::mode(FaultMode::Error)
        },
    );
    faults.insert(
        Upstream::Lifi,
        FaultConfig {
            latency_ms: 300,
            ..FaultConfig::default()
        },
    );
    let m = mesh_with(SimConfig {
        faults,
        ..SimConfig::default()
    })
    .await;
    assert_eq!(
        send(&m, Upstream::Squid, Duration::from_secs(5))
            .await
            .unwrap()
            .0,
        503
    );
    let started = std::time::Instant::now();
    assert_eq!(
        send(&m, Upstream::Lifi, Duration::from_secs(5))
            .await
            .unwrap()
            .0,
        200
    );
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "latency applies"
    );
    let (_, read) = m
        .get(&format!("{}/simulator/faults", m.url(Upstream::Lifi)), &[])
        .await;
    assert_eq!(read["latencyMs"], 300);
    assert_eq!(m.sims.faults(Upstream::Squid).mode, FaultMode::Error);
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_then_fail_takes_the_deposit_reports_failure_and_refunds() {
    let m = mesh().await;
    let user = keys::anvil_address(4);
    let usdc = m.token(SRC, Token::Usdc);
    m.sims
        .set_faults(Upstream::Lifi, FaultConfig::mode(FaultMode::AcceptThenFail));
    set_faults(&m, Upstream::Squid, json!({"mode": "accept-then-fail"})).await;
    let before_src = m.balance(SRC, Token::Usdc, user).await;
    let before_dst = m.balance(DST, Token::Usdc, user).await;

    // LI.FI: DONE / REFUNDED once the refund went through.
    let url = format!("{}/v1/quote?fromChain={SRC}&toChain={DST}&fromToken=USDC&toToken=USDC&fromAmount=3000000&fromAddress={user}", m.url(Upstream::Lifi));
    let (status, quote) = m.get(&url, &[]).await;
    assert_eq!(status, 200, "quotes normally: {quote}");
    let tx = &quote["transactionRequest"];
    let call = Call {
        approve: Some(usdc),
        spender: field(&tx["to"]),
        amount: U256::from(3_000_000u64),
        to: field(&tx["to"]),
        data: field(&tx["data"]),
        value: U256::ZERO,
    };
    let src_tx = m.execute(SRC, user, &call).await;
    let status_url = format!("{}/v1/status?txHash={src_tx}", m.url(Upstream::Lifi));
    let refunded = wait_for("LI.FI DONE / REFUNDED", || async {
        let (_, v) = m.get(&status_url, &[]).await;
        (v["substatus"] == "REFUNDED").then_some(v)
    })
    .await;
    assert_eq!(refunded["status"], "DONE");
    common::assert_shape("lifi/status_refunded.json", &refunded);
    common::assert_vendor_schema("lifi", "StatusResponse", &refunded);
    assert!(
        m.succeeded(SRC, refunded["receiving"]["txHash"].as_str().unwrap())
            .await
    );

    // Squid: the refund status of its own enum (squid-types `refunded`).
    squid_route_ends(&m, user, "refunded").await;

    assert_eq!(
        m.balance(SRC, Token::Usdc, user).await,
        before_src,
        "refunded in full"
    );
    assert_eq!(
        m.balance(DST, Token::Usdc, user).await,
        before_dst,
        "nothing paid out"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fail_on_destination_takes_the_deposit_and_reports_squids_destination_failure() {
    let m = mesh().await;
    let user = keys::anvil_address(5);
    set_faults(&m, Upstream::Squid, json!({"mode": "fail-on-destination"})).await;
    let before_src = m.balance(SRC, Token::Usdc, user).await;
    let before_dst = m.balance(DST, Token::Usdc, user).await;
    let failed = squid_route_ends(&m, user, "failed_on_destination").await;
    assert!(
        failed.get("toChain").is_none(),
        "no destination transaction: {failed}"
    );

    // Neither paid out nor refunded: the deposit stays with the bridge.
    assert_eq!(
        m.balance(SRC, Token::Usdc, user).await,
        before_src - U256::from(2_000_000u64),
        "not refunded"
    );
    assert_eq!(
        m.balance(DST, Token::Usdc, user).await,
        before_dst,
        "nothing paid out"
    );
}

/// A Squid route of 2 USDC from `user`, quoted (the route valid against
/// Squid's schema), sent on chain and read until its status says `status`:
/// that answer, checked against the sample `squid/status_<status>.json` and
/// Squid's schema.
async fn squid_route_ends(m: &Mesh, user: alloy::primitives::Address, status: &str) -> Value {
    let auth = [("x-integrator-id", "devnet")];
    let body = json!({"fromChain": SRC.to_string(), "toChain": DST.to_string(), "fromToken": "USDC", "toToken": "USDC",
                      "fromAmount": "2000000", "fromAddress": user});
    let base = m.url(Upstream::Squid);
    let (code, route, _) = m.post(&format!("{base}/v2/route"), &auth, &body).await;
    assert_eq!(code, 200, "quotes normally: {route}");
    common::assert_vendor_schema("squid", "RouteResponse", &route);
    let tx = &route["route"]["transactionRequest"];
    let call = Call {
        approve: Some(m.token(SRC, Token::Usdc)),
        spender: field(&tx["target"]),
        amount: U256::from(2_000_000u64),
        to: field(&tx["target"]),
        data: field(&tx["data"]),
        value: U256::ZERO,
    };
    let src_tx = m.execute(SRC, user, &call).await;
    let url = format!("{base}/v2/status?transactionId={src_tx}&fromChainId={SRC}&toChainId={DST}");
    let answer = wait_for(&format!("squid {status}"), || async {
        let (_, v) = m.get(&url, &auth).await;
        (v["squidTransactionStatus"] == status).then_some(v)
    })
    .await;
    common::assert_shape(&format!("squid/status_{status}.json"), &answer);
    common::assert_vendor_schema("squid", "StatusResponse", &answer);
    answer
}

/// GET `url`: the status, the JSON body and the named response header.
async fn get_with_header(m: &Mesh, url: &str, header: &str) -> (u16, Value, Option<String>) {
    let resp = m.http.get(url).send().await.expect("GET answers");
    let status = resp.status().as_u16();
    let h = resp
        .headers()
        .get(header)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (status, resp.json().await.unwrap_or(Value::Null), h)
}

#[tokio::test(flavor = "multi_thread")]
async fn lifi_and_allbridge_failures_are_valid_vendor_statuses() {
    let m = mesh().await;
    let user = keys::anvil_address(6);
    let usdc = m.token(SRC, Token::Usdc);
    set_faults(&m, Upstream::Lifi, json!({"mode": "fail-on-destination"})).await;
    set_faults(&m, Upstream::Allbridge, json!({"mode": "accept-then-fail"})).await;

    // LI.FI: neither paid out nor refunded is FAILED / UNKNOWN_ERROR.
    let (_, status_url) = lifi_deposit(&m, user, 1_000_000).await;
    let failed = wait_for("LI.FI FAILED", || async {
        let (_, v) = m.get(&status_url, &[]).await;
        (v["status"] == "FAILED").then_some(v)
    })
    .await;
    assert_eq!(failed["substatus"], "UNKNOWN_ERROR", "{failed}");
    common::assert_shape("lifi/status_failed.json", &failed);
    common::assert_vendor_schema("lifi", "StatusResponse", &failed);

    // Allbridge: no `receive`, the refund only in the simulator's header.
    let base = m.url(Upstream::Allbridge);
    let usdc_dst = m.token(DST, Token::Usdc);
    let ask = format!("amount=2000000&sourceToken={usdc}&sourceChain=ETH&destinationToken={usdc_dst}&destinationChain=BAS");
    let raw_url = format!("{base}/raw/bridge?{ask}&sender={user}&recipient={user}&messenger=ALLBRIDGE&feePaymentMethod=WITH_STABLECOIN");
    let (status, raw) = m.get(&raw_url, &[]).await;
    assert_eq!(status, 200, "{raw}");
    common::assert_vendor_schema("stablebridge", "EssentialWeb3Transaction", &raw);
    let call = Call {
        approve: Some(usdc),
        spender: field(&raw["to"]),
        amount: U256::from(2_000_000u64),
        to: field(&raw["to"]),
        data: field(&raw["data"]),
        value: field(&raw["value"]),
    };
    let before = m.balance(SRC, Token::Usdc, user).await;
    let src_tx = m.execute(SRC, user, &call).await;
    let url = format!("{base}/transfer/status?chain=ETH&txId={src_tx}");
    let (st, refund) = wait_for("allbridge refund", || async {
        let (status, v, refund) = get_with_header(&m, &url, "x-simulator-refund-tx").await;
        (status == 200).then_some(()).and(refund.map(|r| (v, r)))
    })
    .await;
    assert!(st.get("receive").is_none(), "{st}");
    assert!(st.get("simulatorRefund").is_none(), "{st}");
    common::assert_shape("allbridge/transfer_status_pending.json", &st);
    common::assert_vendor_schema("stablebridge", "TransferStatusResponse", &st);
    assert!(m.succeeded(SRC, &refund).await, "the refund is real");
    assert_eq!(
        m.balance(SRC, Token::Usdc, user).await,
        before,
        "refunded in full"
    );
}

/// The destination chain stops mining as the bridge pays out: the payout's
/// receipt does not come within the operator's wait, and sending it is
/// reported as an error. The payout may still mine, so the simulator never
/// refunds on that error: it sends the payout again under the same id
/// (`BridgeDeposit` settles an id once) and, once the chain mines, the
/// transfer is DONE — paid out once, the deposit not refunded.
#[tokio::test(flavor = "multi_thread")]
async fn a_payout_whose_receipt_is_late_is_paid_once_and_never_refunded() {
    let m = mesh_with(SimConfig {
        receipt_wait: Duration::from_millis(500),
        ..SimConfig::default()
    })
    .await;
    let user = keys::anvil_address(7);
    // The bridge holds the deposit until the destination has stopped.
    let hold = FaultConfig {
        settle_delay_ms: 600_000,
        ..FaultConfig::default()
    };
    m.sims.set_faults(Upstream::Lifi, hold);
    let before = (
        m.balance(SRC, Token::Usdc, user).await,
        m.balance(DST, Token::Usdc, user).await,
    );
    let (quote, status_url) = lifi_deposit(&m, user, 3_000_000).await;
    wait_for("the deposit seen", || async {
        let (_, v) = m.get(&status_url, &[]).await;
        (v["status"] == "PENDING").then_some(())
    })
    .await;

    let dst = m.provider(DST);
    let _: () = dst
        .raw_request("evm_setAutomine".into(), (false,))
        .await
        .unwrap();
    m.sims.set_faults(Upstream::Lifi, FaultConfig::default());
    // A second payout pending: the first one's wait ended in an error, and
    // the simulator sent it again instead of refunding.
    let operator = keys::bridge_operator().address();
    wait_for("the payout sent again", || async {
        let mined = dst.get_transaction_count(operator).latest().await.ok()?;
        let pending = dst.get_transaction_count(operator).pending().await.ok()?;
        (pending >= mined + 2).then_some(())
    })
    .await;
    let _: () = dst
        .raw_request("evm_setAutomine".into(), (true,))
        .await
        .unwrap();
    let _: Value = dst.raw_request("evm_mine".into(), ()).await.unwrap();

    let done = wait_for("LI.FI DONE", || async {
        let (_, v) = m.get(&status_url, &[]).await;
        (v["status"] == "DONE").then_some(v)
    })
    .await;
    assert_eq!(done["substatus"], "COMPLETED", "{done}");
    let out: U256 = field(&quote["estimate"]["toAmount"]);
    assert_eq!(
        m.balance(DST, Token::Usdc, user).await,
        before.1 + out,
        "paid out once"
    );
    assert_eq!(
        m.balance(SRC, Token::Usdc, user).await,
        before.0 - U256::from(3_000_000u64),
        "the deposit not refunded"
    );
}

/// `user` deposits `amount` of USDC with LI.FI ([`SRC`] → [`DST`]) as its
/// quote says: the quote and the transfer's status URL.
async fn lifi_deposit(m: &Mesh, user: alloy::primitives::Address, amount: u64) -> (Value, String) {
    let url = format!("{}/v1/quote?fromChain={SRC}&toChain={DST}&fromToken=USDC&toToken=USDC&fromAmount={amount}&fromAddress={user}", m.url(Upstream::Lifi));
    let (_, quote) = m.get(&url, &[]).await;
    let tx = &quote["transactionRequest"];
    let call = Call {
        approve: Some(m.token(SRC, Token::Usdc)),
        spender: field(&quote["estimate"]["approvalAddress"]),
        amount: U256::from(amount),
        to: field(&tx["to"]),
        data: field(&tx["data"]),
        value: U256::ZERO,
    };
    let src_tx = m.execute(SRC, user, &call).await;
    let status_url = format!(
        "{}/v1/status?txHash={src_tx}&fromChain={SRC}&toChain={DST}",
        m.url(Upstream::Lifi)
    );
    (quote, status_url)
}
