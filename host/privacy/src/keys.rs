//! The gateway's keys (RFC 9458 §3): per epoch, an X-Wing (0x647a) key
//! configuration first and an X25519 (0x0020) one as the fallback, each
//! offering HKDF-SHA256 with AES-128-GCM or ChaCha20-Poly1305 (what the
//! `ohttp` crate implements; it has no AES-256-GCM).
//!
//! Every key is derived (HPKE `DeriveKeyPair`) from a secret the relayer
//! key derives for this purpose and the epoch number, so every replica
//! serves the same keys and none is stored. A key's id is its epoch's
//! slot (epoch mod 128, times two) plus the KEM's place, so the current
//! and the previous epoch never share an id: a request made with the
//! previous epoch's key is still opened for one epoch after rotation.
//!
//! Each epoch's configurations are logged in the witness log (entry kind
//! `key`, id `ohttp/<epoch>/<keyId>`) before they are served, so a
//! gateway that handed one caller a key of its own would have to log it
//! where every reader sees it.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use hmac::{Hmac, Mac};
use ohttp::{
    hpke::{Aead, Kdf, Kem},
    KeyConfig, Server, SymmetricSuite,
};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The symmetric suites every configuration offers, preferred first.
pub const SUITES: [SymmetricSuite; 2] = [
    SymmetricSuite::new(Kdf::HkdfSha256, Aead::Aes128Gcm),
    SymmetricSuite::new(Kdf::HkdfSha256, Aead::ChaCha20Poly1305),
];

/// The KEMs, in the order the key list names them.
pub const KEMS: [Kem; 2] = [Kem::XWing, Kem::X25519Sha256];

/// One key configuration as the witness log records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyEntry {
    /// Its id in the witness log: `ohttp/<epoch>/<keyId>`.
    pub id: String,
    /// What the key is for: `ohttp`.
    #[serde(rename = "use")]
    pub purpose: String,
    /// The epoch it belongs to.
    pub epoch: u64,
    /// The configuration's key id (its first byte).
    pub key_id: u8,
    /// The KEM's HPKE id: 25722 (X-Wing) or 32 (X25519).
    pub kem: u16,
    /// The encoded key configuration (RFC 9458 §3.1), hex.
    pub config: String,
    /// When it starts being served, epoch ms.
    pub not_before: u64,
    /// When requests made with it stop being opened, epoch ms (the end of
    /// the next epoch).
    pub not_after: u64,
}

/// One epoch's keys.
pub struct EpochKeys {
    /// The epoch.
    pub epoch: u64,
    servers: Vec<(u8, Server)>,
    /// `application/ohttp-keys`: the encoded list, X-Wing first.
    pub list: Vec<u8>,
    /// What the witness log records, one per configuration.
    pub entries: Vec<KeyEntry>,
}

impl std::fmt::Debug for EpochKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpochKeys")
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

/// The keys of every epoch, derived on first use.
pub struct KeyRing {
    seed: [u8; 32],
    epoch_ms: u64,
    derived: Mutex<BTreeMap<u64, Arc<EpochKeys>>>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyRing")
            .field("epoch_ms", &self.epoch_ms)
            .finish_non_exhaustive()
    }
}

/// The key id of `kem`'s configuration in `epoch`.
pub fn key_id(epoch: u64, kem_slot: usize) -> u8 {
    ((epoch % 128) * 2) as u8 + kem_slot as u8
}

impl KeyRing {
    /// Keys derived from `seed`, one set every `epoch_ms`.
    pub fn new(seed: [u8; 32], epoch_ms: u64) -> Self {
        KeyRing {
            seed,
            epoch_ms: epoch_ms.max(1),
            derived: Mutex::default(),
        }
    }

    /// How long an epoch is, ms.
    pub fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }

    /// The epoch at `now_ms`.
    pub fn epoch_at(&self, now_ms: u64) -> u64 {
        now_ms / self.epoch_ms
    }

    /// `epoch`'s keys.
    pub fn keys(&self, epoch: u64) -> Arc<EpochKeys> {
        let mut derived = self.derived.lock().expect("key ring");
        if let Some(k) = derived.get(&epoch) {
            return k.clone();
        }
        let keys = Arc::new(self.derive(epoch));
        derived.insert(epoch, keys.clone());
        while derived.len() > 3 {
            derived.pop_first();
        }
        keys
    }

    /// The server of the configuration `key_id` names at `now_ms`: the
    /// current epoch's, or the previous one's.
    pub fn server(&self, key_id: u8, now_ms: u64) -> Option<Server> {
        let now = self.epoch_at(now_ms);
        [now, now.saturating_sub(1)].into_iter().find_map(|e| {
            let keys = self.keys(e);
            keys.servers
                .iter()
                .find(|(id, _)| *id == key_id)
                .map(|(_, s)| s.clone())
        })
    }

    fn derive(&self, epoch: u64) -> EpochKeys {
        let mut configs = Vec::new();
        let mut entries = Vec::new();
        for (slot, kem) in KEMS.into_iter().enumerate() {
            let id = key_id(epoch, slot);
            let mut mac = Hmac::<Sha256>::new_from_slice(&self.seed).expect("any key length");
            mac.update(format!("relay/ohttp/v1|{}|{epoch}", u16::from(kem)).as_bytes());
            let ikm = mac.finalize().into_bytes();
            let config =
                KeyConfig::derive(id, kem, SUITES.to_vec(), &ikm).expect("a supported suite");
            let encoded = config.encode().expect("a derived configuration encodes");
            entries.push(KeyEntry {
                id: format!("ohttp/{epoch}/{id}"),
                purpose: "ohttp".into(),
                epoch,
                key_id: id,
                kem: kem.into(),
                config: hex::encode(&encoded),
                not_before: epoch * self.epoch_ms,
                not_after: (epoch + 2) * self.epoch_ms,
            });
            configs.push((id, config));
        }
        let list = KeyConfig::encode_list(&configs.iter().map(|(_, c)| c).collect::<Vec<_>>())
            .expect("the list encodes");
        let servers = configs
            .into_iter()
            .map(|(id, c)| (id, Server::new(c).expect("a derived key has its secret")))
            .collect();
        EpochKeys {
            epoch,
            servers,
            list,
            entries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_replica_derives_the_same_keys_and_epochs_never_share_an_id() {
        let (a, b) = (KeyRing::new([7; 32], 1_000), KeyRing::new([7; 32], 1_000));
        assert_eq!(a.keys(5).list, b.keys(5).list);
        assert_ne!(a.keys(5).list, a.keys(6).list);
        assert_ne!(a.keys(5).list, KeyRing::new([8; 32], 1_000).keys(5).list);
        let ids = |e| {
            a.keys(e)
                .entries
                .iter()
                .map(|k| k.key_id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(5), vec![10, 11]);
        assert_eq!(ids(6), vec![12, 13]);
        let list = KeyConfig::decode_list(&a.keys(5).list).unwrap();
        assert_eq!(list.len(), 2, "X-Wing, then X25519");
    }

    #[test]
    fn the_previous_epochs_key_still_opens_and_an_older_one_does_not() {
        let ring = KeyRing::new([1; 32], 1_000);
        assert!(ring.server(key_id(5, 0), 5_500).is_some());
        assert!(ring.server(key_id(4, 1), 5_500).is_some());
        assert!(ring.server(key_id(3, 0), 5_500).is_none());
    }
}
