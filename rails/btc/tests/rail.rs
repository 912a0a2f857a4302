//! The native-bitcoin rail against a recording test double of the host:
//! Chainflip quote, broker and status requests, its documented answers
//! (tests/fixtures), deposit-channel plans and the funds gate.

use relay_plugin_api::{
    Amount, ChainRef, HealthStatus, NonEvmNode, PlanAction, PrepareRequest, QuoteRequest, Rail,
    RailErrorKind, SourceMode, TrackState,
};
use relay_rail_btc::Btc;
use relay_rail_sdk::{
    fixture,
    testing::{query_pairs, url_path, RecordingHost},
    testing_requests::{prepare_request, quote_request, token, track_request, RELAYER, USER},
    testing_rpc::RpcRecordingHost,
};

const ETH_USDC: &str = "0xA0b86991c6218b36c1d19D4a2e9Eb0CE3606eB48";
const ARB_USDC: &str = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831";
const BTC_ADDRESS: &str = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4";
const BROKER: &str = "https://broker.internal/rpc";
const BITCOIN: ChainRef = ChainRef::NonEvm(NonEvmNode::Bitcoin);

fn usdc_to_btc(amount: u128) -> QuoteRequest {
    let mut r = quote_request(
        "1",
        "bitcoin",
        token("USDC", Some(ETH_USDC), 6),
        token("BTC", None, 8),
        amount,
    );
    r.to_address = Some(BTC_ADDRESS.into());
    r
}

fn btc_to_usdc() -> QuoteRequest {
    quote_request(
        "bitcoin",
        "42161",
        token("BTC", None, 8),
        token("USDC", Some(ARB_USDC), 6),
        10_000_000,
    )
}

fn query(url: &str, key: &str) -> Option<String> {
    query_pairs(url)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

#[test]
fn quote_asks_chainflip_v2_and_reads_the_regular_quote() {
    let h = RecordingHost::new().answer("/v2/quote", 200, fixture!("quote_usdc_to_btc.json"));
    let mut req = usdc_to_btc(1_000_000_000);
    req.slippage_bps = 100;
    let q = Btc.quote(&h, &req).unwrap();
    let url = h.only_request().url;
    assert!(
        url.starts_with("https://chainflip-swap.chainflip.io/v2/quote?"),
        "{url}"
    );
    for (k, v) in [
        ("srcChain", "Ethereum"),
        ("srcAsset", "USDC"),
        ("destChain", "Bitcoin"),
        ("destAsset", "BTC"),
        ("amount", "1000000000"),
    ] {
        assert_eq!(query(&url, k).as_deref(), Some(v), "{k}");
    }
    assert_eq!(
        q.amount_out,
        Amount::from_u128(995_210),
        "the REGULAR quote, not DCA"
    );
    assert_eq!(q.min_out, Amount::from_u128(985_257), "1% slippage floor");
    assert_eq!((q.lane.as_str(), q.duration_sec), ("evm->bitcoin", 871));
    assert_eq!(q.fees.len(), 3);
    assert_eq!(q.detail["egressAmount"], "995210");
    assert_eq!(q.detail["fees"][2]["type"], "EGRESS");
    assert_eq!(q.detail["node"], "bitcoin");
}

#[test]
fn quote_refuses_lanes_assets_chains_and_recipients_before_asking() {
    let h = RecordingHost::new().config("usdc_btc_chains", "1");
    let kind = |r: QuoteRequest| Btc.quote(&h, &r).unwrap_err().kind;
    let mut from_arbitrum = usdc_to_btc(5);
    from_arbitrum.from_chain = ChainRef::Evm(42161);
    assert_eq!(
        kind(from_arbitrum),
        RailErrorKind::UnsupportedLane,
        "not in usdc_btc_chains"
    );
    let mut usdt = usdc_to_btc(5);
    usdt.from_token = token("USDT", Some(ETH_USDC), 6);
    assert_eq!(kind(usdt), RailErrorKind::UnsupportedLane);
    let mut base = usdc_to_btc(5);
    base.from_chain = ChainRef::Evm(8453);
    assert_eq!(kind(base), RailErrorKind::UnsupportedLane);
    assert_eq!(kind(usdc_to_btc(0)), RailErrorKind::InvalidInput);
    let mut bad = usdc_to_btc(5);
    bad.to_address = Some("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5".into());
    assert_eq!(kind(bad), RailErrorKind::InvalidInput);
    let mut evm = btc_to_usdc();
    evm.to_address = Some(BTC_ADDRESS.into());
    assert_eq!(kind(evm), RailErrorKind::InvalidInput);
    assert!(h.requests().is_empty());
}

#[test]
fn chainflip_refusals_and_broken_bodies_are_typed() {
    let quote = |status: u16, body: &str| {
        let h = RecordingHost::new().answer("/v2/quote", status, body);
        Btc.quote(&h, &usdc_to_btc(1_000_000_000)).unwrap_err()
    };
    for (status, body, kind) in [
        (
            400,
            fixture!("quote_below_minimum.json"),
            RailErrorKind::AmountOutOfRange,
        ),
        (
            400,
            fixture!("quote_no_liquidity.json"),
            RailErrorKind::AmountOutOfRange,
        ),
        (
            200,
            fixture!("quote_dca_only.json"),
            RailErrorKind::AmountOutOfRange,
        ),
        (
            200,
            fixture!("quote_truncated.json"),
            RailErrorKind::UpstreamMalformed,
        ),
    ] {
        assert_eq!(quote(status, body).kind, kind, "{status} {body}");
    }
    assert_eq!(
        quote(200, fixture!("quote_btc_to_usdc.json")).kind,
        RailErrorKind::UpstreamMalformed,
        "other deposit amount"
    );
}

fn prepared(h: &dyn relay_plugin_api::Host, req: &QuoteRequest) -> PrepareRequest {
    prepare_request(req, Btc.quote(h, req).unwrap())
}

const VAULT: &str = "0xF5e10380213880111522dd0efD3dbb45b9f62Bcc";

#[test]
fn evm_to_bitcoin_is_a_vault_swap_the_broker_encodes() {
    let h = RecordingHost::new()
        .config("broker_url", BROKER)
        .config("broker_credential", "chainflip-broker")
        .answer("/v2/quote", 200, fixture!("quote_usdc_to_btc.json"))
        .answer("/rpc", 200, fixture!("broker_vault_swap.json"));
    let plan = Btc
        .prepare(&h, &prepared(&h, &usdc_to_btc(1_000_000_000)))
        .unwrap();
    assert_eq!(
        query(&h.requests()[0].url, "isVaultSwap").as_deref(),
        Some("true")
    );
    let rpc = &h.requests()[1];
    assert_eq!(
        (rpc.url.as_str(), rpc.credential.as_deref()),
        (BROKER, Some("chainflip-broker"))
    );
    let body: serde_json::Value = serde_json::from_slice(&rpc.body).unwrap();
    assert_eq!(body["method"], "broker_request_swap_parameter_encoding");
    assert_eq!(
        body["params"][0],
        serde_json::json!({"chain": "Ethereum", "asset": "USDC"})
    );
    assert_eq!(body["params"][2], BTC_ADDRESS);
    let extra = &body["params"][4];
    assert_eq!(extra["input_amount"], "0x3b9aca00");
    assert_eq!(extra["refund_parameters"]["refund_address"], RELAYER);
    assert!(extra["refund_parameters"]["min_price"]
        .as_str()
        .unwrap()
        .starts_with("0x"));
    match plan.steps.as_slice() {
        [PlanAction::Permit2Pull { token: t, .. }, PlanAction::Approve { token, spender, .. }, PlanAction::ContractCall {
            to, data, value, ..
        }, PlanAction::AwaitUpstream { .. }] => {
            assert_eq!((t.as_str(), token.as_str()), (ETH_USDC, ETH_USDC));
            assert_eq!((spender.as_str(), to.as_str()), (VAULT, VAULT));
            assert!(data.starts_with("0x07933dd2"));
            assert!(value.is_zero());
        }
        other => panic!("unexpected plan {other:#?}"),
    }
    let other = RecordingHost::new()
        .config("broker_url", BROKER)
        .answer("/v2/quote", 200, fixture!("quote_usdc_to_btc.json"))
        .answer("/rpc", 200, fixture!("broker_vault_swap_other_token.json"));
    let e = Btc
        .prepare(&other, &prepared(&other, &usdc_to_btc(1_000_000_000)))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamMalformed);
}

#[test]
fn the_usdc_to_btc_lane_is_funds_gated_when_the_operator_moves_its_own_funds() {
    let balance = |units: u128| format!("\"0x{units:064x}\"");
    let host = |units| {
        RpcRecordingHost::new(
            RecordingHost::new()
                .config("broker_url", BROKER)
                .answer("/v2/quote", 200, fixture!("quote_usdc_to_btc.json"))
                .answer("/rpc", 200, fixture!("broker_vault_swap.json")),
        )
        .rpc_answer(ChainRef::Evm(1), "eth_call", &balance(units))
    };
    let short = host(400_000_000);
    let mut prep = prepared(&short, &usdc_to_btc(1_000_000_000));
    prep.mode = SourceMode::Operator;
    let e = Btc.prepare(&short, &prep).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::FundsRequired);
    assert!(
        e.message.contains("400000000") && e.message.contains("1000000000"),
        "{e}"
    );
    assert_eq!(
        short.inner.requests().len(),
        1,
        "nothing asked of the broker for an unfunded route"
    );
    let funded = host(2_000_000_000);
    let plan = Btc.prepare(&funded, &prep).unwrap();
    assert!(
        matches!(plan.steps[0], PlanAction::Approve { .. }),
        "no Permit2 pull in self mode"
    );
    assert!(funded.rpc_calls()[0]
        .2
        .contains(&RELAYER[2..].to_lowercase()));
}

#[test]
fn bitcoin_to_evm_is_a_deposit_instruction_the_relayer_signs_nothing() {
    let h = RecordingHost::new()
        .config("broker_url", BROKER)
        .answer("/v2/quote", 200, fixture!("quote_btc_to_usdc.json"))
        .answer("/rpc", 200, fixture!("broker_channel_bitcoin.json"));
    let req = btc_to_usdc();
    let mut prep = prepared(&h, &req);
    prep.sender = BTC_ADDRESS.into();
    let plan = Btc.prepare(&h, &prep).unwrap();
    match plan.steps.as_slice() {
        [PlanAction::DepositInstruction {
            node,
            address,
            asset,
            amount,
            expires_at_ms,
        }, PlanAction::AwaitUpstream { reference }] => {
            assert_eq!(*node, BITCOIN);
            assert!(address.starts_with("bc1p"));
            assert_eq!(
                (asset.as_str(), *amount),
                ("BTC", Amount::from_u128(10_000_000))
            );
            assert!(expires_at_ms.is_some());
            assert_eq!(reference, "5012346-Bitcoin-2231");
        }
        other => panic!("unexpected plan {other:#?}"),
    }
    assert!(plan.steps.iter().all(|s| !s.moves_funds()));
    let body: serde_json::Value = serde_json::from_slice(&h.requests()[1].body).unwrap();
    assert_eq!(
        body["params"][1],
        serde_json::json!({"chain": "Arbitrum", "asset": "USDC"})
    );
    assert_eq!(body["params"][7]["refund_address"], BTC_ADDRESS);
    prep.sender = USER.into();
    assert_eq!(
        Btc.prepare(&h, &prep).unwrap_err().kind,
        RailErrorKind::InvalidInput,
        "no bitcoin refund address"
    );
}

#[test]
fn broker_refusals_and_a_missing_broker_are_typed() {
    let h = RecordingHost::new()
        .config("broker_url", BROKER)
        .answer("/v2/quote", 200, fixture!("quote_usdc_to_btc.json"))
        .answer("/rpc", 200, fixture!("broker_error.json"));
    let e = Btc
        .prepare(&h, &prepared(&h, &usdc_to_btc(1_000_000_000)))
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::InvalidInput, "{e}");
    let none = RecordingHost::new().answer("/v2/quote", 200, fixture!("quote_usdc_to_btc.json"));
    let e = Btc
        .prepare(&none, &prepared(&none, &usdc_to_btc(1_000_000_000)))
        .unwrap_err();
    assert!(e.kind == RailErrorKind::Capability && !e.retryable, "{e}");
}

#[test]
fn swap_states_map_to_route_states_and_stages() {
    let track = |body: &str| {
        let h = RecordingHost::new().answer("/v2/swaps/5012346-Bitcoin-2231", 200, body);
        let s = Btc
            .track(
                &h,
                &track_request(
                    BITCOIN,
                    ChainRef::Evm(42161),
                    Some("5012346-Bitcoin-2231"),
                    None,
                ),
            )
            .unwrap();
        assert_eq!(
            url_path(&h.only_request().url),
            "/v2/swaps/5012346-Bitcoin-2231"
        );
        (s.state, s.stage, s.dest_tx)
    };
    assert_eq!(
        track(fixture!("status_waiting.json")),
        (TrackState::Pending, None, None)
    );
    assert_eq!(
        track(fixture!("status_waiting_expired.json")).0,
        TrackState::Failed
    );
    assert_eq!(
        track(fixture!("status_receiving.json")).1.as_deref(),
        Some("RECEIVING")
    );
    assert_eq!(
        track(fixture!("status_swapping.json")).1.as_deref(),
        Some("SWAPPING")
    );
    assert_eq!(
        track(fixture!("status_sent.json")).1.as_deref(),
        Some("SENDING")
    );
    let (state, stage, tx) = track(fixture!("status_completed.json"));
    assert_eq!(
        (state, stage.as_deref()),
        (TrackState::Done, Some("COMPLETED"))
    );
    assert!(tx.unwrap().starts_with("0x9a8b7c6d"));
    assert_eq!(
        track(fixture!("status_failed_refunded.json")).0,
        TrackState::Bridging,
        "a FAILED swap's refund not witnessed yet is still under way"
    );
    let h = RecordingHost::new().answer(
        "/v2/swaps/1-Bitcoin-1",
        404,
        fixture!("status_not_found.json"),
    );
    let s = Btc
        .track(
            &h,
            &track_request(BITCOIN, ChainRef::Evm(1), Some("1-Bitcoin-1"), None),
        )
        .unwrap();
    assert_eq!(s.state, TrackState::Pending);
    let e = Btc
        .track(
            &h,
            &track_request(BITCOIN, ChainRef::Evm(1), Some("../x"), None),
        )
        .unwrap_err();
    assert_eq!(e.kind, RailErrorKind::InvalidInput);
}

#[test]
fn health_follows_chainflip_and_execution_needs_a_broker() {
    let up = RecordingHost::new().answer(
        "/v2/swaps/0-Bitcoin-0",
        404,
        fixture!("status_not_found.json"),
    );
    let h = Btc.health(&up);
    assert_eq!(h.status, HealthStatus::Operational);
    assert!(h.lanes.iter().all(|l| l.quote_ok && !l.execute_ready));
    let with_broker = RecordingHost::new().config("broker_url", BROKER).answer(
        "/v2/swaps/0-Bitcoin-0",
        404,
        fixture!("status_not_found.json"),
    );
    assert!(Btc
        .health(&with_broker)
        .lanes
        .iter()
        .all(|l| l.execute_ready));
    let down = RecordingHost::new().answer("/v2/swaps/0-Bitcoin-0", 502, "bad gateway");
    assert_eq!(Btc.health(&down).status, HealthStatus::Down);
}

#[test]
fn a_vault_swap_is_tracked_by_the_relayers_transaction_hash() {
    let tx = "0x1f3c1b7a6e0d2b4c8a9e7f6d5c4b3a29180716253443526170819a8b7c6d5e4f";
    let path = format!("/v2/swaps/{tx}");
    let h = RecordingHost::new().answer(&path, 200, fixture!("status_swapping.json"));
    let req = track_request(
        ChainRef::Evm(1),
        BITCOIN,
        Some("chainflip-vault-swap:Ethereum"),
        Some(tx),
    );
    let s = Btc.track(&h, &req).unwrap();
    assert_eq!(url_path(&h.only_request().url), path);
    assert_eq!(s.stage.as_deref(), Some("SWAPPING"));
    let before = track_request(ChainRef::Evm(1), BITCOIN, None, None);
    assert_eq!(Btc.track(&h, &before).unwrap().state, TrackState::Pending);
}

#[test]
fn bitcoin_only_receives_btc() {
    let mut r = usdc_to_btc(5);
    r.to_token = token("USDC", None, 6);
    let e = Btc.quote(&RecordingHost::new(), &r).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::InvalidInput);
}
