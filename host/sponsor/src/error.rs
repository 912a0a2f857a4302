//! Why a sponsorship request is refused — each variant one `errorCode`
//! at the API, decided before anything is broadcast (except
//! [`SponsorError::Failed`], which reports a run that already moved).

use relay_chain::eip3009::PaymentError;

/// Why a request is refused.
#[derive(Debug, thiserror::Error)]
pub enum SponsorError {
    /// A field is malformed (the message names it).
    #[error("{field}: {message}")]
    Invalid {
        /// The request field.
        field: String,
        /// Why.
        message: String,
    },
    /// The chain has no RPC, delegate or payment asset configured.
    #[error(
        "chain {0} is not sponsored by this host (no delegate, RPC or payment asset configured)"
    )]
    UnsupportedChain(u64),
    /// The authorization is refused (one of [`crate::check::Problem`]).
    #[error("{message}")]
    Authorization {
        /// The problem's code (`AUTHORIZATION_…`).
        code: &'static str,
        /// What is wrong.
        message: String,
    },
    /// `to` is not the authority: the relayer only calls into the
    /// delegated account.
    #[error("to: {0} is not the authority; a sponsored call goes to the delegated account itself")]
    Target(String),
    /// The type-4 transaction would revert.
    #[error("the sponsored transaction would revert: {0}")]
    WouldRevert(String),
    /// No price for gas or the payment asset.
    #[error("cannot price the sponsorship: {0}")]
    Unpriced(String),
    /// The payment header is malformed or for another network, scheme or asset.
    #[error("payment: {0}")]
    PaymentMalformed(String),
    /// The payment is refused (signature, payee, amount, window, nonce).
    #[error(transparent)]
    Payment(#[from] PaymentError),
    /// The host has no relayer key or no sender for the chain.
    #[error("no relayer can send on chain {0}")]
    RelayerUnavailable(u64),
    /// A record with this idempotency key is still being driven.
    #[error("the first request with this x-idempotency-key is still running")]
    InFlight,
    /// The idempotency key was used for another payment.
    #[error("x-idempotency-key was already used with a different payment")]
    KeyReused,
    /// A chain could not be read.
    #[error("chain read: {0}")]
    Chain(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(String),
}

impl From<relay_store::StoreError> for SponsorError {
    fn from(e: relay_store::StoreError) -> Self {
        SponsorError::Store(e.to_string())
    }
}

impl From<relay_chain::reader::ReadError> for SponsorError {
    fn from(e: relay_chain::reader::ReadError) -> Self {
        SponsorError::Chain(e.to_string())
    }
}

/// A malformed field.
pub(crate) fn invalid(field: &str, message: impl std::fmt::Display) -> SponsorError {
    SponsorError::Invalid {
        field: field.into(),
        message: message.to_string(),
    }
}

impl From<relay_x402::Malformed> for SponsorError {
    fn from(e: relay_x402::Malformed) -> Self {
        SponsorError::PaymentMalformed(e.0)
    }
}

impl From<relay_x402::checkout::CheckoutError> for SponsorError {
    fn from(e: relay_x402::checkout::CheckoutError) -> Self {
        use relay_x402::checkout::CheckoutError as C;
        match e {
            C::Malformed(m) => SponsorError::PaymentMalformed(m),
            C::Payment(p) => SponsorError::Payment(p),
            C::Chain(c) => c.into(),
        }
    }
}
