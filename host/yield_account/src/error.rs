//! Why a yield-account request is refused or failed.

use alloy::primitives::U256;

/// A refused or failed yield-account request. Every refusal is decided
/// before anything is broadcast.
#[derive(Debug, thiserror::Error)]
pub enum YieldError {
    /// No vault (or no asset token) is configured on the chain.
    #[error("chain {0} has no yield vault or no vault asset token on this host (GET /api/account/venues lists the vaults)")]
    ChainUnsupported(u64),
    /// A field is missing or malformed.
    #[error("{field}: {why}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The signature does not recover to the agent (or is high-s or
    /// malformed).
    #[error("signature: {0}")]
    Signer(String),
    /// The intent was signed under another chain id than its srcChain.
    #[error("signature: signed under chainId {signed}, but srcChain is {src}: sign with domain.chainId = srcChain")]
    DomainChain {
        /// The chain id the agent's signature is valid under.
        signed: u64,
        /// The intent's srcChain.
        src: u64,
    },
    /// The deadline is not in the future.
    #[error("intent.deadline: {deadline} is not after now ({now})")]
    Expired {
        /// The deadline, seconds.
        deadline: U256,
        /// Now, seconds.
        now: u64,
    },
    /// The nonce was spent by an earlier spend.
    #[error("intent.nonce: {0} is already spent for this agent on this chain")]
    NonceUsed(String),
    /// The redeem needs more shares than the agent lets the relayer pull.
    #[error(
        "the spend needs {needed} shares; the agent's allowance to the relayer is {allowance}"
    )]
    AllowanceExceeded {
        /// Shares the redeem burns.
        needed: U256,
        /// The on-chain allowance.
        allowance: U256,
    },
    /// The agent holds fewer shares than the redeem burns.
    #[error("the spend needs {needed} shares; the agent holds {held}")]
    InsufficientShares {
        /// Shares the redeem burns.
        needed: U256,
        /// Shares held.
        held: U256,
    },
    /// The amount does not cover the fee.
    #[error("amount {amount} does not cover the spend fee {fee}")]
    BelowFee {
        /// The amount.
        amount: U256,
        /// The fee.
        fee: U256,
    },
    /// No rail routes the delivery now (the engine's errorCode and
    /// message).
    #[error("no rail routes the delivery now: {0}")]
    NoRoute(String),
    /// The redeem reverts when simulated.
    #[error("the redeem reverts in simulation: {0}")]
    WouldRevert(String),
    /// This host cannot sign on the chain.
    #[error("this host cannot sign on chain {0}")]
    RelayerUnavailable(u64),
    /// A chain read failed.
    #[error("chain read: {0}")]
    Read(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(String),
}

impl From<relay_chain::reader::ReadError> for YieldError {
    fn from(e: relay_chain::reader::ReadError) -> Self {
        YieldError::Read(e.to_string())
    }
}

impl From<relay_store::StoreError> for YieldError {
    fn from(e: relay_store::StoreError) -> Self {
        YieldError::Store(e.to_string())
    }
}
