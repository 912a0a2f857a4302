//! The non-custodial yield account (spec §4.6): `GET
//! /api/ncaccount/{agent}`, `POST /api/ncaccount/quote`, `POST
//! /api/ncaccount/spend` and `GET /api/account/venues`. Thin over
//! [`relay_accounts::yield_account`]: parse, call, shape the answer.
//! A spend honours `x-idempotency-key` (a repeat replays the first answer;
//! nothing is spent twice) and, without `live: true`, answers what would
//! happen (`state: DRY`) and sends nothing.

use alloy::primitives::Address;
use axum::{
    body::Bytes,
    extract::{Path, State},
    http::HeaderMap,
    response::{IntoResponse, Response},
    Json,
};
use relay_accounts::yield_account::{
    spend::{IntentWire, QuoteAsk, SpendQuote, SpendReceipt},
    view::{NcAccount, Venue},
    YieldError, YieldService,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::JsonObject,
    execute::{error_response, idempotency_key, idempotent},
    ApiError, AppState, ErrorCode,
};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(account))
        .routes(routes!(quote))
        .routes(routes!(spend))
        .routes(routes!(venues))
}

/// `POST /api/ncaccount/spend`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpendRequest {
    /// The EIP-712 intent.
    pub intent: IntentWire,
    /// The agent's signature over it (65-byte r‖s‖v or 64-byte EIP-2098,
    /// low s), hex.
    pub signature: String,
    /// `true` spends; `false` or missing answers what would happen.
    #[serde(default)]
    pub live: bool,
}

/// `GET /api/account/venues`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Venues {
    /// Every vault this host knows, with its live APY.
    pub venues: Vec<Venue>,
}

/// The service (with no vault configured it still answers balances).
pub(super) fn service(s: &AppState) -> Result<&Arc<YieldService>, ApiError> {
    Ok(&s.ncaccount)
}

/// The address in a path, or `INVALID_ADDRESS`.
pub(super) fn path_address(raw: &str) -> Result<Address, ApiError> {
    raw.trim().parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidAddress,
            format!("{raw:?} is not a 0x-prefixed 20-byte address"),
        )
    })
}

/// The typed answer of a refusal.
pub(super) fn refused(e: YieldError) -> ApiError {
    let code = match &e {
        YieldError::ChainUnsupported(_) => ErrorCode::NcChainUnsupported,
        YieldError::Invalid { field, .. } if field.ends_with("ddress") || *field == "agent" => {
            ErrorCode::InvalidAddress
        }
        YieldError::Invalid { field, .. } if *field == "amount" => ErrorCode::InvalidAmount,
        YieldError::Invalid { .. } => ErrorCode::InvalidField,
        YieldError::Signer(_) => ErrorCode::NcSignatureInvalid,
        YieldError::DomainChain { .. } => ErrorCode::NcDomainChain,
        YieldError::Expired { .. } => ErrorCode::NcIntentExpired,
        YieldError::NonceUsed(_) => ErrorCode::NcNonceUsed,
        YieldError::AllowanceExceeded { .. } => ErrorCode::NcAllowanceExceeded,
        YieldError::InsufficientShares { .. } => ErrorCode::NcInsufficientShares,
        YieldError::BelowFee { .. } => ErrorCode::NcBelowFee,
        YieldError::FloatInsufficient { .. } => ErrorCode::NcFloatInsufficient,
        YieldError::WouldRevert(_) => ErrorCode::NcWouldRevert,
        YieldError::RelayerUnavailable(_) => ErrorCode::RelayerUnavailable,
        YieldError::Read(_) => ErrorCode::NcChainUnavailable,
        YieldError::Store(_) => ErrorCode::StoreUnavailable,
    };
    ApiError::new(code, e.to_string())
}

#[utoipa::path(get, path = "/api/ncaccount/{agent}", tag = "accounts", summary = "The agent's yield account: per-chain shares, their value, the allowance granted to the relayer, live APY",
    params(("agent" = String, Path, description = "The agent's address")),
    responses((status = 200, description = "OK", body = NcAccount), (status = "default", description = "A typed error", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn account(
    State(s): State<AppState>,
    Path(agent): Path<String>,
) -> Result<Json<NcAccount>, ApiError> {
    let agent = path_address(&agent)?;
    Ok(Json(service(&s)?.account(agent).await))
}

#[utoipa::path(post, path = "/api/ncaccount/quote", tag = "accounts", summary = "Read-only just-in-time quote of a yield-account spend (fee 0.15 %, at least 0.01 USD)",
    request_body = QuoteAsk,
    responses((status = 200, description = "OK", body = SpendQuote), (status = "default", description = "A typed error", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn quote(State(s): State<AppState>, body: JsonObject) -> Result<Json<SpendQuote>, ApiError> {
    let ask: QuoteAsk = body.decode()?;
    service(&s)?.quote(&ask).await.map(Json).map_err(refused)
}

#[utoipa::path(post, path = "/api/ncaccount/spend", tag = "accounts", summary = "Spend from the yield account with one EIP-712 signature: redeem on srcChain, deliver amount − fee on toChain",
    request_body = SpendRequest,
    params(("x-idempotency-key" = Option<String>, Header, description = "a repeat replays the first answer; nothing is spent twice")),
    responses((status = 200, description = "The delivery receipt (state DELIVERED or FAILED), or with live false the dry answer (state DRY)", body = SpendReceipt), (status = "default", description = "A typed error; nothing was broadcast", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn spend(State(s): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    match idempotency_key(&headers) {
        Some(key) => {
            let run = || run_spend(&s, &body, Some(&key));
            idempotent(&s, &body, &key, run).await
        }
        None => run_spend(&s, &body, None)
            .await
            .unwrap_or_else(error_response),
    }
}

async fn run_spend(s: &AppState, body: &Bytes, key: Option<&str>) -> Result<Response, ApiError> {
    let req: SpendRequest = JsonObject::parse(body)?.decode()?;
    let receipt = service(s)?
        .spend(&req.intent, &req.signature, req.live, key)
        .await
        .map_err(refused)?;
    Ok(Json(receipt).into_response())
}

#[utoipa::path(get, path = "/api/account/venues", tag = "accounts", summary = "Live APYs of the yield vaults this host knows",
    responses((status = 200, description = "OK", body = Venues), (status = "default", description = "A typed error", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn venues(State(s): State<AppState>) -> Result<Json<Venues>, ApiError> {
    Ok(Json(Venues {
        venues: service(&s)?.venues().await,
    }))
}
