//! The yield account's HTTP adapter (spec §4.6): `GET
//! /api/ncaccount/{agent}`, `POST /api/ncaccount/quote`, `POST
//! /api/ncaccount/spend`, `GET /api/ncaccount/spend/{id}`, `GET
//! /api/account/venues` and the unified balances ([`crate::balances`]). Thin
//! over [`YieldService`]: parse, call, shape the answer. The host mounts
//! it through [`feature`]; its routes take the [`Yield`] handle the
//! feature's start left in the host's handles.
//!
//! A spend honours `x-idempotency-key` (a repeat replays the first answer;
//! nothing is spent twice) and, without `live: true`, answers what would
//! happen (`state: DRY`) and sends nothing.

mod balances;

use alloy::primitives::Address;
use axum::{
    body::Bytes,
    extract::{Path, State},
    http::HeaderMap,
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::{edge::JsonObject, Feature, HasHandles, Limit, Section};
use relay_store::durable::{IdemKey, Idempotency};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    errors,
    spend::{IntentWire, QuoteAsk, SpendQuote, SpendReceipt},
    view::{NcAccount, Venue},
    YieldError, YieldService,
};

/// The handle the handlers take from the host's state: the service (none
/// only on a host whose features did not start, e.g. one that prints its
/// OpenAPI document).
#[derive(Clone)]
pub struct Yield(pub Option<Arc<YieldService>>);

/// The spec shows no limits: a spend like an execute, its quote (several
/// chain reads) like a quote, every read of all chains 30 a minute.
const LIMITS: &[Limit] = &[
    Limit::get("ncaccount-account", "/api/ncaccount/{agent}", 30),
    Limit::post("ncaccount-quote", "/api/ncaccount/quote", 40),
    Limit::post("ncaccount-spend", "/api/ncaccount/spend", 20),
    Limit::get("balance", "/api/balance/{addr}", 30),
    Limit::get("account", "/api/account/{addr}", 30),
];

/// The yield account and unified balances (spec §4.6), as the host
/// registers them.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "yield_account",
        home: "host/yield_account",
        spec: "§4.6",
        section: Some(Section {
            name: crate::SECTION,
            check: crate::config::check,
        }),
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(crate::start),
    }
}

/// The routes over the host's state `s`, holding the [`Yield`] handle the
/// start left.
fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    let handle = Yield(s.handles().get::<Arc<YieldService>>());
    routes().merge(balances::routes()).with_state(handle)
}

fn routes() -> OpenApiRouter<Yield> {
    OpenApiRouter::new()
        .routes(routes!(account))
        .routes(routes!(quote))
        .routes(routes!(spend))
        .routes(routes!(spend_status))
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
fn service(s: &Yield) -> Result<&Arc<YieldService>, ApiError> {
    s.0.as_ref().ok_or_else(|| {
        ApiError::new(
            errors::NcChainUnavailable,
            "the yield account did not start on this host",
        )
    })
}

/// The address in a path, or `INVALID_ADDRESS`.
fn path_address(raw: &str) -> Result<Address, ApiError> {
    raw.trim().parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidAddress,
            format!("{raw:?} is not a 0x-prefixed 20-byte address"),
        )
    })
}

/// The typed answer of a refusal.
fn refused(e: YieldError) -> ApiError {
    let code = match &e {
        YieldError::ChainUnsupported(_) => errors::NcChainUnsupported,
        YieldError::Invalid { field, .. } if field.ends_with("ddress") || *field == "agent" => {
            ErrorCode::InvalidAddress
        }
        YieldError::Invalid { field, .. } if *field == "amount" => ErrorCode::InvalidAmount,
        YieldError::Invalid { .. } => ErrorCode::InvalidField,
        YieldError::Signer(_) => errors::NcSignatureInvalid,
        YieldError::DomainChain { .. } => errors::NcDomainChain,
        YieldError::Expired { .. } => errors::NcIntentExpired,
        YieldError::NonceUsed(_) => errors::NcNonceUsed,
        YieldError::AllowanceExceeded { .. } => errors::NcAllowanceExceeded,
        YieldError::InsufficientShares { .. } => errors::NcInsufficientShares,
        YieldError::BelowFee { .. } => errors::NcBelowFee,
        YieldError::NoRoute(_) => errors::NcNoRoute,
        YieldError::WouldRevert(_) => errors::NcWouldRevert,
        YieldError::RelayerUnavailable(_) => ErrorCode::RelayerUnavailable,
        YieldError::Read(_) => errors::NcChainUnavailable,
        YieldError::Store(_) => ErrorCode::StoreUnavailable,
    };
    ApiError::new(code, e.to_string())
}

#[utoipa::path(get, path = "/api/ncaccount/{agent}", tag = "accounts", summary = "The agent's yield account: per-chain shares, their value, the allowance granted to the relayer, live APY",
    params(("agent" = String, Path, description = "The agent's address")),
    responses((status = 200, description = "OK", body = NcAccount), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn account(
    State(s): State<Yield>,
    Path(agent): Path<String>,
) -> Result<Json<NcAccount>, ApiError> {
    let agent = path_address(&agent)?;
    Ok(Json(service(&s)?.account(agent).await))
}

#[utoipa::path(post, path = "/api/ncaccount/quote", tag = "accounts", summary = "Read-only just-in-time quote of a yield-account spend: the vault's figures, the fee (0.15 %, at least 0.01 USD) and the engine's ranking of the delivery",
    request_body = QuoteAsk,
    responses((status = 200, description = "OK", body = SpendQuote), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn quote(State(s): State<Yield>, body: JsonObject) -> Result<Json<SpendQuote>, ApiError> {
    let ask: QuoteAsk = body.decode()?;
    service(&s)?.quote(&ask).await.map(Json).map_err(refused)
}

#[utoipa::path(post, path = "/api/ncaccount/spend", tag = "accounts", summary = "Spend from the yield account with one EIP-712 signature: redeem on srcChain, route amount − fee through the engine to toAddress",
    request_body = SpendRequest,
    params(("x-idempotency-key" = Option<String>, Header, description = "a repeat replays the first answer; nothing is spent twice")),
    responses((status = 200, description = "The spend once its delivery route started (state ROUTING, routeId; GET /api/ncaccount/spend/{id} follows it to DELIVERED), or ended early (FAILED redeem, REFUNDED), or with live false the dry answer (state DRY)", body = SpendReceipt), (status = "default", description = "A typed error; nothing was broadcast", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn spend(State(s): State<Yield>, headers: HeaderMap, body: Bytes) -> Response {
    let svc = match service(&s) {
        Ok(svc) => svc,
        Err(e) => return e.into_response(),
    };
    let Some(key) = relay_feature::edge::idempotency_key(&headers) else {
        return run_spend(svc, &body, None)
            .await
            .unwrap_or_else(IntoResponse::into_response);
    };
    let d = svc.deps();
    let guard = Idempotency::new((*d.store).clone(), d.config.execution.idempotency_stale_ms);
    let run = || run_spend(svc, &body, Some(&key));
    let key = IdemKey::route(&key);
    relay_feature::once::idempotent(&guard, &key, &body, run, IntoResponse::into_response)
        .await
        // a spend never attaches a route to its key: the key was an
        // execute's, still running
        .unwrap_or_else(|_| relay_feature::once::in_flight())
}

async fn run_spend(
    svc: &YieldService,
    body: &Bytes,
    key: Option<&str>,
) -> Result<Response, ApiError> {
    let req: SpendRequest = JsonObject::parse(body)?.decode()?;
    let receipt = svc
        .spend(&req.intent, &req.signature, (req.live, key))
        .await
        .map_err(refused)?;
    Ok(Json(receipt).into_response())
}

#[utoipa::path(get, path = "/api/ncaccount/spend/{id}", tag = "accounts", summary = "A yield-account spend as it stands: ROUTING until its delivery route ends, then DELIVERED, REFUNDED or FAILED",
    params(("id" = String, Path, description = "The spend's id (nc_…)")),
    responses((status = 200, description = "OK", body = SpendReceipt), (status = "default", description = "A typed error (404 UNKNOWN_SPEND)", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(spend = %id))]
async fn spend_status(
    State(s): State<Yield>,
    Path(id): Path<String>,
) -> Result<Json<SpendReceipt>, ApiError> {
    service(&s)?
        .spend_record(id.trim())
        .await
        .map_err(refused)?
        .map(Json)
        .ok_or_else(|| {
            ApiError::new(
                errors::UnknownSpend,
                format!("no yield-account spend {id:?}"),
            )
            .suggest("the id is the one POST /api/ncaccount/spend answered (nc_…)")
        })
}

#[utoipa::path(get, path = "/api/account/venues", tag = "accounts", summary = "Live APYs of the yield vaults this host knows",
    responses((status = 200, description = "OK", body = Venues), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn venues(State(s): State<Yield>) -> Result<Json<Venues>, ApiError> {
    Ok(Json(Venues {
        venues: service(&s)?.venues().await,
    }))
}
