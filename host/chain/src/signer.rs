//! The relayer's key. It comes from the environment (`RELAY_RELAYER_KEY`,
//! hex) or from an encrypted keystore file (the standard Ethereum JSON
//! keystore, `relayer_keystore` in the configuration, decrypted at start
//! with the passphrase from the environment) — never from a configuration
//! file in the clear — and never leaves this type: `Debug` and `Display`
//! print only the address, and no error carries the key or the passphrase.

use std::path::Path;

use alloy::{
    network::EthereumWallet,
    primitives::{Address, Signature},
    providers::{DynProvider, Provider, ProviderBuilder},
    signers::local::PrivateKeySigner,
};

/// The environment variable holding the relayer key.
pub const RELAYER_KEY_ENV: &str = "RELAY_RELAYER_KEY";

/// The environment variable holding the relayer key pool's keys (hex,
/// separated by commas) unless `relayer_pool_keystores` names keystores.
pub const POOL_KEYS_ENV: &str = "RELAY_RELAYER_POOL_KEYS";

/// The environment variable holding the keystore's passphrase unless
/// `relayer_keystore_passphrase_env` names another.
pub const KEYSTORE_PASSPHRASE_ENV: &str = "RELAY_KEYSTORE_PASSPHRASE";

/// Why the relayer key is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignerError {
    /// No key in the environment.
    #[error("no relayer key: set {RELAYER_KEY_ENV}")]
    Missing,
    /// A value of the pool's keys is not a secp256k1 private key.
    #[error("{POOL_KEYS_ENV} holds a value that is not a valid private key")]
    PoolInvalid,
    /// The value is not a secp256k1 private key (the value is not repeated).
    #[error("{RELAYER_KEY_ENV} is not a valid private key")]
    Invalid,
    /// The keystore's passphrase is not in the environment.
    #[error("relayer_keystore is set but {env} (its passphrase) is not")]
    PassphraseMissing {
        /// The variable that should hold it.
        env: String,
    },
    /// The keystore file cannot be read, parsed or decrypted (a wrong
    /// passphrase is a MAC mismatch).
    #[error("keystore {path}: {reason}")]
    Keystore {
        /// The file.
        path: String,
        /// Why (never the passphrase or the key).
        reason: String,
    },
    /// A pool key is the relayer key itself or appears twice.
    #[error("relayer pool key {0} is the relayer key or appears twice")]
    PoolDuplicate(Address),
    /// The key is not the configured relayer's.
    #[error("the relayer key belongs to {actual}, but the configured relayer is {configured}")]
    Mismatch {
        /// From the key.
        actual: Address,
        /// From configuration.
        configured: Address,
    },
}

/// The relayer's signer.
///
/// Transactions are signed by alloy's wallet; personal messages (a quote's
/// attestation, one on every quote) by libsecp256k1 with the same key,
/// about twice as fast as the pure-Rust curve and byte for byte the same
/// signature (both derive the nonce by RFC 6979 and normalise `s` low).
#[derive(Clone)]
pub struct RelayerSigner(PrivateKeySigner, secp256k1::SecretKey);

/// The libsecp256k1 signing context (its generator tables are static).
static SECP: std::sync::LazyLock<secp256k1::Secp256k1<secp256k1::SignOnly>> =
    std::sync::LazyLock::new(secp256k1::Secp256k1::signing_only);

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
        let key = secp256k1::SecretKey::from_byte_array(s.to_bytes().0)
            .expect("a PrivateKeySigner holds a valid secp256k1 scalar");
        RelayerSigner(s, key)
    }

    /// Parses a hex key.
    pub fn from_hex(key: &str) -> Result<Self, SignerError> {
        key.trim()
            .parse::<PrivateKeySigner>()
            .map(Self::from_signer)
            .map_err(|_| SignerError::Invalid)
    }

    /// Reads [`RELAYER_KEY_ENV`]; checks it against `configured` when given.
    pub fn from_env(configured: Option<Address>) -> Result<Self, SignerError> {
        let key = std::env::var(RELAYER_KEY_ENV).map_err(|_| SignerError::Missing)?;
        Self::from_hex(&key)?.expect_address(configured)
    }

    /// The relayer key as `config` says where it is: the keystore file
    /// `relayer_keystore` decrypted with the passphrase in
    /// `relayer_keystore_passphrase_env` (default
    /// [`KEYSTORE_PASSPHRASE_ENV`]), else [`RELAYER_KEY_ENV`]; checked
    /// against the configured `relayer`.
    pub fn from_config(config: &relay_config::HostConfig) -> Result<Self, SignerError> {
        let configured = config.relayer.as_deref().and_then(|a| a.parse().ok());
        match &config.relayer_keystore {
            Some(path) => {
                Self::from_keystore(path, &passphrase(config)?)?.expect_address(configured)
            }
            None => Self::from_env(configured),
        }
    }

    /// The relayer key pool's keys (executors) as `config` says where they
    /// are: the keystores `relayer_pool_keystores` (the relayer keystore's
    /// passphrase), else [`POOL_KEYS_ENV`], else none. None of them may be
    /// `primary` or appear twice.
    pub fn pool_from_config(
        config: &relay_config::HostConfig,
        primary: Address,
    ) -> Result<Vec<Self>, SignerError> {
        let keys = if config.relayer_pool_keystores.is_empty() {
            let list = std::env::var(POOL_KEYS_ENV).unwrap_or_default();
            list.split(',')
                .filter(|k| !k.trim().is_empty())
                .map(|k| Self::from_hex(k).map_err(|_| SignerError::PoolInvalid))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            let pass = passphrase(config)?;
            config
                .relayer_pool_keystores
                .iter()
                .map(|p| Self::from_keystore(p, &pass))
                .collect::<Result<Vec<_>, _>>()?
        };
        let mut seen = std::collections::HashSet::from([primary]);
        match keys.iter().find(|k| !seen.insert(k.address())) {
            Some(dup) => Err(SignerError::PoolDuplicate(dup.address())),
            None => Ok(keys),
        }
    }

    /// Signs an EIP-7702 authorization delegating this key's account to
    /// `code` on `chain` at account nonce `nonce` (the relayer's own
    /// account, for its key pool).
    pub fn sign_authorization(
        &self,
        chain: u64,
        code: Address,
        nonce: u64,
    ) -> Result<alloy::eips::eip7702::SignedAuthorization, alloy::signers::Error> {
        use alloy::signers::SignerSync;
        let auth = alloy::eips::eip7702::Authorization {
            chain_id: alloy::primitives::U256::from(chain),
            address: code,
            nonce,
        };
        let sig = self.0.sign_hash_sync(&auth.signature_hash())?;
        Ok(auth.into_signed(sig))
    }

    /// Decrypts a JSON keystore file with `passphrase`.
    pub fn from_keystore(path: &Path, passphrase: &str) -> Result<Self, SignerError> {
        PrivateKeySigner::decrypt_keystore(path, passphrase)
            .map(Self::from_signer)
            .map_err(|e| keystore_error(path, &e))
    }

    /// Writes this key to `path` as a JSON keystore encrypted with
    /// `passphrase` (scrypt, AES-128-CTR), file mode 0600.
    pub fn write_keystore(&self, path: &Path, passphrase: &str) -> Result<(), SignerError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name =
            path.file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| SignerError::Keystore {
                    path: path.display().to_string(),
                    reason: "not a file name".into(),
                })?;
        PrivateKeySigner::encrypt_keystore(
            dir,
            &mut rand08::thread_rng(),
            self.0.to_bytes(),
            passphrase,
            Some(name),
        )
        .map_err(|e| keystore_error(path, &e))?;
        restrict_mode(path).map_err(|e| SignerError::Keystore {
            path: path.display().to_string(),
            reason: e.to_string(),
        })
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
        let hash = alloy::primitives::eip191_hash_message(message);
        let digest = secp256k1::Message::from_digest(hash.0);
        let (recid, rs) = SECP
            .sign_ecdsa_recoverable(digest, &self.1)
            .serialize_compact();
        // libsecp256k1 always answers the low `s`: nothing to normalise.
        Ok(Signature::from_bytes_and_parity(&rs, i32::from(recid) == 1))
    }

    /// The derivation of policy-gated sessions' own keys from this key
    /// ([`crate::session_key`]); the key stays inside this crate.
    pub fn session_keys(&self) -> crate::session_key::SessionKeys {
        crate::session_key::SessionKeys::new(self.0.to_bytes())
    }

    /// A secret for `purpose` derived from this key (`HMAC-SHA256(key,
    /// "relay-derive:v1:" ‖ purpose)`): a key of another scheme the host
    /// needs to keep across restarts and replicas (the messaging witness's
    /// Ed25519 key) without storing it. The relayer key stays inside; the
    /// derivation cannot be inverted to it.
    pub fn derive_secret(&self, purpose: &str) -> [u8; 32] {
        use hmac::{Hmac, Mac};
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(self.0.to_bytes().as_slice())
            .expect("HMAC takes any key");
        mac.update(b"relay-derive:v1:");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
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

/// The keystores' passphrase, from the variable
/// `relayer_keystore_passphrase_env` names (default
/// [`KEYSTORE_PASSPHRASE_ENV`]).
fn passphrase(config: &relay_config::HostConfig) -> Result<String, SignerError> {
    let env = config
        .relayer_keystore_passphrase_env
        .as_deref()
        .unwrap_or(KEYSTORE_PASSPHRASE_ENV);
    std::env::var(env).map_err(|_| SignerError::PassphraseMissing {
        env: env.to_string(),
    })
}

/// A keystore failure, described without key material (the library's
/// errors name I/O, JSON, KDF and MAC problems only).
fn keystore_error(path: &Path, e: &alloy::signers::local::LocalSignerError) -> SignerError {
    use alloy::signers::local::LocalSignerError as E;
    let reason = match e {
        E::EthKeystoreError(k) if k.to_string().to_lowercase().contains("mac mismatch") => {
            "wrong passphrase (MAC mismatch)".to_string()
        }
        E::EthKeystoreError(k) => k.to_string(),
        _ => "not a secp256k1 key".to_string(),
    };
    SignerError::Keystore {
        path: path.display().to_string(),
        reason,
    }
}

/// Owner read/write only (a keystore is a secret even encrypted).
fn restrict_mode(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

    #[test]
    fn personal_messages_are_signed_as_alloy_signs_them() {
        let s = RelayerSigner::from_hex(KEY).unwrap();
        for message in [&b""[..], b"relay", &[7u8; 32], &[0xff; 300]] {
            let fast = s.sign_message(message).unwrap();
            let alloy = alloy::signers::SignerSync::sign_message_sync(&s.0, message).unwrap();
            assert_eq!(fast, alloy, "{message:?}");
            assert_eq!(fast.recover_address_from_msg(message).unwrap(), s.address());
        }
    }

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
    fn a_keystore_round_trips_and_a_wrong_passphrase_names_no_secret() {
        let dir = std::env::temp_dir().join(format!("relay-keystore-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("relayer.json");
        let s = RelayerSigner::from_hex(KEY).unwrap();
        s.write_keystore(&path, "pass phrase").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&KEY[2..]), "stored encrypted");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let back = RelayerSigner::from_keystore(&path, "pass phrase").unwrap();
        assert_eq!(back.address(), s.address());
        let err = RelayerSigner::from_keystore(&path, "wrong").unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("wrong passphrase"), "{shown}");
        assert!(!shown.contains(&KEY[2..10]) && !shown.contains("pass phrase"));
        let missing = RelayerSigner::from_keystore(&dir.join("none.json"), "x").unwrap_err();
        assert!(matches!(missing, SignerError::Keystore { .. }), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
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
