//! The warm quote book, firm execution and the hedged fan-out (issue 12)
//! on the devnet mesh: the packaged plugins over the upstream simulators,
//! with a tiny staleness bound so ageing takes a second, not twelve.
//!
//! - a warm lane serves another amount of its bucket from the book
//!   (`cached: true`, a `quotedAt` within the bound, an honest minimum);
//! - a book answer older than the bound is never served as fresh;
//! - a hung upstream never delays a warm quote and is reported as not
//!   answering, not even when the host's health reading (which asks that
//!   upstream too) expires meanwhile;
//! - a burst of quotes on a cold lane is one live fan-out: the requests
//!   that arrive while it runs are served its answers;
//! - a price that moved past the attested `minOut` between quote and
//!   execute is never executed: `409 PRICE_MOVED` with the fresh quote,
//!   and nothing moves on chain.

use relay_types::{Clock as _, SystemClock};
use std::time::{Duration, Instant};

use crate::common;
use alloy::primitives::U256;
use common::{approve_permit2, permit_body, post, serve, usdc_balance, wait_for, Running};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_registry::OperatorStateStore;
use relay_simulators::{
    faults::{FaultConfig, FaultMode},
    Upstream,
};
use serde_json::{json, Value};

const BASE: u64 = 8453;
const ARB: u64 = 42161;
/// The book's staleness bound in these tests, ms.
const STALE_MS: u64 = 1_500;
/// The health reading's lifetime in these tests, ms.
const HEALTH_TTL_MS: u64 = 200;

/// The mesh with the aggregators competing alone (no float lane, no
/// burn-and-mint), a quote book that ages in [`STALE_MS`] and a health
/// reading that expires every [`HEALTH_TTL_MS`].
async fn mesh() -> (Devnet, tempfile::TempDir, Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.quote_book.enabled = true;
        c.quote_book.hedge_factor_pct = 150;
        c.quote_book.stale_ms = STALE_MS;
        c.quote_book.refresh_ms = 300;
        c.quote_book.tick_ms = 50;
        c.quote_book.default_rpm = 600;
        c.quote.deadline_ms = 4_000;
        c.runtime.health_ttl_ms = HEALTH_TTL_MS;
    })
    .await;
    for rail in ["floatlane", "cctp"] {
        h.host_state
            .store
            .set_rail_enabled(rail, false)
            .await
            .unwrap();
    }
    (devnet, dir, h)
}

/// A quote of `amount` USDC base units; the answer and how long it took.
/// Every answer is checked to be fresh when it was asked for.
async fn quote(h: &Running, amount: u64, from: bool) -> (Value, Duration) {
    let mut body = json!({"fromChain": BASE, "toChain": ARB, "fromToken": "USDC",
        "amount": amount.to_string(), "toAddress": keys::anvil_address(1)});
    if from {
        body["fromAddress"] = json!(keys::anvil_address(1));
    }
    let (started, sent_ms) = (Instant::now(), SystemClock.now_ms());
    let (code, text) = post(&h.base, "/api/route/quote", &body, &[]).await;
    let took = started.elapsed();
    assert_eq!(code, 200, "{text}");
    let q = serde_json::from_str(&text).unwrap();
    answers_are_fresh(&q, sent_ms);
    (q, took)
}

fn entry<'a>(q: &'a Value, rail: &str) -> &'a Value {
    q["compared"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rail"] == rail)
        .unwrap_or_else(|| panic!("{rail} compared: {q}"))
}

fn amount(v: &Value) -> U256 {
    v.as_str().unwrap().parse().unwrap()
}

/// Every rail reported as answering answered within the bound of the
/// moment the quote was asked for (`sent_ms`: the host served it no
/// earlier, so an answer older than the bound then was served stale;
/// measured from the check instead, a busy machine's delay would count).
fn answers_are_fresh(q: &Value, sent_ms: u64) {
    let now = SystemClock.now_ms();
    for c in q["compared"].as_array().unwrap() {
        if c["ok"] == true {
            let at = c["quotedAt"].as_u64().unwrap_or_else(|| panic!("{c}"));
            assert!(
                at <= now && sent_ms.saturating_sub(at) <= STALE_MS,
                "stale answer served to a quote asked at {sent_ms}: {c}"
            );
        } else {
            assert!(c.get("quotedAt").is_none(), "{c}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_warm_lane_serves_another_amount_of_its_bucket_from_the_book() {
    let (devnet, _dir, h) = mesh().await;
    let (cold, _) = quote(&h, 6_000_000, false).await;
    assert_eq!(entry(&cold, "lifi")["cached"], false, "{cold}");
    let (warm, took) = quote(&h, 7_000_000, false).await;
    let lifi = entry(&warm, "lifi");
    assert_eq!(lifi["ok"], true, "{warm}");
    assert_eq!(lifi["cached"], true, "served from the book: {warm}");
    // LI.FI charges 10 bps: 7 USDC scaled from 6 delivers 6.993 before
    // the host's fees, never more.
    assert_eq!(
        amount(&lifi["amountOut"]),
        U256::from(6_993_000u64),
        "{lifi}"
    );
    assert!(amount(&warm["to"]["min"]) <= amount(&warm["to"]["estimated"]));
    assert_eq!(warm["attestation"]["terms"]["amount"], "7000000", "{warm}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_burst_on_a_cold_lane_is_one_live_fan_out_served_to_every_amount() {
    let (devnet, _dir, h) = mesh().await;
    // LI.FI slow enough that the whole burst arrives during its fan-out.
    let slow = FaultConfig {
        latency_ms: 800,
        ..FaultConfig::default()
    };
    h.sims.set_faults(Upstream::Lifi, slow);
    let amounts: Vec<u64> = (0..8).map(|i| 5_000_000 + i * 100_000).collect();
    let burst = amounts.iter().map(|a| quote(&h, *a, false));
    let answers = futures::future::join_all(burst).await;
    let lifi: Vec<&Value> = answers.iter().map(|(q, _)| entry(q, "lifi")).collect();
    let asked: Vec<u64> = lifi
        .iter()
        .zip(&amounts)
        .filter(|(c, _)| c["cached"] == false)
        .map(|(_, a)| *a)
        .collect();
    assert_eq!(asked.len(), 1, "one request asked LI.FI: {lifi:?}");
    let quoted_at = &lifi[0]["quotedAt"];
    for ((q, _), (c, a)) in answers.iter().zip(lifi.iter().zip(&amounts)) {
        assert_eq!(c["ok"], true, "{q}");
        assert_eq!(&c["quotedAt"], quoted_at, "the one answer: {lifi:?}");
        // LI.FI's 10 bps fee is included in its output: served to a
        // smaller amount it may be fixed, so the lower side is served.
        let fee = a.max(&asked[0]) / 1_000;
        assert_eq!(amount(&c["amountOut"]), U256::from(a - fee), "{c}");
        assert_eq!(q["attestation"]["terms"]["amount"], a.to_string(), "{q}");
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_upstream_never_delays_a_warm_quote_nor_is_served_stale() {
    let (devnet, _dir, h) = mesh().await;
    let (cold, _) = quote(&h, 6_000_000, false).await;
    assert_eq!(entry(&cold, "lifi")["ok"], true, "{cold}");
    // From now on LI.FI's health probe hangs too, until the rail's call
    // deadline (10 s); the health reading expires several times below.
    h.sims
        .set_faults(Upstream::Lifi, FaultConfig::mode(FaultMode::Hang));
    let mut last = Value::Null;
    wait_for("LI.FI's book answer to age out", async || {
        let (q, took) = quote(&h, 6_000_000, false).await;
        assert!(
            took < Duration::from_millis(1_000),
            "a warm quote waited {took:?}: {q}"
        );
        assert_eq!(entry(&q, "squid")["ok"], true, "{q}");
        let gone = entry(&q, "lifi")["ok"] == false;
        last = q;
        gone
    })
    .await;
    let lifi = entry(&last, "lifi");
    assert_eq!(lifi["errorKind"], "STALE", "{lifi}");
    assert_eq!(lifi["answered"], false, "{lifi}");
    assert_ne!(last["bridge"], "lifi", "a silent rail never wins: {last}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_price_that_moved_past_min_out_is_never_executed() {
    let (devnet, _dir, h) = mesh().await;
    approve_permit2(&devnet, BASE, 1).await;
    let (q, _) = quote(&h, 6_000_000, true).await;
    assert_eq!(q["bridge"], "lifi", "{q}");
    // LI.FI's upstream now takes another 1 % (above the 0.5 % slippage).
    h.sims.set_faults(
        Upstream::Lifi,
        FaultConfig {
            extra_fee_bps: 100,
            ..FaultConfig::default()
        },
    );
    let user = keys::anvil_address(1);
    let before = (
        usdc_balance(&devnet, BASE, user).await,
        usdc_balance(&devnet, ARB, user).await,
    );
    let mut body = permit_body(&devnet, (BASE, ARB), 6_000_000, 900);
    body["rail"] = json!("lifi");
    body["attestation"] = q["attestation"].clone();
    // An altered attestation locks nothing: a lowered minimum, or a proof
    // that does not lead to the signed root; a proof that is not a list of
    // hashes is refused naming it.
    let sibling = json!([format!("0x{}", "11".repeat(32))]);
    let invalid = ("ATTESTATION_INVALID", "attestation");
    for (at, forged, (error, field)) in [
        ("/terms/minOut", json!("1"), invalid),
        ("/proof", sibling, invalid),
        (
            "/proof",
            json!(["0x12"]),
            ("INVALID_FIELD", "attestation.proof"),
        ),
    ] {
        let mut altered = body.clone();
        *altered["attestation"].pointer_mut(at).unwrap() = forged;
        let (code, text) = post(&h.base, "/api/route/execute", &altered, &[]).await;
        let e: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (code, &e["errorCode"], &e["field"]),
            (400, &json!(error), &json!(field)),
            "{at}: {e}"
        );
    }
    let (code, text) = post(&h.base, "/api/route/execute", &body, &[]).await;
    assert_eq!(code, 409, "{text}");
    let e: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(e["errorCode"], "PRICE_MOVED", "{e}");
    let fresh = &e["freshQuote"];
    assert_eq!(fresh["rail"], "lifi", "{e}");
    assert!(
        amount(&fresh["amountOut"]) < amount(&fresh["lockedMinOut"]),
        "{e}"
    );
    let after = (
        usdc_balance(&devnet, BASE, user).await,
        usdc_balance(&devnet, ARB, user).await,
    );
    assert_eq!(before, after, "nothing moved on chain");
    devnet.stop();
}
