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
}

impl ErrorCode {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::StoreUnavailable => "STORE_UNAVAILABLE",
            ErrorCode::UnknownRoute => "UNKNOWN_ROUTE",
            ErrorCode::MissingField => "MISSING_FIELD",
        }
    }

    fn status(self) -> StatusCode {
        match self {
            ErrorCode::NotFound | ErrorCode::UnknownRoute => StatusCode::NOT_FOUND,
            ErrorCode::MissingField => StatusCode::BAD_REQUEST,
            ErrorCode::StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn retryable(self) -> bool {
        matches!(self, ErrorCode::StoreUnavailable)
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
