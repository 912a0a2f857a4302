//! `GET /api/membership/status?address=0x…` (spec §2.14, §4.1): the tier
//! an address pays and what it gets.
//!
//! An address is a member when it holds a token of any recognised
//! collection (`vip.registry`, read on chain by
//! [`relay_engine::membership::check`]). Response: `address`, `tier`
//! (`member` or `standard`), `member`, `via` (the collection that made it
//! one), `benefits {routeFeeBps, gasMarkupBps, floatlaneFee}` —
//! `floatlaneFee` is the float-lane tier this address gets on micro
//! transfers (`mode`, `who`, `when`, `fee`) — `registry` (collections
//! checked), `unread` (collections whose chain did not answer: such a miss
//! can only understate the tier) and `note`. No `address` → 400
//! `MISSING_FIELD`; not a 0x-prefixed 20-byte hex address → 400
//! `INVALID_FIELD`; both name `address`.

use alloy::primitives::Address;
use axum::{extract::State, Json};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::{self, QueryFields},
    ApiError, AppState, ErrorCode,
};
use relay_engine::membership;

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(status))
}

fn parse_address(fields: &Value) -> Result<Address, ApiError> {
    let raw = fields
        .get("address")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::MissingField,
                "address: query parameter is required",
            )
            .field("address")
            .suggest("GET /api/membership/status?address=0x…")
        })?;
    let hex = raw.strip_prefix("0x").unwrap_or_default();
    let well_formed = hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    well_formed
        .then(|| raw.parse::<Address>().ok())
        .flatten()
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidField,
                format!("address: {raw:?} is not a 0x-prefixed 20-byte hex address"),
            )
            .field("address")
        })
}

#[utoipa::path(get, path = "/api/membership/status", tag = "discovery", summary = "Membership tier and benefits of an address", params(("address" = String, Query, description = "0x address")), responses((status = 200, description = "OK", body = membership::MembershipStatus), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn status(
    State(s): State<AppState>,
    q: QueryFields,
) -> Result<Json<membership::MembershipStatus>, ApiError> {
    let address = parse_address(&edge::params(None, q)?)?;
    Ok(Json(
        membership::status(&s.reader, &s.config, address).await,
    ))
}
