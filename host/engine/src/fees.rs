//! Fee maths (spec §2.6, §8.2; DESIGN "The engine"): pure integer
//! arithmetic, no I/O, no floats. Every rail's answer is netted the same
//! way, so ranking compares like with like:
//!
//! ```text
//! net = rail amount_out − route fee − relayer gas − rail fees not yet deducted
//! ```
//!
//! - **Route fee**: `amount × bps / 10000`, rounded down, withheld from the
//!   token in flight (never native gas): 25 bps, members 15 bps. Reported in
//!   source units (`relayRouteFee`); deducted from the output after
//!   conversion into the destination token (see [`Conversion`]).
//! - **Relayer gas**: every chain the relayer broadcasts on contributes
//!   `units × gas price (wei) × native-asset USD price`; the sum, plus the
//!   markup (25 %, members 10 %), is divided by the destination token's USD
//!   price and rounded **up**. Stablecoins are priced at par; a chain's
//!   native asset at its native price, so a native-token route pays gas 1:1
//!   in wei.
//! - **Rail fees**: as the rail reports them; fees marked `included` are
//!   already out of `amount_out`, the others are deducted here.
//!
//! Products are taken in 512 bits and saturate, so no input overflows; a
//! route whose fees reach its output nets zero and is not viable.

use alloy::primitives::{U256, U512};
use relay_config::QuoteConfig;
use relay_plugin_api::Amount;

/// Basis points in one whole.
pub const BPS: u32 = 10_000;

/// What one fee tier charges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tier {
    /// Route fee, bps of the amount (≤ 10000).
    pub route_fee_bps: u32,
    /// Markup over gas cost, bps (≤ 10000).
    pub gas_markup_bps: u32,
}

/// The standard and member tiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeeSchedule {
    /// Anyone.
    pub standard: Tier,
    /// Holders of a recognised membership.
    pub member: Tier,
}

impl FeeSchedule {
    /// From configuration, clamped: no rate above 100 %, and a member never
    /// pays more than the standard tier.
    pub fn from_config(q: &QuoteConfig) -> Self {
        let standard = Tier {
            route_fee_bps: q.route_fee_bps.min(BPS),
            gas_markup_bps: q.gas_markup_bps.min(BPS),
        };
        FeeSchedule {
            standard,
            member: Tier {
                route_fee_bps: q.member_route_fee_bps.min(standard.route_fee_bps),
                gas_markup_bps: q.member_gas_markup_bps.min(standard.gas_markup_bps),
            },
        }
    }

    /// The tier that applies.
    pub fn tier(&self, member: bool) -> Tier {
        if member {
            self.member
        } else {
            self.standard
        }
    }
}

/// Gas the relayer burns on one chain, with the prices to value it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GasSpend {
    /// Gas units.
    pub units: u64,
    /// Gas price, wei.
    pub price_wei: U256,
    /// The chain's native asset, micro-USD per whole unit (10^18 wei).
    pub native_usd_e6: u64,
}

/// A token's USD price and decimals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenPrice {
    /// Micro-USD per whole token.
    pub usd_e6: u64,
    /// Decimals of its smallest unit.
    pub decimals: u8,
}

/// How an amount in source units becomes destination units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversion {
    /// The same asset on both sides: only decimals change.
    Par {
        /// Source decimals.
        from_decimals: u8,
        /// Destination decimals.
        to_decimals: u8,
    },
    /// Different assets: at the quote's own rate `amount_out / amount_in`.
    Rate {
        /// Source amount quoted.
        amount_in: Amount,
        /// Destination amount quoted.
        amount_out: Amount,
    },
}

fn pow10(exp: u32) -> U512 {
    U512::from(10u8).saturating_pow(U512::from(exp))
}

fn narrow(v: U512) -> Amount {
    Amount(U256::checked_from_limbs_slice(v.as_limbs()).unwrap_or(U256::MAX))
}

impl Conversion {
    /// How `from` units become `to` units for a rail's answer: at par when
    /// the symbols agree (only decimals change), else at the answer's rate.
    pub fn between(
        from: &relay_plugin_api::Token,
        to: &relay_plugin_api::Token,
        amount_in: Amount,
        amount_out: Amount,
    ) -> Self {
        if from.symbol.eq_ignore_ascii_case(&to.symbol) {
            Conversion::Par {
                from_decimals: from.decimals,
                to_decimals: to.decimals,
            }
        } else {
            Conversion::Rate {
                amount_in,
                amount_out,
            }
        }
    }

    /// The way back: destination units to source units.
    pub fn inverse(self) -> Self {
        match self {
            Conversion::Par {
                from_decimals,
                to_decimals,
            } => Conversion::Par {
                from_decimals: to_decimals,
                to_decimals: from_decimals,
            },
            Conversion::Rate {
                amount_in,
                amount_out,
            } => Conversion::Rate {
                amount_in: amount_out,
                amount_out: amount_in,
            },
        }
    }

    /// `amount` (source units) in destination units, rounded down.
    pub fn apply(self, amount: Amount) -> Amount {
        match self {
            Conversion::Par {
                from_decimals,
                to_decimals,
            } => {
                let a = U512::from(amount.0);
                if to_decimals >= from_decimals {
                    narrow(a.saturating_mul(pow10(u32::from(to_decimals - from_decimals))))
                } else {
                    narrow(a / pow10(u32::from(from_decimals - to_decimals)))
                }
            }
            Conversion::Rate {
                amount_in,
                amount_out,
            } => amount
                .mul_div(amount_out.0, amount_in.0)
                .unwrap_or(Amount::ZERO),
        }
    }
}

/// The route fee in source units: `amount × bps / 10000`, rounded down.
pub fn route_fee(amount: Amount, bps: u32) -> Amount {
    amount.bps(bps.min(BPS))
}

/// Relayer gas with `markup_bps` on top, in units of `token`, rounded up;
/// `None` when the token has no price.
pub fn gas_fee(spends: &[GasSpend], markup_bps: u32, token: TokenPrice) -> Option<Amount> {
    if token.usd_e6 == 0 {
        return None;
    }
    // Every quote nets every rail's gas: in 128 bits when the product fits
    // there (a 6-decimal token almost always), else in 512.
    Some(
        gas_fee_narrow(spends, markup_bps, token)
            .unwrap_or_else(|| gas_fee_wide(spends, markup_bps, token)),
    )
}

/// [`gas_fee`] in 128-bit integers; `None` when an intermediate overflows.
fn gas_fee_narrow(spends: &[GasSpend], markup_bps: u32, token: TokenPrice) -> Option<Amount> {
    let cost = spends.iter().try_fold(0u128, |acc, s| {
        let wei = u128::try_from(s.price_wei)
            .ok()?
            .checked_mul(u128::from(s.units))?;
        acc.checked_add(wei.checked_mul(u128::from(s.native_usd_e6))?)
    })?;
    let num = cost
        .checked_mul(u128::from(BPS + markup_bps.min(BPS)))?
        .checked_mul(10u128.checked_pow(u32::from(token.decimals))?)?;
    let den = 10u128
        .pow(18)
        .checked_mul(u128::from(BPS))?
        .checked_mul(u128::from(token.usd_e6))?;
    Some(Amount::from_u128(num.div_ceil(den)))
}

/// [`gas_fee`] in 512-bit integers (saturating).
fn gas_fee_wide(spends: &[GasSpend], markup_bps: u32, token: TokenPrice) -> Amount {
    let cost = spends.iter().fold(U512::ZERO, |acc, s| {
        let wei = U512::from(s.price_wei).saturating_mul(U512::from(s.units));
        acc.saturating_add(wei.saturating_mul(U512::from(s.native_usd_e6)))
    });
    let num = cost
        .saturating_mul(U512::from(BPS + markup_bps.min(BPS)))
        .saturating_mul(pow10(u32::from(token.decimals)));
    let den = pow10(18)
        .saturating_mul(U512::from(BPS))
        .saturating_mul(U512::from(token.usd_e6));
    narrow(num.div_ceil(den))
}

/// Everything deducted from a rail's output, destination units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deductions {
    /// The route fee, converted.
    pub route_fee: Amount,
    /// Relayer gas with markup.
    pub gas_fee: Amount,
    /// Rail fees not already in `amount_out`.
    pub rail_fees: Amount,
}

impl Deductions {
    /// Their sum (saturating).
    pub fn total(&self) -> Amount {
        let sum = U512::from(self.route_fee.0)
            .saturating_add(U512::from(self.gas_fee.0))
            .saturating_add(U512::from(self.rail_fees.0));
        narrow(sum)
    }
}

/// What the recipient gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Net {
    /// Expected delivery.
    pub estimated: Amount,
    /// Guaranteed minimum (never above `estimated`).
    pub min: Amount,
}

impl Net {
    /// Whether anything arrives at all.
    pub fn viable(&self) -> bool {
        !self.estimated.is_zero()
    }
}

/// Nets a rail's `amount_out` and `min_out` (floored at zero).
pub fn net(amount_out: Amount, min_out: Amount, d: &Deductions) -> Net {
    let total = d.total();
    let estimated = amount_out.saturating_sub(total);
    Net {
        estimated,
        min: min_out.min(amount_out).saturating_sub(total),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn usdc() -> TokenPrice {
        TokenPrice {
            usd_e6: 1_000_000,
            decimals: 6,
        }
    }

    #[test]
    fn route_fee_is_25_bps_and_15_for_members() {
        let s = FeeSchedule::from_config(&QuoteConfig::default());
        let a = Amount::from_u128(5_000_000);
        assert_eq!(
            route_fee(a, s.tier(false).route_fee_bps),
            Amount::from_u128(12_500)
        );
        assert_eq!(
            route_fee(a, s.tier(true).route_fee_bps),
            Amount::from_u128(7_500)
        );
    }

    #[test]
    fn gas_is_cost_plus_markup_in_the_token_rounded_up() {
        // 90k gas at 1 gwei at 3000 USD = 0.27 USD; +25 % = 0.3375 USD.
        let spend = GasSpend {
            units: 90_000,
            price_wei: U256::from(1_000_000_000u64),
            native_usd_e6: 3_000_000_000,
        };
        assert_eq!(
            gas_fee(&[spend], 2_500, usdc()),
            Some(Amount::from_u128(337_500))
        );
        assert_eq!(
            gas_fee(&[spend], 1_000, usdc()),
            Some(Amount::from_u128(297_000))
        );
        // Paid in the native asset itself: wei 1:1 plus markup.
        let eth = TokenPrice {
            usd_e6: 3_000_000_000,
            decimals: 18,
        };
        assert_eq!(
            gas_fee(&[spend], 0, eth),
            Some(Amount::from_u128(90_000_000_000_000))
        );
        // One wei of cost still costs one smallest unit.
        let tiny = GasSpend {
            units: 1,
            price_wei: U256::from(1u8),
            native_usd_e6: 1,
        };
        assert_eq!(gas_fee(&[tiny], 0, usdc()), Some(Amount::from_u128(1)));
        assert_eq!(
            gas_fee(
                &[spend],
                0,
                TokenPrice {
                    usd_e6: 0,
                    decimals: 6
                }
            ),
            None
        );
    }

    #[test]
    fn conversions_rescale_at_par_or_use_the_quote_rate() {
        let par = Conversion::Par {
            from_decimals: 6,
            to_decimals: 18,
        };
        assert_eq!(
            par.apply(Amount::from_u128(1)),
            Amount::from_u128(1_000_000_000_000)
        );
        let down = Conversion::Par {
            from_decimals: 18,
            to_decimals: 6,
        };
        assert_eq!(
            down.apply(Amount::from_u128(1_999_999_999_999)),
            Amount::from_u128(1)
        );
        let rate = Conversion::Rate {
            amount_in: Amount::from_u128(100),
            amount_out: Amount::from_u128(50),
        };
        assert_eq!(rate.apply(Amount::from_u128(10)), Amount::from_u128(5));
    }

    #[test]
    fn fees_that_reach_the_output_net_zero() {
        let d = Deductions {
            route_fee: Amount::from_u128(10),
            gas_fee: Amount::from_u128(95),
            rail_fees: Amount::ZERO,
        };
        let n = net(Amount::from_u128(100), Amount::from_u128(100), &d);
        assert!(!n.viable());
        assert_eq!(n.min, Amount::ZERO);
    }

    fn amount() -> impl Strategy<Value = Amount> {
        any::<[u64; 4]>().prop_map(Amount::from_limbs)
    }

    proptest! {
        #[test]
        fn narrow_gas_fee_is_the_wide_one(
            spends in proptest::collection::vec((0u64..10_000_000, 0u128..1u128 << 80, 0u64..1u64 << 40), 0..3),
            markup in 0u32..20_000, usd_e6 in 1u64..u64::MAX, decimals in 0u8..40,
        ) {
            let spends: Vec<GasSpend> = spends.into_iter().map(|(units, wei, native)| GasSpend {
                units, price_wei: U256::from(wei), native_usd_e6: native,
            }).collect();
            let token = TokenPrice { usd_e6, decimals };
            if let Some(narrow) = gas_fee_narrow(&spends, markup, token) {
                prop_assert_eq!(narrow, gas_fee_wide(&spends, markup, token));
            }
        }

        #[test]
        fn route_fee_never_exceeds_its_cap(a in amount(), bps in 0u32..=20_000) {
            let fee = route_fee(a, bps);
            prop_assert!(fee <= a);
            prop_assert!(fee <= a.bps(bps.min(BPS)));
            let s = FeeSchedule::from_config(&QuoteConfig::default());
            prop_assert!(route_fee(a, s.member.route_fee_bps) <= route_fee(a, s.standard.route_fee_bps));
        }

        #[test]
        fn gas_markup_never_exceeds_its_cap_and_members_pay_less(
            units in any::<u64>(), price in any::<[u64; 4]>(), usd in any::<u64>(),
            token_usd in 1u64.., decimals in 0u8..=36, markup in 0u32..=20_000,
        ) {
            let spend = [GasSpend { units, price_wei: U256::from_limbs(price), native_usd_e6: usd }];
            let token = TokenPrice { usd_e6: token_usd, decimals };
            let at_cost = gas_fee(&spend, 0, token).unwrap();
            let marked = gas_fee(&spend, markup, token).unwrap();
            let capped = gas_fee(&spend, BPS, token).unwrap();
            prop_assert!(at_cost <= marked && marked <= capped);
            let s = FeeSchedule::from_config(&QuoteConfig::default());
            prop_assert!(gas_fee(&spend, s.member.gas_markup_bps, token) <= gas_fee(&spend, s.standard.gas_markup_bps, token));
        }

        #[test]
        fn net_is_output_minus_every_fee_and_never_underflows(
            out in amount(), min in amount(), r in amount(), g in amount(), f in amount(),
        ) {
            let d = Deductions { route_fee: r, gas_fee: g, rail_fees: f };
            let n = net(out, min, &d);
            prop_assert!(n.estimated <= out);
            prop_assert!(n.min <= n.estimated);
            if let Some(sum) = r.checked_add(g).and_then(|x| x.checked_add(f)) {
                if sum <= out {
                    prop_assert_eq!(n.estimated.checked_add(sum), Some(out));
                } else {
                    prop_assert!(!n.viable());
                }
            }
        }

        #[test]
        fn conversions_never_panic(a in amount(), from in 0u8..=255, to in 0u8..=255, i in amount(), o in amount()) {
            let _ = Conversion::Par { from_decimals: from, to_decimals: to }.apply(a);
            let c = Conversion::Rate { amount_in: i, amount_out: o }.apply(a);
            if o <= i { prop_assert!(c <= a || i.is_zero()); }
        }
    }
}
