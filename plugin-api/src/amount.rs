//! Integer amounts in a token's smallest units.
//!
//! On the wire an amount is a decimal string (`"5000000"` is 5 USDC), inside
//! it is a [`U256`]. Floats never appear anywhere an amount does.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// 256-bit unsigned integer, the same type alloy calls `U256`.
pub type U256 = ruint::Uint<256, 4>;

/// A token amount in smallest units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(pub U256);

/// Why a string is not an amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Empty string.
    #[error("amount is empty")]
    Empty,
    /// Something other than decimal digits (signs, dots, exponents, hex).
    #[error("amount must be a decimal integer in smallest units, got {0:?}")]
    NotDecimal(String),
    /// More than 2^256 - 1.
    #[error("amount does not fit in 256 bits")]
    Overflow,
}

impl Amount {
    /// Zero.
    pub const ZERO: Amount = Amount(U256::ZERO);

    /// From a machine integer.
    pub fn from_u128(v: u128) -> Self {
        Amount(U256::from(v))
    }

    /// The amount as `u128` when it fits.
    pub fn to_u128(&self) -> Option<u128> {
        u128::try_from(self.0).ok()
    }

    /// Whether the amount is zero.
    pub fn is_zero(&self) -> bool {
        self.0.is_zero()
    }

    /// `self - other`, or `None` on underflow.
    pub fn checked_sub(self, other: Amount) -> Option<Amount> {
        self.0.checked_sub(other.0).map(Amount)
    }

    /// `self + other`, or `None` on overflow.
    pub fn checked_add(self, other: Amount) -> Option<Amount> {
        self.0.checked_add(other.0).map(Amount)
    }

    /// `self - other`, floored at zero.
    pub fn saturating_sub(self, other: Amount) -> Amount {
        Amount(self.0.saturating_sub(other.0))
    }

    /// `self * bps / 10_000`, rounded down. Never overflows: the product is
    /// taken in 512 bits (in 128 when it fits there, as a token amount
    /// almost always does).
    pub fn bps(self, bps: u32) -> Amount {
        if let Some(product) = self.to_u128().and_then(|a| a.checked_mul(u128::from(bps))) {
            return Amount::from_u128(product / 10_000);
        }
        let wide = ruint::Uint::<512, 8>::from(self.0) * ruint::Uint::<512, 8>::from(bps);
        let q = wide / ruint::Uint::<512, 8>::from(10_000u32);
        Amount(U256::wrapping_from_limbs_slice(q.as_limbs()))
    }

    /// `self * num / den`, rounded down; `None` when `den` is zero.
    pub fn mul_div(self, num: U256, den: U256) -> Option<Amount> {
        if den.is_zero() {
            return None;
        }
        let narrow = |x: U256| u128::try_from(x).ok();
        if let (Some(a), Some(n), Some(d)) = (self.to_u128(), narrow(num), narrow(den)) {
            if let Some(product) = a.checked_mul(n) {
                return Some(Amount::from_u128(product / d));
            }
        }
        let wide = ruint::Uint::<512, 8>::from(self.0) * ruint::Uint::<512, 8>::from(num);
        let q = wide / ruint::Uint::<512, 8>::from(den);
        U256::checked_from_limbs_slice(q.as_limbs()).map(Amount)
    }

    /// Little-endian 64-bit limbs (the WIT representation).
    pub fn to_limbs(&self) -> [u64; 4] {
        *self.0.as_limbs()
    }

    /// From little-endian 64-bit limbs.
    pub fn from_limbs(limbs: [u64; 4]) -> Self {
        Amount(U256::from_limbs(limbs))
    }
}

impl FromStr for Amount {
    type Err = AmountError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() {
            return Err(AmountError::Empty);
        }
        if !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(AmountError::NotDecimal(s.chars().take(40).collect()));
        }
        U256::from_str_radix(s, 10)
            .map(Amount)
            .map_err(|_| AmountError::Overflow)
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A token amount almost always fits in 128 bits, whose formatting
        // is a fraction of a 256-bit one's (every answer writes dozens).
        match self.to_u128() {
            Some(v) => f.pad_integral(true, "", itoa::Buffer::new().format(v)),
            None => fmt::Display::fmt(&self.0, f),
        }
    }
}

impl From<u128> for Amount {
    fn from(v: u128) -> Self {
        Amount::from_u128(v)
    }
}

impl Serialize for Amount {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.to_u128() {
            Some(v) => s.serialize_str(itoa::Buffer::new().format(v)),
            None => s.collect_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Amount;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a decimal string of smallest units")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Amount, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Amount, E> {
                Ok(Amount::from_u128(v as u128))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_decimal_and_rejects_everything_else() {
        assert_eq!(
            "5000000".parse::<Amount>().unwrap(),
            Amount::from_u128(5_000_000)
        );
        for bad in ["", "-1", "1.5", "1e6", "0x10", " 1", "５"] {
            assert!(bad.parse::<Amount>().is_err(), "{bad:?} accepted");
        }
        let max = U256::MAX.to_string();
        assert_eq!(max.parse::<Amount>().unwrap().0, U256::MAX);
        assert_eq!(
            format!("{max}0").parse::<Amount>(),
            Err(AmountError::Overflow)
        );
    }

    #[test]
    fn serde_is_a_decimal_string() {
        let a = Amount::from_u128(123);
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"123\"");
        assert_eq!(serde_json::from_str::<Amount>("\"123\"").unwrap(), a);
        assert!(serde_json::from_str::<Amount>("1.5").is_err());
    }

    proptest! {
        #[test]
        fn bps_never_exceeds_the_amount_and_never_overflows(limbs in any::<[u64; 4]>(), bps in 0u32..=10_000) {
            let a = Amount::from_limbs(limbs);
            let fee = a.bps(bps);
            prop_assert!(fee <= a);
            prop_assert_eq!(Amount::from_limbs(a.to_limbs()), a);
        }

        #[test]
        fn display_round_trips(limbs in any::<[u64; 4]>()) {
            let a = Amount::from_limbs(limbs);
            prop_assert_eq!(a.to_string().parse::<Amount>().unwrap(), a);
            prop_assert_eq!(a.to_string(), a.0.to_string());
        }

        #[test]
        fn token_sized_amounts_write_as_the_wide_number_does(v in any::<u128>(), wide in any::<[u64; 4]>()) {
            for a in [Amount::from_u128(v), Amount::from_limbs(wide)] {
                prop_assert_eq!(a.to_string(), a.0.to_string());
                prop_assert_eq!(format!("{a:>45}"), format!("{:>45}", a.0));
                prop_assert_eq!(serde_json::to_string(&a).unwrap(), format!("\"{}\"", a.0));
            }
        }

        #[test]
        fn narrow_arithmetic_matches_the_wide(
            a in any::<u128>(), n in any::<u128>(), d in 1u128.., bps in 0u32..=10_000, wide in any::<bool>(),
        ) {
            // Small values take the 128-bit path, the rest the 512-bit one;
            // both must give what the exact product and quotient give.
            let (a, n) = if wide { (a, n) } else { (a >> 64, n >> 64) };
            let exact = |x: u128, y: u128, z: u128| {
                let w = ruint::Uint::<512, 8>::from(x) * ruint::Uint::<512, 8>::from(y);
                U256::checked_from_limbs_slice((w / ruint::Uint::<512, 8>::from(z)).as_limbs())
            };
            let amount = Amount::from_u128(a);
            prop_assert_eq!(amount.mul_div(U256::from(n), U256::from(d)).map(|x| x.0), exact(a, n, d));
            prop_assert_eq!(Some(amount.bps(bps).0), exact(a, u128::from(bps), 10_000));
        }
    }
}
