//! Unified balances (spec §4.6): `GET /api/balance/{addr}` (every
//! configured chain's tokens and the yield vault's shares at value, per
//! chain and in total, smallest units and integer micro-USD) and `GET
//! /api/account/{addr}` (the same, yield-aware: each vault's APY and what
//! the shares accrued). Thin over [`crate::balances`].

use axum::{
    extract::{Path, State},
    Json,
};
use relay_errors::{ApiError, ErrorBody};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{path_address, service, Yield};
use crate::balances::UnifiedBalance;

pub(super) fn routes() -> OpenApiRouter<Yield> {
    OpenApiRouter::new()
        .routes(routes!(balance))
        .routes(routes!(account))
}

#[utoipa::path(get, path = "/api/balance/{addr}", tag = "accounts", summary = "Unified balance across chains: stablecoins, WBTC, vault shares at value",
    params(("addr" = String, Path, description = "The address")),
    responses((status = 200, description = "OK", body = UnifiedBalance), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn balance(
    State(s): State<Yield>,
    Path(addr): Path<String>,
) -> Result<Json<UnifiedBalance>, ApiError> {
    let addr = path_address(&addr)?;
    Ok(Json(service(&s)?.balance(addr, false).await))
}

#[utoipa::path(get, path = "/api/account/{addr}", tag = "accounts", summary = "Yield-aware unified balance: shares, value, APY, accrued",
    params(("addr" = String, Path, description = "The address")),
    responses((status = 200, description = "OK", body = UnifiedBalance), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn account(
    State(s): State<Yield>,
    Path(addr): Path<String>,
) -> Result<Json<UnifiedBalance>, ApiError> {
    let addr = path_address(&addr)?;
    Ok(Json(service(&s)?.balance(addr, true).await))
}
