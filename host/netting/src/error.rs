//! Why a netting request was refused.

use relay_chain::reader::ReadError;
use relay_store::StoreError;

/// A refused or failed netting request. Nothing moved unless the variant
/// says so.
#[derive(Debug, thiserror::Error)]
pub enum NettingError {
    /// A field is malformed (the field, why).
    #[error("{field}: {why}")]
    Invalid {
        /// The request field.
        field: &'static str,
        /// Why.
        why: String,
    },
    /// The signature does not recover to the address over the exact text.
    #[error("signature: {0}")]
    Signature(String),
    /// The address (the field names which) is not enrolled.
    #[error(
        "{field} {address} is not enrolled (GET /api/netting/terms, then POST /api/netting/enroll)"
    )]
    NotEnrolled {
        /// `address`, `from` or `to`.
        field: &'static str,
        /// The address.
        address: String,
    },
    /// The nonce is at or below the account's.
    #[error(
        "nonce {nonce} is spent: the account's nonce is {current}; sign again with a larger one"
    )]
    NonceSpent {
        /// Asked.
        nonce: u64,
        /// The account's.
        current: u64,
    },
    /// The balance does not cover the amount.
    #[error("insufficient balance: {balance} available, {amount} asked")]
    Insufficient {
        /// Available.
        balance: i64,
        /// Asked.
        amount: i64,
    },
    /// A cap (named) would be exceeded.
    #[error("{which} cap is {cap}: {why}")]
    Cap {
        /// `deposit`, `withdraw` or `balance`.
        which: &'static str,
        /// The cap, smallest units.
        cap: u64,
        /// What exceeds it.
        why: String,
    },
    /// Crediting the deposit would push liabilities above the safe share.
    #[error("the deposit would push liabilities to {after} above the safe share {cap} of float; it is not credited")]
    SafeShare {
        /// Liabilities after the deposit.
        after: i128,
        /// The safe share now.
        cap: i128,
    },
    /// The chain is not covered.
    #[error("chain {0} is not a covered netting chain (GET /api/netting/reserves lists them)")]
    ChainUnsupported(u64),
    /// The deposit transaction is not mined or not confirmed enough yet.
    #[error("deposit not confirmed yet: {0}")]
    DepositPending(String),
    /// The deposit transaction does not pay the relayer from the address.
    #[error("deposit refused: {0}")]
    DepositInvalid(String),
    /// The amount does not cover the destination payout cost.
    #[error("the payout cost on chain {chain} is {cost}, not below the amount {amount}: nothing would arrive")]
    BelowPayoutCost {
        /// Destination.
        chain: u64,
        /// Its payout cost.
        cost: u128,
        /// The amount.
        amount: u128,
    },
    /// The relayer cannot pay on the chain right now (float, simulation).
    #[error("the relayer cannot pay out on chain {chain} now: {why}")]
    FloatShort {
        /// Destination.
        chain: u64,
        /// Why.
        why: String,
    },
    /// The payout failed on chain; the amount was credited back.
    #[error("the payout failed ({0}); the amount was credited back by a reversing entry")]
    PayoutFailed(String),
    /// The host has no relayer key.
    #[error("this host has no relayer key: netting deposits and withdrawals are unavailable")]
    NoRelayer,
    /// A chain read failed, or a price is missing.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

impl From<ReadError> for NettingError {
    fn from(e: ReadError) -> Self {
        NettingError::Unavailable(e.to_string())
    }
}

/// A malformed field.
pub(crate) fn invalid(field: &'static str, why: impl Into<String>) -> NettingError {
    NettingError::Invalid {
        field,
        why: why.into(),
    }
}
