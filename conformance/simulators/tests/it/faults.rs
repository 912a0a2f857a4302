//! Fault injection is what a client sees: the upstream's own error body and
//! status, a truncated body, a hang that only the client's timeout ends —
//! on every simulator, set at runtime or at start — and accept-then-fail
//! takes the deposit, reports the upstream's failed status and refunds.

use crate::common;

use alloy::primitives::U256;
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
        Upstream::Bungee => (Method::GET, "/v2/quote?fromChainId=1&toChainId=8453&fromTokenAddress=USDC&toTokenAddress=USDC&fromAmount=1000000&userAddress=0x00000000000000000000000000000000000000aa", vec![("API-KEY", "devnet")], None),
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

        set_faults(&m, u, json!({"mode": "error", "status": 429})).await;
        assert_eq!(send(&m, u, timeout).await.unwrap().0, 429, "{u:?}");

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

    // LI.FI: FAILED once the refund went through.
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
    let failed = wait_for("LI.FI FAILED", || async {
        let (_, v) = m.get(&status_url, &[]).await;
        (v["status"] == "FAILED").then_some(v)
    })
    .await;
    common::assert_shape("lifi/status_failed.json", &failed);
    assert!(
        m.succeeded(SRC, failed["receiving"]["refundTxHash"].as_str().unwrap())
            .await
    );

    // Squid: its documented refund status.
    let auth = [("x-integrator-id", "devnet")];
    let body = json!({"fromChain": SRC.to_string(), "toChain": DST.to_string(), "fromToken": "USDC", "toToken": "USDC",
                      "fromAmount": "2000000", "fromAddress": user});
    let (_, route, _) = m
        .post(
            &format!("{}/v2/route", m.url(Upstream::Squid)),
            &auth,
            &body,
        )
        .await;
    let tx = &route["route"]["transactionRequest"];
    let call = Call {
        approve: Some(usdc),
        spender: field(&tx["target"]),
        amount: U256::from(2_000_000u64),
        to: field(&tx["target"]),
        data: field(&tx["data"]),
        value: U256::ZERO,
    };
    let src_tx = m.execute(SRC, user, &call).await;
    let status_url = format!(
        "{}/v2/status?transactionId={src_tx}&fromChainId={SRC}&toChainId={DST}",
        m.url(Upstream::Squid)
    );
    wait_for("squid refund", || async {
        let (_, v) = m.get(&status_url, &auth).await;
        (v["squidTransactionStatus"] == "refund").then_some(v)
    })
    .await;

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
