//! Best execution, read-only (spec §2.9, §4.3, §8.2 compare guard and
//! cache). Compare runs the same quote as `POST /api/route/quote` — same
//! applicable rails, same netting, same ranking — and assesses each answer:
//!
//! - **effectiveFeePct**: the share of the input's value that does not
//!   arrive, `(value in − value out) / value in × 100`. Same-symbol lanes
//!   compare at par (decimals rescaled); other lanes value both sides at
//!   their configured USD prices ([`super::prices`]); unpriced → `null`.
//! - **qualityScore** (integer 0–100), documented here because the spec
//!   does not give a formula:
//!   ```text
//!   output  70 × net / best net                (the best answer scores 70)
//!   cost    20 × (T − min(fee, T)) / T          (free 20, at or above T 0; unknown 10)
//!   speed   10 × 60 / max(eta seconds, 60)      (≤ 1 min 10, 2 min 5, 10 min 1)
//!   ```
//!   with `T` the guard threshold; a rail that did not answer scores 0.
//!   Output dominates, so the score never contradicts the net ranking by
//!   much; `best` always follows the net ranking, not the score.
//! - **guard**: `ok` when the best answer's effective fee is at most
//!   `thresholdPct` (3). `recommendedMinInput` treats everything but the
//!   route fee as fixed cost at this amount and returns the smallest input
//!   at which the effective fee drops to the threshold:
//!   `amount × (fee − routeFee) / (T − routeFee)`, rounded up.
//! - **cache**: answers are kept [`TtlCache`]-style for `compare_cache_ms`
//!   (12 s) per lane, tokens, amount, sender and slippage; a hit says
//!   `cached: true`.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use super::{fees::Conversion, prices, route::RouteAsk};
use alloy::primitives::{U256, U512};
use relay_config::QuoteConfig;
use relay_plugin_api::Amount;

/// Parts per million in one whole.
pub const PPM: u64 = 1_000_000;

/// The effective fee of delivering `estimated` for `ask`, in parts per
/// million of the input's value; `None` when the lane cannot be valued.
pub fn effective_fee_ppm(q: &QuoteConfig, ask: &RouteAsk, estimated: Amount) -> Option<u64> {
    let (value_in, value_out) = if ask
        .from_token
        .symbol
        .eq_ignore_ascii_case(&ask.to_token.symbol)
    {
        let par = Conversion::Par {
            from_decimals: ask.from_token.decimals,
            to_decimals: ask.to_token.decimals,
        };
        (U512::from(par.apply(ask.amount).0), U512::from(estimated.0))
    } else {
        // The guard's assessment values both sides at configured prices.
        let price = |c, t: &relay_plugin_api::Token| {
            Some(super::fees::TokenPrice {
                usd_e6: prices::configured_usd_e6(q, c, t)?,
                decimals: t.decimals,
            })
        };
        let pin = price(ask.from_chain, &ask.from_token)?;
        let pout = price(ask.to_chain, &ask.to_token)?;
        let ten = |d: u8| U512::from(10u8).saturating_pow(U512::from(d));
        (
            U512::from(ask.amount.0)
                .saturating_mul(U512::from(pin.usd_e6))
                .saturating_mul(ten(pout.decimals)),
            U512::from(estimated.0)
                .saturating_mul(U512::from(pout.usd_e6))
                .saturating_mul(ten(pin.decimals)),
        )
    };
    if value_in.is_zero() {
        return None;
    }
    let lost = value_in.saturating_sub(value_out);
    let ppm = lost.saturating_mul(U512::from(PPM)) / value_in;
    Some(u64::try_from(ppm).unwrap_or(u64::MAX).min(PPM))
}

/// A ppm figure as a percentage with four decimals.
pub fn ppm_to_pct(ppm: u64) -> f64 {
    ppm as f64 / 10_000.0
}

/// The quality score of one answer (module docs give the formula).
pub fn quality_score(
    net: Amount,
    best: Amount,
    fee_ppm: Option<u64>,
    threshold_ppm: u64,
    eta_sec: u32,
) -> u8 {
    if best.is_zero() || net.is_zero() {
        return 0;
    }
    let output = net
        .mul_div(U256::from(70u8), best.0)
        .and_then(|a| a.to_u128())
        .unwrap_or(0)
        .min(70) as u64;
    let cost = match fee_ppm {
        Some(_) if threshold_ppm == 0 => 0,
        Some(f) => 20 * (threshold_ppm - f.min(threshold_ppm)) / threshold_ppm,
        None => 10,
    };
    let speed = 10 * 60 / u64::from(eta_sec.max(60));
    (output + cost + speed).min(100) as u8
}

/// The compare guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    /// Whether the best answer's effective fee is within the threshold.
    pub ok: bool,
    /// The best answer's effective fee, ppm.
    pub effective_fee_ppm: Option<u64>,
    /// The threshold, percent.
    pub threshold_pct: u32,
    /// The smallest input that meets the threshold, source units.
    pub recommended_min_input: Option<Amount>,
}

/// The guard for an `amount` whose best answer loses `fee_ppm` of its
/// value, `route_fee_bps` of which is the route fee.
pub fn guard(
    amount: Amount,
    fee_ppm: Option<u64>,
    route_fee_bps: u32,
    threshold_pct: u32,
) -> Guard {
    let threshold = u64::from(threshold_pct) * 10_000;
    let route = u64::from(route_fee_bps) * 100;
    let recommended = fee_ppm.filter(|_| threshold > route).map(|f| {
        let fixed = f.saturating_sub(route);
        let x = U512::from(amount.0).saturating_mul(U512::from(fixed));
        let den = U512::from(threshold - route);
        let min = x.div_ceil(den).max(U512::from(1u8));
        Amount(U256::checked_from_limbs_slice(min.as_limbs()).unwrap_or(U256::MAX))
    });
    Guard {
        ok: fee_ppm.is_some_and(|f| f <= threshold),
        effective_fee_ppm: fee_ppm,
        threshold_pct,
        recommended_min_input: recommended,
    }
}

/// The compare cache key: lane, tokens, amount, sender (tier) and slippage.
pub fn cache_key(ask: &RouteAsk) -> String {
    let tok = |t: &relay_plugin_api::Token| {
        t.address
            .clone()
            .unwrap_or_else(|| t.symbol.clone())
            .to_ascii_lowercase()
    };
    format!(
        "{}|{}|{}|{}|{}|{}|{}",
        ask.from_chain,
        ask.to_chain,
        tok(&ask.from_token),
        tok(&ask.to_token),
        ask.amount,
        ask.from_address
            .as_deref()
            .unwrap_or("")
            .to_ascii_lowercase(),
        ask.slippage_bps
    )
}

/// Entries kept before expired ones are swept.
const SWEEP_AT: usize = 1024;

/// A small time-to-live cache.
#[derive(Debug)]
pub struct TtlCache<V> {
    ttl: Duration,
    slots: Mutex<HashMap<String, (Instant, Arc<V>)>>,
}

impl<V> TtlCache<V> {
    /// Entries live `ttl`.
    pub fn new(ttl: Duration) -> Self {
        TtlCache {
            ttl,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The live entry under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<V>> {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots
            .get(key)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, v)| v.clone())
    }

    /// Stores `value` under `key`.
    pub fn put(&self, key: String, value: V) -> Arc<V> {
        let v = Arc::new(value);
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if slots.len() >= SWEEP_AT {
            let ttl = self.ttl;
            slots.retain(|_, (at, _)| at.elapsed() < ttl);
        }
        slots.insert(key, (Instant::now(), v.clone()));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::{ChainRef, Token};

    fn ask(amount: u128) -> RouteAsk {
        let usdc = |a: &str| Token {
            symbol: "USDC".into(),
            address: Some(a.into()),
            decimals: 6,
        };
        RouteAsk {
            from_chain: ChainRef::Evm(8453),
            to_chain: ChainRef::Evm(42161),
            from_token: usdc("0x1"),
            to_token: usdc("0x2"),
            amount: Amount::from_u128(amount),
            from_address: None,
            recipient: None,
            slippage_bps: 50,
        }
    }

    #[test]
    fn effective_fee_is_the_share_of_value_that_does_not_arrive() {
        let q = QuoteConfig::default();
        let a = ask(5_000_000);
        assert_eq!(
            effective_fee_ppm(&q, &a, Amount::from_u128(4_950_000)),
            Some(10_000)
        );
        assert_eq!(
            effective_fee_ppm(&q, &a, Amount::from_u128(5_000_000)),
            Some(0)
        );
        assert_eq!(ppm_to_pct(10_000), 1.0);
        let mut to_eth = a.clone();
        to_eth.to_token = Token {
            symbol: "ETH".into(),
            address: None,
            decimals: 18,
        };
        // 5 USD in, 0.0015 ETH (4.5 USD at 3000) out: 10 % lost.
        assert_eq!(
            effective_fee_ppm(&q, &to_eth, Amount::from_u128(1_500_000_000_000_000)),
            Some(100_000)
        );
    }

    #[test]
    fn quality_score_rewards_output_then_cost_then_speed() {
        let best = Amount::from_u128(1_000);
        assert_eq!(quality_score(best, best, Some(0), 30_000, 15), 100);
        assert_eq!(
            quality_score(Amount::from_u128(500), best, Some(30_000), 30_000, 600),
            36
        );
        assert_eq!(quality_score(Amount::ZERO, best, None, 30_000, 15), 0);
        assert_eq!(quality_score(best, best, None, 30_000, 120), 85);
    }

    #[test]
    fn guard_flags_expensive_small_amounts_and_recommends_a_minimum() {
        // 5 % lost of which 0.25 % is the route fee: 4.75 % fixed at 1 USDC.
        let g = guard(Amount::from_u128(1_000_000), Some(50_000), 25, 3);
        assert!(!g.ok);
        // 1 USDC × 4.75 % / (3 % − 0.25 %) = 1.7272… USDC.
        assert_eq!(g.recommended_min_input, Some(Amount::from_u128(1_727_273)));
        let fine = guard(Amount::from_u128(100_000_000), Some(3_000), 25, 3);
        assert!(fine.ok);
        assert_eq!(
            guard(Amount::from_u128(1), None, 25, 3).recommended_min_input,
            None
        );
    }

    #[test]
    fn the_cache_returns_live_entries_only() {
        let c = TtlCache::new(Duration::from_secs(60));
        assert!(c.get("k").is_none());
        c.put("k".into(), 1);
        assert_eq!(c.get("k").as_deref(), Some(&1));
        let expired: TtlCache<u8> = TtlCache::new(Duration::ZERO);
        expired.put("k".into(), 1);
        assert!(expired.get("k").is_none());
        assert_ne!(cache_key(&ask(1)), cache_key(&ask(2)));
    }
}
