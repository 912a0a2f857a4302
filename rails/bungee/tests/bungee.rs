//! The Bungee rail against recorded Socket Swap V3 answers, through a
//! recording test double of the *host*: the exact quote / status requests,
//! parsing of real and broken bodies, the plan, every status value.

use relay_plugin_api::{
    Amount, ChainRef, FeeKind, HealthStatus, HostErrorKind, HttpMethod, PlanAction, Rail,
    RailError, RailErrorKind, RailQuote, SourceMode, TrackState,
};
use relay_rail_bungee::Bungee;
use relay_rail_sdk::testing::{
    assert_query, header, prepare_for, track_for, url_path, usdc_base_to_arbitrum, RecordingHost,
    ARB_USDC, BASE_USDC, RELAYER, SRC_TX,
};

const GATEWAY: &str = "0x3a23F943181408EAC424116Af7b7790c94Cb97a5";
const QUOTE_ID: &str = "0x1d2a0b0e6b3f4b878f1e5d6c7b8a9e011d2a0b0e6b3f4b878f1e5d6c7b8a9e01";
const QUOTE: &str = "/v3/swap/quote";
const STATUS: &str = "/v3/swap/status";

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
        &host().answer(QUOTE, status, body),
        &usdc_base_to_arbitrum(50_000_000),
    )
}

fn track_ref() -> String {
    format!(r#"{{"quoteId":"{QUOTE_ID}"}}"#)
}

#[test]
fn quote_request_is_socket_v3_tx_routes_with_the_api_key_reference() {
    let h = host().answer(QUOTE, 200, &fixture("quote_base_to_arbitrum.json"));
    Bungee
        .quote(&h, &usdc_base_to_arbitrum(50_000_000))
        .unwrap();
    let req = h.only_request();
    assert_eq!(req.method, HttpMethod::Get);
    assert!(
        req.url
            .starts_with("https://dedicated-backend.socket.tech/v3/swap/quote?"),
        "{}",
        req.url
    );
    assert_eq!(req.credential.as_deref(), Some("bungee"));
    assert!(header(&req, "affiliate").is_none());
    assert_query(
        &req,
        &[
            ("userOps", "tx"),
            ("originChainId", "8453"),
            ("destinationChainId", "42161"),
            ("inputToken", BASE_USDC),
            ("inputAmount", "50000000"),
            ("outputToken", ARB_USDC),
            ("receiverAddress", RELAYER),
            ("userAddress", RELAYER),
            ("slippage", "0.5"),
        ],
    );
}

#[test]
fn the_best_route_parses_into_amounts_fees_gas_and_keeps_the_transaction() {
    let q = quote_with(200, &fixture("quote_base_to_arbitrum.json")).unwrap();
    assert_eq!((q.rail.as_str(), q.lane.as_str()), ("bungee", "evm->evm"));
    assert_eq!(q.amount_out, Amount::from_u128(49_932_150));
    assert_eq!(q.min_out, Amount::from_u128(49_682_489));
    assert_eq!(q.upstream_ref.as_deref(), Some(QUOTE_ID));
    assert_eq!(q.fees.len(), 1);
    let f = &q.fees[0];
    assert_eq!(
        (f.kind, f.amount, f.included),
        (FeeKind::Bridge, Amount::from_u128(67_850), true)
    );
    assert_eq!(q.gas.as_ref().unwrap().gas_units, 257_000);
    assert_eq!(q.duration_sec, 60);
    assert_eq!(q.detail["upstreamData"]["quoteId"], QUOTE_ID);
    assert_eq!(q.detail["upstreamData"]["bridge"], "across");
    assert_eq!(q.detail["trackRef"], track_ref());
    assert_eq!(q.detail["approvalAddress"], GATEWAY);
    assert_eq!(q.detail["transactionRequest"]["to"], GATEWAY);
}

#[test]
fn the_quote_expires_with_the_route() {
    // expiresAt 1_900_000_000 s is later than the host's TTL: the TTL wins.
    let q = quote_with(200, &fixture("quote_base_to_arbitrum.json")).unwrap();
    assert!(q.expires_at_ms < 1_900_000_000_000);
    let mut body: serde_json::Value =
        serde_json::from_str(&fixture("quote_base_to_arbitrum.json")).unwrap();
    body["result"]["routes"][0]["expiresAt"] = 1.into();
    let q = quote_with(200, &body.to_string()).unwrap();
    assert_eq!(q.expires_at_ms, 1_000);
}

#[test]
fn a_minimal_route_takes_its_minimum_from_the_slippage() {
    let q = quote_with(200, &fixture("quote_minimal_route.json")).unwrap();
    // 49_932_150 less 50 bps (249_660), rounded down.
    assert_eq!(q.min_out, Amount::from_u128(49_682_490));
    assert!(q.fees.is_empty() && q.gas.is_none());
    assert!(q.detail["approvalAddress"].is_null());
}

#[test]
fn no_usable_route_is_an_unsupported_lane() {
    for f in ["quote_deposit_only.json", "quote_no_routes.json"] {
        let e = quote_with(200, &fixture(f)).unwrap_err();
        assert_eq!(e.kind, RailErrorKind::UnsupportedLane, "{f}: {e}");
    }
}

#[test]
fn broken_and_error_bodies_are_typed() {
    for f in [
        "quote_truncated.json",
        "quote_missing_output_amount.json",
        "quote_wrong_chain.json",
        "quote_other_token_approval.json",
        "quote_bad_data.json",
    ] {
        let e = quote_with(200, &fixture(f)).unwrap_err();
        assert_eq!(e.kind, RailErrorKind::UpstreamMalformed, "{f}: {e}");
    }
    let e = quote_with(200, &fixture("quote_success_false.json")).unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Upstream, true));
    assert!(e.message.contains("not supported"), "{e}");
    let e = quote_with(401, &fixture("error_unauthorized.json")).unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Capability, false));
    let e = quote_with(400, &fixture("error_bad_request.json")).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::InvalidInput);
    assert!(e.message.contains("userAddress"), "{e}");
    let e = quote_with(
        500,
        r#"{"success":false,"statusCode":500,"message":"Internal server error"}"#,
    )
    .unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Upstream, true));
    let hung = host().fail(QUOTE, HostErrorKind::Timeout);
    let e = Bungee
        .quote(&hung, &usdc_base_to_arbitrum(50_000_000))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamTimeout);
}

fn quoted() -> RailQuote {
    quote_with(200, &fixture("quote_base_to_arbitrum.json")).unwrap()
}

#[test]
fn prepare_plans_the_quotes_own_transaction_without_asking_socket() {
    let h = host();
    let plan = Bungee
        .prepare(&h, &prepare_for(quoted(), RELAYER, SourceMode::Permit2))
        .unwrap();
    assert!(h.requests().is_empty(), "Socket V3 has no build step");
    let base = ChainRef::Evm(8453);
    let amount = Amount::from_u128(50_000_000);
    let track = track_ref();
    assert_eq!(plan.track_ref.as_deref(), Some(track.as_str()));
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
            PlanAction::AwaitUpstream { reference: track },
        ]
    );
}

#[test]
fn a_quote_for_another_sender_is_refused() {
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

fn track_fixture(f: &str) -> relay_plugin_api::TrackStatus {
    let h = host().answer(STATUS, 200, &fixture(f));
    Bungee
        .track(&h, &track_for(Some(&track_ref()), Some(SRC_TX)))
        .unwrap_or_else(|e| panic!("{f}: {e}"))
}

#[test]
fn track_asks_status_by_quote_id() {
    let reference = track_ref();
    let h = host().answer(STATUS, 200, &fixture("status_sending.json"));
    Bungee
        .track(&h, &track_for(Some(&reference), Some(SRC_TX)))
        .unwrap();
    let req = h.only_request();
    assert_eq!((req.method, url_path(&req.url)), (HttpMethod::Get, STATUS));
    assert_eq!(req.credential.as_deref(), Some("bungee"));
    assert_query(&req, &[("quoteId", QUOTE_ID)]);
}

#[test]
fn the_affiliate_id_rides_every_call_when_configured() {
    let h = host()
        .config("affiliate", "relay-affiliate-id")
        .answer(QUOTE, 200, &fixture("quote_base_to_arbitrum.json"))
        .answer(STATUS, 200, &fixture("status_pending.json"));
    Bungee
        .quote(&h, &usdc_base_to_arbitrum(50_000_000))
        .unwrap();
    Bungee
        .track(&h, &track_for(Some(&track_ref()), Some(SRC_TX)))
        .unwrap();
    for req in h.requests() {
        assert_eq!(
            header(&req, "affiliate"),
            Some("relay-affiliate-id"),
            "{}",
            req.url
        );
    }
}

#[test]
fn every_status_value_maps() {
    let done = Some("0x2862726dbc6643c6a34b3496bb15e91f11771f6756ccf83826604846bbc93c0b");
    let cases = [
        ("status_pending.json", TrackState::Pending, None, None),
        (
            "status_sending.json",
            TrackState::Bridging,
            Some("SENDING"),
            None,
        ),
        (
            "status_receiving.json",
            TrackState::Bridging,
            Some("RECEIVING"),
            None,
        ),
        (
            "status_completed.json",
            TrackState::Done,
            Some("COMPLETED"),
            done,
        ),
        ("status_failed.json", TrackState::Failed, None, None),
        ("status_expired.json", TrackState::Failed, None, None),
        ("status_refunded.json", TrackState::Refunded, None, None),
        ("status_unknown.json", TrackState::Pending, None, None),
    ];
    for (f, state, stage, dest) in cases {
        let s = track_fixture(f);
        assert_eq!(
            (s.state, s.stage.as_deref(), s.dest_tx.as_deref()),
            (state, stage, dest),
            "{f}"
        );
    }
    let expired = track_fixture("status_expired.json");
    assert!(expired.message.unwrap().contains("expired"));
    let unknown = track_fixture("status_unknown.json");
    assert!(unknown.message.unwrap().contains("SETTLING"));
}

#[test]
fn a_refund_beside_completed_is_never_done() {
    let mut body: serde_json::Value =
        serde_json::from_str(&fixture("status_completed.json")).unwrap();
    body["result"]["refund"] = serde_json::json!({"chainId": 8453, "txHash": "0x12"});
    let h = host().answer(STATUS, 200, &body.to_string());
    let s = Bungee
        .track(&h, &track_for(Some(&track_ref()), Some(SRC_TX)))
        .unwrap();
    assert_eq!(s.state, TrackState::Refunded);
}

#[test]
fn track_errors_and_not_yet_are_typed() {
    let reference = track_ref();
    let odd = host().answer(STATUS, 200, &fixture("status_no_status.json"));
    let e = Bungee
        .track(&odd, &track_for(Some(&reference), Some(SRC_TX)))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamMalformed);
    let not_yet = host().answer(
        STATUS,
        404,
        r#"{"success":false,"statusCode":404,"message":"Not Found"}"#,
    );
    let s = Bungee
        .track(&not_yet, &track_for(Some(&reference), Some(SRC_TX)))
        .unwrap();
    assert_eq!(s.state, TrackState::Pending);
    let failing = host().answer(
        STATUS,
        200,
        r#"{"success":false,"statusCode":500,"message":"Internal server error"}"#,
    );
    let e = Bungee
        .track(&failing, &track_for(Some(&reference), Some(SRC_TX)))
        .unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Upstream, true));
    let idle = host();
    assert_eq!(
        Bungee
            .track(&idle, &track_for(Some(&reference), None))
            .unwrap()
            .state,
        TrackState::Pending
    );
    assert!(idle.requests().is_empty());
    // A route tracked without the quoteId (sent by the former v2 rail): the
    // host is told to watch the destination for the payout, never to fail
    // the route while the bridge may deliver.
    let legacy = host();
    let e = Bungee
        .track(
            &legacy,
            &track_for(Some(r#"{"bridgeName":"across"}"#), Some(SRC_TX)),
        )
        .unwrap_err();
    assert!(e.is_no_status_api(), "{e}");
    assert!(!e.retryable);
    assert!(legacy.requests().is_empty());
}

#[test]
fn health_probes_swap_status() {
    let up = host().answer(STATUS, 200, &fixture("status_pending.json"));
    assert_eq!(Bungee.health(&up).status, HealthStatus::Operational);
    let unknown = host().answer(
        STATUS,
        404,
        r#"{"success":false,"statusCode":404,"message":"Not Found"}"#,
    );
    assert_eq!(Bungee.health(&unknown).status, HealthStatus::Operational);
    let down = host().fail(STATUS, HostErrorKind::Network);
    let h = Bungee.health(&down);
    assert_eq!(h.status, HealthStatus::Down);
    assert_eq!(h.lanes.len(), 1);
    assert!(h.lanes[0].quote_error.is_some());
}

#[test]
fn the_manifest_declares_sockets_host() {
    let m = Bungee.manifest();
    assert_eq!(m.id, "bungee");
    assert_eq!(m.egress, ["dedicated-backend.socket.tech"]);
    assert!(m.upstream.as_deref().unwrap().starts_with("Socket Swap V3"));
}
