//! The LI.FI rail against recorded LI.FI answers, through a recording test
//! double of the *host*: the exact requests it builds, how it parses real
//! and broken bodies, the plan it describes, and how statuses map.

use relay_plugin_api::{
    Amount, ChainRef, FeeKind, HealthStatus, HostErrorKind, HttpMethod, PlanAction, QuoteRequest,
    Rail, RailError, RailErrorKind, RailQuote, SourceMode, TrackRequest, TrackState,
};
use relay_rail_lifi::Lifi;
use relay_rail_sdk::testing::{
    assert_query, header, prepare_for, query_pairs, token, track_for, url_path,
    usdc_base_to_arbitrum, RecordingHost, ARB_USDC, BASE_USDC, NOW_MS, RELAYER, SRC_TX,
};

const ARB_USDT: &str = "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9";

fn fixture(name: &str) -> String {
    relay_rail_sdk::testing::fixture(env!("CARGO_MANIFEST_DIR"), name)
}

fn base_to_arbitrum() -> QuoteRequest {
    usdc_base_to_arbitrum(10_000_000)
}

fn host_answering(status: u16, body: &str) -> RecordingHost {
    RecordingHost::new()
        .config("relayer", RELAYER)
        .answer("/v1/quote", status, body)
}

fn quote(host: &RecordingHost) -> Result<RailQuote, RailError> {
    Lifi.quote(host, &base_to_arbitrum())
}

#[test]
fn quote_request_is_lifis_documented_get_with_the_credential_reference() {
    let host = host_answering(200, &fixture("quote_base_to_arbitrum.json"))
        .config("credential", "lifi")
        .config("integrator", "relay");
    quote(&host).unwrap();
    let req = host.only_request();
    assert_eq!(req.method, HttpMethod::Get);
    assert!(
        req.url.starts_with("https://li.quest/v1/quote?"),
        "{}",
        req.url
    );
    assert_query(
        &req,
        &[
            ("fromChain", "8453"),
            ("toChain", "42161"),
            ("fromToken", BASE_USDC),
            ("toToken", ARB_USDC),
            ("fromAmount", "10000000"),
            ("fromAddress", RELAYER),
            ("toAddress", RELAYER),
            ("slippage", "0.005"),
            ("integrator", "relay"),
        ],
    );
    assert_eq!(req.credential.as_deref(), Some("lifi"));
    assert!(req.body.is_empty());
    assert!(req.timeout_ms <= 10_000);
}

#[test]
fn without_a_credential_setting_no_key_is_asked_for_and_base_url_is_configurable() {
    let host = host_answering(200, &fixture("quote_base_to_arbitrum.json"))
        .config("base_url", "http://127.0.0.1:4100/");
    quote(&host).unwrap();
    let req = host.only_request();
    assert_eq!(req.credential, None);
    assert!(header(&req, "x-lifi-api-key").is_none());
    assert!(
        req.url.starts_with("http://127.0.0.1:4100/v1/quote?"),
        "{}",
        req.url
    );
}

#[test]
fn a_cross_chain_quote_parses_amounts_fees_gas_and_detail() {
    let q = quote(&host_answering(
        200,
        &fixture("quote_base_to_arbitrum.json"),
    ))
    .unwrap();
    assert_eq!((q.rail.as_str(), q.lane.as_str()), ("lifi", "evm->evm"));
    assert_eq!(q.amount_in, Amount::from_u128(10_000_000));
    assert_eq!(q.amount_out, Amount::from_u128(9_988_186));
    assert_eq!(q.min_out, Amount::from_u128(9_938_245));
    assert_eq!(q.fees.len(), 2);
    assert_eq!(q.fees[0].kind, FeeKind::Protocol);
    assert_eq!(q.fees[0].amount, Amount::from_u128(2_500));
    assert_eq!(q.fees[1].kind, FeeKind::Bridge);
    assert!(q.fees.iter().all(|f| f.included && f.token == "USDC"));
    let gas = q.gas.unwrap();
    assert_eq!((gas.chain, gas.gas_units), (ChainRef::Evm(8453), 189_000));
    assert_eq!(q.duration_sec, 13);
    assert_eq!(
        q.upstream_ref.as_deref(),
        Some("0x0f5b2a3c0c1e4d0c8a7e9c2f3b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f")
    );
    assert_eq!(q.expires_at_ms, NOW_MS + 60_000);
    let d = &q.detail;
    assert_eq!(d["sender"], RELAYER);
    assert_eq!(
        d["approvalAddress"],
        "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE"
    );
    assert_eq!(
        d["transactionRequest"]["to"],
        "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE"
    );
    assert_eq!(d["transactionRequest"]["value"], "0");
    assert_eq!(d["transactionRequest"]["gasLimit"], 252_000);
    assert_eq!(d["upstreamData"]["tool"], "across");
}

#[test]
fn a_same_chain_swap_is_quoted_on_the_same_chain_lane() {
    let host = host_answering(200, &fixture("quote_same_chain_swap.json"));
    let mut req = base_to_arbitrum();
    req.from_chain = ChainRef::Evm(42161);
    req.from_token = token("USDC", ARB_USDC);
    req.to_token = token("USDT", ARB_USDT);
    req.amount = Amount::from_u128(5_000_000);
    let q = Lifi.quote(&host, &req).unwrap();
    assert_eq!(q.lane, "same-chain");
    assert_eq!(q.amount_out, Amount::from_u128(4_998_006));
    assert!(q.fees.is_empty());
    assert_eq!(q.duration_sec, 0);
    let url = host.only_request().url;
    let q = query_pairs(&url);
    assert!(q.contains(&("fromChain".into(), "42161".into())));
    assert!(q.contains(&("toChain".into(), "42161".into())));
}

#[test]
fn broken_bodies_are_upstream_malformed() {
    for f in [
        "quote_truncated.json",
        "quote_missing_min.json",
        "quote_fractional_amount.json",
    ] {
        let e = quote(&host_answering(200, &fixture(f))).unwrap_err();
        assert_eq!(e.kind, RailErrorKind::UpstreamMalformed, "{f}: {e}");
        assert!(!e.retryable, "{f}");
    }
    let e = quote(&host_answering(200, "<html>oops</html>")).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamMalformed);
    let e = quote(&host_answering(200, &fixture("quote_missing_min.json"))).unwrap_err();
    assert!(e.message.contains("toAmountMin"), "{e}");
}

#[test]
fn lifi_error_answers_become_typed_errors() {
    let cases = [
        (
            404,
            "error_no_quote.json",
            RailErrorKind::UnsupportedLane,
            false,
        ),
        (
            404,
            "error_amount_too_low.json",
            RailErrorKind::AmountOutOfRange,
            false,
        ),
        (
            400,
            "error_validation.json",
            RailErrorKind::InvalidInput,
            false,
        ),
        (429, "error_rate_limit.json", RailErrorKind::Upstream, true),
    ];
    for (status, f, kind, retryable) in cases {
        let e = quote(&host_answering(status, &fixture(f))).unwrap_err();
        assert_eq!((e.kind, e.retryable), (kind, retryable), "{f}: {e}");
        assert!(e.message.starts_with("LI.FI"), "{e}");
    }
    let e = quote(&host_answering(503, "upstream connect error")).unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Upstream, true));
    let e = quote(&host_answering(
        401,
        r#"{"message":"Invalid API key","code":1010}"#,
    ))
    .unwrap_err();
    assert_eq!((e.kind, e.retryable), (RailErrorKind::Capability, false));
}

#[test]
fn host_failures_become_retryable_upstream_errors() {
    let timeout = RecordingHost::new().fail("/v1/quote", HostErrorKind::Timeout);
    let e = Lifi.quote(&timeout, &base_to_arbitrum()).unwrap_err();
    assert_eq!(
        (e.kind, e.retryable),
        (RailErrorKind::UpstreamTimeout, true)
    );
    let down = RecordingHost::new().fail("/v1/quote", HostErrorKind::Network);
    assert_eq!(
        Lifi.quote(&down, &base_to_arbitrum()).unwrap_err().kind,
        RailErrorKind::Upstream
    );
    let denied = RecordingHost::new().fail("/v1/quote", HostErrorKind::Denied);
    assert_eq!(
        Lifi.quote(&denied, &base_to_arbitrum()).unwrap_err().kind,
        RailErrorKind::Capability
    );
}

#[test]
fn bad_input_is_refused_before_anything_is_sent() {
    let host = host_answering(200, &fixture("quote_base_to_arbitrum.json"));
    let mut req = base_to_arbitrum();
    req.amount = Amount::ZERO;
    assert_eq!(
        Lifi.quote(&host, &req).unwrap_err().kind,
        RailErrorKind::InvalidInput
    );
    let mut req = base_to_arbitrum();
    req.to_chain = ChainRef::Evm(424_242);
    assert_eq!(
        Lifi.quote(&host, &req).unwrap_err().kind,
        RailErrorKind::UnsupportedLane
    );
    assert!(host.requests().is_empty());
}

#[test]
fn prepare_describes_pull_approve_call_await() {
    let host = host_answering(200, &fixture("quote_base_to_arbitrum.json"));
    let q = quote(&host).unwrap();
    let plan = Lifi
        .prepare(&host, &prepare_for(q.clone(), RELAYER, SourceMode::Permit2))
        .unwrap();
    let diamond = "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE";
    let amount = Amount::from_u128(10_000_000);
    assert_eq!(plan.track_ref.as_deref(), Some(r#"{"bridge":"across"}"#));
    assert_eq!(
        plan.steps,
        vec![
            PlanAction::Permit2Pull {
                chain: ChainRef::Evm(8453),
                token: BASE_USDC.into(),
                amount
            },
            PlanAction::Approve {
                chain: ChainRef::Evm(8453),
                token: BASE_USDC.into(),
                spender: diamond.into(),
                amount,
            },
            PlanAction::ContractCall {
                chain: ChainRef::Evm(8453),
                to: diamond.into(),
                data: "0x1794958f0000000000000000000000000000000000000000000000000000000000000040"
                    .into(),
                value: Amount::ZERO,
                gas_limit: Some(252_000),
            },
            PlanAction::AwaitUpstream {
                reference: r#"{"bridge":"across"}"#.into()
            },
        ]
    );
    let own = Lifi
        .prepare(
            &host,
            &prepare_for(q.clone(), RELAYER, SourceMode::Operator),
        )
        .unwrap();
    assert!(matches!(own.steps[0], PlanAction::Approve { .. }));
    let other = "0x000000000000000000000000000000000000dEaD";
    let e = Lifi
        .prepare(&host, &prepare_for(q, other, SourceMode::Permit2))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::QuoteExpired);
    assert_eq!(host.requests().len(), 1, "prepare sends nothing");
}

const LIFI_REF: &str = r#"{"bridge":"across"}"#;

fn track_request(src_tx: Option<&str>) -> TrackRequest {
    track_for(Some(LIFI_REF), src_tx)
}

#[test]
fn track_asks_status_with_the_source_transaction_and_bridge() {
    let host = RecordingHost::new().answer("/v1/status", 200, &fixture("status_pending.json"));
    let s = Lifi.track(&host, &track_request(Some(SRC_TX))).unwrap();
    assert_eq!(
        (s.state, s.stage.as_deref()),
        (TrackState::Bridging, Some("SENDING"))
    );
    let req = host.only_request();
    assert_eq!(url_path(&req.url), "/v1/status");
    assert_query(
        &req,
        &[
            ("txHash", SRC_TX),
            ("fromChain", "8453"),
            ("toChain", "42161"),
            ("bridge", "across"),
        ],
    );
    let idle = RecordingHost::new();
    assert_eq!(
        Lifi.track(&idle, &track_request(None)).unwrap().state,
        TrackState::Pending
    );
    assert!(idle.requests().is_empty());
}

#[test]
fn statuses_map_to_route_states() {
    let cases = [
        (
            "status_done.json",
            TrackState::Done,
            Some("COMPLETED"),
            Some("0x2862726dbc6643c6a34b3496bb15e91f11771f6756ccf83826604846bbc93c0b"),
        ),
        (
            "status_refunded.json",
            TrackState::Refunded,
            None,
            Some("0x7f0c1f1d9a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5"),
        ),
        ("status_failed.json", TrackState::Failed, None, None),
        ("status_not_found.json", TrackState::Pending, None, None),
    ];
    for (f, state, stage, dest) in cases {
        let host = RecordingHost::new().answer("/v1/status", 200, &fixture(f));
        let s = Lifi.track(&host, &track_request(Some(SRC_TX))).unwrap();
        assert_eq!(
            (s.state, s.stage.as_deref(), s.dest_tx.as_deref()),
            (state, stage, dest),
            "{f}"
        );
        assert!(s.message.is_some());
    }
    let not_indexed =
        RecordingHost::new().answer("/v1/status", 404, r#"{"message":"not found","code":1003}"#);
    assert_eq!(
        Lifi.track(&not_indexed, &track_request(Some(SRC_TX)))
            .unwrap()
            .state,
        TrackState::Pending
    );
    // A status LI.FI does not document is pending, reported — not garbage.
    let odd = RecordingHost::new().answer("/v1/status", 200, &fixture("status_unknown.json"));
    let s = Lifi.track(&odd, &track_request(Some(SRC_TX))).unwrap();
    assert_eq!(s.state, TrackState::Pending);
    assert!(s.message.unwrap().contains("EXPLODED"));
    let no_status = RecordingHost::new().answer("/v1/status", 200, r#"{"substatus":"COMPLETED"}"#);
    let e = Lifi
        .track(&no_status, &track_request(Some(SRC_TX)))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamMalformed);
    let down = RecordingHost::new().answer("/v1/status", 500, "{}");
    assert!(
        Lifi.track(&down, &track_request(Some(SRC_TX)))
            .unwrap_err()
            .retryable
    );
}

#[test]
fn health_follows_the_probe_and_names_only_declared_lanes() {
    let up = RecordingHost::new().answer("/v1/status", 200, &fixture("status_not_found.json"));
    let h = Lifi.health(&up);
    assert_eq!(h.status, HealthStatus::Operational);
    let lanes: Vec<&str> = h.lanes.iter().map(|l| l.lane.as_str()).collect();
    assert_eq!(lanes, ["evm->evm", "same-chain"]);
    assert!(up.only_request().timeout_ms <= 2_500);
    let hung = RecordingHost::new().fail("/v1/status", HostErrorKind::Timeout);
    let h = Lifi.health(&hung);
    assert_eq!(h.status, HealthStatus::Down);
    assert!(h.lanes.iter().all(|l| !l.quote_ok && !l.execute_ready));
    let garbage = RecordingHost::new().answer("/v1/status", 200, "\u{0}\u{1}garbage");
    assert_eq!(Lifi.health(&garbage).status, HealthStatus::Degraded);
}

#[test]
fn the_manifest_declares_the_real_host_and_lanes() {
    let m = Lifi.manifest();
    assert_eq!(m.id, "lifi");
    assert_eq!(m.egress, ["li.quest"]);
    assert!(m.contracts.is_empty());
    assert!(m.upstream.as_deref().unwrap().starts_with("LI.FI API v1"));
    assert!(m
        .lane_for(&ChainRef::Evm(8453), &ChainRef::Evm(42161), "USDC")
        .is_some());
    assert!(m.coverage.iter().any(|l| l.same_chain));
}
