//! The non-custodial yield account (spec §4.6): `GET
//! /api/ncaccount/{agent}`, `POST /api/ncaccount/quote`, `POST
//! /api/ncaccount/spend`, `GET /api/ncaccount/spend/{id}` and `GET
//! /api/account/venues`. Thin over [`relay_accounts::yield_account`]:
//! parse, call, shape the answer; the delivery leg goes through the engine
//! ([`relay_app::legs`]).
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
    leg::LegRouter,
    spend::{IntentWire, QuoteAsk, SpendQuote, SpendReceipt},
    view::{NcAccount, Venue},
    YieldError, YieldService,
};
use relay_store::durable::IdemKey;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::JsonObject,
    execute::{error_response, idempotency_key, idempotent},
    ApiError, AppState, ErrorCode,
};

/// The handlers' state: the host's, and the engine for delivery legs.
#[derive(Clone)]
struct Nc {
    app: AppState,
    legs: Arc<dyn LegRouter>,
}

/// The non-custodial yield account and unified balances (spec §4.6; its
/// limits are not shown): a spend like an execute, its quote (several
/// chain reads) like a quote, every read of all chains 30 a minute.
/// The yield account's routes, its legs over the host's routing, and the
/// unified balances.
fn routes_of(s: &AppState) -> OpenApiRouter<AppState> {
    let legs = Arc::new(relay_app::legs::EngineLegs::new(s.routing.clone()));
    routes(s.clone(), legs).merge(super::balances::routes())
}

pub(crate) const FEATURE: relay_feature::Feature<crate::AppState> = relay_feature::Feature {
    name: "yield_account",
    home: "host/accounts/src/yield_account",
    spec: "§4.6",
    section: None,
    routes: routes_of,
    limits: &[
        relay_feature::Limit::get("ncaccount-account", "/api/ncaccount/{agent}", 30),
        relay_feature::Limit::post("ncaccount-quote", "/api/ncaccount/quote", 40),
        relay_feature::Limit::post("ncaccount-spend", "/api/ncaccount/spend", 20),
        relay_feature::Limit::get("balance", "/api/balance/{addr}", 30),
        relay_feature::Limit::get("account", "/api/account/{addr}", 30),
    ],
    errors: &[
        crate::ErrorCode::UnknownSpend,
        crate::ErrorCode::NcChainUnsupported,
        crate::ErrorCode::NcSignatureInvalid,
        crate::ErrorCode::NcDomainChain,
        crate::ErrorCode::NcIntentExpired,
        crate::ErrorCode::NcNonceUsed,
        crate::ErrorCode::NcAllowanceExceeded,
        crate::ErrorCode::NcInsufficientShares,
        crate::ErrorCode::NcBelowFee,
        crate::ErrorCode::NcNoRoute,
        crate::ErrorCode::NcWouldRevert,
        crate::ErrorCode::NcChainUnavailable,
    ],
    start: None,
};

pub(super) fn routes(app: AppState, legs: Arc<dyn LegRouter>) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(account))
        .routes(routes!(quote))
        .routes(routes!(spend))
        .routes(routes!(spend_status))
        .routes(routes!(venues))
        .with_state(Nc { app, legs })
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
        YieldError::NoRoute(_) => ErrorCode::NcNoRoute,
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
    State(s): State<Nc>,
    Path(agent): Path<String>,
) -> Result<Json<NcAccount>, ApiError> {
    let agent = path_address(&agent)?;
    Ok(Json(service(&s.app)?.account(agent).await))
}

#[utoipa::path(post, path = "/api/ncaccount/quote", tag = "accounts", summary = "Read-only just-in-time quote of a yield-account spend: the vault's figures, the fee (0.15 %, at least 0.01 USD) and the engine's ranking of the delivery",
    request_body = QuoteAsk,
    responses((status = 200, description = "OK", body = SpendQuote), (status = "default", description = "A typed error", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn quote(State(s): State<Nc>, body: JsonObject) -> Result<Json<SpendQuote>, ApiError> {
    let ask: QuoteAsk = body.decode()?;
    let legs = s.legs.as_ref();
    service(&s.app)?
        .quote(&ask, legs)
        .await
        .map(Json)
        .map_err(refused)
}

#[utoipa::path(post, path = "/api/ncaccount/spend", tag = "accounts", summary = "Spend from the yield account with one EIP-712 signature: redeem on srcChain, route amount − fee through the engine to toAddress",
    request_body = SpendRequest,
    params(("x-idempotency-key" = Option<String>, Header, description = "a repeat replays the first answer; nothing is spent twice")),
    responses((status = 200, description = "The spend once its delivery route started (state ROUTING, routeId; GET /api/ncaccount/spend/{id} follows it to DELIVERED), or ended early (FAILED redeem, REFUNDED), or with live false the dry answer (state DRY)", body = SpendReceipt), (status = "default", description = "A typed error; nothing was broadcast", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn spend(State(s): State<Nc>, headers: HeaderMap, body: Bytes) -> Response {
    match idempotency_key(&headers) {
        Some(key) => {
            let run = || run_spend(&s, &body, Some(&key));
            idempotent(&s.app, &body, &IdemKey::route(&key), run).await
        }
        None => run_spend(&s, &body, None)
            .await
            .unwrap_or_else(error_response),
    }
}

async fn run_spend(s: &Nc, body: &Bytes, key: Option<&str>) -> Result<Response, ApiError> {
    let req: SpendRequest = JsonObject::parse(body)?.decode()?;
    let receipt = service(&s.app)?
        .spend(&req.intent, &req.signature, (req.live, key), s.legs.clone())
        .await
        .map_err(refused)?;
    Ok(Json(receipt).into_response())
}

#[utoipa::path(get, path = "/api/ncaccount/spend/{id}", tag = "accounts", summary = "A yield-account spend as it stands: ROUTING until its delivery route ends, then DELIVERED, REFUNDED or FAILED",
    params(("id" = String, Path, description = "The spend's id (nc_…)")),
    responses((status = 200, description = "OK", body = SpendReceipt), (status = "default", description = "A typed error (404 UNKNOWN_SPEND)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(spend = %id))]
async fn spend_status(
    State(s): State<Nc>,
    Path(id): Path<String>,
) -> Result<Json<SpendReceipt>, ApiError> {
    service(&s.app)?
        .spend_record(id.trim())
        .await
        .map_err(refused)?
        .map(Json)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::UnknownSpend,
                format!("no yield-account spend {id:?}"),
            )
            .suggest("the id is the one POST /api/ncaccount/spend answered (nc_…)")
        })
}

#[utoipa::path(get, path = "/api/account/venues", tag = "accounts", summary = "Live APYs of the yield vaults this host knows",
    responses((status = 200, description = "OK", body = Venues), (status = "default", description = "A typed error", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn venues(State(s): State<Nc>) -> Result<Json<Venues>, ApiError> {
    Ok(Json(Venues {
        venues: service(&s.app)?.venues().await,
    }))
}
