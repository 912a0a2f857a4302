//! Nodes of the mesh: EVM chains by numeric id and the non-EVM nodes by name.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A non-EVM node of the mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NonEvmNode {
    /// Stellar.
    Stellar,
    /// Solana.
    Solana,
    /// Bitcoin (amounts in sats).
    Bitcoin,
    /// Tron (base58 `T…` addresses).
    Tron,
    /// Sui (quote-only).
    Sui,
}

impl NonEvmNode {
    /// Every non-EVM node, in display order.
    pub const ALL: [NonEvmNode; 5] = [
        NonEvmNode::Stellar,
        NonEvmNode::Solana,
        NonEvmNode::Bitcoin,
        NonEvmNode::Tron,
        NonEvmNode::Sui,
    ];

    /// The literal name used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            NonEvmNode::Stellar => "stellar",
            NonEvmNode::Solana => "solana",
            NonEvmNode::Bitcoin => "bitcoin",
            NonEvmNode::Tron => "tron",
            NonEvmNode::Sui => "sui",
        }
    }
}

/// A node: an EVM chain id or a non-EVM node name.
///
/// On the wire an EVM chain is an integer (or a numeric string, as query
/// strings carry it) and a non-EVM node is its literal name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChainRef {
    /// An EVM chain by chain id.
    Evm(u64),
    /// A non-EVM node.
    NonEvm(NonEvmNode),
}

/// Why a value is not a node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown chain {0:?}: expected an EVM chain id or one of stellar, solana, bitcoin, tron, sui"
)]
pub struct ChainRefError(pub String);

impl ChainRef {
    /// Whether this is an EVM chain.
    pub fn is_evm(&self) -> bool {
        matches!(self, ChainRef::Evm(_))
    }

    /// The EVM chain id, if any.
    pub fn evm_id(&self) -> Option<u64> {
        match self {
            ChainRef::Evm(id) => Some(*id),
            ChainRef::NonEvm(_) => None,
        }
    }

    /// `evm` for any EVM chain, the node name otherwise: the vocabulary of
    /// lane names such as `evm->bitcoin`.
    pub fn family(&self) -> &'static str {
        match self {
            ChainRef::Evm(_) => "evm",
            ChainRef::NonEvm(n) => n.as_str(),
        }
    }
}

impl FromStr for ChainRef {
    type Err = ChainRefError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if let Ok(id) = t.parse::<u64>() {
            if id == 0 {
                return Err(ChainRefError(s.into()));
            }
            return Ok(ChainRef::Evm(id));
        }
        NonEvmNode::ALL
            .into_iter()
            .find(|n| n.as_str().eq_ignore_ascii_case(t))
            .map(ChainRef::NonEvm)
            .ok_or_else(|| ChainRefError(s.chars().take(40).collect()))
    }
}

impl fmt::Display for ChainRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainRef::Evm(id) => write!(f, "{id}"),
            ChainRef::NonEvm(n) => f.write_str(n.as_str()),
        }
    }
}

impl Serialize for ChainRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ChainRef::Evm(id) => s.serialize_u64(*id),
            ChainRef::NonEvm(n) => s.serialize_str(n.as_str()),
        }
    }
}

impl<'de> Deserialize<'de> for ChainRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ChainRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an EVM chain id or a non-EVM node name")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ChainRef, E> {
                if v == 0 {
                    return Err(E::custom(ChainRefError("0".into())));
                }
                Ok(ChainRef::Evm(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ChainRef, E> {
                Err(E::custom(ChainRefError(v.to_string())))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ChainRef, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ids_numeric_strings_and_names() {
        assert_eq!("8453".parse::<ChainRef>().unwrap(), ChainRef::Evm(8453));
        assert_eq!(
            serde_json::from_str::<ChainRef>("\"bitcoin\"").unwrap(),
            ChainRef::NonEvm(NonEvmNode::Bitcoin)
        );
        assert_eq!(
            serde_json::from_str::<ChainRef>("10").unwrap(),
            ChainRef::Evm(10)
        );
        assert!(serde_json::from_str::<ChainRef>("\"dogecoin\"").is_err());
        assert!(serde_json::from_str::<ChainRef>("0").is_err());
        assert!(serde_json::from_str::<ChainRef>("-1").is_err());
        assert_eq!(serde_json::to_string(&ChainRef::Evm(1)).unwrap(), "1");
    }
}
