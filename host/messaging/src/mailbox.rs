//! Mailbox publications (spec §4.10 `POST mailbox`, §5.8): a wallet binds
//! its stealth meta-address, its X-Wing key and, optionally, its ML-DSA-65
//! key by signing one text; the host checks the signature, the keys and
//! the time, and appends the publication to the witness log. The
//! directory is the latest publication per address.
//!
//! The text a wallet signs (EIP-191 `personal_sign`), every hex value
//! lowercase and `0x`-prefixed, lines joined by `\n`, no final newline:
//!
//! ```text
//! relay/messages/v2 mailbox
//! address: 0x…
//! metaAddress: st:eth:0x…
//! kemPub: 0x…
//! dsaPub: 0x… (or `none`)
//! ts: 1764480000000
//! ```

use alloy::primitives::Address;
use relay_sealed::{envelope, signature::DSA_PUBLIC_KEY_LEN, stealth::MetaAddress};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A publication as the wallet sends it (and as the directory lists it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Publication {
    /// The wallet (`0x` and 20 bytes).
    pub address: String,
    /// `st:eth:0x<spendPub><viewPub>` (two 33-byte compressed keys).
    pub meta_address: String,
    /// The X-Wing public key, `0x` and 1216 bytes.
    pub kem_pub: String,
    /// The ML-DSA-65 key `inner.sig2` verifies under, `0x` and 1952 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsa_pub: Option<String>,
    /// When it was signed, ms since the epoch.
    pub ts: u64,
    /// The address's EIP-191 signature of [`Publication::text`], `0x` and 65 bytes.
    pub sig: String,
}

/// Why a publication is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PublishError {
    /// A field is not what it must be.
    #[error("{field}: {why}")]
    Key {
        /// The field.
        field: &'static str,
        /// What is wrong.
        why: String,
    },
    /// `ts` is too far from the host's clock.
    #[error("ts: {ts} is more than {max_skew_ms} ms from the host's clock ({now_ms})")]
    Stale {
        /// The publication's.
        ts: u64,
        /// The host's.
        now_ms: u64,
        /// The bound.
        max_skew_ms: u64,
    },
    /// The signature is not the address's.
    #[error("sig: {0}")]
    Signature(String),
    /// A publication with this `ts` or a later one is in effect.
    #[error(
        "ts: the address's publication in effect has ts {current}; a new one needs a later ts"
    )]
    Replayed {
        /// The `ts` in effect.
        current: u64,
    },
}

/// `0x` and lowercase hex of `bytes` bytes: the bytes.
pub fn hex_field(field: &'static str, v: &str, bytes: usize) -> Result<Vec<u8>, PublishError> {
    let key = |why: String| PublishError::Key { field, why };
    let h = v
        .strip_prefix("0x")
        .ok_or_else(|| key("must start with 0x".into()))?;
    let raw = hex::decode(h).map_err(|_| key("is not hex".into()))?;
    if raw.len() != bytes {
        return Err(key(format!("is {} bytes, not {bytes}", raw.len())));
    }
    Ok(raw)
}

/// `sig` (a 65-byte hex signature, low s) recovered over `text`
/// (EIP-191).
pub fn signer_of(text: &str, sig: &str) -> Result<Address, String> {
    relay_chain::personal::signer(text, sig).map_err(|e| e.to_string())
}

/// An address field in its canonical form (lowercase).
pub fn address_field(field: &'static str, v: &str) -> Result<Address, PublishError> {
    v.parse::<Address>().map_err(|_| PublishError::Key {
        field,
        why: "is not a 0x-prefixed 20-byte address".into(),
    })
}

/// Lowercase `0x` hex of an address.
pub fn lower(a: &Address) -> String {
    format!("{a:#x}")
}

impl Publication {
    /// The text the wallet signs (module docs).
    pub fn text(&self) -> String {
        format!(
            "relay/messages/v2 mailbox\naddress: {}\nmetaAddress: {}\nkemPub: {}\ndsaPub: {}\nts: {}",
            self.address,
            self.meta_address,
            self.kem_pub,
            self.dsa_pub.as_deref().unwrap_or("none"),
            self.ts
        )
    }

    /// The publication in canonical form (lowercase hex, the
    /// meta-address as its keys print), checked: keys well formed, `ts`
    /// within `max_skew_ms` of `now_ms`, signed by the address.
    pub fn verify(&self, now_ms: u64, max_skew_ms: u64) -> Result<Publication, PublishError> {
        let address = address_field("address", &self.address)?;
        let meta: MetaAddress = self.meta_address.to_ascii_lowercase().parse().map_err(
            |e: relay_sealed::SealError| PublishError::Key {
                field: "metaAddress",
                why: e.to_string(),
            },
        )?;
        let kem = hex_field(
            "kemPub",
            &self.kem_pub.to_ascii_lowercase(),
            envelope::PUBLIC_KEY_LEN,
        )?;
        envelope::PublicKey::from_bytes(&kem).map_err(|_| PublishError::Key {
            field: "kemPub",
            why: "is not an X-Wing public key".into(),
        })?;
        let dsa = self
            .dsa_pub
            .as_deref()
            .map(|d| hex_field("dsaPub", &d.to_ascii_lowercase(), DSA_PUBLIC_KEY_LEN))
            .transpose()?;
        if now_ms.abs_diff(self.ts) > max_skew_ms {
            return Err(PublishError::Stale {
                ts: self.ts,
                now_ms,
                max_skew_ms,
            });
        }
        let canonical = Publication {
            address: lower(&address),
            meta_address: meta.to_string(),
            kem_pub: format!("0x{}", hex::encode(kem)),
            dsa_pub: dsa.map(|d| format!("0x{}", hex::encode(d))),
            ts: self.ts,
            sig: self.sig.to_ascii_lowercase(),
        };
        let signer =
            signer_of(&canonical.text(), &canonical.sig).map_err(PublishError::Signature)?;
        if signer != address {
            return Err(PublishError::Signature(format!(
                "recovers to {}, not to the address: sign exactly the publication text (lowercase hex)",
                lower(&signer)
            )));
        }
        Ok(canonical)
    }

    /// The witness log's body of this publication: its canonical JSON.
    pub fn body(&self) -> String {
        serde_json::to_string(self).expect("a publication serializes")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use alloy::signers::{local::PrivateKeySigner, SignerSync};
    use relay_sealed::{message::Recipient, signature::DsaKey};

    pub(crate) fn signed(wallet: &PrivateKeySigner, who: &Recipient, ts: u64) -> Publication {
        let mailbox = who.mailbox();
        let mut p = Publication {
            address: lower(&wallet.address()),
            meta_address: mailbox.meta.to_string(),
            kem_pub: format!("0x{}", hex::encode(mailbox.kem.to_bytes())),
            dsa_pub: None,
            ts,
            sig: String::new(),
        };
        let sig = wallet.sign_message_sync(p.text().as_bytes()).unwrap();
        p.sig = format!("0x{}", hex::encode(sig.as_bytes()));
        p
    }

    #[test]
    fn a_signed_publication_verifies_and_every_fault_is_named() {
        let wallet = PrivateKeySigner::random();
        let who = Recipient::generate();
        let now = 1_764_480_000_000;
        let p = signed(&wallet, &who, now);
        assert_eq!(p.verify(now + 1_000, 300_000).unwrap(), p);
        let mut upper = p.clone();
        upper.address = wallet.address().to_checksum(None);
        assert_eq!(upper.verify(now, 300_000).unwrap(), p, "canonical form");

        let e = p.verify(now + 300_001, 300_000).unwrap_err();
        assert!(matches!(e, PublishError::Stale { .. }), "{e}");
        let mut other = p.clone();
        other.address = lower(&PrivateKeySigner::random().address());
        assert!(matches!(
            other.verify(now, 300_000),
            Err(PublishError::Signature(_))
        ));
        let mut swapped = p.clone();
        swapped.kem_pub = format!(
            "0x{}",
            hex::encode(Recipient::generate().mailbox().kem.to_bytes())
        );
        assert!(
            matches!(
                swapped.verify(now, 300_000),
                Err(PublishError::Signature(_))
            ),
            "a key swapped under the signature"
        );
        let mut short = p.clone();
        short.kem_pub = "0x00".into();
        assert!(matches!(
            short.verify(now, 300_000),
            Err(PublishError::Key {
                field: "kemPub",
                ..
            })
        ));
        let mut meta = p.clone();
        meta.meta_address = "st:eth:0x1234".into();
        assert!(matches!(
            meta.verify(now, 300_000),
            Err(PublishError::Key {
                field: "metaAddress",
                ..
            })
        ));
        let mut dsa = p.clone();
        dsa.dsa_pub = Some(format!(
            "0x{}",
            hex::encode(DsaKey::generate().public_key())
        ));
        assert!(
            matches!(dsa.verify(now, 300_000), Err(PublishError::Signature(_))),
            "dsaPub is signed too"
        );
    }
}
