//! Fee forensics (spec §4.3 `/api/forensics/fee`, §2.14): every unit
//! between what the sender paid and what the recipient got, by who kept
//! it, summing exactly to `amountIn − amountOut`.
//!
//! All lines are in the **source token's smallest units**. The amount out
//! is the destination credit found on chain when the outcome is verified
//! ([`crate::outcome`]), else the route's estimate; it is converted into
//! source units the way the engine converts (same asset: decimals only;
//! different assets: at the route's own quoted rate). Lines:
//!
//! - `routeFee` (the relay): withheld by the router or relayer;
//! - `gasAtCost` (the network) and `gasMarkup` (the relay): the gas charge
//!   split by the markup of the route's tier (`cost = gas × 10000 /
//!   (10000 + markupBps)`, rounded down; the markup is the rest);
//! - `railFee` (the rail): what the rail's quote kept of what was bridged
//!   (for lanes between different assets it is inside the rail's rate and
//!   shows as 0);
//! - `slippage` (the market): quoted minus delivered; negative when more
//!   arrived than quoted.
//!
//! The sum is exact by construction; `sumsExactly` states the check.

use alloy::primitives::{I256, U256};
use relay_engine::fees::{Conversion, Tier, BPS};
use relay_plugin_api::Amount;
use relay_types::route::RouteRecord;
use serde::Serialize;
use utoipa::ToSchema;

/// One line of the breakdown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeeLine {
    /// `routeFee`, `gasAtCost`, `gasMarkup`, `railFee`, `slippage`.
    pub kind: String,
    /// Who kept it: `relay`, `network`, the rail's id, `market`.
    pub by: String,
    /// Source smallest units, a decimal string (negative: returned).
    pub amount: String,
    /// How it was computed.
    pub note: String,
}

/// Where the amount out comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeliveredFrom {
    /// The destination credit found on chain.
    Chain,
    /// The route's estimate (not delivered, or not readable).
    Quote,
}

/// The breakdown of one route.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeeForensics {
    /// The route.
    pub id: String,
    /// Source token (as the route names it).
    pub token: String,
    /// What the sender paid, source units.
    pub amount_in: String,
    /// What the recipient got (or is quoted to get), destination units.
    pub amount_out: String,
    /// `amountOut` in source units.
    pub amount_out_in_source: String,
    /// Where `amountOut` comes from.
    pub delivered_from: DeliveredFrom,
    /// Every unit withheld, by whom.
    pub lines: Vec<FeeLine>,
    /// The sum of the lines (`amountIn − amountOutInSource`).
    pub withheld: String,
    /// Whether the lines sum exactly to `amountIn − amountOutInSource`.
    pub sums_exactly: bool,
}

fn signed(v: U256) -> I256 {
    I256::try_from(v).unwrap_or(I256::MAX)
}

fn line(kind: &str, by: &str, amount: I256, note: impl Into<String>) -> FeeLine {
    FeeLine {
        kind: kind.into(),
        by: by.into(),
        amount: amount.to_string(),
        note: note.into(),
    }
}

/// The gas charge split at `markup_bps`: `(cost, markup)`.
pub fn split_gas(gas: Amount, markup_bps: u32) -> (Amount, Amount) {
    let cost = gas
        .mul_div(U256::from(BPS), U256::from(BPS + markup_bps))
        .unwrap_or(gas);
    (cost, gas.saturating_sub(cost))
}

/// The breakdown of `r` at fee `tier`; `to_source` turns destination
/// units into source units; `delivered` is the on-chain credit when known.
pub fn forensics(
    r: &RouteRecord,
    tier: Tier,
    to_source: Conversion,
    delivered: Option<U256>,
) -> FeeForensics {
    let (out, from) = match delivered {
        Some(d) => (Amount(d), DeliveredFrom::Chain),
        None => (r.estimated, DeliveredFrom::Quote),
    };
    let bridged = r
        .amount
        .saturating_sub(r.relay_fee)
        .saturating_sub(r.gas_fee);
    let estimated_src = to_source.apply(r.estimated).min(bridged);
    let out_src = to_source.apply(out);
    let (gas_cost, markup) = split_gas(r.gas_fee, tier.gas_markup_bps);
    let lines = vec![
        line(
            "routeFee",
            "relay",
            signed(r.relay_fee.0),
            format!("{} bps of the amount", tier.route_fee_bps),
        ),
        line(
            "gasAtCost",
            "network",
            signed(gas_cost.0),
            "relayer gas at cost, in the token",
        ),
        line(
            "gasMarkup",
            "relay",
            signed(markup.0),
            format!("{} bps over gas cost", tier.gas_markup_bps),
        ),
        line(
            "railFee",
            &r.rail,
            signed(bridged.0) - signed(estimated_src.0),
            "bridged minus the rail's quoted output",
        ),
        line(
            "slippage",
            "market",
            signed(estimated_src.0) - signed(out_src.0),
            "quoted output minus delivered (negative: more arrived)",
        ),
    ];
    let sum = lines.iter().fold(I256::ZERO, |acc, l| {
        acc + l.amount.parse::<I256>().unwrap_or_default()
    });
    let expected = signed(r.amount.0) - signed(out_src.0);
    FeeForensics {
        id: r.id.clone(),
        token: r.from_token.clone(),
        amount_in: r.amount.to_string(),
        amount_out: out.to_string(),
        amount_out_in_source: out_src.to_string(),
        delivered_from: from,
        withheld: sum.to_string(),
        sums_exactly: sum == expected,
        lines,
    }
}

/// The fee tier a route was charged at: the member tier when its route fee
/// is the member rate of its amount (and that differs), else standard.
pub fn tier_of(r: &RouteRecord, standard: Tier, member: Tier) -> Tier {
    let member_fee = r.amount.bps(member.route_fee_bps);
    if member.route_fee_bps != standard.route_fee_bps && r.relay_fee == member_fee {
        member
    } else {
        standard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(amount: u64, relay: u64, gas: u64, estimated: u64) -> RouteRecord {
        let mut r = crate::outcome::tests_support::route();
        r.amount = Amount(U256::from(amount));
        r.relay_fee = Amount(U256::from(relay));
        r.gas_fee = Amount(U256::from(gas));
        r.estimated = Amount(U256::from(estimated));
        r
    }

    const TIER: Tier = Tier {
        route_fee_bps: 25,
        gas_markup_bps: 2_500,
    };
    const PAR: Conversion = Conversion::Par {
        from_decimals: 6,
        to_decimals: 6,
    };

    fn total(f: &FeeForensics) -> I256 {
        f.lines
            .iter()
            .map(|l| l.amount.parse::<I256>().unwrap())
            .fold(I256::ZERO, |a, b| a + b)
    }

    #[test]
    fn lines_sum_exactly_to_in_minus_out() {
        let r = route(3_000_000, 7_500, 12_500, 2_975_000);
        let f = forensics(&r, TIER, PAR, Some(U256::from(2_974_990u64)));
        assert!(f.sums_exactly);
        assert_eq!(total(&f), I256::try_from(3_000_000 - 2_974_990).unwrap());
        let by = |k: &str| f.lines.iter().find(|l| l.kind == k).unwrap().amount.clone();
        assert_eq!(by("gasAtCost"), "10000");
        assert_eq!(by("gasMarkup"), "2500");
        assert_eq!(by("railFee"), "5000");
        assert_eq!(by("slippage"), "10");
        assert_eq!(f.delivered_from, DeliveredFrom::Chain);
    }

    #[test]
    fn more_delivered_than_quoted_is_negative_slippage_and_still_exact() {
        let r = route(1_000_000, 2_500, 0, 990_000);
        let f = forensics(&r, TIER, PAR, Some(U256::from(990_004u64)));
        assert!(f.sums_exactly);
        assert_eq!(f.lines[4].amount, "-4");
    }

    #[test]
    fn decimals_scale_into_source_units() {
        let r = route(1_000_000, 2_500, 1_000, 996_000_000_000_000_000);
        let down = Conversion::Par {
            from_decimals: 18,
            to_decimals: 6,
        };
        let f = forensics(&r, TIER, down, None);
        assert!(f.sums_exactly);
        assert_eq!(f.amount_out_in_source, "996000");
        assert_eq!(f.delivered_from, DeliveredFrom::Quote);
    }

    #[test]
    fn the_member_tier_is_recognised_from_the_route_fee() {
        let member = Tier {
            route_fee_bps: 15,
            gas_markup_bps: 1_000,
        };
        assert_eq!(
            tier_of(&route(1_000_000, 1_500, 0, 0), TIER, member),
            member
        );
        assert_eq!(tier_of(&route(1_000_000, 2_500, 0, 0), TIER, member), TIER);
    }
}
