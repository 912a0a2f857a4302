//! Typed rail errors: what went wrong, and whether trying again can help.

use serde::{Deserialize, Serialize};

/// What kind of failure a rail reports. The engine branches on this: an
/// unsupported lane is skipped silently, an upstream failure is reported as
/// "not answering" and fails over, invalid input becomes a 4xx.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RailErrorKind {
    /// The rail does not cover this lane or asset.
    UnsupportedLane,
    /// The request is malformed for this rail (the message names the field).
    InvalidInput,
    /// The amount is outside what the rail can carry (too small, above capacity).
    AmountOutOfRange,
    /// The upstream answered with an error.
    Upstream,
    /// The upstream did not answer in time.
    UpstreamTimeout,
    /// The upstream answered something that is not its documented format.
    UpstreamMalformed,
    /// The relayer lacks the float/inventory this lane needs right now.
    FundsRequired,
    /// The quote or its upstream reference is no longer valid.
    QuoteExpired,
    /// A host capability refused or failed (egress denied, RPC down).
    Capability,
    /// The route id or reference is unknown to the upstream.
    NotFound,
    /// A bug in the rail (a caught panic, a trap, a broken invariant).
    Internal,
}

impl RailErrorKind {
    /// The default retryability of this kind.
    pub fn default_retryable(self) -> bool {
        matches!(
            self,
            RailErrorKind::Upstream
                | RailErrorKind::UpstreamTimeout
                | RailErrorKind::FundsRequired
                | RailErrorKind::Capability
                | RailErrorKind::QuoteExpired
        )
    }
}

/// A failure reported by a rail (or by the host on the rail's behalf).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct RailError {
    /// What kind of failure.
    pub kind: RailErrorKind,
    /// Human-readable detail; never contains secrets.
    pub message: String,
    /// Whether the same call may succeed later.
    pub retryable: bool,
}

impl RailError {
    /// The message of [`RailError::no_status_api`].
    pub const NO_STATUS_API: &'static str =
        "the upstream has no status API: the host watches the destination chain for the payout";

    /// An error of `kind` with its default retryability.
    pub fn new(kind: RailErrorKind, message: impl Into<String>) -> Self {
        RailError {
            kind,
            message: message.into(),
            retryable: kind.default_retryable(),
        }
    }

    /// The rail does not serve this lane.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(RailErrorKind::UnsupportedLane, message)
    }

    /// `track`'s answer when the upstream has no status API (contract
    /// 1.1): "I cannot observe delivery; host, watch the destination". Kind
    /// `UnsupportedLane` with [`RailError::NO_STATUS_API`] as the message, not
    /// retryable. See [`crate::Rail::track`] for what the host does.
    pub fn no_status_api() -> Self {
        Self::new(RailErrorKind::UnsupportedLane, Self::NO_STATUS_API)
    }

    /// Whether this is `track`'s "no status API" answer: any
    /// `UnsupportedLane` error from `track` means it, whatever the message.
    pub fn is_no_status_api(&self) -> bool {
        self.kind == RailErrorKind::UnsupportedLane
    }

    /// The request is invalid; `field` names what is wrong.
    pub fn invalid(field: &str, why: impl std::fmt::Display) -> Self {
        Self::new(RailErrorKind::InvalidInput, format!("{field}: {why}"))
    }

    /// The upstream failed.
    pub fn upstream(message: impl Into<String>) -> Self {
        Self::new(RailErrorKind::Upstream, message)
    }

    /// The upstream answered garbage.
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(RailErrorKind::UpstreamMalformed, message)
    }

    /// An internal failure of the rail.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(RailErrorKind::Internal, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_status_api_is_a_final_unsupported_lane_answer() {
        let e = RailError::no_status_api();
        assert_eq!(e.kind, RailErrorKind::UnsupportedLane);
        assert_eq!(e.message, RailError::NO_STATUS_API);
        assert!(!e.retryable);
        assert!(e.is_no_status_api());
        assert!(RailError::unsupported("any words").is_no_status_api());
        assert!(!RailError::upstream("down").is_no_status_api());
    }
}
