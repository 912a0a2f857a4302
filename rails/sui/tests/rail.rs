//! The sui rail against a recording test double of the host: Allbridge's
//! price when configured (tests/fixtures), the operator's indicative rate
//! otherwise, quote-only everywhere, never a plan.

use relay_plugin_api::{Amount, HealthStatus, QuoteRequest, Rail, RailErrorKind};
use relay_rail_sdk::{
    fixture,
    testing::{query_pairs, RecordingHost},
    testing_requests::{prepare_request, quote_request, token, track_request},
};
use relay_rail_sui::{Sui, REASON};

const BAS_USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const SUI_RECIPIENT: &str = "0x02a212de6a9dfa3a69e22387acfbafbb1a9e591bd9d636e7895dcfc8de05f331";

fn base_to_sui(amount: u128) -> QuoteRequest {
    let mut r = quote_request(
        "8453",
        "sui",
        token("USDC", Some(BAS_USDC), 6),
        token("USDC", None, 6),
        amount,
    );
    r.to_address = Some(SUI_RECIPIENT.into());
    r
}

#[test]
fn allbridge_prices_sui_when_the_operator_runs_it() {
    let h = RecordingHost::new()
        .config("allbridge.base_url", "http://allbridge.internal:3000")
        .answer(
            "/bridge/quote",
            200,
            fixture!("allbridge_quote_base_to_sui.json"),
        );
    let q = Sui.quote(&h, &base_to_sui(50_000_000)).unwrap();
    let pairs = query_pairs(&h.only_request().url);
    assert!(pairs.contains(&("destinationChain".into(), "SUI".into())));
    assert!(pairs
        .iter()
        .any(|(k, v)| k == "destinationToken" && v.ends_with("::usdc::USDC")));
    assert_eq!((q.rail.as_str(), q.lane.as_str()), ("sui", "evm->sui"));
    assert_eq!(q.amount_out, Amount::from_u128(49_880_000));
    assert_eq!(q.quote_only_reason.as_deref(), Some(REASON));
    assert_eq!(
        (
            q.detail["pricing"].as_str(),
            q.detail["quoteOnly"].as_bool()
        ),
        (Some("allbridge-core"), Some(true))
    );
}

#[test]
fn without_allbridge_the_operators_indicative_rate_prices_and_says_so() {
    let h = RecordingHost::new()
        .config("indicative_fee_bps", "30")
        .config("indicative_fixed_fee", "100000");
    let q = Sui.quote(&h, &base_to_sui(50_000_000)).unwrap();
    assert!(h.requests().is_empty());
    assert_eq!(
        q.amount_out,
        Amount::from_u128(50_000_000 - 150_000 - 100_000)
    );
    assert_eq!(q.detail["pricing"], "indicative");
    assert_eq!(q.duration_sec, 900);
    let mut back = quote_request(
        "sui",
        "8453",
        token("USDC", None, 6),
        token("USDC", Some(BAS_USDC), 6),
        1_000_000,
    );
    back.to_address = Some("0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into());
    assert_eq!(Sui.quote(&h, &back).unwrap().lane, "sui->evm");
    let e = Sui.quote(&h, &base_to_sui(100_000)).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::AmountOutOfRange);
    let e = Sui
        .quote(&RecordingHost::new(), &base_to_sui(50_000_000))
        .unwrap_err();
    assert!(e.kind == RailErrorKind::Capability && !e.retryable, "{e}");
}

#[test]
fn other_lanes_and_bad_input_are_typed_before_any_request() {
    let h = RecordingHost::new().config("indicative_fee_bps", "30");
    let kind = |r: QuoteRequest| Sui.quote(&h, &r).unwrap_err().kind;
    assert_eq!(
        kind(quote_request(
            "8453",
            "solana",
            token("USDC", Some(BAS_USDC), 6),
            token("USDC", None, 6),
            5
        )),
        RailErrorKind::UnsupportedLane
    );
    assert_eq!(
        kind(quote_request(
            "100",
            "sui",
            token("USDC", Some(BAS_USDC), 6),
            token("USDC", None, 6),
            5
        )),
        RailErrorKind::UnsupportedLane
    );
    assert_eq!(
        kind(quote_request(
            "8453",
            "sui",
            token("USDT", Some(BAS_USDC), 6),
            token("USDT", None, 6),
            5
        )),
        RailErrorKind::UnsupportedLane
    );
    assert_eq!(kind(base_to_sui(0)), RailErrorKind::InvalidInput);
    let mut bad = base_to_sui(5);
    bad.to_address = Some("0x1234".into());
    assert_eq!(kind(bad), RailErrorKind::InvalidInput);
}

#[test]
fn execution_is_refused_with_a_typed_error() {
    let h = RecordingHost::new().config("indicative_fee_bps", "30");
    let req = base_to_sui(50_000_000);
    let e = Sui
        .prepare(&h, &prepare_request(&req, Sui.quote(&h, &req).unwrap()))
        .unwrap_err();
    assert!(
        e.kind == RailErrorKind::UnsupportedLane && e.message.contains("no sui signer"),
        "{e}"
    );
    assert_eq!(
        Sui.track(&h, &track_request(req.from_chain, req.to_chain, None, None))
            .unwrap_err()
            .kind,
        RailErrorKind::UnsupportedLane
    );
}

#[test]
fn manifest_and_health_are_quote_only() {
    let m = Sui.manifest();
    assert!(m
        .coverage
        .iter()
        .all(|l| !l.executable && l.quote_only_reason.as_deref() == Some(REASON)));
    let indicative = Sui.health(&RecordingHost::new().config("indicative_fee_bps", "30"));
    assert_eq!(indicative.status, HealthStatus::Operational);
    assert!(indicative
        .lanes
        .iter()
        .all(|l| l.quote_ok && !l.execute_ready));
    let none = Sui.health(&RecordingHost::new());
    assert_eq!(none.status, HealthStatus::Down);
    let probed = RecordingHost::new()
        .config("allbridge.base_url", "http://allbridge.internal:3000")
        .answer(
            "/transfer/status",
            400,
            fixture!("allbridge_status_not_found.json"),
        );
    assert_eq!(Sui.health(&probed).status, HealthStatus::Operational);
}
