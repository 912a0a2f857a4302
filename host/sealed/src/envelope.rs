//! The sealed envelope: HPKE (RFC 9180) in base mode with the X-Wing KEM
//! (ML-KEM-768 + X25519, `0x647a`), HKDF-SHA256 (`0x0001`) and AES-256-GCM
//! (`0x0002`).
//!
//! A sealed envelope is the KEM's encapsulated key (1120 bytes) followed by
//! the AEAD ciphertext (the padded plaintext and a 16-byte tag). X-Wing
//! keeps the message confidential as long as either ML-KEM-768 or X25519
//! holds: traffic stored today stays sealed against a quantum computer
//! later. The combiner is X-Wing's own (the `x-wing` crate behind `hpke`).

use hpke::{
    aead::AesGcm256, kdf::HkdfSha256, kem::XWing, Deserializable, Kem as _, OpModeR, OpModeS,
    Serializable,
};

use crate::SealError;

/// HPKE's `info` for every envelope: binds the key schedule to this use.
pub const INFO: &[u8] = b"relay/messages/v2";
/// The KEM's id in HPKE's registry (X-Wing).
pub const KEM_ID: u16 = 0x647a;
/// The KDF's id (HKDF-SHA256).
pub const KDF_ID: u16 = 0x0001;
/// The AEAD's id (AES-256-GCM).
pub const AEAD_ID: u16 = 0x0002;
/// An X-Wing public (encapsulation) key's length.
pub const PUBLIC_KEY_LEN: usize = 1216;
/// An X-Wing secret key's length (its seed, as the draft encodes it).
pub const SECRET_KEY_LEN: usize = 32;
/// The encapsulated key's length at the head of every envelope.
pub const ENCAPPED_LEN: usize = 1120;
/// The AEAD tag's length at the end of every envelope.
pub const TAG_LEN: usize = 16;

type Kem = XWing;
type Kdf = HkdfSha256;
type Aead = AesGcm256;

/// A recipient's X-Wing secret key. Never leaves the client.
#[derive(Clone)]
pub struct SecretKey(<Kem as hpke::Kem>::PrivateKey);

/// A recipient's X-Wing public key, as published in the mailbox (`kemPub`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey(<Kem as hpke::Kem>::PublicKey);

impl SecretKey {
    /// A fresh key from the operating system's randomness.
    pub fn generate() -> Self {
        SecretKey(Kem::gen_keypair().0)
    }

    /// The key from its 32-byte seed encoding.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, SealError> {
        <Kem as hpke::Kem>::PrivateKey::from_bytes(bytes)
            .map(SecretKey)
            .map_err(|_| SealError::InvalidKey("X-Wing secret key"))
    }

    /// The 32-byte seed encoding.
    pub fn to_bytes(&self) -> [u8; SECRET_KEY_LEN] {
        self.0.to_bytes().into()
    }

    /// The matching public key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(Kem::sk_to_pk(&self.0))
    }
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

impl PublicKey {
    /// The key from its 1216-byte encoding; refuses anything else.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, SealError> {
        <Kem as hpke::Kem>::PublicKey::from_bytes(bytes)
            .map(PublicKey)
            .map_err(|_| SealError::InvalidKey("X-Wing public key"))
    }

    /// The 1216-byte encoding.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.0.to_bytes().to_vec()
    }
}

/// Seals `plaintext` to `recipient`, authenticating `aad` with it: the
/// encapsulated key followed by the ciphertext.
pub fn seal(recipient: &PublicKey, aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, SealError> {
    let (encapped, ciphertext) = hpke::single_shot_seal::<Aead, Kdf, Kem>(
        &OpModeS::Base,
        &recipient.0,
        INFO,
        plaintext,
        aad,
    )
    .map_err(|_| SealError::Seal)?;
    let mut out = encapped.to_bytes().to_vec();
    out.extend_from_slice(&ciphertext);
    Ok(out)
}

/// Opens an envelope made by [`seal`] with the same `aad`. Fails alike for
/// an envelope sealed to another key and for one tampered with.
pub fn open(secret: &SecretKey, aad: &[u8], envelope: &[u8]) -> Result<Vec<u8>, SealError> {
    if envelope.len() < ENCAPPED_LEN + TAG_LEN {
        return Err(SealError::Open);
    }
    let (encapped, ciphertext) = envelope.split_at(ENCAPPED_LEN);
    let encapped =
        <Kem as hpke::Kem>::EncappedKey::from_bytes(encapped).map_err(|_| SealError::Open)?;
    hpke::single_shot_open::<Aead, Kdf, Kem>(
        &OpModeR::Base,
        &secret.0,
        &encapped,
        INFO,
        ciphertext,
        aad,
    )
    .map_err(|_| SealError::Open)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_envelope_opens_only_with_its_key_and_its_aad() {
        let bob = SecretKey::generate();
        let eve = SecretKey::generate();
        let sealed = seal(&bob.public_key(), b"handle", b"hello").expect("seal");
        assert_eq!(sealed.len(), ENCAPPED_LEN + 5 + TAG_LEN);
        assert_eq!(open(&bob, b"handle", &sealed).expect("open"), b"hello");
        assert_eq!(open(&eve, b"handle", &sealed), Err(SealError::Open));
        assert_eq!(open(&bob, b"other", &sealed), Err(SealError::Open));
        let mut flipped = sealed.clone();
        *flipped.last_mut().expect("a byte") ^= 1;
        assert_eq!(open(&bob, b"handle", &flipped), Err(SealError::Open));
        assert_eq!(open(&bob, b"handle", &sealed[..100]), Err(SealError::Open));
    }

    #[test]
    fn keys_round_trip_through_their_encodings() {
        let sk = SecretKey::generate();
        let again = SecretKey::from_bytes(&sk.to_bytes()).expect("seed");
        assert_eq!(again.public_key(), sk.public_key());
        let pk = sk.public_key().to_bytes();
        assert_eq!(pk.len(), PUBLIC_KEY_LEN);
        assert_eq!(PublicKey::from_bytes(&pk).expect("pk"), sk.public_key());
        assert!(PublicKey::from_bytes(&pk[1..]).is_err());
        assert!(SecretKey::from_bytes(&[0; 31]).is_err());
        assert_eq!(format!("{sk:?}"), "SecretKey(..)");
    }
}
