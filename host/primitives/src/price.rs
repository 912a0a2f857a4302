//! Prices for conditionals: `<ASSET>/USD` in fixed point (18 decimals,
//! integers only — never floats), read through [`PriceSource`]. The host
//! implements it with the price book `GET /api/pricefeeds` shows (its
//! on-chain feeds, configured prices only where a pair has none).

/// Decimals of a [`Usd`] value.
pub const DECIMALS: u32 = 18;

/// A USD price, 18-decimal fixed point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Usd(pub u128);

impl Usd {
    /// Parses a positive decimal (`"2500"`, `"2500.125"`), at most 18
    /// fractional digits and 10^15 USD; no sign, exponent or spaces.
    pub fn parse(s: &str) -> Result<Usd, String> {
        let bad = || format!("{s:?} must be a positive decimal like \"2500\" or \"2500.5\"");
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !digits(int) || !digits(frac) || (s.contains('.') && frac.is_empty()) {
            return Err(bad());
        }
        if frac.len() > DECIMALS as usize {
            return Err(format!("{s:?} has more than {DECIMALS} decimal places"));
        }
        let int: u128 = int.parse().map_err(|_| bad())?;
        if int > 1_000_000_000_000_000 {
            return Err(format!("{s:?} is above 10^15 USD"));
        }
        let scale = 10u128.pow(DECIMALS - frac.len() as u32);
        let frac: u128 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| bad())?
        };
        let v = int * 10u128.pow(DECIMALS) + frac * scale;
        if v == 0 {
            return Err(format!("{s:?} must be above zero"));
        }
        Ok(Usd(v))
    }

    /// A feed answer of `decimals` decimals (`None` when it does not fit).
    pub fn from_answer(answer: u128, decimals: u32) -> Option<Usd> {
        if decimals <= DECIMALS {
            answer.checked_mul(10u128.pow(DECIMALS - decimals)).map(Usd)
        } else {
            Some(Usd(answer / 10u128.pow(decimals - DECIMALS)))
        }
    }
}

impl std::fmt::Display for Usd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let one = 10u128.pow(DECIMALS);
        let frac = format!("{:018}", self.0 % one);
        let frac = frac.trim_end_matches('0');
        match frac {
            "" => write!(f, "{}", self.0 / one),
            _ => write!(f, "{}.{frac}", self.0 / one),
        }
    }
}

/// Where conditionals read prices. `pair` is `<ASSET>/USD`, upper case.
#[cfg_attr(any(test, feature = "test-utils"), mockall::automock)]
#[auto_impl::auto_impl(&, Arc, Box)]
pub trait PriceSource: Send + Sync {
    /// The pair's current price, or `None` when the host has no usable
    /// answer for it (the conditional waits).
    fn usd(&self, pair: &str) -> Option<Usd>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_to_fixed_point_without_floats() {
        assert_eq!(Usd::parse("2500"), Ok(Usd(2_500 * 10u128.pow(18))));
        assert_eq!(Usd::parse("0.1").unwrap().0, 10u128.pow(17));
        assert_eq!(Usd::parse("2999.9999999999999999999").ok(), None);
        assert!(Usd::parse("2999.99").unwrap() < Usd::parse("3000").unwrap());
        assert_eq!(Usd::parse("2500.50").unwrap().to_string(), "2500.5");
        for bad in [
            "", "-1", "1e3", " 1", "1.", ".5", "0", "0.000", "abc", "1,5",
        ] {
            assert!(Usd::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Usd::from_answer(3_000_000_000, 6),
            Usd::parse("3000").ok(),
            "micro-USD feeds"
        );
        assert_eq!(
            Usd::from_answer(300_000_000_000, 8),
            Usd::parse("3000").ok()
        );
    }
}

/// Conditionals' prices from the host's price book, the one
/// `GET /api/pricefeeds` shows and quotes convert with (a pair's fresh,
/// positive on-chain feed; its configured price only when it has no feed).
#[derive(Debug)]
pub struct BookPrices(pub std::sync::Arc<relay_engine::oracle::PriceBook>);

impl PriceSource for BookPrices {
    fn usd(&self, pair: &str) -> Option<Usd> {
        let e6 = self.0.usd_e6(pair).ok()?;
        Usd::from_answer(u128::from(e6), 6).filter(|u| u.0 > 0)
    }
}
