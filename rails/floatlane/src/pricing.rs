//! Float lane pricing (spec §2.6, §8.2), pure integer arithmetic.
//!
//! - **free-micro-vip**: a member sending a micro transfer (0.10–25 USD) to a
//!   low-cost chain pays nothing.
//! - **micro-standard**: anyone else on a micro transfer to a low-cost chain
//!   pays the payout cost plus a margin, never above 8 bps of the amount —
//!   except that no quote is below the destination payout cost.
//! - **rebalancing-discount**: a transfer that moves float where it is short
//!   (destination float more than twice the source float) pays a discounted
//!   rate.
//! - **base**: everything else.
//!
//! Every fee is floored at the destination payout cost. `capNow`, the largest
//! transfer servable now, is 25 % of destination float; a larger transfer is
//! not served. `freeTier.failed` names the first free-tier check that failed:
//! `amount`, `destination-cost`, then `membership`.

use relay_plugin_api::{Amount, Host, U256};

/// Tunables, all integers; overridable per operator through rail config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PricingParams {
    /// Gas units of one ERC-20 payout.
    pub payout_gas: u64,
    /// A destination is low-cost when a payout costs at most this (micro-USD).
    pub low_cost_max_usd_e6: u64,
    /// Micro range, micro-USD, inclusive.
    pub micro_min_usd_e6: u64,
    /// Upper bound of the micro range.
    pub micro_max_usd_e6: u64,
    /// micro-standard margin over cost, bps.
    pub standard_margin_bps: u32,
    /// micro-standard ceiling, bps.
    pub standard_cap_bps: u32,
    /// rebalancing-discount rate, bps.
    pub rebalance_bps: u32,
    /// base rate, bps.
    pub base_bps: u32,
    /// Share of destination float servable at once, percent.
    pub cap_share_pct: u32,
}

impl Default for PricingParams {
    fn default() -> Self {
        PricingParams {
            payout_gas: 65_000,
            low_cost_max_usd_e6: 50_000,
            micro_min_usd_e6: 100_000,
            micro_max_usd_e6: 25_000_000,
            standard_margin_bps: 2,
            standard_cap_bps: 8,
            rebalance_bps: 3,
            base_bps: 10,
            cap_share_pct: 25,
        }
    }
}

impl PricingParams {
    /// Defaults overridden by the operator's `pricing.*` config keys.
    pub fn from_config(host: &dyn Host) -> Self {
        let d = PricingParams::default();
        let get = |k: &str, v: u64| {
            host.config(&format!("pricing.{k}"))
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(v)
        };
        let bps = |k: &str, v: u32| get(k, v as u64).min(10_000) as u32;
        PricingParams {
            payout_gas: get("payout_gas", d.payout_gas),
            low_cost_max_usd_e6: get("low_cost_max_usd_e6", d.low_cost_max_usd_e6),
            micro_min_usd_e6: get("micro_min_usd_e6", d.micro_min_usd_e6),
            micro_max_usd_e6: get("micro_max_usd_e6", d.micro_max_usd_e6),
            standard_margin_bps: bps("standard_margin_bps", d.standard_margin_bps),
            standard_cap_bps: bps("standard_cap_bps", d.standard_cap_bps),
            rebalance_bps: bps("rebalance_bps", d.rebalance_bps),
            base_bps: bps("base_bps", d.base_bps),
            cap_share_pct: get("cap_share_pct", d.cap_share_pct as u64).min(100) as u32,
        }
    }
}

/// What pricing needs to know, read live by the rail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloatInputs {
    /// Amount in destination-token units.
    pub amount: Amount,
    /// Destination token decimals.
    pub decimals: u8,
    /// Whether the sender is a member.
    pub member: bool,
    /// Relayer's float of the asset on the destination.
    pub dest_float: Amount,
    /// Relayer's float of the asset on the source, destination units.
    pub source_float: Amount,
    /// Destination gas price, wei.
    pub gas_price_wei: U256,
    /// Destination native asset price, micro-USD per whole unit.
    pub native_usd_e6: u64,
}

/// The pricing modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PricingMode {
    /// Free for members on micro transfers to a low-cost chain.
    FreeMicroVip,
    /// Cost plus margin, capped, floored at cost.
    MicroStandard,
    /// Discounted because it rebalances float.
    RebalancingDiscount,
    /// Everything else.
    Base,
}

impl PricingMode {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PricingMode::FreeMicroVip => "free-micro-vip",
            PricingMode::MicroStandard => "micro-standard",
            PricingMode::RebalancingDiscount => "rebalancing-discount",
            PricingMode::Base => "base",
        }
    }
}

/// A priced float transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloatPrice {
    /// Mode.
    pub mode: PricingMode,
    /// Fee, destination units.
    pub fee: Amount,
    /// Delivered amount.
    pub amount_out: Amount,
    /// Largest servable transfer now.
    pub cap_now: Amount,
    /// Destination payout cost, destination units.
    pub payout_cost: Amount,
    /// The free-tier check that failed, if any.
    pub free_tier_failed: Option<&'static str>,
}

fn ceil_div(n: U256, d: U256) -> U256 {
    n.div_ceil(d)
}

/// Payout cost in micro-USD (rounded up).
pub fn payout_cost_usd_e6(p: &PricingParams, gas_price_wei: U256, native_usd_e6: u64) -> U256 {
    let wei = gas_price_wei.saturating_mul(U256::from(p.payout_gas));
    ceil_div(
        wei.saturating_mul(U256::from(native_usd_e6)),
        U256::from(10u64).pow(U256::from(18u8)),
    )
}

/// micro-USD → token units (stablecoins at par), rounded up.
fn usd_e6_to_units(usd_e6: U256, decimals: u8) -> Amount {
    let ten = U256::from(10u8);
    if decimals >= 6 {
        Amount(usd_e6.saturating_mul(ten.pow(U256::from(decimals - 6))))
    } else {
        Amount(ceil_div(usd_e6, ten.pow(U256::from(6 - decimals))))
    }
}

fn units_to_usd_e6(a: Amount, decimals: u8) -> U256 {
    crate::rescale(a, decimals, 6).0
}

/// Prices a transfer, or says why it cannot be served.
pub fn price(p: &PricingParams, i: &FloatInputs) -> Result<FloatPrice, String> {
    let cost_usd = payout_cost_usd_e6(p, i.gas_price_wei, i.native_usd_e6);
    let payout_cost = usd_e6_to_units(cost_usd, i.decimals);
    let cap_now = Amount(i.dest_float.0 * U256::from(p.cap_share_pct) / U256::from(100u8));
    let usd = units_to_usd_e6(i.amount, i.decimals);
    let micro = usd >= U256::from(p.micro_min_usd_e6) && usd <= U256::from(p.micro_max_usd_e6);
    let low_cost = cost_usd <= U256::from(p.low_cost_max_usd_e6);
    let free_tier_failed = if !micro {
        Some("amount")
    } else if !low_cost {
        Some("destination-cost")
    } else if !i.member {
        Some("membership")
    } else {
        None
    };
    let floor = |fee: Amount| fee.max(payout_cost);
    let (mode, fee) = if free_tier_failed.is_none() {
        (PricingMode::FreeMicroVip, Amount::ZERO)
    } else if micro && low_cost {
        let with_margin = payout_cost
            .checked_add(i.amount.bps(p.standard_margin_bps))
            .unwrap_or(payout_cost);
        let capped = with_margin.min(i.amount.bps(p.standard_cap_bps));
        (PricingMode::MicroStandard, floor(capped))
    } else if i.dest_float.0 > i.source_float.0.saturating_mul(U256::from(2u8)) {
        (
            PricingMode::RebalancingDiscount,
            floor(i.amount.bps(p.rebalance_bps)),
        )
    } else {
        (PricingMode::Base, floor(i.amount.bps(p.base_bps)))
    };
    let amount_out = i
        .amount
        .checked_sub(fee)
        .filter(|o| !o.is_zero())
        .ok_or_else(|| {
            format!(
                "amount {} does not cover the destination payout cost {}",
                i.amount, payout_cost
            )
        })?;
    if amount_out > cap_now {
        return Err(format!(
            "amount {amount_out} is above capNow {cap_now} (25% of destination float)"
        ));
    }
    Ok(FloatPrice {
        mode,
        fee,
        amount_out,
        cap_now,
        payout_cost,
        free_tier_failed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn inputs(amount: u128, member: bool, gwei: u64) -> FloatInputs {
        FloatInputs {
            amount: Amount::from_u128(amount),
            decimals: 6,
            member,
            dest_float: Amount::from_u128(1_000_000_000_000),
            source_float: Amount::from_u128(1_000_000_000_000),
            gas_price_wei: U256::from(gwei) * U256::from(1_000_000_000u64),
            native_usd_e6: 3_000_000_000,
        }
    }

    #[test]
    fn member_micro_to_cheap_chain_is_free() {
        // 0.01 gwei * 65k gas * $3000 = $0.00195: low-cost.
        let mut i = inputs(5_000_000, true, 0);
        i.gas_price_wei = U256::from(10_000_000u64);
        let p = price(&PricingParams::default(), &i).unwrap();
        assert_eq!(p.mode, PricingMode::FreeMicroVip);
        assert_eq!(p.fee, Amount::ZERO);
        assert_eq!(p.amount_out, i.amount);
        assert_eq!(p.free_tier_failed, None);
    }

    #[test]
    fn non_member_micro_pays_cost_plus_margin_floored_at_cost() {
        let mut i = inputs(20_000_000, false, 0);
        i.gas_price_wei = U256::from(10_000_000u64);
        let p = price(&PricingParams::default(), &i).unwrap();
        assert_eq!(p.mode, PricingMode::MicroStandard);
        assert_eq!(p.free_tier_failed, Some("membership"));
        assert_eq!(p.payout_cost, Amount::from_u128(1_950));
        // cost 1950 + 2 bps (4000) = 5950, capped at 8 bps (16000): 5950.
        assert_eq!(p.fee, Amount::from_u128(5_950));
    }

    #[test]
    fn expensive_destination_fails_the_free_tier_and_pays_base() {
        let p = price(&PricingParams::default(), &inputs(5_000_000, true, 20)).unwrap();
        assert_eq!(p.free_tier_failed, Some("destination-cost"));
        assert_eq!(p.mode, PricingMode::Base);
        // 20 gwei * 65k * $3000 = $3.90 payout: floor wins over 10 bps.
        assert_eq!(p.fee, Amount::from_u128(3_900_000));
    }

    #[test]
    fn above_cap_now_is_not_served() {
        let mut i = inputs(300_000_000_000, false, 0);
        i.gas_price_wei = U256::from(1u8);
        let err = price(&PricingParams::default(), &i).unwrap_err();
        assert!(err.contains("capNow"), "{err}");
    }

    #[test]
    fn rebalancing_transfer_gets_the_discount() {
        let mut i = inputs(100_000_000, false, 0);
        i.gas_price_wei = U256::from(1u8);
        i.source_float = Amount::from_u128(1_000);
        let p = price(&PricingParams::default(), &i).unwrap();
        assert_eq!(p.mode, PricingMode::RebalancingDiscount);
        assert_eq!(p.fee, Amount::from_u128(30_000));
    }

    proptest! {
        #[test]
        fn fee_floor_and_cap_hold(amount in 1u128..10_000_000_000, gas in 0u64..100_000_000_000, member: bool) {
            let mut i = inputs(amount, member, 0);
            i.gas_price_wei = U256::from(gas);
            let params = PricingParams::default();
            if let Ok(p) = price(&params, &i) {
                prop_assert_eq!(p.fee.checked_add(p.amount_out), Some(i.amount));
                prop_assert!(p.amount_out <= p.cap_now);
                if p.mode != PricingMode::FreeMicroVip {
                    prop_assert!(p.fee >= p.payout_cost);
                }
                if p.mode == PricingMode::MicroStandard {
                    prop_assert!(p.fee <= i.amount.bps(params.standard_cap_bps).max(p.payout_cost));
                }
            }
        }
    }
}
