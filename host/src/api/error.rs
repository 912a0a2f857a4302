//! API errors: one enum, one `errorCode` per variant, one status code.

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
    Json,
};
use serde_json::json;

/// Declares [`ErrorCode`] and its catalogue from one table, so the
/// catalogue served at `/api/errors` can never miss a code.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $name:ident => ($wire:literal, $status:ident, $retry:literal, $meaning:literal),)*) => {
        /// Machine-readable error codes (`errorCode`). Clients branch on
        /// these, never on the wording.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ErrorCode {
            $($(#[$doc])* $name,)*
        }

        impl ErrorCode {
            /// Every code, in catalogue order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$name,)*];

            /// The wire string.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$name => $wire,)* }
            }

            /// The HTTP status it is answered with.
            pub fn status(self) -> StatusCode {
                match self { $(ErrorCode::$name => StatusCode::$status,)* }
            }

            /// Whether the same request may succeed later.
            pub fn retryable(self) -> bool {
                match self { $(ErrorCode::$name => $retry,)* }
            }

            /// What it means and what to do about it.
            pub fn meaning(self) -> &'static str {
                match self { $(ErrorCode::$name => $meaning,)* }
            }
        }
    };
}

error_codes! {
    /// No such path or method.
    NotFound => ("NOT_FOUND", NOT_FOUND, false, "no such path or method"),
    /// The store failed.
    StoreUnavailable => ("STORE_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "the database is unreachable; retry"),
    /// No route with that id (spec §7: 404 `unknown route id`).
    UnknownRoute => ("UNKNOWN_ROUTE", NOT_FOUND, false, "no route has that id (sandbox routes are kept one hour)"),
    /// A required field or parameter is missing (the message names it).
    MissingField => ("MISSING_FIELD", BAD_REQUEST, false, "a required field or parameter is missing; the message names it"),
    /// A field has an invalid value (the message names it).
    InvalidField => ("INVALID_FIELD", BAD_REQUEST, false, "a field has an invalid value; the message names it and why"),
    /// The body is not JSON of the expected shape.
    MalformedBody => ("MALFORMED_BODY", BAD_REQUEST, false, "the body is not a JSON object"),
    /// Same chain and same token: nothing to do.
    SameChainSameToken => ("SAME_CHAIN_SAME_TOKEN", BAD_REQUEST, false, "fromChain equals toChain and the tokens are equal: nothing to move"),
    /// No loaded, enabled, healthy rail serves the lane.
    UnroutableLane => ("UNROUTABLE_LANE", NOT_FOUND, false, "no enabled, healthy rail executes this lane and asset"),
    /// The Permit2 signature does not authorise this route (the message names the field).
    Permit2Invalid => ("PERMIT2_INVALID", BAD_REQUEST, false, "the Permit2 signature does not authorise this route (signer, spender = relayer, chain, deadline, token, amount, low-s, unused nonce); the message names the field"),
    /// The host has no relayer key, or no sender for the chain.
    RelayerUnavailable => ("RELAYER_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "this host cannot sign for the chain right now"),
    /// Every applicable rail failed to quote or plan.
    RailsUnavailable => ("RAILS_UNAVAILABLE", BAD_GATEWAY, true, "every applicable rail failed to quote or plan; the message lists why"),
    /// The idempotency key was used with another body.
    IdempotencyMismatch => ("IDEMPOTENCY_KEY_REUSED", UNPROCESSABLE_ENTITY, false, "x-idempotency-key was already used with a different body"),
    /// The idempotency key's first request is still executing.
    IdempotencyInFlight => ("IDEMPOTENCY_IN_FLIGHT", CONFLICT, true, "the first request with this x-idempotency-key is still executing; retry to get its response"),
}

/// The catalogue served at `GET /api/errors`.
pub fn catalogue() -> serde_json::Value {
    let codes: Vec<serde_json::Value> = ErrorCode::ALL
        .iter()
        .map(|c| json!({"errorCode": c.as_str(), "status": c.status().as_u16(), "retryable": c.retryable(), "meaning": c.meaning()}))
        .collect();
    json!({ "errors": codes, "count": codes.len() })
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
