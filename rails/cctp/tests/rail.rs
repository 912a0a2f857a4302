//! The CCTP rail against a recording test double of the host: what it asks
//! Circle for, how it reads Circle's documented answers (tests/fixtures), and
//! the plans and follow-ups it describes.

use relay_plugin_api::{
    Amount, ChainRef, HealthStatus, PlanAction, Rail, RailErrorKind, TrackState,
};
use relay_rail_cctp::{Cctp, MESSAGE_TRANSMITTER_V2, TOKEN_MESSENGER_V2};
use relay_rail_sdk::{
    fixture,
    testing::{query_pairs, url_path, RecordingHost},
    testing_requests::{prepare_request, quote_request, token, track_request, USER},
    testing_rpc::RpcRecordingHost,
};

const BASE_USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ARB_USDC: &str = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831";
const BURN_TX: &str = "0x1f3c1b7a6e0d2b4c8a9e7f6d5c4b3a29180716253443526170819a8b7c6d5e4f";
const MINT_TX: &str = "0x9a8b7c6d5e4f1f3c1b7a6e0d2b4c8a9e7f6d5c4b3a291807162534435261708a";
const BASE: ChainRef = ChainRef::Evm(8453);
const ARB: ChainRef = ChainRef::Evm(42161);

fn usdc_request(amount: u128) -> relay_plugin_api::QuoteRequest {
    quote_request(
        "8453",
        "42161",
        token("USDC", Some(BASE_USDC), 6),
        token("USDC", Some(ARB_USDC), 6),
        amount,
    )
}

#[test]
fn quote_is_one_to_one_with_no_bridge_fee_and_no_upstream_call() {
    let host = RecordingHost::new();
    let q = Cctp.quote(&host, &usdc_request(10_000_000)).unwrap();
    assert_eq!(
        (q.amount_in, q.amount_out, q.min_out),
        (q.amount_in, q.amount_in, q.amount_in)
    );
    assert!(q.fees.iter().all(|f| f.amount.is_zero()));
    assert_eq!(
        q.duration_sec,
        1_020 + 30,
        "Base waits for Ethereum finality"
    );
    assert_eq!(q.detail["sourceDomain"], 6);
    assert_eq!(q.detail["destinationDomain"], 3);
    assert_eq!(q.detail["maxFee"], "0");
    assert!(host.requests().is_empty());
    let fast = quote_request(
        "137",
        "43114",
        token("USDC", None, 6),
        token("USDC", None, 6),
        1,
    );
    assert_eq!(Cctp.quote(&host, &fast).unwrap().duration_sec, 50);
}

#[test]
fn quote_refuses_other_chains_assets_and_amounts_with_typed_errors() {
    let host = RecordingHost::new();
    let kind = |r: relay_plugin_api::QuoteRequest| Cctp.quote(&host, &r).unwrap_err().kind;
    let usdc = || token("USDC", None, 6);
    assert_eq!(
        kind(quote_request("56", "8453", usdc(), usdc(), 1)),
        RailErrorKind::UnsupportedLane
    );
    assert_eq!(
        kind(quote_request("8453", "8453", usdc(), usdc(), 1)),
        RailErrorKind::UnsupportedLane
    );
    assert_eq!(
        kind(quote_request("8453", "bitcoin", usdc(), usdc(), 1)),
        RailErrorKind::UnsupportedLane
    );
    assert_eq!(
        kind(quote_request(
            "8453",
            "42161",
            token("USDT", None, 6),
            usdc(),
            1
        )),
        RailErrorKind::UnsupportedLane
    );
    assert_eq!(kind(usdc_request(0)), RailErrorKind::InvalidInput);
    assert_eq!(
        kind(usdc_request(10_000_000_000_001)),
        RailErrorKind::AmountOutOfRange
    );
    let mut r = usdc_request(1);
    r.to_address = Some("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t".into());
    assert_eq!(kind(r), RailErrorKind::InvalidInput);
}

#[test]
fn prepare_pulls_approves_the_messenger_burns_and_awaits_circle() {
    let host = RecordingHost::new();
    let req = usdc_request(10_000_000);
    let plan = Cctp
        .prepare(
            &host,
            &prepare_request(&req, Cctp.quote(&host, &req).unwrap()),
        )
        .unwrap();
    let amount = Amount::from_u128(10_000_000);
    match plan.steps.as_slice() {
        [PlanAction::Permit2Pull {
            token: t0,
            amount: a0,
            ..
        }, PlanAction::Approve {
            token,
            spender,
            amount: a1,
            ..
        }, PlanAction::ContractCall {
            chain,
            to,
            data,
            value,
            ..
        }, PlanAction::AwaitUpstream { .. }] => {
            assert_eq!((t0.as_str(), token.as_str()), (BASE_USDC, BASE_USDC));
            assert_eq!((*a0, *a1), (amount, amount));
            assert_eq!(
                (spender.as_str(), to.as_str()),
                (TOKEN_MESSENGER_V2, TOKEN_MESSENGER_V2)
            );
            assert_eq!(*chain, BASE);
            assert!(value.is_zero());
            assert!(data.starts_with("0x8e0250ee"));
            assert!(data.to_lowercase().contains(&USER[2..].to_lowercase()));
        }
        other => panic!("unexpected plan {other:#?}"),
    }
    assert_eq!(plan.track_ref, None);
}

#[test]
fn prepare_uses_the_operators_deployment_and_checks_the_token() {
    let messenger = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    let usdc = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
    let host = RecordingHost::new()
        .config("token_messenger.8453", messenger)
        .config("usdc.8453", usdc);
    let mut req = usdc_request(5);
    req.from_token.address = Some(usdc.into());
    let mut prep = prepare_request(&req, Cctp.quote(&host, &req).unwrap());
    prep.mode = relay_plugin_api::SourceMode::Operator;
    let plan = Cctp.prepare(&host, &prep).unwrap();
    assert!(
        matches!(&plan.steps[0], PlanAction::Approve { spender, token, .. } if spender == messenger && token == usdc)
    );
    assert!(matches!(&plan.steps[1], PlanAction::ContractCall { to, .. } if to == messenger));
    prep.from_token_address = Some(BASE_USDC.into());
    assert_eq!(
        Cctp.prepare(&host, &prep).unwrap_err().kind,
        RailErrorKind::InvalidInput
    );
    prep.from_token_address = Some(usdc.into());
    prep.recipient = "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ".into();
    assert_eq!(
        Cctp.prepare(&host, &prep).unwrap_err().kind,
        RailErrorKind::InvalidInput
    );
}

#[test]
fn track_asks_circle_for_the_burn_by_source_domain_and_hash() {
    let host = RecordingHost::new()
        .config("attestation_base", "http://127.0.0.1:9/")
        .answer("/v2/messages/6", 404, fixture!("not_found.json"));
    let s = Cctp
        .track(&host, &track_request(BASE, ARB, None, Some(BURN_TX)))
        .unwrap();
    // Circle documents 404 as "not observed yet": pending, not a failure.
    assert_eq!((s.state, s.stage.as_deref()), (TrackState::Pending, None));
    let req = host.only_request();
    assert!(
        req.url.starts_with("http://127.0.0.1:9/v2/messages/6?"),
        "{}",
        req.url
    );
    assert_eq!(
        query_pairs(&req.url),
        vec![("transactionHash".into(), BURN_TX.into())]
    );
    let before = Cctp
        .track(&host, &track_request(BASE, ARB, None, None))
        .unwrap();
    assert_eq!(before.state, TrackState::Pending);
}

#[test]
fn a_complete_attestation_becomes_a_receive_message_follow_up() {
    let transmitter = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
    let host = RecordingHost::new()
        .config("message_transmitter.42161", transmitter)
        .answer("/v2/messages/6", 200, fixture!("messages_complete.json"));
    let s = Cctp
        .track(&host, &track_request(BASE, ARB, None, Some(BURN_TX)))
        .unwrap();
    assert_eq!(
        (s.state, s.stage.as_deref()),
        (TrackState::Bridging, Some("SENDING"))
    );
    match s.follow_up.as_slice() {
        [PlanAction::ContractCall {
            chain, to, data, ..
        }] => {
            assert_eq!((*chain, to.as_str()), (ARB, transmitter));
            assert!(data.starts_with("0x57ecfd28"));
            // the attestation's bytes travel verbatim
            assert!(data.contains(&"3f".repeat(32)));
        }
        other => panic!("expected one receiveMessage, got {other:#?}"),
    }
    let default =
        RecordingHost::new().answer("/v2/messages/6", 200, fixture!("messages_complete.json"));
    let s = Cctp
        .track(&default, &track_request(BASE, ARB, None, Some(BURN_TX)))
        .unwrap();
    assert!(
        matches!(&s.follow_up[0], PlanAction::ContractCall { to, .. } if to == MESSAGE_TRANSMITTER_V2)
    );
}

#[test]
fn the_message_for_the_routes_destination_is_chosen() {
    let host = RecordingHost::new().answer(
        "/v2/messages/6",
        200,
        fixture!("messages_two_destinations.json"),
    );
    let to_op = Cctp
        .track(
            &host,
            &track_request(BASE, ChainRef::Evm(10), None, Some(BURN_TX)),
        )
        .unwrap();
    let to_arb = Cctp
        .track(&host, &track_request(BASE, ARB, None, Some(BURN_TX)))
        .unwrap();
    assert_ne!(to_op.follow_up, to_arb.follow_up);
    let none = Cctp.track(
        &host,
        &track_request(BASE, ChainRef::Evm(1), None, Some(BURN_TX)),
    );
    assert_eq!(none.unwrap_err().kind, RailErrorKind::UpstreamMalformed);
}

#[test]
fn pending_malformed_and_error_answers_map_to_states_and_typed_errors() {
    let track = |status: u16, body: &str| {
        let host = RecordingHost::new().answer("/v2/messages/6", status, body);
        Cctp.track(&host, &track_request(BASE, ARB, None, Some(BURN_TX)))
    };
    let s = track(200, fixture!("messages_pending.json")).unwrap();
    assert_eq!(
        (s.state, s.stage.as_deref()),
        (TrackState::Bridging, Some("RECEIVING"))
    );
    assert!(s.follow_up.is_empty());
    let e = track(200, fixture!("messages_truncated.json")).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamMalformed);
    let e = track(200, fixture!("messages_complete_without_attestation.json")).unwrap_err();
    assert_eq!(e.kind, RailErrorKind::UpstreamMalformed);
    let e = track(429, fixture!("rate_limited.txt")).unwrap_err();
    assert!(e.kind == RailErrorKind::Upstream && e.retryable);
    let e = track(500, fixture!("server_error.json")).unwrap_err();
    assert!(e.kind == RailErrorKind::Upstream && e.retryable);
    let e = track(400, fixture!("bad_request.json")).unwrap_err();
    assert!(e.kind == RailErrorKind::InvalidInput && !e.retryable);
    assert!(e.message.contains("Invalid transactionHash"), "{e}");
}

#[test]
fn the_mint_receipt_finishes_the_route() {
    let receipt =
        |status: &str| format!(r#"{{"status":"{status}","transactionHash":"{MINT_TX}"}}"#);
    let host = RpcRecordingHost::new(RecordingHost::new()).rpc_answer(
        ARB,
        "eth_getTransactionReceipt",
        &receipt("0x1"),
    );
    let s = Cctp
        .track(
            &host,
            &track_request(BASE, ARB, Some(MINT_TX), Some(BURN_TX)),
        )
        .unwrap();
    assert_eq!(
        (s.state, s.dest_tx.as_deref()),
        (TrackState::Done, Some(MINT_TX))
    );
    assert_eq!(host.rpc_calls()[0].2, format!(r#"["{MINT_TX}"]"#));
    assert!(
        host.inner.requests().is_empty(),
        "no attestation lookup once minting"
    );
    let reverted = RpcRecordingHost::new(RecordingHost::new()).rpc_answer(
        ARB,
        "eth_getTransactionReceipt",
        &receipt("0x0"),
    );
    let s = Cctp
        .track(
            &reverted,
            &track_request(BASE, ARB, Some(MINT_TX), Some(BURN_TX)),
        )
        .unwrap();
    assert_eq!(s.state, TrackState::Failed);
    let pending = RpcRecordingHost::new(RecordingHost::new()).rpc_answer(
        ARB,
        "eth_getTransactionReceipt",
        "null",
    );
    let s = Cctp
        .track(
            &pending,
            &track_request(BASE, ARB, Some(MINT_TX), Some(BURN_TX)),
        )
        .unwrap();
    assert_eq!(
        (s.state, s.stage.as_deref()),
        (TrackState::Bridging, Some("SENDING"))
    );
}

#[test]
fn health_follows_the_attestation_api() {
    let up = RecordingHost::new().answer("/v2/messages/0", 404, fixture!("not_found.json"));
    let h = Cctp.health(&up);
    assert_eq!(h.status, HealthStatus::Operational);
    assert_eq!(url_path(&up.only_request().url), "/v2/messages/0");
    assert!(h
        .lanes
        .iter()
        .all(|l| l.execute_ready && l.lane == "evm->evm"));
    let down = RecordingHost::new().answer("/v2/messages/0", 503, fixture!("server_error.json"));
    let h = Cctp.health(&down);
    assert_eq!(h.status, HealthStatus::Down);
    assert!(h
        .lanes
        .iter()
        .all(|l| !l.execute_ready && l.quote_error.is_some()));
}

#[test]
fn manifest_declares_circles_hosts_chains_and_contracts() {
    let m = Cctp.manifest();
    assert_eq!((m.id.as_str(), m.coverage.len()), ("cctp", 1));
    assert_eq!(m.coverage[0].from.len(), 7);
    assert!(m.egress.contains(&"iris-api.circle.com".to_string()));
    assert!(m
        .contracts
        .iter()
        .any(|c| c.chain == ARB && c.address == MESSAGE_TRANSMITTER_V2));
    assert!(m.upstream.unwrap().contains("/v2/messages"));
}

#[test]
fn unknown_status_words_are_pending_and_delays_are_named() {
    let track = |body: &str| {
        let host = RecordingHost::new().answer("/v2/messages/6", 200, body);
        Cctp.track(&host, &track_request(BASE, ARB, None, Some(BURN_TX)))
            .unwrap()
    };
    let odd = track(r#"{"messages":[{"message":"0x","status":"re_attesting"}]}"#);
    assert_eq!(odd.state, TrackState::Pending);
    assert!(odd.message.unwrap().contains("re_attesting"));
    let delayed = track(
        r#"{"messages":[{"message":"0x","attestation":"PENDING","status":"pending_confirmations","delayReason":"insufficient_fee"}]}"#,
    );
    assert_eq!(
        (delayed.state, delayed.stage.as_deref()),
        (TrackState::Bridging, Some("RECEIVING"))
    );
    assert!(delayed.message.unwrap().contains("insufficient_fee"));
    let bare = track(r#"{"messages":[{"status":"pending_confirmations"}]}"#);
    assert_eq!(bare.state, TrackState::Bridging);
    let empty = track(r#"{"messages":[]}"#);
    assert_eq!(empty.state, TrackState::Pending);
}
