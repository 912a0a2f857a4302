//! One-time stealth handles: ERC-5564 scheme 1 (secp256k1) with its
//! one-byte view tag.
//!
//! The recipient publishes a meta-address `st:eth:0x<spendPub><viewPub>`
//! (two 33-byte compressed points). For each message the sender draws an
//! ephemeral key `r`, computes the shared point `S = r·V`, hashes its
//! 33-byte compressed form with keccak-256 into `h`, and announces `R = r·G`
//! with the view tag `h[0]`; the stealth address is that of `P + h·G`. A
//! scanner holding the viewing key recomputes `h` from `R`, skips the 255
//! in 256 rows whose tag differs, and only then does the rest. Hashing the
//! compressed point is what `@scopelift/stealth-address-sdk` 0.2.2 does;
//! the interop test pins that version.

use std::{fmt, str::FromStr};

use alloy_primitives::{keccak256, Address};
use k256::{
    elliptic_curve::{ops::Reduce, sec1::ToEncodedPoint},
    FieldBytes, ProjectivePoint, PublicKey, Scalar, SecretKey, U256,
};

use crate::SealError;

const PREFIX: &str = "st:eth:0x";
const POINT_LEN: usize = 33;

/// A recipient's stealth meta-address: the spending and viewing public keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetaAddress {
    spend: PublicKey,
    view: PublicKey,
}

impl MetaAddress {
    /// The spending public key.
    pub fn spend(&self) -> &PublicKey {
        &self.spend
    }

    /// The viewing public key.
    pub fn view(&self) -> &PublicKey {
        &self.view
    }
}

impl fmt::Display for MetaAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{PREFIX}{}{}",
            hex::encode(compressed(&self.spend)),
            hex::encode(compressed(&self.view))
        )
    }
}

impl FromStr for MetaAddress {
    type Err = SealError;

    fn from_str(s: &str) -> Result<Self, SealError> {
        let hex_part = s.strip_prefix(PREFIX).ok_or(SealError::InvalidMetaAddress(
            "does not start with st:eth:0x",
        ))?;
        let bytes =
            hex::decode(hex_part).map_err(|_| SealError::InvalidMetaAddress("not hexadecimal"))?;
        if bytes.len() != 2 * POINT_LEN {
            return Err(SealError::InvalidMetaAddress("not two 33-byte keys"));
        }
        let point = |b: &[u8]| {
            PublicKey::from_sec1_bytes(b)
                .map_err(|_| SealError::InvalidMetaAddress("a key is not a secp256k1 point"))
        };
        Ok(MetaAddress {
            spend: point(&bytes[..POINT_LEN])?,
            view: point(&bytes[POINT_LEN..])?,
        })
    }
}

/// What a sender announces for one message, and the address it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    /// `R = r·G`, compressed.
    pub ephemeral_public: [u8; POINT_LEN],
    /// The first byte of the hashed shared secret.
    pub view_tag: u8,
    /// The one-time stealth address.
    pub address: Address,
}

/// A fresh handle for `meta` with a random ephemeral key.
pub fn new_handle(meta: &MetaAddress) -> Handle {
    handle_with(meta, &random_secret())
}

/// The handle for `meta` with the ephemeral key `ephemeral` (deterministic;
/// for tests and interop checks).
pub fn handle_with(meta: &MetaAddress, ephemeral: &SecretKey) -> Handle {
    let shared = meta.view.to_projective() * *ephemeral.to_nonzero_scalar();
    let (view_tag, h) = hashed(&shared);
    let stealth = meta.spend.to_projective() + ProjectivePoint::GENERATOR * h;
    Handle {
        ephemeral_public: compressed(&ephemeral.public_key()),
        view_tag,
        address: address_of(&stealth),
    }
}

/// A recipient's stealth keys: spending and viewing. Never leave the client.
#[derive(Clone)]
pub struct Keys {
    spend: SecretKey,
    view: SecretKey,
}

impl Keys {
    /// Fresh keys from the operating system's randomness.
    pub fn generate() -> Self {
        Keys {
            spend: random_secret(),
            view: random_secret(),
        }
    }

    /// Keys from their 32-byte scalars.
    pub fn from_bytes(spend: &[u8], view: &[u8]) -> Result<Self, SealError> {
        let key = |b: &[u8]| {
            SecretKey::from_slice(b).map_err(|_| SealError::InvalidKey("secp256k1 secret key"))
        };
        Ok(Keys {
            spend: key(spend)?,
            view: key(view)?,
        })
    }

    /// The spending key's 32 bytes.
    pub fn spend_bytes(&self) -> [u8; 32] {
        self.spend.to_bytes().into()
    }

    /// The viewing key's 32 bytes.
    pub fn view_bytes(&self) -> [u8; 32] {
        self.view.to_bytes().into()
    }

    /// The meta-address to publish.
    pub fn meta_address(&self) -> MetaAddress {
        MetaAddress {
            spend: self.spend.public_key(),
            view: self.view.public_key(),
        }
    }

    /// The stealth address a row's `ephemeral_public` and `view_tag` stand
    /// for, if it is ours: `None` for a tag that does not match (the fast
    /// path: no point addition) or a key that is not a point.
    pub fn check(&self, ephemeral_public: &[u8], view_tag: u8) -> Option<Address> {
        let (tag, h) = self.shared(ephemeral_public)?;
        if tag != view_tag {
            return None;
        }
        let stealth = self.spend.public_key().to_projective() + ProjectivePoint::GENERATOR * h;
        Some(address_of(&stealth))
    }

    /// The secret key of the stealth address for `ephemeral_public`:
    /// `p + h mod n`, what spends a payment sent to it.
    pub fn stealth_secret(&self, ephemeral_public: &[u8]) -> Result<SecretKey, SealError> {
        let (_, h) = self
            .shared(ephemeral_public)
            .ok_or(SealError::InvalidKey("ephemeral public key"))?;
        let s = *self.spend.to_nonzero_scalar() + h;
        SecretKey::from_bytes(&s.to_bytes()).map_err(|_| SealError::InvalidKey("stealth key"))
    }

    fn shared(&self, ephemeral_public: &[u8]) -> Option<(u8, Scalar)> {
        let r = PublicKey::from_sec1_bytes(ephemeral_public).ok()?;
        Some(hashed(
            &(r.to_projective() * *self.view.to_nonzero_scalar()),
        ))
    }
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Keys(..)")
    }
}

/// The view tag and the scalar `h` of a shared point.
fn hashed(shared: &ProjectivePoint) -> (u8, Scalar) {
    let h = keccak256(shared.to_affine().to_encoded_point(true).as_bytes());
    let scalar = <Scalar as Reduce<U256>>::reduce_bytes(&FieldBytes::from(h.0));
    (h[0], scalar)
}

fn compressed(key: &PublicKey) -> [u8; POINT_LEN] {
    let mut out = [0; POINT_LEN];
    out.copy_from_slice(key.to_encoded_point(true).as_bytes());
    out
}

fn address_of(point: &ProjectivePoint) -> Address {
    let uncompressed = point.to_affine().to_encoded_point(false);
    Address::from_slice(&keccak256(&uncompressed.as_bytes()[1..])[12..])
}

fn random_secret() -> SecretKey {
    loop {
        if let Ok(key) = SecretKey::from_slice(&rand::random::<[u8; 32]>()) {
            return key;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recipient_finds_its_handle_and_can_spend_from_it() {
        let bob = Keys::generate();
        let meta = bob.meta_address();
        let handle = new_handle(&meta);
        assert_eq!(
            bob.check(&handle.ephemeral_public, handle.view_tag),
            Some(handle.address)
        );
        let secret = bob
            .stealth_secret(&handle.ephemeral_public)
            .expect("stealth key");
        assert_eq!(
            address_of(&secret.public_key().to_projective()),
            handle.address
        );
        let other = Keys::generate();
        let theirs = other.check(&handle.ephemeral_public, handle.view_tag);
        assert_ne!(theirs, Some(handle.address));
        assert_eq!(
            bob.check(&handle.ephemeral_public, handle.view_tag ^ 1),
            None
        );
        assert_eq!(bob.check(&[2; 33], handle.view_tag), None);
    }

    #[test]
    fn meta_addresses_round_trip_and_bad_ones_are_named() {
        let meta = Keys::generate().meta_address();
        let text = meta.to_string();
        assert!(
            text.starts_with("st:eth:0x") && text.len() == 9 + 132,
            "{text}"
        );
        assert_eq!(text.parse::<MetaAddress>().expect("parse"), meta);
        for (bad, why) in [
            ("st:btc:0x00", "does not start with st:eth:0x"),
            ("st:eth:0xzz", "not hexadecimal"),
            ("st:eth:0x0202", "not two 33-byte keys"),
        ] {
            assert_eq!(
                bad.parse::<MetaAddress>(),
                Err(SealError::InvalidMetaAddress(why))
            );
        }
        let not_a_point = format!("st:eth:0x05{}", "11".repeat(65));
        assert!(not_a_point.parse::<MetaAddress>().is_err());
    }
}
