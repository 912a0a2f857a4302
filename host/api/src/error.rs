//! API errors (spec §7): one enum, one `errorCode` per variant, one status
//! code. Every failure answers `{error, errorCode, retryable}` plus, when
//! known, `field` (the request field at fault), `retryAfterMs` and
//! `suggestedAction`. Clients branch on `errorCode`, never on wording.

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
    Json,
};
use relay_engine::preflight::{BlockerCode, WarningCode};
use relay_types::route::FailureCode;
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
    /// A chain or node is not one this host serves (the message names the field).
    UnknownChain => ("UNKNOWN_CHAIN", BAD_REQUEST, false, "fromChain/toChain is not an EVM chain id, numeric string or node name this host serves"),
    /// A token is neither a symbol nor an address this host knows on that chain.
    UnknownToken => ("UNKNOWN_TOKEN", BAD_REQUEST, false, "fromToken/toToken is not a symbol or contract address known on that chain; omit it for the native asset"),
    /// An amount is not a positive decimal string of smallest units.
    InvalidAmount => ("INVALID_AMOUNT", BAD_REQUEST, false, "amount must be a positive decimal string of the token's smallest units (\"5000000\" is 5 USDC)"),
    /// An address is not valid for its chain.
    InvalidAddress => ("INVALID_ADDRESS", BAD_REQUEST, false, "fromAddress/toAddress (or a token address) is not a valid address on its chain"),
    /// The body is larger than the endpoint accepts.
    BodyTooLarge => ("BODY_TOO_LARGE", PAYLOAD_TOO_LARGE, false, "the request body is larger than this endpoint accepts"),
    /// Every applicable rail refused the amount.
    AmountOutOfRange => ("AMOUNT_OUT_OF_RANGE", UNPROCESSABLE_ENTITY, false, "every applicable rail refused this amount (too small to cover fees, or above what it can carry now); the message lists why"),
    /// Too many requests from this client to this endpoint this minute.
    RateLimited => ("RATE_LIMITED", TOO_MANY_REQUESTS, true, "the per-minute limit of this endpoint was reached for this IP (or x-relay-key); retry after retryAfterMs"),
    /// The quote attestation given as a price lock does not hold.
    AttestationInvalid => ("ATTESTATION_INVALID", BAD_REQUEST, false, "attestation: not signed by this relayer, expired, or for another route; quote again"),
    /// The price moved below the lock (`minOut` or the attestation's minimum).
    PriceMoved => ("PRICE_MOVED", CONFLICT, true, "no route delivers the locked minimum any more; quote again"),
    /// Every rail for the lane only quotes it.
    QuoteOnly => ("QUOTE_ONLY", UNPROCESSABLE_ENTITY, false, "this lane is priced for comparison but never executed here; the message gives quoteOnlyReason"),
}

/// The catalogue served at `GET /api/errors`: every table, generated.
pub fn catalogue() -> serde_json::Value {
    let codes: Vec<serde_json::Value> = ErrorCode::ALL
        .iter()
        .map(|c| json!({"errorCode": c.as_str(), "status": c.status().as_u16(), "retryable": c.retryable(), "meaning": c.meaning()}))
        .collect();
    json!({
        "errors": codes,
        "count": codes.len(),
        "blockers": BlockerCode::catalogue(),
        "warnings": WarningCode::catalogue(),
        "failures": FailureCode::catalogue(),
        "note": "errors: every errorCode a failed request answers with (HTTP status, retryable); blockers and warnings: preflight's blockers[].code and warnings[].code (200, decision NO_GO); failures: failure.code of a route that ended FAILED",
    })
}

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    /// Code.
    pub code: ErrorCode,
    /// Message.
    pub message: String,
    /// The request field at fault, when one is.
    pub field: Option<String>,
    /// What the client should do about it.
    pub suggested_action: Option<String>,
    /// When a retry can succeed, ms from now.
    pub retry_after_ms: Option<u64>,
}

impl ApiError {
    /// A new error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            field: None,
            suggested_action: None,
            retry_after_ms: None,
        }
    }

    /// Names the request field at fault.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Adds a suggested action.
    pub fn suggest(mut self, action: impl Into<String>) -> Self {
        self.suggested_action = Some(action.into());
        self
    }

    /// Says when a retry can succeed.
    pub fn retry_after_ms(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        let mut body = json!({
            "error": self.message,
            "errorCode": self.code.as_str(),
            "retryable": self.code.retryable(),
        });
        if let Some(f) = &self.field {
            body["field"] = json!(f);
        }
        if let Some(a) = &self.suggested_action {
            body["suggestedAction"] = json!(a);
        }
        if let Some(ms) = self.retry_after_ms {
            body["retryAfterMs"] = json!(ms);
        }
        body
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut resp = (self.code.status(), Json(self.body())).into_response();
        if let Some(ms) = self.retry_after_ms {
            let secs = ms.div_ceil(1000).to_string();
            if let Ok(v) = axum::http::HeaderValue::from_str(&secs) {
                resp.headers_mut()
                    .insert(axum::http::header::RETRY_AFTER, v);
            }
        }
        resp
    }
}

/// Fallback for unknown paths and methods.
pub async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "not found")
}
