//! The one pricing rule every simulator uses: a flat simulated bridge fee,
//! taken from the source amount, then a conversion into the destination
//! asset. Fixed devnet prices: stablecoins at par, 1 BTC = [`BTC_USD`] USD,
//! WBTC 1:1 with BTC. Integer smallest units throughout, never floats.
//!
//! The three aggregators charge different fees ([`fee_bps`]) so that the
//! devnet's best-of-N has something to rank: LI.FI 10 bps, Bungee 12 bps,
//! Squid 15 bps; the other upstreams [`FEE_BPS`].

use crate::Upstream;
use alloy::primitives::U256;

/// The simulated bridge fee of every upstream but the aggregators, basis
/// points of the source amount.
pub const FEE_BPS: u64 = 10;

/// `u`'s simulated bridge fee, basis points of the source amount.
pub fn fee_bps(u: Upstream) -> u64 {
    match u {
        Upstream::Bungee => 12,
        Upstream::Squid => 15,
        _ => FEE_BPS,
    }
}

/// The devnet's fixed bitcoin price, USD.
pub const BTC_USD: u64 = 100_000;

/// Decimals of BTC (sats).
pub const BTC_DECIMALS: u8 = 8;

/// A priced amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priced {
    /// Delivered, destination smallest units.
    pub out: U256,
    /// The bridge fee, source smallest units.
    pub fee: U256,
}

/// How a source amount turns into a destination amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// The same asset (or assets at par) with these decimals.
    Par {
        /// Source decimals.
        from: u8,
        /// Destination decimals.
        to: u8,
    },
    /// A USD stablecoin with these decimals into BTC.
    UsdToBtc {
        /// The stablecoin's decimals.
        usd: u8,
    },
    /// BTC into a USD stablecoin with these decimals.
    BtcToUsd {
        /// The stablecoin's decimals.
        usd: u8,
    },
}

fn pow10(d: u8) -> U256 {
    U256::from(10u8).pow(U256::from(d))
}

/// `amount` from `from` decimals into `to` decimals (rounding down).
pub fn rescale(amount: U256, from: u8, to: u8) -> U256 {
    if to >= from {
        amount * pow10(to - from)
    } else {
        amount / pow10(from - to)
    }
}

/// `amount` less `bps` basis points, rounding down (the minimum a quote promises).
pub fn less_bps(amount: U256, bps: u64) -> U256 {
    amount * U256::from(10_000u64.saturating_sub(bps)) / U256::from(10_000u64)
}

/// `amount` smallest units as a decimal string with `decimals` places,
/// trailing zeros trimmed (`1500000`, 6 → `"1.5"`), for APIs that also
/// report human amounts.
pub fn format_units(amount: U256, decimals: u8) -> String {
    let s = amount.to_string();
    let d = usize::from(decimals);
    if d == 0 {
        return s;
    }
    let padded = format!("{s:0>width$}", width = d + 1);
    let (int, frac) = padded.split_at(padded.len() - d);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

/// The simulated bridge fee on `amount`, source units.
pub fn fee(amount: U256) -> U256 {
    fee_at(amount, FEE_BPS)
}

fn fee_at(amount: U256, bps: u64) -> U256 {
    amount * U256::from(bps) / U256::from(10_000u64)
}

impl Rate {
    /// Prices `amount` at [`FEE_BPS`]: the fee comes off first, the rest converts.
    pub fn price(self, amount: U256) -> Priced {
        self.price_at(amount, FEE_BPS)
    }

    /// Prices `amount` with a fee of `bps`.
    pub fn price_at(self, amount: U256, bps: u64) -> Priced {
        let fee = fee_at(amount, bps);
        let net = amount - fee;
        let btc_usd = U256::from(BTC_USD);
        let out = match self {
            Rate::Par { from, to } => rescale(net, from, to),
            Rate::UsdToBtc { usd } => net * pow10(BTC_DECIMALS) / (pow10(usd) * btc_usd),
            Rate::BtcToUsd { usd } => net * pow10(usd) * btc_usd / pow10(BTC_DECIMALS),
        };
        Priced { out, fee }
    }

    /// The rate between two asset symbols with their decimals, when the
    /// devnet prices that pair.
    pub fn between(from: (&str, u8), to: (&str, u8)) -> Option<Rate> {
        let stable = |s: &str| matches!(s, "USDC" | "USDT");
        let btc = |s: &str| matches!(s, "BTC" | "WBTC");
        match (from.0, to.0) {
            (a, b) if a == b => Some(Rate::Par {
                from: from.1,
                to: to.1,
            }),
            (a, b) if stable(a) && stable(b) => Some(Rate::Par {
                from: from.1,
                to: to.1,
            }),
            (a, b) if btc(a) && btc(b) => Some(Rate::Par {
                from: from.1,
                to: to.1,
            }),
            (a, b) if stable(a) && btc(b) => Some(Rate::UsdToBtc { usd: from.1 }),
            (a, b) if btc(a) && stable(b) => Some(Rate::BtcToUsd { usd: to.1 }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u64) -> U256 {
        U256::from(v)
    }

    #[test]
    fn the_fee_comes_off_the_source_amount() {
        let p = Rate::Par { from: 6, to: 6 }.price(u(10_000_000));
        assert_eq!(
            p,
            Priced {
                out: u(9_990_000),
                fee: u(10_000)
            }
        );
    }

    #[test]
    fn par_rescales_between_decimals() {
        assert_eq!(
            Rate::Par { from: 6, to: 18 }.price(u(1_000_000)).out,
            u(999_000) * pow10(12)
        );
        assert_eq!(
            Rate::Par { from: 8, to: 6 }.price(u(100_000_000)).out,
            u(999_000)
        );
    }

    #[test]
    fn ten_thousand_usdc_buy_a_tenth_of_a_bitcoin_less_the_fee() {
        let p = Rate::UsdToBtc { usd: 6 }.price(u(10_000_000_000));
        assert_eq!(p.out, u(9_990_000));
        let back = Rate::BtcToUsd { usd: 6 }.price(u(100_000));
        assert_eq!(back.out, u(99_900_000));
    }

    #[test]
    fn fees_never_exceed_the_amount_and_output_is_monotonic() {
        let rate = Rate::Par { from: 6, to: 6 };
        let mut last = U256::ZERO;
        for a in [0u64, 1, 9, 10, 999, 1_000, 10_001, 123_456_789] {
            let p = rate.price(u(a));
            assert!(p.fee <= u(a));
            assert!(p.out >= last);
            last = p.out;
        }
    }

    #[test]
    fn pairs_the_devnet_does_not_price_have_no_rate() {
        assert_eq!(Rate::between(("USDC", 6), ("ETH", 18)), None);
        assert!(Rate::between(("USDT", 6), ("USDC", 6)).is_some());
        assert_eq!(
            Rate::between(("WBTC", 8), ("BTC", 8)),
            Some(Rate::Par { from: 8, to: 8 })
        );
    }

    #[test]
    fn format_units_is_exact() {
        assert_eq!(format_units(u(1_500_000), 6), "1.5");
        assert_eq!(format_units(u(7), 6), "0.000007");
        assert_eq!(format_units(u(2_000_000), 6), "2");
        assert_eq!(format_units(u(42), 0), "42");
    }

    #[test]
    fn less_bps_rounds_down() {
        assert_eq!(less_bps(u(9_990_000), 50), u(9_940_050));
        assert_eq!(less_bps(u(3), 20_000), U256::ZERO);
    }
}
