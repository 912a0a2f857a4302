//! API errors: one enum, one `errorCode` per variant, one status code.

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
    Json,
};
use serde_json::json;

/// Machine-readable error codes (`errorCode`). Clients branch on these,
/// never on the wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// No such path or method.
    NotFound,
    /// The store failed.
    StoreUnavailable,
    /// No route with that id (spec §7: 404 `unknown route id`).
    UnknownRoute,
    /// A required field or parameter is missing (the message names it).
    MissingField,
    /// A field has an invalid value (the message names it).
    InvalidField,
    /// The body is not JSON of the expected shape.
    MalformedBody,
    /// Same chain and same token: nothing to do.
    SameChainSameToken,
    /// No loaded, enabled, healthy rail serves the lane.
    UnroutableLane,
    /// The Permit2 signature does not authorise this route (the message names the field).
    Permit2Invalid,
    /// The host has no relayer key, or no sender for the chain.
    RelayerUnavailable,
    /// Every applicable rail failed to quote or plan.
    RailsUnavailable,
    /// The idempotency key was used with another body.
    IdempotencyMismatch,
    /// The idempotency key's first request is still executing.
    IdempotencyInFlight,
}

impl ErrorCode {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::StoreUnavailable => "STORE_UNAVAILABLE",
            ErrorCode::UnknownRoute => "UNKNOWN_ROUTE",
            ErrorCode::MissingField => "MISSING_FIELD",
            ErrorCode::InvalidField => "INVALID_FIELD",
            ErrorCode::MalformedBody => "MALFORMED_BODY",
            ErrorCode::SameChainSameToken => "SAME_CHAIN_SAME_TOKEN",
            ErrorCode::UnroutableLane => "UNROUTABLE_LANE",
            ErrorCode::Permit2Invalid => "PERMIT2_INVALID",
            ErrorCode::RelayerUnavailable => "RELAYER_UNAVAILABLE",
            ErrorCode::RailsUnavailable => "RAILS_UNAVAILABLE",
            ErrorCode::IdempotencyMismatch => "IDEMPOTENCY_KEY_REUSED",
            ErrorCode::IdempotencyInFlight => "IDEMPOTENCY_IN_FLIGHT",
        }
    }

    fn status(self) -> StatusCode {
        match self {
            ErrorCode::NotFound | ErrorCode::UnknownRoute | ErrorCode::UnroutableLane => {
                StatusCode::NOT_FOUND
            }
            ErrorCode::MissingField
            | ErrorCode::InvalidField
            | ErrorCode::MalformedBody
            | ErrorCode::SameChainSameToken
            | ErrorCode::Permit2Invalid => StatusCode::BAD_REQUEST,
            ErrorCode::IdempotencyMismatch => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::IdempotencyInFlight => StatusCode::CONFLICT,
            ErrorCode::RailsUnavailable => StatusCode::BAD_GATEWAY,
            ErrorCode::StoreUnavailable | ErrorCode::RelayerUnavailable => {
                StatusCode::SERVICE_UNAVAILABLE
            }
        }
    }

    fn retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::StoreUnavailable
                | ErrorCode::RelayerUnavailable
                | ErrorCode::RailsUnavailable
                | ErrorCode::IdempotencyInFlight
        )
    }
}

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    /// Code.
    pub code: ErrorCode,
    /// Message.
    pub message: String,
}

impl ApiError {
    /// A new error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({
            "error": self.message,
            "errorCode": self.code.as_str(),
            "retryable": self.code.retryable(),
        });
        (self.code.status(), Json(body)).into_response()
    }
}

/// Fallback for unknown paths and methods.
pub async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "not found")
}
