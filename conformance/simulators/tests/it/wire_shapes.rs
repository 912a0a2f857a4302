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

/// The schema component of LI.FI's error bodies: its OpenAPI publishes one
/// error body, the quote's 404 (`QuoteNotFound`, `{message, errors}`), in
/// the `{message, code}` form its error-codes page gives every error.
pub const LIFI_ERROR: &str = "QuoteNotFound";

/// The vendor schema component (rail directory, component) each sample of
/// a simulator with a published schema answers as; None for the samples of
/// endpoints that schema does not cover. Panics on a sample it does not
/// know, so that a new sample gets a component.
fn sample_component(upstream: &str, file: &str) -> Option<(&'static str, &'static str)> {
    let c = match (upstream, file) {
        ("lifi", "quote.json") => ("lifi", "Step"),
        ("lifi", f) if f.starts_with("status_") => ("lifi", "StatusResponse"),
        ("lifi", f) if f.starts_with("error_") => ("lifi", LIFI_ERROR),
        ("squid", "route.json") => ("squid", "RouteResponse"),
        ("squid", f) if f.starts_with("status_") => ("squid", "StatusResponse"),
        ("squid", f) if f.starts_with("error_") => ("squid", "SquidError"),
        ("allbridge", "bridge_quote.json") => ("stablebridge", "BridgeQuoteResponse"),
        ("allbridge", "raw_bridge_evm.json") => ("stablebridge", "EssentialWeb3Transaction"),
        ("allbridge", f) if f.starts_with("transfer_status_") => {
            ("stablebridge", "TransferStatusResponse")
        }
        ("allbridge", f) if f.starts_with("error_") => ("stablebridge", "HttpExceptionBody"),
        // `GET /tokens` is not among the recorded Swagger's endpoints.
        ("allbridge", "tokens.json") => return None,
        _ => panic!("{upstream}/{file}: which vendor schema component is this sample?"),
    };
    Some(c)
}

/// Every sample of LI.FI, Squid and Allbridge is valid against the schema
/// its vendor publishes (no chains: the samples only).
#[test]
fn every_sample_is_valid_against_its_vendors_schema() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut checked = 0;
    for upstream in ["lifi", "squid", "allbridge"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(upstream))
            .unwrap()
            .map(|f| f.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_str().unwrap().to_string();
            let Some((rail, component)) = sample_component(upstream, &name) else {
                continue;
            };
            let body: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            common::assert_vendor_schema(rail, component, &body);
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} samples checked");
}

/// GET `path` on `u` with `headers`: asserts `status` and the sample's
/// shape; the body.
async fn refused(
    m: &Mesh,
    u: Upstream,
    path: &str,
    headers: &[(&str, &str)],
    status: u16,
    sample: &str,
) -> Value {
    let (got, body) = m.get(&format!("{}{path}", m.url(u)), headers).await;
    assert_eq!(got, status, "{u:?} {path}: {body}");
    common::assert_shape(sample, &body);
    body
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_carry_the_documented_error_shapes() {
    let m = mesh().await;
    let unknown_tx = format!("{:#066x}", 1);
    let body = refused(
        &m,
        Upstream::Lifi,
        &format!("/v1/quote?fromChain={SRC}"),
        &[],
        400,
        "lifi/error_validation.json",
    )
    .await;
    common::assert_vendor_schema("lifi", LIFI_ERROR, &body);
    // No route turns a token into itself on its own chain.
    let q = format!("/v1/quote?fromChain={SRC}&toChain={SRC}&fromToken=USDC&toToken=USDC&fromAmount=1000&fromAddress={unknown_tx:.42}");
    let body = refused(&m, Upstream::Lifi, &q, &[], 404, "lifi/error_no_quote.json").await;
    common::assert_vendor_schema("lifi", "QuoteNotFound", &body);
    let status = format!("/v1/status?txHash={unknown_tx}&fromChain={SRC}&toChain={DST}");
    let body = refused(
        &m,
        Upstream::Lifi,
        &status,
        &[],
        200,
        "lifi/status_not_found.json",
    )
    .await;
    common::assert_vendor_schema("lifi", "StatusResponse", &body);
    // Without `fromChain` too (as a health probe asks).
    let bare = format!("/v1/status?txHash={unknown_tx}");
    let body = refused(
        &m,
        Upstream::Lifi,
        &bare,
        &[],
        200,
        "lifi/status_not_found.json",
    )
    .await;
    common::assert_vendor_schema("lifi", "StatusResponse", &body);
    let body = refused(
        &m,
        Upstream::Lifi,
        "/v1/status",
        &[],
        400,
        "lifi/error_validation.json",
    )
    .await;
    common::assert_vendor_schema("lifi", LIFI_ERROR, &body);

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
    common::assert_vendor_schema("squid", "SquidError", &body);
    let (got, body, _) = m
        .post(
            &format!("{}/v2/route", m.url(Upstream::Squid)),
            &[],
            &json!({"fromChain": SRC.to_string()}),
        )
        .await;
    assert_eq!(got, 401, "x-integrator-id is required: {body}");
    common::assert_vendor_schema("squid", "SquidError", &body);
    let status = format!("/v2/status?transactionId={unknown_tx}&fromChainId={SRC}&toChainId={DST}");
    let body = refused(
        &m,
        Upstream::Squid,
        &status,
        &squid,
        404,
        "squid/error_not_found.json",
    )
    .await;
    common::assert_vendor_schema("squid", "SquidError", &body);
    let body = refused(
        &m,
        Upstream::Squid,
        "/v2/status",
        &squid,
        400,
        "squid/error_bad_request.json",
    )
    .await;
    common::assert_vendor_schema("squid", "SquidError", &body);

    let q = format!("/v3/swap/quote?userOps=tx&originChainId={SRC}&destinationChainId={DST}&inputToken=USDC&inputAmount=1&outputToken=USDC&receiverAddress={unknown_tx:.42}&userAddress={unknown_tx:.42}");
    refused(
        &m,
        Upstream::Bungee,
        &q,
        &[],
        401,
        "bungee/error_unauthorized.json",
    )
    .await;
    let status = format!("/v3/swap/status?quoteId={unknown_tx}");
    refused(
        &m,
        Upstream::Bungee,
        &status,
        &[("x-api-key", "devnet")],
        404,
        "bungee/error_not_found.json",
    )
    .await;

    let status = format!("/transfer/status?chain=ETH&txId={unknown_tx}");
    let body = refused(
        &m,
        Upstream::Allbridge,
        &status,
        &[],
        400,
        "allbridge/error_bad_request.json",
    )
    .await;
    common::assert_vendor_schema("stablebridge", "HttpExceptionBody", &body);
    let q = "/bridge/quote?amount=1000000&sourceToken=0x00000000000000000000000000000000000000ff&sourceChain=ETH&destinationToken=USDC&destinationChain=SOL";
    let body = refused(
        &m,
        Upstream::Allbridge,
        q,
        &[],
        400,
        "allbridge/error_bad_request.json",
    )
    .await;
    common::assert_vendor_schema("stablebridge", "HttpExceptionBody", &body);
    let bad_chain = format!("/transfer/status?chain=NOPE&txId={unknown_tx}");
    let body = refused(
        &m,
        Upstream::Allbridge,
        &bad_chain,
        &[],
        400,
        "allbridge/error_bad_request.json",
    )
    .await;
    common::assert_vendor_schema("stablebridge", "HttpExceptionBody", &body);

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
