//! The one pricing rule every simulator uses: a flat simulated bridge fee,
//! taken from the source amount, then a conversion into the destination
//! asset. Fixed devnet prices ([`usd_price`]): stablecoins at par,
//! 1 BTC = [`BTC_USD`] USD, WBTC 1:1 with BTC, 1 ETH = [`ETH_USD`] USD.
//! Integer smallest units throughout, never floats.
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

/// The devnet's fixed ether price, USD.
pub const ETH_USD: u64 = 3_000;

/// The fixed USD price of one whole unit of `symbol` (any case), when the
/// devnet prices it.
pub fn usd_price(symbol: &str) -> Option<u64> {
    match symbol.to_ascii_uppercase().as_str() {
        "USDC" | "USDT" => Some(1),
        "BTC" | "WBTC" => Some(BTC_USD),
        "ETH" => Some(ETH_USD),
        _ => None,
    }
}

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

/// An asset as [`Rate`] converts it: its fixed USD price and decimals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UsdAsset {
    /// USD per whole unit.
    pub usd: u64,
    /// Decimals.
    pub decimals: u8,
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
    /// Between assets of different fixed USD prices.
    Convert {
        /// The source asset.
        from: UsdAsset,
        /// The destination asset.
        to: UsdAsset,
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
        let out = match self {
            Rate::Par { from, to } => rescale(net, from, to),
            Rate::Convert { from, to } => {
                net * U256::from(from.usd) * pow10(to.decimals)
                    / (U256::from(to.usd) * pow10(from.decimals))
            }
        };
        Priced { out, fee }
    }

    /// The rate between two asset symbols with their decimals, when the
    /// devnet prices that pair: the same asset, or two assets with a
    /// [`usd_price`].
    pub fn between(from: (&str, u8), to: (&str, u8)) -> Option<Rate> {
        if from.0.eq_ignore_ascii_case(to.0) {
            return Some(Rate::Par {
                from: from.1,
                to: to.1,
            });
        }
        let (from_usd, to_usd) = (usd_price(from.0)?, usd_price(to.0)?);
        Some(if from_usd == to_usd {
            Rate::Par {
                from: from.1,
                to: to.1,
            }
        } else {
            Rate::Convert {
                from: UsdAsset {
                    usd: from_usd,
                    decimals: from.1,
                },
                to: UsdAsset {
                    usd: to_usd,
                    decimals: to.1,
                },
            }
        })
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
        let usdc_btc = Rate::between(("USDC", 6), ("BTC", 8)).unwrap();
        assert_eq!(usdc_btc.price(u(10_000_000_000)).out, u(9_990_000));
        let btc_usdt = Rate::between(("BTC", 8), ("USDT", 6)).unwrap();
        assert_eq!(btc_usdt.price(u(100_000)).out, u(99_900_000));
    }

    #[test]
    fn a_tenth_of_a_bitcoin_buys_ether_at_the_fixed_prices_less_the_fee() {
        // 0.1 BTC less 10 bps = 9,990 USD = 3.33 ETH.
        let btc_eth = Rate::between(("BTC", 8), ("ETH", 18)).unwrap();
        let out = btc_eth.price(u(10_000_000)).out;
        assert_eq!(out, u(333) * pow10(16));
        let back = Rate::between(("ETH", 18), ("USDC", 6)).unwrap();
        assert_eq!(back.price(pow10(18)).out, u(2_997_000_000));
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
        assert_eq!(Rate::between(("USDC", 6), ("DAI", 18)), None);
        assert_eq!(
            Rate::between(("dai", 18), ("DAI", 18)),
            Some(Rate::Par { from: 18, to: 18 })
        );
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
