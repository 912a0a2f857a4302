//! EIP-7702 authorizations (spec §2.15, §4.8): who signed a tuple
//! `{chainId, address, nonce, yParity, r, s}` — recovered from
//! `keccak256(0x05 ‖ rlp([chain_id, address, nonce]))` with low s enforced,
//! as the protocol does — and what the chain says of the authority: its
//! live nonce and its current delegation designator (`0xef0100 ‖ address`).
//!
//! The types are alloy's ([`Authorization`], [`SignedAuthorization`]); no
//! RLP is assembled here.

pub use alloy::eips::eip7702::{Authorization, SignedAuthorization};
use alloy::primitives::{Address, Bytes, U256};

use crate::permit2::{recover, Permit2Error};
use crate::reader::{ChainReader, ReadError};

/// The delegation designator prefix an EOA's code carries once delegated.
pub const DESIGNATOR_PREFIX: [u8; 3] = [0xef, 0x01, 0x00];

/// Why a tuple recovers no authority.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthorizationError {
    /// `s` is in the upper half of the curve order (malleable; the
    /// protocol skips such a tuple).
    #[error("authorization.s: high-s signature is not canonical")]
    HighS,
    /// `yParity` is not 0 or 1.
    #[error("authorization.yParity: {0} is not 0 or 1")]
    BadParity(u8),
    /// The signature recovers no address.
    #[error("authorization: signature does not recover ({0})")]
    Unrecoverable(String),
}

/// The signer of `auth`: low-s, parity 0/1, recovered from the tuple's
/// signature hash.
pub fn authority(auth: &SignedAuthorization) -> Result<Address, AuthorizationError> {
    let parity = auth.y_parity();
    if parity > 1 {
        return Err(AuthorizationError::BadParity(parity));
    }
    let mut sig = [0u8; 65];
    sig[..32].copy_from_slice(&auth.r().to_be_bytes::<32>());
    sig[32..64].copy_from_slice(&auth.s().to_be_bytes::<32>());
    sig[64] = 27 + parity;
    recover(&sig, &auth.signature_hash()).map_err(|e| match e {
        Permit2Error::HighS => AuthorizationError::HighS,
        other => AuthorizationError::Unrecoverable(other.to_string()),
    })
}

/// The code an account delegated to `delegate` carries.
pub fn designator(delegate: Address) -> Bytes {
    [&DESIGNATOR_PREFIX[..], delegate.as_slice()]
        .concat()
        .into()
}

/// The delegate an account's `code` designates, if it is a designator.
pub fn delegated_to(code: &[u8]) -> Option<Address> {
    (code.len() == 23 && code[..3] == DESIGNATOR_PREFIX).then(|| Address::from_slice(&code[3..]))
}

/// What the chain says of an authority right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorityState {
    /// Its nonce at the latest block (the one a tuple must carry).
    pub nonce: u64,
    /// Its code.
    pub code: Bytes,
}

impl AuthorityState {
    /// Whether the account may be delegated: no code, or a designator
    /// (re-delegation); a contract cannot be.
    pub fn delegable(&self) -> bool {
        self.code.is_empty() || delegated_to(&self.code).is_some()
    }
}

impl ChainReader {
    /// The nonce and code of `who` on `chain` (latest block).
    pub async fn authority_state(
        &self,
        chain: u64,
        who: Address,
    ) -> Result<AuthorityState, ReadError> {
        use alloy::providers::Provider;
        let failed = |e: crate::rpc::FailoverError| ReadError::Failed {
            chain,
            reason: e.to_string(),
        };
        let p = self.provider(chain)?;
        let nonce = p
            .run("eth_getTransactionCount", |p| async move {
                p.get_transaction_count(who).latest().await
            })
            .await
            .map_err(failed)?;
        let code = p
            .run("eth_getCode", |p| async move { p.get_code_at(who).await })
            .await
            .map_err(failed)?;
        Ok(AuthorityState { nonce, code })
    }

    /// `eth_estimateGas` of a call from `from` on `chain`, with the
    /// authorizations applied first (a type-4 transaction); `Err` carries
    /// the node's revert message.
    pub async fn estimate_delegated(
        &self,
        chain: u64,
        from: Address,
        call: (Address, Bytes),
        auths: &[SignedAuthorization],
    ) -> Result<u64, ReadError> {
        use alloy::providers::Provider;
        use alloy::rpc::types::TransactionRequest;
        let mut tx = TransactionRequest::default()
            .from(from)
            .to(call.0)
            .input(call.1.into());
        tx.authorization_list = Some(auths.to_vec());
        self.provider(chain)?
            .run("eth_estimateGas", |p| {
                let tx = tx.clone();
                async move { p.estimate_gas(tx).await }
            })
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })
    }
}

/// Whether a tuple's chain id is `chain`, or 0 (valid on every chain).
pub fn chain_of(auth: &Authorization) -> Option<u64> {
    (auth.chain_id <= U256::from(u64::MAX)).then(|| auth.chain_id.to::<u64>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::signers::{local::PrivateKeySigner, SignerSync};

    fn signed(chain: u64, nonce: u64) -> (PrivateKeySigner, SignedAuthorization) {
        let key = PrivateKeySigner::random();
        let auth = Authorization {
            chain_id: U256::from(chain),
            address: Address::repeat_byte(0x77),
            nonce,
        };
        let sig = key.sign_hash_sync(&auth.signature_hash()).unwrap();
        (key, auth.into_signed(sig))
    }

    #[test]
    fn a_tuple_recovers_its_signer() {
        let (key, auth) = signed(8453, 3);
        assert_eq!(authority(&auth), Ok(key.address()));
    }

    #[test]
    fn a_high_s_tuple_is_refused() {
        let (_, auth) = signed(1, 0);
        let n = U256::from_str_radix(
            "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
            16,
        )
        .unwrap();
        let flipped = SignedAuthorization::new_unchecked(
            auth.inner().clone(),
            1 - auth.y_parity(),
            auth.r(),
            n - auth.s(),
        );
        assert_eq!(authority(&flipped), Err(AuthorizationError::HighS));
        let bad = SignedAuthorization::new_unchecked(auth.inner().clone(), 2, auth.r(), auth.s());
        assert_eq!(authority(&bad), Err(AuthorizationError::BadParity(2)));
    }

    #[test]
    fn the_designator_round_trips() {
        let d = Address::repeat_byte(0x42);
        let code = designator(d);
        assert_eq!(code.len(), 23);
        assert_eq!(delegated_to(&code), Some(d));
        assert_eq!(delegated_to(&[0x60, 0x80]), None);
    }
}
