//! relay-errors: what a refusal looks like on the wire (spec §7), shared
//! by every adapter — the HTTP API, the MCP endpoint, the application
//! services' records (a yield-account leg's or a primitive run's
//! `errorCode`) — so no adapter depends on another to name a failure.
//!
//! - [`ErrorCode`]: one `errorCode` with its status, whether it is
//!   retryable, its meaning and its [`Blame`]. The core's are
//!   `ErrorCode::…` constants ([`ErrorCode::CORE`]); a feature declares
//!   its own in its home with [`error_codes!`] and lists them in its
//!   descriptor; [`catalogue`] of them all is `GET /api/errors`.
//! - [`ApiError`]: a refusal with the field at fault, a suggested action
//!   and a retry hint; its JSON body is [`ErrorBody`]. With the `axum`
//!   feature it is an axum response.
//! - The domain's errors convert into it (`From`), in one place.

mod code;
mod domain;
pub mod refusal;

pub use code::*;
pub use domain::{no_route, revert_code};
pub use http::StatusCode;

#[cfg(feature = "axum")]
mod response {
    use axum::{
        response::{IntoResponse, Response},
        Json,
    };

    use crate::ApiError;

    impl IntoResponse for ApiError {
        fn into_response(self) -> Response {
            let mut resp = (self.code.status(), Json(self.body())).into_response();
            // The code, for middleware that reports errors (the dashboard's
            // recent errors) without reading the body.
            resp.extensions_mut().insert(self.code);
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
}
