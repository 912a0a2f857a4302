//! Authorship (spec §4.10 rule 6): an inner may carry `sig`, the sender's
//! wallet signature (EIP-191 personal message, recovering to the address
//! in `f`), and `sig2`, an ML-DSA-65 signature (FIPS 204, context
//! [`CONTEXT`]) by the key the sender published in its mailbox. Recipients
//! verify them; the server never sees them.
//!
//! What both sign is the *unsigned inner*: `␞nf2␞`, the meta object
//! without its `sig` and `sig2` members — the others in their order,
//! written compactly — `␞`, the text. A signer appends `sig` and `sig2` as
//! the meta's last members; a reader drops them and rebuilds the same
//! bytes whatever their position.

use alloy_primitives::{Address, Signature as WalletSignature};
use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use ml_dsa::{EncodedSignature, EncodedVerifyingKey, MlDsa65, SigningKey, VerifyingKey};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::{
    inner::{self, Inner, SEP, TAG},
    SealError,
};

/// The ML-DSA context string of `sig2`.
pub const CONTEXT: &[u8] = b"relay/messages/v2/inner";
/// An ML-DSA-65 public key's length.
pub const DSA_PUBLIC_KEY_LEN: usize = 1952;
/// An ML-DSA-65 signature's length.
pub const DSA_SIGNATURE_LEN: usize = 3309;

/// A sender's ML-DSA-65 key. Never leaves the client.
pub struct DsaKey(SigningKey<MlDsa65>);

impl DsaKey {
    /// A fresh key from the operating system's randomness.
    pub fn generate() -> Self {
        Self::from_seed(&rand::random())
    }

    /// The key from its 32-byte seed (FIPS 204 `ξ`).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        DsaKey(SigningKey::from_seed(&(*seed).into()))
    }

    /// The seed.
    pub fn seed(&self) -> [u8; 32] {
        self.0.to_seed().into()
    }

    /// The public key to publish (1952 bytes).
    pub fn public_key(&self) -> Vec<u8> {
        self.0.expanded_key().verifying_key().encode().to_vec()
    }

    /// A deterministic signature of `msg` under [`CONTEXT`].
    pub fn sign(&self, msg: &[u8]) -> Vec<u8> {
        self.0
            .expanded_key()
            .sign_deterministic(msg, CONTEXT)
            .map(|s| s.encode().to_vec())
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for DsaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DsaKey(..)")
    }
}

/// Whether `sig` is an ML-DSA-65 signature of `msg` under [`CONTEXT`] by
/// `public`. Malformed keys and signatures are simply not valid.
pub fn verify_dsa(public: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    let (Ok(pk), Ok(sig)) = (
        EncodedVerifyingKey::<MlDsa65>::try_from(public),
        EncodedSignature::<MlDsa65>::try_from(sig),
    ) else {
        return false;
    };
    let Some(sig) = ml_dsa::Signature::<MlDsa65>::decode(&sig) else {
        return false;
    };
    VerifyingKey::<MlDsa65>::decode(&pk).verify_with_context(msg, CONTEXT, &sig)
}

/// The meta object's members in their order, values as written.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Ordered)
    }
}

/// An inner's signatures and the bytes they sign.
#[derive(Debug, PartialEq, Eq)]
pub struct Signed {
    /// The unsigned inner.
    pub unsigned: String,
    /// `sig`, if present and a string.
    pub sig: Option<String>,
    /// `sig2`, if present and a string.
    pub sig2: Option<String>,
}

/// Splits an inner's wire form into its signatures and the unsigned inner.
pub fn split(wire: &str) -> Result<Signed, SealError> {
    let (Members(members), text) = inner::split::<Members>(wire)?;
    let (mut sig, mut sig2, mut kept) = (None, None, Vec::new());
    for (key, value) in members {
        let as_string = || serde_json::from_str::<String>(value.get()).ok();
        match key.as_str() {
            "sig" => sig = as_string(),
            "sig2" => sig2 = as_string(),
            _ => kept.push(format!(
                "{}:{}",
                serde_json::to_string(&key).unwrap_or_default(),
                value.get()
            )),
        }
    }
    Ok(Signed {
        unsigned: format!("{SEP}{TAG}{SEP}{{{}}}{SEP}{text}", kept.join(",")),
        sig,
        sig2,
    })
}

/// `inner`'s wire form signed by the wallet key `wallet` (its address
/// should be `inner.meta.f`) and/or `dsa`.
pub fn sign(
    inner: &Inner,
    wallet: Option<&k256::ecdsa::SigningKey>,
    dsa: Option<&DsaKey>,
) -> Result<String, SealError> {
    let unsigned = inner.encode();
    let mut added = Vec::new();
    if let Some(key) = wallet {
        let digest = alloy_primitives::eip191_hash_message(unsigned.as_bytes());
        let (sig, recid) = key
            .sign_prehash_recoverable(digest.as_slice())
            .map_err(|_| SealError::InvalidKey("wallet key"))?;
        let sig = WalletSignature::from((sig, recid));
        added.push(format!("\"sig\":\"0x{}\"", hex::encode(sig.as_bytes())));
    }
    if let Some(key) = dsa {
        added.push(format!(
            "\"sig2\":\"{}\"",
            B64.encode(key.sign(unsigned.as_bytes()))
        ));
    }
    if added.is_empty() {
        return Ok(unsigned);
    }
    let meta = serde_json::to_string(&inner.meta).map_err(|_| SealError::Inner("meta"))?;
    let open = &meta[..meta.len() - 1];
    let joiner = if open.len() > 1 { "," } else { "" };
    let signed_meta = format!("{open}{joiner}{}}}", added.join(","));
    Ok(format!("{SEP}{TAG}{SEP}{signed_meta}{SEP}{}", inner.text))
}

/// Who signed an inner, as far as its signatures prove.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Authorship {
    /// The address `sig` recovers to (compare with `f`).
    pub wallet: Option<Address>,
    /// Whether `sig2` verifies under the sender's published ML-DSA key
    /// (`None`: no `sig2`, or no key to check it with).
    pub pq: Option<bool>,
}

/// Checks `wire`'s signatures; `dsa_public` is the ML-DSA key the claimed
/// sender published, if any.
pub fn verify(wire: &str, dsa_public: Option<&[u8]>) -> Result<Authorship, SealError> {
    let signed = split(wire)?;
    let wallet = signed.sig.as_deref().and_then(|sig| {
        let bytes = hex::decode(sig.strip_prefix("0x")?).ok()?;
        let sig = WalletSignature::try_from(bytes.as_slice()).ok()?;
        sig.recover_address_from_msg(signed.unsigned.as_bytes())
            .ok()
    });
    let pq = match (signed.sig2.as_deref(), dsa_public) {
        (Some(sig2), Some(public)) => Some(
            B64.decode(sig2)
                .is_ok_and(|sig| verify_dsa(public, signed.unsigned.as_bytes(), &sig)),
        ),
        _ => None,
    };
    Ok(Authorship { wallet, pq })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inner::Meta;

    fn wallet() -> (k256::ecdsa::SigningKey, Address) {
        let key = k256::ecdsa::SigningKey::from_slice(&[0x42; 32]).expect("key");
        let point = key.verifying_key().to_encoded_point(false);
        let address =
            Address::from_slice(&alloy_primitives::keccak256(&point.as_bytes()[1..])[12..]);
        (key, address)
    }

    #[test]
    fn both_signatures_verify_and_name_their_signer() {
        let (key, address) = wallet();
        let dsa = DsaKey::from_seed(&[7; 32]);
        let inner = Inner {
            meta: Meta {
                f: Some(address.to_string()),
                c: Some("abcdefgh".into()),
                ..Meta::default()
            },
            text: "hi".into(),
        };
        let wire = sign(&inner, Some(&key), Some(&dsa)).expect("sign");
        assert_eq!(Inner::decode(&wire).expect("still an inner"), inner);
        let who = verify(&wire, Some(&dsa.public_key())).expect("verify");
        assert_eq!(
            who,
            Authorship {
                wallet: Some(address),
                pq: Some(true)
            }
        );
        let other = DsaKey::from_seed(&[8; 32]).public_key();
        assert_eq!(verify(&wire, Some(&other)).expect("verify").pq, Some(false));
        let tampered = wire.replace("␞hi", "␞ho");
        let who = verify(&tampered, Some(&dsa.public_key())).expect("verify");
        assert_ne!(who.wallet, Some(address));
        assert_eq!(who.pq, Some(false));
    }

    #[test]
    fn the_unsigned_inner_is_the_same_wherever_the_signatures_sit() {
        let a = "␞nf2␞{\"c\":\"abcdefgh\",\"sig\":\"0x00\",\"d\":5,\"sig2\":\"AA==\"}␞t";
        let b = "␞nf2␞{\"sig2\":\"AA==\",\"c\":\"abcdefgh\",\"d\":5,\"sig\":\"0x00\"}␞t";
        let (sa, sb) = (split(a).expect("a"), split(b).expect("b"));
        assert_eq!(sa.unsigned, "␞nf2␞{\"c\":\"abcdefgh\",\"d\":5}␞t");
        assert_eq!(sa, sb);
        assert_eq!(sa.sig2.as_deref(), Some("AA=="));
    }

    #[test]
    fn an_unsigned_inner_signs_to_itself() {
        let inner = Inner::text("plain");
        assert_eq!(sign(&inner, None, None).expect("sign"), inner.encode());
        assert_eq!(
            verify(&inner.encode(), None).expect("verify"),
            Authorship::default()
        );
        assert!(!verify_dsa(&[0; 3], b"m", &[0; 5]));
    }
}
