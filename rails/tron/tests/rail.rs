//! The tron comparator against a recording test double of the host: its
//! lanes price from the real upstream formats (tests/fixtures), carry their
//! quote-only reason, and never turn into a plan.

use relay_plugin_api::{Amount, HealthStatus, QuoteRequest, Rail, RailErrorKind};
use relay_rail_sdk::{
    fixture,
    testing::{query_pairs, RecordingHost},
    testing_requests::{prepare_request, quote_request, token, track_request},
};
use relay_rail_tron::{TronComparator, CHAINFLIP_REASON, TRON_REASON};

const ARB_USDT: &str = "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9";
const ALLBRIDGE: &str = "http://allbridge.internal:3000";

fn tron_to_arbitrum() -> QuoteRequest {
    quote_request(
        "tron",
        "42161",
        token("USDT", None, 6),
        token("USDT", Some(ARB_USDT), 6),
        25_000_000,
    )
}

fn eth_to_btc() -> QuoteRequest {
    let mut r = quote_request(
        "1",
        "bitcoin",
        token("ETH", None, 18),
        token("BTC", None, 8),
        1_000_000_000_000_000_000,
    );
    r.to_address = Some("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4".into());
    r
}

#[test]
fn tron_reverse_is_priced_by_allbridge_under_scoped_config_and_is_quote_only() {
    let h = RecordingHost::new()
        .config("allbridge.base_url", ALLBRIDGE)
        .answer(
            "/bridge/quote",
            200,
            fixture!("allbridge_quote_tron_to_arbitrum.json"),
        );
    let q = TronComparator.quote(&h, &tron_to_arbitrum()).unwrap();
    let url = h.only_request().url;
    assert!(url.starts_with(ALLBRIDGE), "{url}");
    let pairs = query_pairs(&url);
    assert!(pairs.contains(&(
        "sourceToken".into(),
        "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t".into()
    )));
    assert!(pairs.contains(&("destinationToken".into(), ARB_USDT.into())));
    assert_eq!((q.rail.as_str(), q.lane.as_str()), ("tron", "tron->evm"));
    assert_eq!(q.amount_out, Amount::from_u128(24_677_500));
    assert_eq!(q.quote_only_reason.as_deref(), Some(TRON_REASON));
    assert_eq!(q.detail["quoteOnly"], true);
    assert_eq!(q.detail["node"], "tron");
    assert!(q.gas.is_none());
}

#[test]
fn chainflip_asset_lanes_are_priced_by_chainflip() {
    let h = RecordingHost::new().answer(
        "/v2/quote",
        200,
        fixture!("chainflip_quote_eth_to_btc.json"),
    );
    let q = TronComparator.quote(&h, &eth_to_btc()).unwrap();
    assert!(h
        .only_request()
        .url
        .starts_with("https://chainflip-swap.chainflip.io/v2/quote?"));
    assert_eq!(
        (q.lane.as_str(), q.amount_out),
        ("evm->bitcoin", Amount::from_u128(3_175_019))
    );
    assert_eq!(q.quote_only_reason.as_deref(), Some(CHAINFLIP_REASON));
    let scoped = RecordingHost::new()
        .config("chainflip.base_url", "http://127.0.0.1:7777")
        .answer(
            "/v2/quote",
            200,
            fixture!("chainflip_quote_eth_to_btc.json"),
        );
    TronComparator.quote(&scoped, &eth_to_btc()).unwrap();
    assert!(scoped
        .only_request()
        .url
        .starts_with("http://127.0.0.1:7777/v2/quote"));
}

#[test]
fn other_lanes_bad_input_and_upstream_errors_are_typed() {
    let h = RecordingHost::new()
        .config("allbridge.base_url", ALLBRIDGE)
        .answer("/bridge/quote", 400, fixture!("allbridge_error.json"));
    let kind = |r: QuoteRequest| TronComparator.quote(&h, &r).unwrap_err().kind;
    let usdc = |a: Option<&str>| token("USDC", a, 6);
    assert_eq!(
        kind(quote_request(
            "1",
            "bitcoin",
            usdc(None),
            token("BTC", None, 8),
            5
        )),
        RailErrorKind::UnsupportedLane,
        "USDC→BTC belongs to the btc rail"
    );
    assert_eq!(
        kind(quote_request(
            "tron",
            "42161",
            usdc(None),
            usdc(Some(ARB_USDT)),
            5
        )),
        RailErrorKind::UnsupportedLane
    );
    assert_eq!(
        kind(quote_request(
            "tron",
            "100",
            token("USDT", None, 6),
            token("USDT", Some(ARB_USDT), 6),
            5
        )),
        RailErrorKind::UnsupportedLane
    );
    let mut zero = tron_to_arbitrum();
    zero.amount = Amount::ZERO;
    assert_eq!(kind(zero), RailErrorKind::InvalidInput);
    let mut bad = eth_to_btc();
    bad.to_address = Some("0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into());
    assert_eq!(kind(bad), RailErrorKind::InvalidInput);
    assert_eq!(kind(tron_to_arbitrum()), RailErrorKind::AmountOutOfRange);
    let unconfigured = RecordingHost::new();
    assert_eq!(
        TronComparator
            .quote(&unconfigured, &tron_to_arbitrum())
            .unwrap_err()
            .kind,
        RailErrorKind::Capability
    );
}

#[test]
fn prepare_and_track_refuse_with_a_typed_error_never_a_plan() {
    let h = RecordingHost::new().answer(
        "/v2/quote",
        200,
        fixture!("chainflip_quote_eth_to_btc.json"),
    );
    let req = eth_to_btc();
    let e = TronComparator
        .prepare(
            &h,
            &prepare_request(&req, TronComparator.quote(&h, &req).unwrap()),
        )
        .unwrap_err();
    assert!(
        e.kind == RailErrorKind::UnsupportedLane
            && !e.retryable
            && e.message.contains("quote-only"),
        "{e}"
    );
    let e = TronComparator
        .track(&h, &track_request(req.from_chain, req.to_chain, None, None))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UnsupportedLane);
}

#[test]
fn manifest_and_health_say_quote_only_and_never_ready() {
    let m = TronComparator.manifest();
    assert!(m
        .coverage
        .iter()
        .all(|l| !l.executable && l.quote_only_reason.is_some()));
    let lanes: Vec<&str> = m.coverage.iter().map(|l| l.lane.as_str()).collect();
    assert_eq!(lanes, ["tron->evm", "evm->bitcoin", "bitcoin->evm"]);
    let h = RecordingHost::new().answer(
        "/v2/swaps/0-Bitcoin-0",
        404,
        fixture!("chainflip_not_found.json"),
    );
    let health = TronComparator.health(&h);
    assert_eq!(
        health.status,
        HealthStatus::Degraded,
        "no Allbridge configured, Chainflip up"
    );
    assert!(health.lanes.iter().all(|l| !l.execute_ready));
    let quoting: Vec<(&str, bool)> = health
        .lanes
        .iter()
        .map(|l| (l.lane.as_str(), l.quote_ok))
        .collect();
    assert_eq!(
        quoting,
        [
            ("tron->evm", false),
            ("evm->bitcoin", true),
            ("bitcoin->evm", true)
        ]
    );
}
