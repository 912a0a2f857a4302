//! Reading an aggregator's estimate: the checks every answer must pass and
//! the fee, gas and duration conventions the rails share.

use relay_plugin_api::{Amount, ChainRef, Fee, FeeKind, GasEstimate, RailError};

use crate::{lane::is_native_placeholder, Upstream};

/// An upstream's estimate must be for the amount asked and promise no more
/// as a minimum than as an estimate.
pub fn check_amounts(
    upstream: &Upstream,
    asked: Amount,
    from_amount: Amount,
    to_amount: Amount,
    min_out: Amount,
) -> Result<(), RailError> {
    if from_amount != asked {
        return Err(upstream.malformed(format!(
            "quoted fromAmount {from_amount} for a request of {asked}"
        )));
    }
    if min_out > to_amount {
        return Err(upstream.malformed(format!(
            "minimum out {min_out} exceeds the estimate {to_amount}"
        )));
    }
    Ok(())
}

/// One fee as an upstream itemises it.
#[derive(Clone, Debug)]
pub struct UpstreamFee<'a> {
    /// The upstream's name for it (decides protocol vs bridge).
    pub name: &'a str,
    /// Amount in the fee token's smallest units.
    pub amount: Amount,
    /// Fee token symbol.
    pub symbol: &'a str,
    /// Fee token address (a native placeholder for the chain's gas token).
    pub address: Option<&'a str>,
    /// The upstream's own "already deducted" flag, when it gives one.
    pub included: Option<bool>,
}

impl UpstreamFee<'_> {
    /// The fee: a protocol fee when its name contains one of
    /// `protocol_words` (the upstream's and integrators' own cut), a bridge
    /// fee otherwise. Without the upstream's flag, a fee in the native asset
    /// is paid on top (through the transaction's value) and any other is
    /// already deducted from the output.
    pub fn to_fee(&self, protocol_words: &[&str]) -> Fee {
        let name = self.name.to_ascii_lowercase();
        let protocol = protocol_words.iter().any(|w| name.contains(w));
        let native = self.address.is_some_and(is_native_placeholder);
        Fee {
            kind: if protocol {
                FeeKind::Protocol
            } else {
                FeeKind::Bridge
            },
            amount: self.amount,
            token: self.symbol.to_ascii_uppercase(),
            included: self.included.unwrap_or(!native),
        }
    }
}

/// Source-chain gas: the sum of the upstream's per-step gas units, or the
/// transaction's gas limit when it itemises none.
pub fn gas(
    chain: ChainRef,
    per_step: impl IntoIterator<Item = Option<u64>>,
    gas_limit: Option<u64>,
) -> Option<GasEstimate> {
    let sum = per_step
        .into_iter()
        .flatten()
        .fold(0u64, u64::saturating_add);
    let gas_units = if sum == 0 { gas_limit? } else { sum };
    Some(GasEstimate { chain, gas_units })
}

/// Whole seconds from an upstream's (possibly fractional) duration, rounded up.
pub fn duration_secs(secs: f64) -> u32 {
    if secs.is_finite() && secs > 0.0 {
        secs.ceil().min(u32::MAX as f64) as u32
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fees_are_classified_and_flagged() {
        let f = UpstreamFee {
            name: "LIFI Fixed Fee",
            amount: Amount::from_u128(5),
            symbol: "usdc",
            address: Some("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
            included: None,
        }
        .to_fee(&["lifi"]);
        assert_eq!(
            (f.kind, f.included, f.token.as_str()),
            (FeeKind::Protocol, true, "USDC")
        );
        let native = UpstreamFee {
            name: "Gas receiver fee",
            amount: Amount::from_u128(5),
            symbol: "ETH",
            address: Some(crate::lane::NATIVE_EEEE),
            included: None,
        }
        .to_fee(&["squid"]);
        assert_eq!((native.kind, native.included), (FeeKind::Bridge, false));
    }

    #[test]
    fn gas_and_duration_conventions() {
        let c = ChainRef::Evm(1);
        assert_eq!(
            gas(c, [Some(1), None, Some(2)], Some(9)).unwrap().gas_units,
            3
        );
        assert_eq!(gas(c, [None], Some(9)).unwrap().gas_units, 9);
        assert!(gas(c, [], None).is_none());
        assert_eq!(duration_secs(12.1), 13);
        assert_eq!(duration_secs(-1.0), 0);
        assert_eq!(duration_secs(f64::NAN), 0);
    }
}
