//! What both sides of the ABI write and read: requests (host) and replies
//! (plugin) as MessagePack on the packed entry, as JSON on the original
//! one and for the manifest.
//!
//! MessagePack, not JSON, on the per-call path: a string crosses as its
//! length and bytes (a copy) rather than escaped on one side and scanned
//! for escapes on the other, and numbers as binary. The format is
//! self-describing and structs travel as maps keyed by their serde names,
//! so every serde shape of the contract types round-trips (an untagged
//! `ChainRef`, a free-form `detail` value, skipped optional fields) and a
//! field added in a minor version is ignored by an older reader, as in
//! JSON.

use serde::{de::DeserializeOwned, Serialize};

/// What a buffer starts with: a typical rail request or reply (a quote
/// request with its addresses, a quote with its fees) fits.
const CAPACITY: usize = 2048;

/// `value` as JSON, written into one buffer sized for a rail message
/// rather than grown from empty (one allocation instead of a chain of
/// reallocations and copies on every call).
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut buf = Vec::with_capacity(CAPACITY);
    serde_json::to_writer(&mut buf, value)?;
    String::from_utf8(buf).map_err(<serde_json::Error as serde::ser::Error>::custom)
}

/// Why a MessagePack message could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The value cannot be written.
    #[error(transparent)]
    Encode(#[from] rmp_serde::encode::Error),
    /// The bytes are not a message of the expected type.
    #[error(transparent)]
    Decode(#[from] rmp_serde::decode::Error),
}

/// `value` as MessagePack, structs as maps keyed by field name.
pub fn to_packed<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, PackError> {
    let mut buf = Vec::with_capacity(CAPACITY);
    rmp_serde::encode::write_named(&mut buf, value)?;
    Ok(buf)
}

/// A value read from the MessagePack [`to_packed`] writes.
pub fn from_packed<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, PackError> {
    Ok(rmp_serde::from_slice(bytes)?)
}

#[cfg(test)]
mod tests {
    use relay_plugin_api::{
        Amount, ChainRef, GasEstimate, NonEvmNode, QuoteRequest, RailError, RailQuote, Token,
    };

    use super::*;

    #[test]
    fn writes_what_serde_json_writes() {
        let v = serde_json::json!({"a": "é\"\n", "b": [1, 2], "c": "x".repeat(5000)});
        assert_eq!(to_json(&v).unwrap(), serde_json::to_string(&v).unwrap());
    }

    fn token(symbol: &str, address: Option<&str>) -> Token {
        Token {
            symbol: symbol.into(),
            address: address.map(Into::into),
            decimals: 6,
        }
    }

    /// The contract's serde shapes survive the packed wire: an EVM and a
    /// named chain, absent options, a U256 amount, a free-form detail
    /// value with nested numbers, strings and nulls.
    #[test]
    fn contract_types_round_trip() {
        let req = QuoteRequest {
            from_chain: ChainRef::Evm(8453),
            to_chain: ChainRef::NonEvm(NonEvmNode::Solana),
            from_token: token("USDC", Some("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")),
            to_token: token("USDC", None),
            amount: Amount::from_u128(u128::MAX),
            from_address: None,
            to_address: Some("So1ana".repeat(40)),
            slippage_bps: 30,
            member: true,
        };
        let back: QuoteRequest = from_packed(&to_packed(&req).unwrap()).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&req).unwrap()
        );

        let quote = RailQuote {
            rail: "echo".into(),
            lane: "evm->solana".into(),
            amount_in: Amount::from_u128(5_000_000),
            amount_out: Amount::from_u128(4_990_000),
            min_out: Amount::from_u128(4_980_000),
            fees: vec![],
            gas: Some(GasEstimate {
                chain: ChainRef::Evm(8453),
                gas_units: 180_000,
            }),
            duration_sec: 30,
            quote_only_reason: None,
            upstream_ref: Some("q-1".into()),
            expires_at_ms: u64::MAX,
            detail: serde_json::json!({
                "route": ["a", 1, -2, 2.5, null, true], "n": {"deep": "é\"x"}
            })
            .into(),
        };
        let back: RailQuote = from_packed(&to_packed(&quote).unwrap()).unwrap();
        assert_eq!(back, quote);

        let err = RailError::unsupported("no such lane");
        let back: RailError = from_packed(&to_packed(&err).unwrap()).unwrap();
        assert_eq!(back.message, err.message);
    }

    #[test]
    fn bytes_of_another_type_are_a_typed_error() {
        let packed = to_packed(&serde_json::json!({"unrelated": 1})).unwrap();
        assert!(matches!(
            from_packed::<QuoteRequest>(&packed),
            Err(PackError::Decode(_))
        ));
    }
}
