//! Addresses by node (spec §2.1, §2.5): what a `fromAddress` / `toAddress`
//! must look like on its chain. Checks are syntactic (alphabet, length,
//! prefix); they catch the mistakes clients make (an EVM address for a
//! bitcoin recipient, a truncated paste) without pretending to be wallets.

use super::tokens::is_evm_address;
use relay_plugin_api::{ChainRef, NonEvmNode};

const BASE58: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

fn base58(s: &str) -> bool {
    s.bytes().all(|b| BASE58.contains(&b))
}

fn bech32_body(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

fn bitcoin(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    let bech = ["bc1", "tb1", "bcrt1"]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .is_some_and(|rest| (11..=87).contains(&rest.len()) && bech32_body(rest))
        && (s == lower || s == s.to_ascii_uppercase());
    let legacy =
        (26..=35).contains(&s.len()) && s.starts_with(['1', '3', 'm', 'n', '2']) && base58(s);
    bech || legacy
}

/// Whether `s` is a well-formed address on `chain`; the error says what
/// was expected.
pub fn check(chain: ChainRef, s: &str) -> Result<(), &'static str> {
    let ok = match chain {
        ChainRef::Evm(_) => is_evm_address(s),
        ChainRef::NonEvm(NonEvmNode::Bitcoin) => bitcoin(s),
        ChainRef::NonEvm(NonEvmNode::Solana) => (32..=44).contains(&s.len()) && base58(s),
        ChainRef::NonEvm(NonEvmNode::Stellar) => {
            s.len() == 56
                && s.starts_with('G')
                && s.bytes()
                    .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
        }
        ChainRef::NonEvm(NonEvmNode::Tron) => s.len() == 34 && s.starts_with('T') && base58(s),
        ChainRef::NonEvm(NonEvmNode::Sui) => {
            s.len() == 66 && s.starts_with("0x") && s[2..].bytes().all(|b| b.is_ascii_hexdigit())
        }
    };
    if ok {
        return Ok(());
    }
    Err(match chain {
        ChainRef::Evm(_) => "expected a 0x-prefixed 20-byte hex address",
        ChainRef::NonEvm(NonEvmNode::Bitcoin) => "expected a bitcoin address (bc1… or base58)",
        ChainRef::NonEvm(NonEvmNode::Solana) => "expected a base58 solana address",
        ChainRef::NonEvm(NonEvmNode::Stellar) => {
            "expected a stellar account id (G…, 56 characters)"
        }
        ChainRef::NonEvm(NonEvmNode::Tron) => {
            "expected a base58 tron address (34 characters starting with T, not 0x)"
        }
        ChainRef::NonEvm(NonEvmNode::Sui) => "expected a 0x-prefixed 32-byte sui address",
    })
}

/// The canonical spelling of a checked address: EIP-55 checksummed on EVM
/// chains, as given elsewhere.
pub fn normalize(chain: ChainRef, s: &str) -> String {
    match (chain, s.parse::<alloy::primitives::Address>()) {
        (ChainRef::Evm(_), Ok(a)) => a.to_checksum(None),
        _ => s.to_string(),
    }
}

/// Whether two nodes share an address format (so one party's address can
/// default the other's).
pub fn same_family(a: ChainRef, b: ChainRef) -> bool {
    a.family() == b.family()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_per_node() {
        let evm = ChainRef::Evm(1);
        assert!(check(evm, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8").is_ok());
        assert!(check(evm, "0x123").is_err());
        let tron = ChainRef::NonEvm(NonEvmNode::Tron);
        assert!(check(tron, "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL").is_ok());
        assert!(check(tron, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8").is_err());
        let btc = ChainRef::NonEvm(NonEvmNode::Bitcoin);
        assert!(check(btc, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq").is_ok());
        assert!(check(btc, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2").is_ok());
        assert!(check(btc, "bc1QAR0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq").is_err());
        let sol = ChainRef::NonEvm(NonEvmNode::Solana);
        assert!(check(sol, "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV").is_ok());
        assert!(check(sol, "0OIl").is_err());
        let xlm = ChainRef::NonEvm(NonEvmNode::Stellar);
        assert!(check(
            xlm,
            "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ"
        )
        .is_ok());
    }
}
