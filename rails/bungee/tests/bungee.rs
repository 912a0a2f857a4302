//! The Bungee rail against recorded Socket v2 answers, through a recording
//! test double of the *host*: the exact quote / build-tx / bridge-status
//! requests, parsing of real and broken bodies, the plan, the statuses.

use relay_plugin_api::{
    Amount, ChainRef, FeeKind, HealthStatus, HostErrorKind, HttpMethod, PlanAction, Rail,
    RailError, RailErrorKind, RailQuote, SourceMode, TrackState,
};
use relay_rail_bungee::Bungee;
use relay_rail_sdk::testing::{
    assert_query, prepare_for, track_for, url_path, usdc_base_to_arbitrum, RecordingHost, ARB_USDC,
    BASE_USDC, RELAYER, SRC_TX,
};

const GATEWAY: &str = "0x3a23F943181408EAC424116Af7b7790c94Cb97a5";
const ROUTE_ID: &str = "1d2a0b0e-6b3f-4b87-8f1e-5d6c7b8a9e01";

fn fixture(name: &str) -> String {
    relay_rail_sdk::testing::fixture(env!("CARGO_MANIFEST_DIR"), name)
}

fn host() -> RecordingHost {
    RecordingHost::new()
        .config("relayer", RELAYER)
        .config("credential", "bungee")
}

fn quote_with(status: u16, body: &str) -> Result<RailQuote, RailError> {
    Bungee.quote(
        &host().answer("/v2/quote", status, body),
        &usdc_base_to_arbitrum(50_000_000),
    )
}

#[test]
fn quote_request_is_socket_v2_single_tx_with_the_api_key_reference() {
    let h = host().answer("/v2/quote", 200, &fixture("quote_base_to_arbitrum.json"));
    Bungee
        .quote(&h, &usdc_base_to_arbitrum(50_000_000))
        .unwrap();
    let req = h.only_request();
    assert_eq!(req.method, HttpMethod::Get);
    assert!(
        req.url.starts_with("https://api.socket.tech/v2/quote?"),
        "{}",
        req.url
    );
    assert_eq!(req.credential.as_deref(), Some("bungee"));
    assert_query(
        &req,
        &[
            ("fromChainId", "8453"),
            ("fromTokenAddress", BASE_USDC),
            ("toChainId", "42161"),
            ("toTokenAddress", ARB_USDC),
            ("fromAmount", "50000000"),
            ("userAddress", RELAYER),
            ("recipient", RELAYER),
            ("uniqueRoutesPerBridge", "true"),
            ("sort", "output"),
            ("singleTxOnly", "true"),
            ("defaultBridgeSlippage", "0.5"),
            ("defaultSwapSlippage", "0.5"),
        ],
    );
}

#[test]
fn the_best_route_parses_into_amounts_fees_gas_and_keeps_the_route() {
    let q = quote_with(200, &fixture("quote_base_to_arbitrum.json")).unwrap();
    assert_eq!((q.rail.as_str(), q.lane.as_str()), ("bungee", "evm->evm"));
    assert_eq!(q.amount_out, Amount::from_u128(49_932_150));
    assert_eq!(q.min_out, Amount::from_u128(49_682_489));
    assert_eq!(q.upstream_ref.as_deref(), Some(ROUTE_ID));
    // The zero integrator fee is not itemised.
    assert_eq!(q.fees.len(), 1);
    let f = &q.fees[0];
    assert_eq!(
        (f.kind, f.amount, f.included),
        (FeeKind::Bridge, Amount::from_u128(67_850), true)
    );
    assert_eq!(q.gas.as_ref().unwrap().gas_units, 257_000);
    assert_eq!(q.duration_sec, 60);
    assert_eq!(q.detail["upstreamData"]["route"]["routeId"], ROUTE_ID);
    assert_eq!(q.detail["trackRef"], r#"{"bridgeName":"across"}"#);
    assert!(q.detail["transactionRequest"].is_null());
}

#[test]
fn a_route_without_user_txs_takes_its_minimum_from_the_slippage() {
    let q = quote_with(200, &fixture("quote_minimal_route.json")).unwrap();
    // 49_932_150 less 50 bps (249_660), rounded down.
    assert_eq!(q.min_out, Amount::from_u128(49_682_490));
    assert!(q.fees.is_empty() && q.gas.is_none());
}

#[test]
fn no_usable_route_is_typed() {
    let cases = [
        ("quote_multi_tx_only.json", RailErrorKind::UnsupportedLane),
        ("quote_no_routes.json", RailErrorKind::UnsupportedLane),
        ("quote_below_minimum.json", RailErrorKind::AmountOutOfRange),
    ];
    for (f, kind) in cases {
        assert_eq!(quote_with(200, &fixture(f)).unwrap_err().kind, kind, "{f}");
    }
}

#[test]
fn broken_and_error_bodies_are_typed() {
    for f in ["quote_truncated.json", "quote_missing_to_amount.json"] {
        let e = quote_with(200, &fixture(f)).unwrap_err();
        assert_eq!(e.kind, RailErrorKind::UpstreamMalformed, "{f}: {e}");
    }
    let e = quote_with(200, &fixture("quote_success_false.json")).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::Upstream);
    assert!(e.message.contains("not supported"), "{e}");
    let e = quote_with(401, &fixture("error_unauthorized.json")).unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Capability, false));
    let e = quote_with(400, &fixture("error_bad_request.json")).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::InvalidInput);
    assert!(e.message.contains("userAddress"), "{e}");
    let e = quote_with(
        500,
        r#"{"success":false,"error":{"message":"Internal server error"}}"#,
    )
    .unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Upstream, true));
    let hung = host().fail("/v2/quote", HostErrorKind::Timeout);
    let e = Bungee
        .quote(&hung, &usdc_base_to_arbitrum(50_000_000))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamTimeout);
}

fn quoted() -> RailQuote {
    quote_with(200, &fixture("quote_base_to_arbitrum.json")).unwrap()
}

#[test]
fn prepare_builds_the_route_with_socket_and_plans_it() {
    let h = host().answer("/v2/build-tx", 200, &fixture("build_tx.json"));
    let plan = Bungee
        .prepare(&h, &prepare_for(quoted(), RELAYER, SourceMode::Permit2))
        .unwrap();
    let req = h.only_request();
    assert_eq!(
        (req.method, url_path(&req.url)),
        (HttpMethod::Post, "/v2/build-tx")
    );
    assert_eq!(req.credential.as_deref(), Some("bungee"));
    let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["route"]["routeId"], ROUTE_ID);
    assert_eq!(
        body["route"]["userTxs"][0]["steps"][0]["protocol"]["name"],
        "across"
    );
    let base = ChainRef::Evm(8453);
    let amount = Amount::from_u128(50_000_000);
    let track = r#"{"bridgeName":"across"}"#;
    assert_eq!(plan.track_ref.as_deref(), Some(track));
    assert_eq!(
        plan.steps,
        vec![
            PlanAction::Permit2Pull { chain: base, token: BASE_USDC.into(), amount },
            PlanAction::Approve {
                chain: base,
                token: BASE_USDC.into(),
                spender: GATEWAY.into(),
                amount
            },
            PlanAction::ContractCall {
                chain: base,
                to: GATEWAY.into(),
                data: "0x000001a2d1b0d1ab0000000000000000000000000000000000000000000000000000000002faf080"
                    .into(),
                value: Amount::ZERO,
                gas_limit: Some(257_000),
            },
            PlanAction::AwaitUpstream { reference: track.into() },
        ]
    );
}

#[test]
fn build_tx_answers_that_do_not_fit_the_quote_are_refused() {
    for f in [
        "build_tx_wrong_chain.json",
        "build_tx_other_token.json",
        "build_tx_bad_data.json",
    ] {
        let h = host().answer("/v2/build-tx", 200, &fixture(f));
        let e = Bungee
            .prepare(&h, &prepare_for(quoted(), RELAYER, SourceMode::Permit2))
            .unwrap_err();
        assert_eq!(e.kind, RailErrorKind::UpstreamMalformed, "{f}: {e}");
    }
    let down = host().answer("/v2/build-tx", 503, "");
    let e = Bungee
        .prepare(&down, &prepare_for(quoted(), RELAYER, SourceMode::Permit2))
        .unwrap_err();
    assert!(e.retryable);
    let stranger = host();
    let e = Bungee
        .prepare(
            &stranger,
            &prepare_for(
                quoted(),
                "0x000000000000000000000000000000000000dEaD",
                SourceMode::Permit2,
            ),
        )
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::QuoteExpired);
    assert!(stranger.requests().is_empty());
}

#[test]
fn track_asks_bridge_status_and_maps_both_legs() {
    let reference = Some(r#"{"bridgeName":"across"}"#);
    let h = host().answer("/v2/bridge-status", 200, &fixture("status_sending.json"));
    let s = Bungee
        .track(&h, &track_for(reference, Some(SRC_TX)))
        .unwrap();
    assert_eq!(
        (s.state, s.stage.as_deref()),
        (TrackState::Bridging, Some("SENDING"))
    );
    assert_query(
        &h.only_request(),
        &[
            ("transactionHash", SRC_TX),
            ("fromChainId", "8453"),
            ("toChainId", "42161"),
            ("bridgeName", "across"),
        ],
    );
    let done = Some("0x2862726dbc6643c6a34b3496bb15e91f11771f6756ccf83826604846bbc93c0b");
    let cases = [
        (
            "status_completed.json",
            TrackState::Done,
            Some("COMPLETED"),
            done,
        ),
        (
            "status_receiving.json",
            TrackState::Bridging,
            Some("RECEIVING"),
            None,
        ),
        ("status_failed.json", TrackState::Failed, None, None),
    ];
    for (f, state, stage, dest) in cases {
        let h = host().answer("/v2/bridge-status", 200, &fixture(f));
        let s = Bungee
            .track(&h, &track_for(reference, Some(SRC_TX)))
            .unwrap();
        assert_eq!(
            (s.state, s.stage.as_deref(), s.dest_tx.as_deref()),
            (state, stage, dest),
            "{f}"
        );
    }
    let odd = host().answer("/v2/bridge-status", 200, &fixture("status_unknown.json"));
    let e = Bungee
        .track(&odd, &track_for(reference, Some(SRC_TX)))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamMalformed);
    let not_yet = host().answer("/v2/bridge-status", 404, r#"{"success":false}"#);
    let s = Bungee
        .track(&not_yet, &track_for(reference, Some(SRC_TX)))
        .unwrap();
    assert_eq!(s.state, TrackState::Pending);
    let idle = host();
    assert_eq!(
        Bungee
            .track(&idle, &track_for(reference, None))
            .unwrap()
            .state,
        TrackState::Pending
    );
    assert!(idle.requests().is_empty());
}

#[test]
fn health_probes_bridge_status() {
    let up = host().answer("/v2/bridge-status", 200, &fixture("status_receiving.json"));
    assert_eq!(Bungee.health(&up).status, HealthStatus::Operational);
    let down = host().fail("/v2/bridge-status", HostErrorKind::Network);
    let h = Bungee.health(&down);
    assert_eq!(h.status, HealthStatus::Down);
    assert_eq!(h.lanes.len(), 1);
    assert!(h.lanes[0].quote_error.is_some());
}

#[test]
fn the_manifest_declares_sockets_host() {
    let m = Bungee.manifest();
    assert_eq!(m.id, "bungee");
    assert_eq!(m.egress, ["api.socket.tech"]);
    assert!(m.upstream.as_deref().unwrap().starts_with("Socket API v2"));
}
