//! EIP-3009 `transferWithAuthorization` (what x402's `exact` EVM scheme
//! pays with): the EIP-712 digest under the token's domain `{name,
//! version, chainId, verifyingContract}`, the off-chain checks before the
//! relayer settles one (canonical signature by `from`, amount, payee,
//! validity window), the on-chain nonce check, and the calldata the relayer
//! sends.

use alloy::{
    primitives::{Address, Bytes, B256, U256},
    sol,
    sol_types::{eip712_domain, SolCall, SolStruct},
};

use crate::permit2::{recover, vrs, Permit2Error};
use crate::reader::{ChainReader, ReadError};

sol! {
    /// The signed struct (EIP-3009).
    struct TransferWithAuthorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }

    /// The settling call (v, r, s form).
    function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s);

    /// Whether `nonce` of `authorizer` is used.
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool);

    /// ERC-20 transfer (refunds).
    function transfer(address to, uint256 value) external returns (bool);
}

/// A signed EIP-3009 authorization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedTransfer {
    /// Payer.
    pub from: Address,
    /// Payee.
    pub to: Address,
    /// Amount, smallest units.
    pub value: U256,
    /// Valid strictly after (unix seconds).
    pub valid_after: U256,
    /// Valid strictly before (unix seconds).
    pub valid_before: U256,
    /// The payer's random nonce.
    pub nonce: B256,
    /// 65-byte (r, s, v) or 64-byte EIP-2098 signature.
    pub signature: Bytes,
}

/// What the invoice requires of a payment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invoice {
    /// The chain.
    pub chain_id: u64,
    /// The token (the domain's verifying contract).
    pub token: Address,
    /// The token's EIP-712 domain name (`USD Coin`).
    pub name: String,
    /// The token's EIP-712 domain version (`2`).
    pub version: String,
    /// The payee.
    pub pay_to: Address,
    /// The least amount accepted.
    pub amount: U256,
    /// Now, unix seconds.
    pub now_secs: u64,
}

/// Why a payment is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PaymentError {
    /// The signature is malformed, high-s, or not by `from`.
    #[error("payment.signature: {0}")]
    BadSignature(String),
    /// Paid to someone else.
    #[error("payment.to: {paid} is not the invoice's payTo {expected}")]
    WrongPayee {
        /// In the payment.
        paid: Address,
        /// The invoice's.
        expected: Address,
    },
    /// Less than the invoice.
    #[error("payment.value: {paid} is less than the required {required}")]
    Underpaid {
        /// In the payment.
        paid: U256,
        /// Required.
        required: U256,
    },
    /// Outside its validity window.
    #[error("payment: not valid now ({now}): validAfter {after}, validBefore {before}")]
    OutsideWindow {
        /// validAfter.
        after: U256,
        /// validBefore.
        before: U256,
        /// Now.
        now: u64,
    },
    /// The nonce was used already.
    #[error("payment.nonce: {0} is already used")]
    NonceUsed(B256),
    /// The payer cannot pay: its balance is short, or the settlement
    /// would revert for another reason (simulated before anything is sent).
    #[error("payment.from: {0}; nothing was settled")]
    Unfunded(String),
}

/// The EIP-712 digest `from` signs for `t` under `i`'s token domain.
pub fn digest(t: &SignedTransfer, i: &Invoice) -> B256 {
    let domain = eip712_domain! {
        name: i.name.clone(),
        version: i.version.clone(),
        chain_id: i.chain_id,
        verifying_contract: i.token,
    };
    TransferWithAuthorization {
        from: t.from,
        to: t.to,
        value: t.value,
        validAfter: t.valid_after,
        validBefore: t.valid_before,
        nonce: t.nonce,
    }
    .eip712_signing_hash(&domain)
}

/// Every check that needs no chain: signer, payee, amount, window (with a
/// margin of `settle_secs` before `validBefore` so settling can mine).
pub fn verify_offline(
    t: &SignedTransfer,
    i: &Invoice,
    settle_secs: u64,
) -> Result<(), PaymentError> {
    let bad = |e: Permit2Error| PaymentError::BadSignature(e.to_string());
    let signer = recover(&t.signature, &digest(t, i)).map_err(bad)?;
    if signer != t.from {
        return Err(PaymentError::BadSignature(format!(
            "recovers to {signer}, not from {}",
            t.from
        )));
    }
    if t.to != i.pay_to {
        return Err(PaymentError::WrongPayee {
            paid: t.to,
            expected: i.pay_to,
        });
    }
    if t.value < i.amount {
        return Err(PaymentError::Underpaid {
            paid: t.value,
            required: i.amount,
        });
    }
    let now = U256::from(i.now_secs);
    if t.valid_after >= now || t.valid_before <= now + U256::from(settle_secs) {
        return Err(PaymentError::OutsideWindow {
            after: t.valid_after,
            before: t.valid_before,
            now: i.now_secs,
        });
    }
    Ok(())
}

/// The calldata that settles `t` on its token.
pub fn settle_calldata(t: &SignedTransfer) -> Result<Bytes, PaymentError> {
    let (v, r, s) = vrs(&t.signature).map_err(|e| PaymentError::BadSignature(e.to_string()))?;
    Ok(transferWithAuthorizationCall {
        from: t.from,
        to: t.to,
        value: t.value,
        validAfter: t.valid_after,
        validBefore: t.valid_before,
        nonce: t.nonce,
        v,
        r,
        s,
    }
    .abi_encode()
    .into())
}

/// The calldata of an ERC-20 `transfer(to, value)` (a refund).
pub fn transfer_calldata(to: Address, value: U256) -> Bytes {
    transferCall { to, value }.abi_encode().into()
}

impl ChainReader {
    /// Whether `nonce` of `authorizer` is still unused on `token`.
    pub async fn authorization_unused(
        &self,
        chain: u64,
        token: Address,
        authorizer: Address,
        nonce: B256,
    ) -> Result<bool, ReadError> {
        let data = authorizationStateCall { authorizer, nonce }.abi_encode();
        let out = self.read(chain, token, data).await?;
        let used =
            authorizationStateCall::abi_decode_returns(&out).map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })?;
        Ok(!used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::signers::{local::PrivateKeySigner, SignerSync};

    fn invoice() -> Invoice {
        Invoice {
            chain_id: 8453,
            token: Address::repeat_byte(1),
            name: "USD Coin".into(),
            version: "2".into(),
            pay_to: Address::repeat_byte(2),
            amount: U256::from(1_000u64),
            now_secs: 1_000,
        }
    }

    fn paid(key: &PrivateKeySigner, value: u64, before: u64) -> SignedTransfer {
        let mut t = SignedTransfer {
            from: key.address(),
            to: Address::repeat_byte(2),
            value: U256::from(value),
            valid_after: U256::ZERO,
            valid_before: U256::from(before),
            nonce: B256::repeat_byte(9),
            signature: Bytes::new(),
        };
        let sig = key.sign_hash_sync(&digest(&t, &invoice())).unwrap();
        t.signature = sig.as_bytes().to_vec().into();
        t
    }

    #[test]
    fn a_payment_is_checked_for_signer_amount_payee_and_window() {
        let key = PrivateKeySigner::random();
        assert_eq!(
            verify_offline(&paid(&key, 1_000, 2_000), &invoice(), 30),
            Ok(())
        );
        assert!(matches!(
            verify_offline(&paid(&key, 999, 2_000), &invoice(), 30),
            Err(PaymentError::Underpaid { .. })
        ));
        assert!(matches!(
            verify_offline(&paid(&key, 1_000, 1_010), &invoice(), 30),
            Err(PaymentError::OutsideWindow { .. })
        ));
        let mut other = paid(&key, 1_000, 2_000);
        other.value = U256::from(5_000u64);
        assert!(matches!(
            verify_offline(&other, &invoice(), 30),
            Err(PaymentError::BadSignature(_))
        ));
        assert!(settle_calldata(&paid(&key, 1_000, 2_000)).is_ok());
    }
}
