//! The Squid rail against recorded Squid v2 answers, through a recording
//! test double of the *host*: the exact route body and status query it
//! builds, how it parses real and broken bodies, the plan, the statuses.

use relay_plugin_api::{
    Amount, ChainRef, FeeKind, HealthStatus, HostErrorKind, HttpMethod, PlanAction, Rail,
    RailError, RailErrorKind, RailQuote, SourceMode, TrackRequest, TrackState,
};
use relay_rail_sdk::testing::{
    assert_query, header, prepare_for, track_for, url_path, usdc_base_to_arbitrum, RecordingHost,
    ARB_USDC, BASE_USDC, NOW_MS, RELAYER, SRC_TX,
};
use relay_rail_squid::Squid;
use serde_json::json;

const ROUTER: &str = "0xce16F69375520ab01377ce7B88f5BA8C48F8D666";
const REQUEST_ID: &str = "a3f5c2d1-7b8e-4f60-9a1b-2c3d4e5f6a7b";

fn fixture(name: &str) -> String {
    relay_rail_sdk::testing::fixture(env!("CARGO_MANIFEST_DIR"), name)
}

fn host_answering(status: u16, body: &str) -> RecordingHost {
    RecordingHost::new()
        .config("relayer", RELAYER)
        .config("credential", "squid")
        .answer_with_headers("/v2/route", status, body, &[("X-Request-Id", REQUEST_ID)])
}

fn quote(host: &RecordingHost) -> Result<RailQuote, RailError> {
    Squid.quote(host, &usdc_base_to_arbitrum(25_000_000))
}

#[test]
fn route_request_is_squids_documented_post_with_the_integrator_credential() {
    let host = host_answering(200, &fixture("route_base_to_arbitrum.json"));
    quote(&host).unwrap();
    let req = host.only_request();
    assert_eq!(req.method, HttpMethod::Post);
    assert_eq!(req.url, "https://v2.api.squidrouter.com/v2/route");
    assert_eq!(header(&req, "content-type"), Some("application/json"));
    assert_eq!(req.credential.as_deref(), Some("squid"));
    let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        body,
        json!({
            "fromChain": "8453",
            "toChain": "42161",
            "fromToken": BASE_USDC,
            "toToken": ARB_USDC,
            "fromAmount": "25000000",
            "fromAddress": RELAYER,
            "toAddress": RELAYER,
            "slippage": 0.5,
            "quoteOnly": false,
        })
    );
}

#[test]
fn a_route_parses_amounts_fees_gas_and_keeps_the_request_id() {
    let q = quote(&host_answering(
        200,
        &fixture("route_base_to_arbitrum.json"),
    ))
    .unwrap();
    assert_eq!((q.rail.as_str(), q.lane.as_str()), ("squid", "evm->evm"));
    assert_eq!(q.amount_out, Amount::from_u128(24_987_500));
    assert_eq!(q.min_out, Amount::from_u128(24_862_562));
    assert_eq!(q.upstream_ref.as_deref(), Some(REQUEST_ID));
    assert_eq!(q.fees.len(), 2);
    assert_eq!(
        (q.fees[0].kind, q.fees[0].included, q.fees[0].token.as_str()),
        (FeeKind::Protocol, true, "USDC")
    );
    // The Axelar gas fee is native and paid on top, in the transaction value.
    assert_eq!(
        (q.fees[1].kind, q.fees[1].included, q.fees[1].token.as_str()),
        (FeeKind::Bridge, false, "ETH")
    );
    assert_eq!(q.gas.as_ref().unwrap().gas_units, 410_000);
    assert_eq!(q.duration_sec, 20);
    assert_eq!(q.expires_at_ms, NOW_MS + 60_000);
    assert_eq!(q.detail["approvalAddress"], ROUTER);
    assert_eq!(q.detail["transactionRequest"]["value"], "41000000000000");
    assert_eq!(
        q.detail["trackRef"],
        format!(r#"{{"requestId":"{REQUEST_ID}","quoteId":"6f388be5205ee044cd7fd5047a4ce72e"}}"#)
    );
}

#[test]
fn broken_bodies_are_upstream_malformed() {
    for f in [
        "route_truncated.json",
        "route_missing_target.json",
        "route_min_above_estimate.json",
    ] {
        let e = quote(&host_answering(200, &fixture(f))).unwrap_err();
        assert_eq!(e.kind, RailErrorKind::UpstreamMalformed, "{f}: {e}");
    }
    let e = quote(&host_answering(200, "{\"route\":null}")).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamMalformed);
}

#[test]
fn squid_error_answers_become_typed_errors() {
    let cases = [
        (
            400,
            "error_no_route.json",
            RailErrorKind::UnsupportedLane,
            false,
        ),
        (
            400,
            "error_amount_too_low.json",
            RailErrorKind::AmountOutOfRange,
            false,
        ),
        (
            400,
            "error_bad_request.json",
            RailErrorKind::InvalidInput,
            false,
        ),
        (
            401,
            "error_unauthorized.json",
            RailErrorKind::Capability,
            false,
        ),
        (500, "error_internal.json", RailErrorKind::Upstream, true),
    ];
    for (status, f, kind, retryable) in cases {
        let e = quote(&host_answering(status, &fixture(f))).unwrap_err();
        assert_eq!((e.kind, e.retryable), (kind, retryable), "{f}: {e}");
        assert!(e.message.starts_with("Squid"), "{e}");
    }
    let e = quote(&host_answering(
        429,
        r#"{"message":"Too many requests","type":"RATE_LIMITED"}"#,
    ))
    .unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Upstream, true));
    let hung = RecordingHost::new().fail("/v2/route", HostErrorKind::Timeout);
    let e = Squid
        .quote(&hung, &usdc_base_to_arbitrum(25_000_000))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamTimeout);
}

#[test]
fn same_chain_requests_are_not_squids_lane() {
    let host = host_answering(200, &fixture("route_base_to_arbitrum.json"));
    let mut req = usdc_base_to_arbitrum(25_000_000);
    req.to_chain = ChainRef::Evm(8453);
    assert_eq!(
        Squid.quote(&host, &req).unwrap_err().kind,
        RailErrorKind::UnsupportedLane
    );
    assert!(host.requests().is_empty());
}

#[test]
fn prepare_approves_and_calls_the_router_with_the_fee_value() {
    let host = host_answering(200, &fixture("route_base_to_arbitrum.json"));
    let q = quote(&host).unwrap();
    let plan = Squid
        .prepare(&host, &prepare_for(q.clone(), RELAYER, SourceMode::Permit2))
        .unwrap();
    let track =
        format!(r#"{{"requestId":"{REQUEST_ID}","quoteId":"6f388be5205ee044cd7fd5047a4ce72e"}}"#);
    assert_eq!(plan.track_ref.as_deref(), Some(track.as_str()));
    let amount = Amount::from_u128(25_000_000);
    let base = ChainRef::Evm(8453);
    assert_eq!(
        plan.steps,
        vec![
            PlanAction::Permit2Pull {
                chain: base,
                token: BASE_USDC.into(),
                amount
            },
            PlanAction::Approve {
                chain: base,
                token: BASE_USDC.into(),
                spender: ROUTER.into(),
                amount
            },
            PlanAction::ContractCall {
                chain: base,
                to: ROUTER.into(),
                data: "0x846a1bc6000000000000000000000000833589fcd6edb6e08f4c7c32d4f71b54bda02913"
                    .into(),
                value: Amount::from_u128(41_000_000_000_000),
                gas_limit: Some(410_000),
            },
            PlanAction::AwaitUpstream {
                reference: track.clone()
            },
        ]
    );
    let stranger = "0x000000000000000000000000000000000000dEaD";
    let e = Squid
        .prepare(&host, &prepare_for(q, stranger, SourceMode::Permit2))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::QuoteExpired);
}

fn track_request(src_tx: Option<&str>) -> TrackRequest {
    let reference =
        format!(r#"{{"requestId":"{REQUEST_ID}","quoteId":"6f388be5205ee044cd7fd5047a4ce72e"}}"#);
    track_for(Some(&reference), src_tx)
}

#[test]
fn track_asks_status_with_transaction_request_and_quote_ids() {
    let host = RecordingHost::new().config("credential", "squid").answer(
        "/v2/status",
        200,
        &fixture("status_ongoing.json"),
    );
    let s = Squid.track(&host, &track_request(Some(SRC_TX))).unwrap();
    assert_eq!(
        (s.state, s.stage.as_deref()),
        (TrackState::Bridging, Some("SENDING"))
    );
    let req = host.only_request();
    assert_eq!(
        (req.method, url_path(&req.url)),
        (HttpMethod::Get, "/v2/status")
    );
    assert_eq!(req.credential.as_deref(), Some("squid"));
    assert_query(
        &req,
        &[
            ("transactionId", SRC_TX),
            ("requestId", REQUEST_ID),
            ("fromChainId", "8453"),
            ("toChainId", "42161"),
            ("quoteId", "6f388be5205ee044cd7fd5047a4ce72e"),
        ],
    );
    let idle = RecordingHost::new();
    assert_eq!(
        Squid.track(&idle, &track_request(None)).unwrap().state,
        TrackState::Pending
    );
    assert!(idle.requests().is_empty());
}

#[test]
fn squid_statuses_map_to_route_states() {
    let delivered = Some("0x2862726dbc6643c6a34b3496bb15e91f11771f6756ccf83826604846bbc93c0b");
    let cases = [
        (
            "status_success.json",
            200,
            TrackState::Done,
            Some("COMPLETED"),
            delivered,
        ),
        (
            "status_partial_success.json",
            200,
            TrackState::Done,
            Some("COMPLETED"),
            delivered,
        ),
        (
            "status_needs_gas.json",
            200,
            TrackState::Bridging,
            Some("SENDING"),
            None,
        ),
        // A refund is never a delivery, whatever toChain says.
        (
            "status_refunded.json",
            200,
            TrackState::Refunded,
            None,
            None,
        ),
        (
            "status_failed_on_destination.json",
            200,
            TrackState::Failed,
            None,
            None,
        ),
        (
            "status_not_found.json",
            200,
            TrackState::Pending,
            None,
            None,
        ),
        (
            "status_not_found.json",
            404,
            TrackState::Pending,
            None,
            None,
        ),
    ];
    for (f, code, state, stage, dest) in cases {
        let host = RecordingHost::new().answer("/v2/status", code, &fixture(f));
        let s = Squid.track(&host, &track_request(Some(SRC_TX))).unwrap();
        assert_eq!(
            (s.state, s.stage.as_deref(), s.dest_tx.as_deref()),
            (state, stage, dest),
            "{f}"
        );
    }
    // Not Squid's vocabulary: still waiting, and the message says which word.
    let odd = RecordingHost::new().answer("/v2/status", 200, &fixture("status_unknown.json"));
    let s = Squid.track(&odd, &track_request(Some(SRC_TX))).unwrap();
    assert_eq!(s.state, TrackState::Pending);
    assert!(s.message.unwrap().contains("teleported"));
    // squidTransactionStatus is optional in Squid's types.
    let none = RecordingHost::new().answer(
        "/v2/status",
        200,
        r#"{"id":"0x1","status":"source_gateway_called","gasStatus":"","axelarTransactionUrl":""}"#,
    );
    let s = Squid.track(&none, &track_request(Some(SRC_TX))).unwrap();
    assert_eq!(s.state, TrackState::Pending);
    assert!(s.message.unwrap().contains("source_gateway_called"));
    let down = RecordingHost::new().answer("/v2/status", 502, "bad gateway");
    assert!(
        Squid
            .track(&down, &track_request(Some(SRC_TX)))
            .unwrap_err()
            .retryable
    );
}

#[test]
fn health_probes_status_and_reports_the_one_lane() {
    let up = RecordingHost::new().answer("/v2/status", 404, &fixture("status_not_found.json"));
    let h = Squid.health(&up);
    assert_eq!(h.status, HealthStatus::Operational);
    assert_eq!(h.lanes.len(), 1);
    assert_eq!(h.lanes[0].lane, "evm->evm");
    let refused =
        RecordingHost::new().answer("/v2/status", 401, &fixture("error_unauthorized.json"));
    assert_eq!(Squid.health(&refused).status, HealthStatus::Down);
}

#[test]
fn the_manifest_declares_squids_host() {
    let m = Squid.manifest();
    assert_eq!(
        (m.id.as_str(), m.egress.as_slice()),
        ("squid", &["v2.api.squidrouter.com".to_string()][..])
    );
    assert!(m.upstream.as_deref().unwrap().starts_with("Squid API v2"));
    assert!(m.coverage.iter().all(|l| !l.same_chain));
}
