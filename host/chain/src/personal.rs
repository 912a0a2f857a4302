//! EIP-191 personal-message signatures a caller brings (a netting text,
//! an erasure request, a hook's proof, a mailbox publication, a name
//! listing or transfer): who signed a text, refusing a malformed or
//! high-s (malleable) signature. One check for every feature that takes
//! one; each maps the refusal into its own errorCode.

use alloy::primitives::{Address, Signature};

/// Why a signature names no signer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PersonalError {
    /// Not 65 bytes of hex.
    #[error("not a 65-byte hex signature")]
    Malformed,
    /// `s` above n/2: the malleable twin of a valid signature.
    #[error("high-s signature")]
    HighS,
    /// It does not recover a key.
    #[error("{0}")]
    Unrecoverable(String),
}

/// The address whose key signed `text` (EIP-191) with `signature` (65
/// bytes hex, `0x` optional, low s).
pub fn signer(text: &str, signature: &str) -> Result<Address, PersonalError> {
    let sig: Signature = signature.parse().map_err(|_| PersonalError::Malformed)?;
    if sig.normalize_s().is_some() {
        return Err(PersonalError::HighS);
    }
    sig.recover_address_from_msg(text.as_bytes())
        .map_err(|e| PersonalError::Unrecoverable(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::signers::{local::PrivateKeySigner, SignerSync};

    #[test]
    fn a_signature_names_its_signer_and_a_malleable_or_malformed_one_nobody() {
        let key = PrivateKeySigner::random();
        let sig = key.sign_message_sync(b"relay text").unwrap();
        let hex = format!("0x{}", hex::encode(sig.as_bytes()));
        assert_eq!(signer("relay text", &hex), Ok(key.address()));
        assert_ne!(signer("other text", &hex), Ok(key.address()));
        let (r, s) = (sig.r(), sig.s());
        let n = alloy::primitives::U256::from_be_slice(
            &hex::decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
                .unwrap(),
        );
        let twin = Signature::new(r, n - s, !sig.v());
        let twin = format!("0x{}", hex::encode(twin.as_bytes()));
        assert_eq!(signer("relay text", &twin), Err(PersonalError::HighS));
        assert_eq!(
            signer("relay text", "0x1234"),
            Err(PersonalError::Malformed)
        );
    }
}
