//! Quote attestations (spec §2.6 `attestation`, §2.7 price lock; DESIGN
//! "Quotes carry a signed attestation"). The relayer signs what it
//! promised — lane, amounts, minimum out, recipient, tier, expiry — so a
//! later execute can hold it to that price.
//!
//! Scheme `relay-quote-v2`: the terms are written one `key=value` per line
//! in a fixed order (below) and hashed with keccak-256 (`hash`). Quotes
//! answered together are signed together ([`batch`]): `root` is the Merkle
//! root of their hashes (keccak-256 of each sorted pair, OpenZeppelin's
//! `MerkleProof`), `proof` the hash's siblings from the leaf up, and the
//! 32-byte `root` is signed as an EIP-191 personal message by the relayer
//! key. A quote answered alone has `root = hash` and an empty `proof`, so
//! its signature covers its own hash, as v1's did. Any client can
//! rebuild the text from the `terms` object, fold the proof into the root
//! and check the signer with `ecrecover` (viem
//! `verifyMessage({message: {raw: root}})`).
//!
//! ```text
//! relay-quote-v2
//! fromChain=8453
//! toChain=42161
//! fromToken=0x…      (lower-case address; the symbol for a native asset)
//! toToken=0x…
//! amount=5000000
//! rail=floatlane
//! lane=evm->evm
//! estimated=4962120
//! minOut=4962120
//! recipient=0x…      (lower-case; empty when unknown)
//! member=false
//! expiresAt=1700000000000
//! ```
//!
//! The key never leaves the signer; nothing here logs a signature.

pub mod batch;
pub mod merkle;

pub use batch::QuoteSigner;

use alloy::primitives::{keccak256, Address, Signature, B256};
use relay_chain::signer::RelayerSigner;
use relay_plugin_api::{Amount, ChainRef};
use serde::{Deserialize, Serialize};

/// The scheme name, first line of the hashed text.
pub const SCHEME: &str = "relay-quote-v2";

/// What a quote promises.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuoteTerms {
    /// Source node.
    pub from_chain: ChainRef,
    /// Destination node.
    pub to_chain: ChainRef,
    /// Source token (address, or symbol for a native asset).
    pub from_token: String,
    /// Destination token.
    pub to_token: String,
    /// Source amount.
    pub amount: Amount,
    /// Winning rail.
    pub rail: String,
    /// Its lane.
    pub lane: String,
    /// Expected net output.
    pub estimated: Amount,
    /// Guaranteed minimum.
    pub min_out: Amount,
    /// Recipient, when known.
    pub recipient: Option<String>,
    /// Member tier.
    pub member: bool,
    /// Expiry, epoch ms.
    pub expires_at: u64,
}

impl QuoteTerms {
    /// The canonical text that is hashed.
    pub fn canonical(&self) -> String {
        use std::fmt::Write as _;
        let mut text = String::with_capacity(320);
        // Writing to a String never fails.
        let _ = write!(
            text,
            "{SCHEME}\nfromChain={}\ntoChain={}\nfromToken={}\ntoToken={}\namount={}\n\
             rail={}\nlane={}\nestimated={}\nminOut={}\nrecipient={}\nmember={}\nexpiresAt={}",
            self.from_chain,
            self.to_chain,
            self.from_token.to_ascii_lowercase(),
            self.to_token.to_ascii_lowercase(),
            self.amount,
            self.rail,
            self.lane,
            self.estimated,
            self.min_out,
            self.recipient.as_deref().unwrap_or("").to_ascii_lowercase(),
            self.member,
            self.expires_at,
        );
        text
    }

    /// keccak-256 of the canonical text.
    pub fn hash(&self) -> B256 {
        keccak256(self.canonical().as_bytes())
    }
}

/// A signed attestation as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attestation {
    /// [`SCHEME`].
    pub scheme: &'static str,
    /// keccak-256 of the canonical terms: this quote's leaf.
    pub hash: B256,
    /// The Merkle root of the batch the quote was signed in (`hash` when
    /// alone).
    pub root: B256,
    /// `hash`'s siblings from the leaf up to `root` (empty when alone).
    pub proof: Vec<B256>,
    /// The relayer address; `None` when this host has no key.
    pub signer: Option<Address>,
    /// 65-byte EIP-191 signature of `root`, 0x-hex; `None` without a key.
    pub signature: Option<String>,
    /// Expiry, epoch ms.
    pub expires_at: u64,
    /// The terms, to rebuild the text.
    pub terms: QuoteTerms,
}

/// An attestation as a client sends it back to lock a price.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Presented {
    /// The quoted terms.
    pub terms: QuoteTerms,
    /// Their hash's Merkle proof up to the signed root.
    pub proof: Vec<B256>,
    /// The relayer's signature of the root, 0x-hex.
    pub signature: String,
}

/// Why an attestation does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttestError {
    /// Signing failed (the message never contains the key).
    #[error("signing the attestation failed: {0}")]
    Sign(String),
    /// The signature does not recover to the expected signer.
    #[error("the attestation was not signed by {expected}")]
    WrongSigner {
        /// Who should have signed.
        expected: Address,
    },
    /// The signature is malformed.
    #[error("the attestation signature is malformed")]
    Malformed,
    /// Expired.
    #[error("the attestation expired at {0}")]
    Expired(u64),
}

/// An EIP-191 personal-message signature by the relayer, as the API
/// shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersonalSignature {
    /// The relayer address; `None` when this host has no key.
    pub signer: Option<Address>,
    /// 65-byte signature, 0x-hex; `None` without a key.
    pub signature: Option<String>,
}

/// Signs `message` as an EIP-191 personal message (`personal_sign`) with
/// the relayer key, unsigned when there is none. Quote attestations sign
/// their 32-byte hash; the capability snapshot signs its canonical JSON.
pub fn personal_sign(
    signer: Option<&RelayerSigner>,
    message: &[u8],
) -> Result<PersonalSignature, AttestError> {
    let signature = signer
        .map(|s| s.sign_message(message))
        .transpose()
        .map_err(|e| AttestError::Sign(e.to_string()))?;
    Ok(PersonalSignature {
        signer: signer.map(RelayerSigner::address),
        signature: signature.map(|s| alloy::hex::encode_prefixed(s.as_bytes())),
    })
}

/// The address whose EIP-191 personal signature of `message` `signature` is.
pub fn recover(message: &[u8], signature: &str) -> Result<Address, AttestError> {
    let sig: Signature = signature.parse().map_err(|_| AttestError::Malformed)?;
    sig.recover_address_from_msg(message)
        .map_err(|_| AttestError::Malformed)
}

/// Checks that `signature` over the root `terms` and `proof` hash to is
/// `expected`'s and unexpired at `now_ms` (the price lock of a later
/// execute).
pub fn verify(
    terms: &QuoteTerms,
    proof: &[B256],
    signature: &str,
    expected: Address,
    now_ms: u64,
) -> Result<(), AttestError> {
    if now_ms > terms.expires_at {
        return Err(AttestError::Expired(terms.expires_at));
    }
    let root = merkle::root(terms.hash(), proof);
    if recover(root.as_slice(), signature)? != expected {
        return Err(AttestError::WrongSigner { expected });
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn terms() -> QuoteTerms {
        QuoteTerms {
            from_chain: ChainRef::Evm(8453),
            to_chain: ChainRef::Evm(42161),
            from_token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
            to_token: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831".into(),
            amount: Amount::from_u128(5_000_000),
            rail: "floatlane".into(),
            lane: "evm->evm".into(),
            estimated: Amount::from_u128(4_900_000),
            min_out: Amount::from_u128(4_900_000),
            recipient: None,
            member: false,
            expires_at: 2_000,
        }
    }

    /// The relayer key of the tests (anvil's second account).
    pub(crate) fn key() -> RelayerSigner {
        RelayerSigner::from_hex(
            "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
        )
        .unwrap()
    }

    #[test]
    fn a_signed_quote_verifies_and_a_changed_one_does_not() {
        let key = key();
        let sig = personal_sign(Some(&key), terms().hash().as_slice())
            .unwrap()
            .signature
            .unwrap();
        assert_eq!(verify(&terms(), &[], &sig, key.address(), 1_000), Ok(()));
        let mut changed = terms();
        changed.min_out = Amount::from_u128(4_999_999);
        assert!(verify(&changed, &[], &sig, key.address(), 1_000).is_err());
        assert_eq!(
            verify(&terms(), &[], &sig, key.address(), 3_000),
            Err(AttestError::Expired(2_000))
        );
        assert!(verify(&terms(), &[B256::ZERO], &sig, key.address(), 1_000).is_err());
    }

    #[test]
    fn the_signed_text_is_the_documented_one_line_per_term() {
        let mut t = terms();
        t.recipient = Some("0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into());
        assert_eq!(
            t.canonical(),
            "relay-quote-v2\nfromChain=8453\ntoChain=42161\n\
             fromToken=0x833589fcd6edb6e08f4c7c32d4f71b54bda02913\n\
             toToken=0xaf88d065e77c8cc2239327c5edb3a432268e5831\namount=5000000\n\
             rail=floatlane\nlane=evm->evm\nestimated=4900000\nminOut=4900000\n\
             recipient=0x70997970c51812dc3a010c7d01b50e0d17dc79c8\nmember=false\nexpiresAt=2000"
        );
        assert!(terms().canonical().contains("\nrecipient=\nmember=false\n"));
    }
}
