//! Integer quantities as upstreams write them, and slippage as they want it.
//!
//! Upstreams disagree on how to spell an integer: LI.FI writes transaction
//! values and gas limits as `0x`-hex strings, Squid as decimal strings,
//! Socket mixes both and sometimes sends JSON numbers. [`Quantity`] accepts
//! all three (never a fraction, a sign or an exponent) and turns them into an
//! [`Amount`] once, at the edge.

use std::fmt;

use relay_plugin_api::{Amount, U256};
use serde::{Deserialize, Deserializer};

/// An unsigned integer from an upstream: a decimal string (`"21000"`), a
/// `0x`-hex string (`"0x5208"`, `"0x"` is zero) or a JSON integer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity(pub Amount);

impl Quantity {
    /// The value as `u64` when it fits (gas limits, durations).
    pub fn to_u64(self) -> Option<u64> {
        u64::try_from(self.0 .0).ok()
    }
}

/// Parses a decimal or `0x`-hex integer string.
pub fn parse_quantity(s: &str) -> Option<Amount> {
    let t = s.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some("") => Some(Amount::ZERO),
        Some(hex) if hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            U256::from_str_radix(hex, 16).ok().map(Amount)
        }
        Some(_) => None,
        None => t.parse().ok(),
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an unsigned integer as a decimal or 0x-hex string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
                parse_quantity(v)
                    .map(Quantity)
                    .ok_or_else(|| E::custom(format!("{:?} is not an unsigned integer", trim(v))))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity(Amount::from_u128(v.into())))
            }
        }
        d.deserialize_any(V)
    }
}

fn trim(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Basis points as a decimal fraction without floats: `50` → `"0.005"`,
/// `10_000` → `"1"` (LI.FI's `slippage`).
pub fn bps_to_fraction(bps: u32) -> String {
    decimal(bps, 4)
}

/// Basis points as a percentage without floats: `50` → `"0.5"`, `100` → `"1"`
/// (Squid's `slippage`, Socket's `defaultBridgeSlippage`).
pub fn bps_to_percent(bps: u32) -> String {
    decimal(bps, 2)
}

/// `v / 10^scale` written as a plain decimal with no trailing zeros.
fn decimal(v: u32, scale: u32) -> String {
    let div = 10u32.pow(scale);
    let (int, frac) = (v / div, v % div);
    if frac == 0 {
        return int.to_string();
    }
    let frac = format!("{frac:0width$}", width = scale as usize);
    format!("{int}.{}", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_accept_decimal_hex_and_numbers_only() {
        let q = |s: &str| serde_json::from_str::<Quantity>(s).map(|q| q.0);
        assert_eq!(q("\"21000\"").unwrap(), Amount::from_u128(21_000));
        assert_eq!(q("\"0x5208\"").unwrap(), Amount::from_u128(21_000));
        assert_eq!(q("\"0x\"").unwrap(), Amount::ZERO);
        assert_eq!(q("\"0x00\"").unwrap(), Amount::ZERO);
        assert_eq!(q("21000").unwrap(), Amount::from_u128(21_000));
        for bad in ["\"-1\"", "\"1.5\"", "1.5", "\"0xzz\"", "\"\"", "-3", "null"] {
            assert!(q(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn slippage_is_written_without_floats() {
        assert_eq!(bps_to_fraction(50), "0.005");
        assert_eq!(bps_to_fraction(1), "0.0001");
        assert_eq!(bps_to_fraction(10_000), "1");
        assert_eq!(bps_to_fraction(0), "0");
        assert_eq!(bps_to_percent(50), "0.5");
        assert_eq!(bps_to_percent(100), "1");
        assert_eq!(bps_to_percent(125), "1.25");
        assert_eq!(bps_to_percent(3), "0.03");
    }
}
