//! The simulators' refusals are in their upstreams' documented shapes too:
//! validation errors, unknown transactions, missing credentials — each
//! answer carries every field of the recorded sample
//! (`fixtures/<upstream>/*.json`, see its README). The success paths are
//! held to their samples in the settlement tests. And every sample is
//! well-formed JSON, so rails can load them as they are.

use crate::common;

use common::{mesh, Mesh, DST, SRC};
use relay_simulators::Upstream;
use serde_json::{json, Value};

#[test]
fn every_sample_is_well_formed_json() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut seen = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            let text = std::fs::read_to_string(&f).unwrap();
            serde_json::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            seen += 1;
        }
    }
    assert!(seen >= 30, "only {seen} samples");
}

/// GET `path` on `u` with `headers`: asserts `status` and the sample's shape.
async fn refused(
    m: &Mesh,
    u: Upstream,
    path: &str,
    headers: &[(&str, &str)],
    status: u16,
    sample: &str,
) {
    let (got, body) = m.get(&format!("{}{path}", m.url(u)), headers).await;
    assert_eq!(got, status, "{u:?} {path}: {body}");
    common::assert_shape(sample, &body);
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_carry_the_documented_error_shapes() {
    let m = mesh().await;
    let unknown_tx = format!("{:#066x}", 1);
    refused(
        &m,
        Upstream::Lifi,
        &format!("/v1/quote?fromChain={SRC}"),
        &[],
        400,
        "lifi/error_validation.json",
    )
    .await;
    // No route turns a token into itself on its own chain.
    let q = format!("/v1/quote?fromChain={SRC}&toChain={SRC}&fromToken=USDC&toToken=USDC&fromAmount=1000&fromAddress={unknown_tx:.42}");
    refused(&m, Upstream::Lifi, &q, &[], 404, "lifi/error_no_quote.json").await;
    let status = format!("/v1/status?txHash={unknown_tx}&fromChain={SRC}&toChain={DST}");
    refused(
        &m,
        Upstream::Lifi,
        &status,
        &[],
        200,
        "lifi/status_not_found.json",
    )
    .await;

    let squid = [("x-integrator-id", "relay-devnet")];
    let (got, body, _) = m
        .post(
            &format!("{}/v2/route", m.url(Upstream::Squid)),
            &squid,
            &json!({"fromChain": SRC.to_string()}),
        )
        .await;
    assert_eq!(got, 400, "{body}");
    common::assert_shape("squid/error_bad_request.json", &body);
    let status = format!("/v2/status?transactionId={unknown_tx}&fromChainId={SRC}&toChainId={DST}");
    refused(
        &m,
        Upstream::Squid,
        &status,
        &squid,
        404,
        "squid/error_not_found.json",
    )
    .await;

    let q = format!("/v2/quote?fromChainId={SRC}&toChainId={DST}&fromTokenAddress=USDC&toTokenAddress=USDC&fromAmount=1&userAddress={unknown_tx:.42}");
    refused(
        &m,
        Upstream::Bungee,
        &q,
        &[],
        401,
        "bungee/error_unauthorized.json",
    )
    .await;
    let status =
        format!("/v2/bridge-status?transactionHash={unknown_tx}&fromChainId={SRC}&toChainId={DST}");
    refused(
        &m,
        Upstream::Bungee,
        &status,
        &[("API-KEY", "devnet")],
        200,
        "bungee/bridge_status_pending.json",
    )
    .await;

    let status = format!("/transfer/status?chain=ETH&txId={unknown_tx}");
    refused(
        &m,
        Upstream::Allbridge,
        &status,
        &[],
        400,
        "allbridge/error_bad_request.json",
    )
    .await;
    let q = "/bridge/quote?amount=1000000&sourceToken=0x00000000000000000000000000000000000000ff&sourceChain=ETH&destinationToken=USDC&destinationChain=SOL";
    refused(
        &m,
        Upstream::Allbridge,
        q,
        &[],
        400,
        "allbridge/error_bad_request.json",
    )
    .await;

    refused(
        &m,
        Upstream::Chainflip,
        "/v2/quote?srcChain=Ethereum",
        &[],
        400,
        "chainflip/error_bad_request.json",
    )
    .await;
    refused(
        &m,
        Upstream::Chainflip,
        "/v2/swaps/1-Bitcoin-99",
        &[],
        404,
        "chainflip/error_bad_request.json",
    )
    .await;

    let messages = format!("/v2/messages/0?transactionHash={unknown_tx}");
    refused(
        &m,
        Upstream::Circle,
        &messages,
        &[],
        404,
        "circle/error_not_found.json",
    )
    .await;
}
