//! The relayer's key. It comes from the environment (`RELAY_RELAYER_KEY`,
//! hex) — never from a configuration file — and never leaves this type:
//! `Debug` and `Display` print only the address, and no error carries the
//! key.

use alloy::{
    network::EthereumWallet,
    primitives::{Address, Signature},
    providers::{DynProvider, Provider, ProviderBuilder},
    signers::local::PrivateKeySigner,
};

/// The environment variable holding the relayer key.
pub const RELAYER_KEY_ENV: &str = "RELAY_RELAYER_KEY";

/// Why the relayer key is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignerError {
    /// No key in the environment.
    #[error("no relayer key: set {RELAYER_KEY_ENV}")]
    Missing,
    /// The value is not a secp256k1 private key (the value is not repeated).
    #[error("{RELAYER_KEY_ENV} is not a valid private key")]
    Invalid,
    /// The key is not the configured relayer's.
    #[error("{RELAYER_KEY_ENV} belongs to {actual}, but the configured relayer is {configured}")]
    Mismatch {
        /// From the key.
        actual: Address,
        /// From configuration.
        configured: Address,
    },
}

/// The relayer's signer.
#[derive(Clone)]
pub struct RelayerSigner(PrivateKeySigner);

impl std::fmt::Debug for RelayerSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RelayerSigner({})", self.0.address())
    }
}

impl std::fmt::Display for RelayerSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.address())
    }
}

impl RelayerSigner {
    /// A signer (the devnet and tests hand one in directly).
    pub fn from_signer(s: PrivateKeySigner) -> Self {
        RelayerSigner(s)
    }

    /// Parses a hex key.
    pub fn from_hex(key: &str) -> Result<Self, SignerError> {
        key.trim()
            .parse::<PrivateKeySigner>()
            .map(RelayerSigner)
            .map_err(|_| SignerError::Invalid)
    }

    /// Reads [`RELAYER_KEY_ENV`]; checks it against `configured` when given.
    pub fn from_env(configured: Option<Address>) -> Result<Self, SignerError> {
        let key = std::env::var(RELAYER_KEY_ENV).map_err(|_| SignerError::Missing)?;
        Self::from_hex(&key)?.expect_address(configured)
    }

    /// This signer, if it is the `configured` relayer (or none is configured).
    pub fn expect_address(self, configured: Option<Address>) -> Result<Self, SignerError> {
        match configured {
            Some(c) if c != self.address() => Err(SignerError::Mismatch {
                actual: self.address(),
                configured: c,
            }),
            _ => Ok(self),
        }
    }

    /// The relayer address.
    pub fn address(&self) -> Address {
        self.0.address()
    }

    /// Signs `message` as an EIP-191 personal message (quote attestations).
    /// The key stays inside; only the signature leaves.
    pub fn sign_message(&self, message: &[u8]) -> Result<Signature, alloy::signers::Error> {
        alloy::signers::SignerSync::sign_message_sync(&self.0, message)
    }

    /// The derivation of policy-gated sessions' own keys from this key
    /// ([`crate::session_key`]); the key stays inside this crate.
    pub fn session_keys(&self) -> crate::session_key::SessionKeys {
        crate::session_key::SessionKeys::new(self.0.to_bytes())
    }

    /// The wallet that signs as the relayer (stays inside the host).
    pub fn wallet(&self) -> EthereumWallet {
        EthereumWallet::from(self.0.clone())
    }

    /// A provider for `url` that signs as the relayer (the key stays
    /// inside the wallet; nothing exposes it).
    pub fn provider(&self, url: reqwest::Url) -> DynProvider {
        ProviderBuilder::new()
            .wallet(EthereumWallet::from(self.0.clone()))
            .connect_reqwest(crate::rpc::outbound_client(), url)
            .erased()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

    #[test]
    fn the_key_never_shows_in_debug_display_or_errors() {
        let s = RelayerSigner::from_hex(KEY).unwrap();
        let shown = format!("{s:?} {s}");
        assert!(!shown.contains(&KEY[2..10]), "{shown}");
        assert!(shown.contains(&s.address().to_string()));
        let err = RelayerSigner::from_hex("0xnot-a-key")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("not-a-key"), "{err}");
    }

    #[test]
    fn a_key_for_another_relayer_is_refused() {
        let s = RelayerSigner::from_hex(KEY).unwrap();
        let me = s.address();
        let other = Address::repeat_byte(7);
        let err = s.clone().expect_address(Some(other)).unwrap_err();
        assert_eq!(
            err,
            SignerError::Mismatch {
                actual: me,
                configured: other
            }
        );
        assert_eq!(s.expect_address(Some(me)).unwrap().address(), me);
    }
}
