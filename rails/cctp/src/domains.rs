//! The seven CCTP chains: Circle's domain ids, how long a standard transfer
//! waits for source finality, and the contracts each chain runs.
//!
//! Domain ids and mainnet addresses follow Circle's CCTP v2 documentation
//! ("Supported chains and domains", "Contract addresses"): TokenMessengerV2
//! and MessageTransmitterV2 are CREATE2-deployed at the same address on every
//! EVM chain. Operators override any of them per chain — the devnet's own
//! deployment does — with `token_messenger.<chainId>`,
//! `message_transmitter.<chainId>` and `usdc.<chainId>`.

use relay_plugin_api::{ChainRef, DeclaredContract, Host, RailError};
use relay_rail_sdk::lane::is_evm_address;

/// One CCTP chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Domain {
    /// EVM chain id.
    pub chain: u64,
    /// Circle's domain id.
    pub domain: u32,
    /// Display name.
    pub name: &'static str,
    /// Typical wait for a standard transfer's attestation, seconds (Circle:
    /// Ethereum and its rollups wait for Ethereum finality, ~13–19 min;
    /// Avalanche and Polygon PoS finalise in seconds).
    pub finality_sec: u32,
    /// Native USDC on mainnet.
    pub usdc: &'static str,
}

/// TokenMessengerV2 on every mainnet EVM chain.
pub const TOKEN_MESSENGER_V2: &str = "0x28b5a0e9C621a5BadaA536219b3a228C8168cf5d";
/// MessageTransmitterV2 on every mainnet EVM chain.
pub const MESSAGE_TRANSMITTER_V2: &str = "0x81D40F21F12A8F0E3252Bccb954D722d4c464B64";

/// The covered chains, by chain id.
pub const DOMAINS: [Domain; 7] = [
    Domain {
        chain: 1,
        domain: 0,
        name: "Ethereum",
        finality_sec: 1_020,
        usdc: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    },
    Domain {
        chain: 43114,
        domain: 1,
        name: "Avalanche",
        finality_sec: 20,
        usdc: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
    },
    Domain {
        chain: 10,
        domain: 2,
        name: "OP Mainnet",
        finality_sec: 1_020,
        usdc: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
    },
    Domain {
        chain: 42161,
        domain: 3,
        name: "Arbitrum",
        finality_sec: 1_020,
        usdc: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
    },
    Domain {
        chain: 8453,
        domain: 6,
        name: "Base",
        finality_sec: 1_020,
        usdc: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    },
    Domain {
        chain: 137,
        domain: 7,
        name: "Polygon PoS",
        finality_sec: 20,
        usdc: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    },
    Domain {
        chain: 130,
        domain: 10,
        name: "Unichain",
        finality_sec: 1_020,
        usdc: "0x078D782b760474a361dDA0AF3839290b0EF57AD6",
    },
];

/// The CCTP domain of `chain`, if it is a covered EVM chain.
pub fn of(chain: &ChainRef) -> Option<Domain> {
    let id = chain.evm_id()?;
    DOMAINS.iter().copied().find(|d| d.chain == id)
}

/// Every covered chain as a [`ChainRef`].
pub fn chains() -> Vec<ChainRef> {
    DOMAINS.iter().map(|d| ChainRef::Evm(d.chain)).collect()
}

/// The mainnet contracts the manifest declares.
pub fn declared_contracts() -> Vec<DeclaredContract> {
    DOMAINS
        .iter()
        .flat_map(|d| {
            [
                (TOKEN_MESSENGER_V2, "token-messenger"),
                (MESSAGE_TRANSMITTER_V2, "message-transmitter"),
            ]
            .map(|(address, label)| DeclaredContract {
                chain: ChainRef::Evm(d.chain),
                address: address.into(),
                label: label.into(),
            })
        })
        .collect()
}

/// An address from `key.<chainId>` in the rail's configuration, else `default`.
pub fn configured(
    host: &dyn Host,
    key: &str,
    chain: u64,
    default: &str,
) -> Result<String, RailError> {
    let field = format!("{key}.{chain}");
    match host.config(&field) {
        Some(a) if is_evm_address(a.trim()) => Ok(a.trim().to_string()),
        Some(a) => Err(RailError::new(
            relay_plugin_api::RailErrorKind::Capability,
            format!("operator config {field} = {a:?} is not an EVM address"),
        )),
        None => Ok(default.to_string()),
    }
}

impl Domain {
    /// Seconds a standard transfer takes from burn to mint: the source's
    /// finality (operator override `duration_sec.<chainId>`) plus the mint.
    pub fn duration_sec(&self, host: &dyn Host) -> u32 {
        let wait = host
            .config(&format!("duration_sec.{}", self.chain))
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(self.finality_sec);
        wait.saturating_add(MINT_SEC)
    }
}

/// Seconds from an attestation to the destination mint's receipt.
pub const MINT_SEC: u32 = 30;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_follow_circle() {
        let d = |c| of(&ChainRef::Evm(c)).map(|d| d.domain);
        assert_eq!(
            [d(1), d(43114), d(10), d(42161), d(8453), d(137), d(130)],
            [
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(6),
                Some(7),
                Some(10)
            ]
        );
        assert_eq!(d(56), None);
        assert_eq!(of(&"bitcoin".parse().unwrap()), None);
        assert!(DOMAINS.iter().all(|d| is_evm_address(d.usdc)));
        assert_eq!(declared_contracts().len(), 14);
    }
}
