//! Per-session keys of policy-gated agent sessions (spec §2.13, §4.5).
//!
//! Every session holds its funds at an address of its own, whose key the
//! host derives from the relayer's key and the session id:
//! `HMAC-SHA256(relayer secret key, "relay-session:v1:" ‖ id)`, read as a
//! secp256k1 scalar (in the negligible case it is not one — zero or not
//! below the group order — the counter `‖ u32 BE` 1, 2, … is appended until
//! it is). The same relayer key always gives the same address, so nothing
//! about the key is stored, every replica derives it, and rotating the
//! relayer key orphans the session addresses (sweep them first).
//!
//! The derived key never leaves this module: [`SessionSigner`] signs
//! typed data and permits inside, and its `Debug` shows only the address.
//! The address never pays gas — the relayer sends every transaction
//! ([`crate::session_sweep`], and the router routes of a session).

use alloy::{
    primitives::{Address, Signature, B256},
    signers::{local::PrivateKeySigner, SignerSync},
};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::typed::{self, TypedError};

/// The derivation's domain tag (its version is part of every address).
pub const DERIVATION_TAG: &str = "relay-session:v1:";

/// Derives session keys (holds the relayer's key bytes as the HMAC key;
/// `Debug` shows nothing of them).
#[derive(Clone)]
pub struct SessionKeys {
    root: B256,
}

impl std::fmt::Debug for SessionKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKeys(..)")
    }
}

impl SessionKeys {
    /// Keys derived from the relayer's secret key bytes.
    pub(crate) fn new(root: B256) -> Self {
        SessionKeys { root }
    }

    /// The signer of session `id` (module docs).
    pub fn signer(&self, id: &str) -> SessionSigner {
        for counter in 0u32.. {
            let mut mac =
                Hmac::<Sha256>::new_from_slice(self.root.as_slice()).expect("HMAC takes any key");
            mac.update(DERIVATION_TAG.as_bytes());
            mac.update(id.as_bytes());
            if counter > 0 {
                mac.update(&counter.to_be_bytes());
            }
            let bytes = B256::from_slice(&mac.finalize().into_bytes());
            if let Ok(key) = PrivateKeySigner::from_bytes(&bytes) {
                return SessionSigner(key);
            }
        }
        unreachable!("a valid scalar is found long before the counter wraps")
    }

    /// The address of session `id`: where its funds are held.
    pub fn address(&self, id: &str) -> Address {
        self.signer(id).address()
    }
}

/// A session's own key (module docs): it signs, it is never shown.
#[derive(Clone)]
pub struct SessionSigner(PrivateKeySigner);

impl std::fmt::Debug for SessionSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionSigner({})", self.0.address())
    }
}

impl SessionSigner {
    /// The session's address.
    pub fn address(&self) -> Address {
        self.0.address()
    }

    /// Signs every entry of a served router form (`POST
    /// /api/route/intent`'s `forms.*`) and fills its execute body
    /// ([`typed::sign_form`]).
    pub fn sign_form(&self, form: &Value) -> Result<Value, TypedError> {
        typed::sign_form(form, &self.0)
    }

    /// Signs an EIP-712 digest (the sweep's EIP-2612 permit).
    pub(crate) fn sign_hash(&self, digest: &B256) -> Result<Signature, alloy::signers::Error> {
        self.0.sign_hash_sync(digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signer::RelayerSigner;

    const KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

    #[test]
    fn each_session_has_its_own_stable_address_and_the_key_never_shows() {
        let keys = RelayerSigner::from_hex(KEY).unwrap().session_keys();
        let a = keys.signer("ses_a");
        assert_eq!(a.address(), keys.address("ses_a"), "stable");
        assert_ne!(a.address(), keys.address("ses_b"));
        let relayer = RelayerSigner::from_hex(KEY).unwrap().address();
        assert_ne!(a.address(), relayer);
        let other = RelayerSigner::from_hex(
            "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
        )
        .unwrap()
        .session_keys();
        assert_ne!(
            other.address("ses_a"),
            a.address(),
            "another relayer key derives other addresses"
        );
        let shown = format!("{keys:?} {a:?}");
        assert!(!shown.contains(&KEY[2..12]), "{shown}");
        assert!(shown.contains(&a.address().to_string()), "{shown}");
    }

    #[test]
    fn the_derivation_is_hmac_sha256_of_the_tagged_id() {
        let relayer = RelayerSigner::from_hex(KEY).unwrap();
        let mut mac = Hmac::<Sha256>::new_from_slice(&alloy::hex::decode(KEY).unwrap()).unwrap();
        mac.update(b"relay-session:v1:ses_x");
        let want = PrivateKeySigner::from_bytes(&B256::from_slice(&mac.finalize().into_bytes()))
            .unwrap()
            .address();
        assert_eq!(relayer.session_keys().address("ses_x"), want);
    }
}
