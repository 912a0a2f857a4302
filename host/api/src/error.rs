//! API errors (spec §7): the catalogue and the answer are
//! [`relay_errors`]'s, shared with every other adapter; this module adds
//! the router's fallback.

pub use relay_errors::*;

/// Fallback for unknown paths and methods.
pub async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "not found")
}
