//! A mailbox owner's keys as a client keeps them (what `relay msg keygen`
//! writes): the stealth spending and viewing keys, the X-Wing secret key
//! and, optionally, the ML-DSA-65 seed `inner.sig2` is made with. Stored
//! as JSON of lowercase hex; `Debug` shows only the meta-address.

use serde::{Deserialize, Serialize};

use crate::{
    envelope,
    message::{Mailbox, Recipient},
    signature::DsaKey,
    stealth, SealError,
};

/// The stored form's version.
pub const VERSION: u8 = 1;

/// The keys of one mailbox.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Keyring {
    /// [`VERSION`].
    pub version: u8,
    /// The stealth spending key, hex.
    pub spend: String,
    /// The stealth viewing key, hex.
    pub view: String,
    /// The X-Wing secret key (its 32-byte seed), hex.
    pub kem: String,
    /// The ML-DSA-65 seed, hex, when the owner signs with `sig2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsa: Option<String>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.recipient() {
            Ok(r) => write!(f, "Keyring({})", r.stealth.meta_address()),
            Err(_) => f.write_str("Keyring(invalid)"),
        }
    }
}

fn bytes<const N: usize>(what: &'static str, h: &str) -> Result<[u8; N], SealError> {
    hex::decode(h)
        .ok()
        .and_then(|v| v.try_into().ok())
        .ok_or(SealError::InvalidKey(what))
}

impl Keyring {
    /// New keys (with an ML-DSA-65 key when `dsa`).
    pub fn generate(dsa: bool) -> Self {
        let r = Recipient::generate();
        Keyring {
            version: VERSION,
            spend: hex::encode(r.stealth.spend_bytes()),
            view: hex::encode(r.stealth.view_bytes()),
            kem: hex::encode(r.kem.to_bytes()),
            dsa: dsa.then(|| hex::encode(DsaKey::generate().seed())),
        }
    }

    /// The keys that scan and open.
    pub fn recipient(&self) -> Result<Recipient, SealError> {
        if self.version != VERSION {
            return Err(SealError::InvalidKey("keyring version"));
        }
        let stealth = stealth::Keys::from_bytes(
            &bytes::<32>("spending key", &self.spend)?,
            &bytes::<32>("viewing key", &self.view)?,
        )?;
        let kem = envelope::SecretKey::from_bytes(&bytes::<32>("X-Wing key", &self.kem)?)?;
        Ok(Recipient { stealth, kem })
    }

    /// What senders need.
    pub fn mailbox(&self) -> Result<Mailbox, SealError> {
        Ok(self.recipient()?.mailbox())
    }

    /// The ML-DSA-65 key, when there is one.
    pub fn dsa(&self) -> Result<Option<DsaKey>, SealError> {
        self.dsa
            .as_deref()
            .map(|s| bytes::<32>("ML-DSA seed", s).map(|seed| DsaKey::from_seed(&seed)))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::seal;

    #[test]
    fn a_stored_keyring_reads_back_to_the_same_keys() {
        let k = Keyring::generate(true);
        let back: Keyring = serde_json::from_str(&serde_json::to_string(&k).unwrap()).unwrap();
        let row = seal(&k.mailbox().unwrap(), "hello", 0).unwrap().remove(0);
        assert_eq!(
            back.recipient().unwrap().open(&row).as_deref(),
            Some("hello")
        );
        assert_eq!(
            back.dsa().unwrap().unwrap().public_key(),
            k.dsa().unwrap().unwrap().public_key()
        );
        let shown = format!("{k:?}");
        assert!(
            shown.starts_with("Keyring(st:eth:0x") && !shown.contains(&k.spend),
            "{shown}"
        );
        let mut bad = k.clone();
        bad.kem = "00".into();
        assert!(bad.recipient().is_err());
    }
}
