//! Notify's HTTP adapter (spec §4.5, §6.1, §6.3), thin over
//! [`HookService`]:
//!
//! - `POST /api/hooks {routeId, url, secret?, signature?}` →
//!   HookRegistered (`wh_` id, `pending`); `GET /api/hooks/{id}` → its
//!   state, deliveries and every attempt. Only the route's owner hooks it
//!   ([`crate::hooks`]): `signature` is the route's sender's
//!   EIP-191 signature (65 bytes hex, low-s) of
//!   `relay-hook:v1:route=<routeId>:url=<url>`, or the request carries the
//!   owner's credential (`Authorization: Bearer <owner token>`). Neither →
//!   401 `HOOK_PROOF_REQUIRED`; a signature by anyone else → 403
//!   `HOOK_PROOF_INVALID`; nothing is registered or counted.
//! - `POST /api/events/subscribe` `{type: "price", asset, above | below,
//!   url, secret?}` or `{type: "balance", chainId, token, address, url,
//!   secret?}` → the subscription (`active`); `DELETE
//!   /api/events/subscribe/{id}` → `cancelled`.
//!
//! Unknown body fields are refused (a misspelt `secret` must not silently
//! send unsigned webhooks). The host mounts it through [`feature`]; its
//! routes take the [`Notify`] handle the feature's start left.

use std::sync::Arc;

use alloy::primitives::Address;
use axum::{
    extract::{Path, State},
    http::HeaderMap,
    Json,
};
use relay_config::HostConfig;
use relay_engine::{
    oracle::{PriceBook, Unpriced},
    tokens,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::{edge::JsonObject, operator::is_operator, Feature, HasHandles, Limit, Parts};
use relay_plugin_api::ChainRef;
use relay_wire::{
    BalanceSubscribeRequest, HookRegisterRequest, Loose, PriceSubscribeRequest, Scalar,
    SubscribeRequest,
};
use serde_json::{Map, Value};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    dispatch::SandboxRoutes,
    errors,
    hooks::{hook_text, HookError, HookProof, HookRegistered, HookService, HookView, RouteKnown},
    subscribe::Subscription,
};

/// What the handlers read: the service, what this replica knows of its
/// sandbox routes, and the host's parts (configuration, prices, the
/// store's routes, the owner token).
#[derive(Clone)]
pub struct Notify {
    /// The webhook service.
    pub hooks: Arc<HookService>,
    /// This replica's sandbox and dry-run routes.
    pub sandbox: Arc<dyn SandboxRoutes>,
    /// The host's parts.
    pub parts: Parts,
}

/// Each registration makes the host send requests.
const LIMITS: &[Limit] = &[
    Limit::post("hooks", "/api/hooks", 30),
    Limit::post("subscribe", "/api/events/subscribe", 30),
];

/// Webhooks and event subscriptions (spec §4.5, §6), as the host
/// registers them.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "notify",
        home: "host/notify",
        spec: "§4.5, §6",
        section: None,
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(crate::start),
    }
}

/// The routes over the host's state `s`, holding the [`Notify`] handle the
/// start left.
fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    relay_feature::mount(s, routes())
}

fn routes() -> OpenApiRouter<Notify> {
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(hook_state))
        .routes(routes!(subscribe))
        .routes(routes!(unsubscribe))
}

/// The API error of a refusal.
fn refused(e: HookError) -> ApiError {
    let code = match &e {
        HookError::Url(_) => errors::WebhookUrlRefused,
        HookError::UnknownRoute(_) => ErrorCode::UnknownRoute,
        HookError::DryRun(_) | HookError::Field { .. } => ErrorCode::InvalidField,
        HookError::TooMany { .. } => errors::HookLimit,
        HookError::TooManySubscriptions { .. } => errors::SubscriptionLimit,
        HookError::ProofRequired(_) => errors::HookProofRequired,
        HookError::ProofInvalid(_) => errors::HookProofInvalid,
        HookError::UnknownHook(_) => errors::UnknownHook,
        HookError::Store(_) => ErrorCode::StoreUnavailable,
    };
    let field = e.field();
    let err = ApiError::new(code, e.to_string());
    match field {
        Some(f) => err.field(f),
        None => err,
    }
}

/// A required string field.
fn text<'a>(body: &'a Map<String, Value>, field: &str) -> Result<&'a str, ApiError> {
    match body.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim()),
        None | Some(Value::Null) => {
            Err(ApiError::new(ErrorCode::MissingField, format!("{field}: required")).field(field))
        }
        Some(_) => Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("{field}: must be a non-empty string"),
        )
        .field(field)),
    }
}

/// A required string field of a typed body: trimmed, not blank.
fn given<'a>(v: &'a Option<Loose<String>>, field: &str) -> Result<&'a str, ApiError> {
    match v {
        Some(Loose::Typed(s)) if !s.trim().is_empty() => Ok(s.trim()),
        None => {
            Err(ApiError::new(ErrorCode::MissingField, format!("{field}: required")).field(field))
        }
        Some(_) => Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("{field}: must be a non-empty string"),
        )
        .field(field)),
    }
}

/// An optional string field of a typed body, as [`given`] reads one.
fn maybe<'a>(v: &'a Option<Loose<String>>, field: &str) -> Result<Option<&'a str>, ApiError> {
    v.as_ref().map(|_| given(v, field)).transpose()
}

/// What this host knows of a route id, and the route's sender.
async fn route_known(s: &Notify, id: &str) -> Result<(RouteKnown, String), ApiError> {
    if let Some(known) = s.sandbox.known(id) {
        return Ok(known);
    }
    if !id.starts_with("rt_") {
        return Ok((RouteKnown::Unknown, String::new()));
    }
    let found = s
        .parts
        .store
        .get_route(id)
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    Ok(match found {
        Some((r, _)) => (RouteKnown::Live, r.sender),
        None => (RouteKnown::Unknown, String::new()),
    })
}

/// What proves the caller may hook the route `sender` started (module
/// docs): the owner's credential, or `signature` by `sender` of
/// [`hook_text`].
fn hook_proof(
    s: &Notify,
    headers: &HeaderMap,
    signature: Option<&str>,
    (route, url, sender): (&str, &str, &str),
) -> HookProof {
    if is_operator(s.parts.owner.as_ref(), headers) {
        return HookProof::Operator;
    }
    let Some(signature) = signature else {
        return HookProof::Missing;
    };
    let Ok(sender) = sender.parse::<Address>() else {
        return HookProof::Invalid(
            "the route's sender is not an EVM address, so no signature proves it: the owner's credential hooks it".into(),
        );
    };
    match relay_chain::personal::signer(&hook_text(route, url), signature) {
        Ok(signer) if signer == sender => HookProof::Sender,
        Ok(signer) => HookProof::Invalid(format!(
            "recovers to {signer}, not to the route's sender: the sender signs relay-hook:v1:route=<routeId>:url=<url>"
        )),
        Err(e) => HookProof::Invalid(e.to_string()),
    }
}

#[utoipa::path(
    post,
    path = "/api/hooks",
    tag = "notify",
    summary = "Register a completion webhook on a route (DONE or FAILED, delivered at least once, signed when a secret is given); only the route's sender (signature) or the owner hooks it",
    request_body = HookRegisterRequest,
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>: hooks any route without a signature")),
    responses(
        (status = 200, description = "Registered, pending", body = HookRegistered),
        (status = "default", description = "A typed error (400 WEBHOOK_URL_REFUSED, 401 HOOK_PROOF_REQUIRED, 403 HOOK_PROOF_INVALID, 404 UNKNOWN_ROUTE, 409 HOOK_LIMIT, …)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(route))]
async fn register(
    State(s): State<Notify>,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> Result<Json<HookRegistered>, ApiError> {
    let req: HookRegisterRequest = relay_wire::decode(&Value::Object(body))?;
    let route = given(&req.route_id, "routeId")?;
    tracing::Span::current().record("route", route);
    let url = given(&req.url, "url")?;
    let secret = maybe(&req.secret, "secret")?;
    let signature = maybe(&req.signature, "signature")?;
    let (known, sender) = route_known(&s, route).await?;
    let proof = hook_proof(&s, &headers, signature, (route, url, &sender));
    let hooks = &s.hooks;
    Ok(Json(
        hooks
            .register(route, url, secret, (known, proof))
            .await
            .map_err(refused)?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/hooks/{id}",
    tag = "notify",
    summary = "A webhook's state: status, attempts, last status, next attempt, every delivery and attempt",
    params(("id" = String, Path, description = "The `wh_` id")),
    responses(
        (status = 200, description = "The webhook", body = HookView),
        (status = "default", description = "A typed error (404 UNKNOWN_HOOK)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(hook = %id))]
async fn hook_state(
    State(s): State<Notify>,
    Path(id): Path<String>,
) -> Result<Json<HookView>, ApiError> {
    Ok(Json(s.hooks.view(&id).await.map_err(refused)?))
}

#[utoipa::path(
    post,
    path = "/api/events/subscribe",
    tag = "notify",
    summary = "Subscribe to price webhooks (an asset crossing a USD threshold) or balance webhooks (an address's token balance changing)",
    request_body = SubscribeRequest,
    responses(
        (status = 200, description = "The subscription, active", body = HookView),
        (status = "default", description = "A typed error (400 WEBHOOK_URL_REFUSED, INVALID_FIELD, UNKNOWN_CHAIN, UNKNOWN_TOKEN, …)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn subscribe(
    State(s): State<Notify>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    headers: axum::http::HeaderMap,
    JsonObject(body): JsonObject,
) -> Result<Json<HookView>, ApiError> {
    let peer = peer.map(|axum::Extension(axum::extract::ConnectInfo(p))| p.ip());
    let caller = relay_feature::caller::client_ip(&s.parts.config.limits, &headers, peer);
    let kind = text(&body, "type")?.to_string();
    let body = Value::Object(body);
    let (sub, url, secret) = match kind.as_str() {
        "price" => {
            let r: PriceSubscribeRequest = relay_wire::decode(&body)?;
            (price_subscription(&s, &r)?, r.url, r.secret)
        }
        "balance" => {
            let r: BalanceSubscribeRequest = relay_wire::decode(&body)?;
            (balance_subscription(&s.parts.config, &r)?, r.url, r.secret)
        }
        other => {
            return Err(ApiError::new(
                ErrorCode::InvalidField,
                format!("type: {other:?} is not a subscription type (price or balance)"),
            )
            .field("type"))
        }
    };
    let url = given(&url, "url")?;
    let secret = maybe(&secret, "secret")?;
    let answer = s
        .hooks
        .subscribe(sub, (url, secret), &caller.to_string())
        .await;
    Ok(Json(answer.map_err(refused)?))
}

fn price_subscription(s: &Notify, r: &PriceSubscribeRequest) -> Result<Subscription, ApiError> {
    let asset = given(&r.asset, "asset")?;
    if let Err(Unpriced::NoPrice(_)) = price_usd_e6(&s.parts.prices, asset) {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("asset: the host has no price for {asset:?} (GET /api/pricefeeds lists them)"),
        )
        .field("asset"));
    }
    let (above, below) = (maybe(&r.above, "above")?, maybe(&r.below, "below")?);
    Subscription::price(asset, above, below).map_err(refused)
}

fn balance_subscription(
    config: &HostConfig,
    r: &BalanceSubscribeRequest,
) -> Result<Subscription, ApiError> {
    let chain = r
        .chain_id
        .as_ref()
        .and_then(|c| c.typed().ok())
        .and_then(Scalar::whole)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::MissingField,
                "chainId: an EVM chain id is required",
            )
            .field("chainId")
        })?;
    if !config.chain_ids().contains(&chain) {
        return Err(ApiError::new(
            ErrorCode::UnknownChain,
            format!("chainId: chain {chain} is not served here (GET /api/route/chains)"),
        )
        .field("chainId"));
    }
    let token = given(&r.token, "token")?;
    let resolved = tokens::resolve(config, ChainRef::Evm(chain), Some(token)).map_err(|e| {
        ApiError::new(ErrorCode::UnknownToken, format!("token: {e}")).field("token")
    })?;
    let token_address = resolved.address.ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidField,
            "token: balance webhooks watch ERC-20 tokens",
        )
        .field("token")
    })?;
    let address = given(&r.address, "address")?;
    let owner: Address = address.parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidAddress,
            format!("address: {address:?} is not an EVM address"),
        )
        .field("address")
    })?;
    Ok(Subscription::Balance {
        chain_id: chain,
        token: token.to_string(),
        token_address,
        address: owner.to_checksum(None),
    })
}

#[utoipa::path(
    delete,
    path = "/api/events/subscribe/{id}",
    tag = "notify",
    summary = "Unsubscribe: no new events (deliveries already made keep retrying)",
    params(("id" = String, Path, description = "The subscription's `wh_` id")),
    responses(
        (status = 200, description = "The subscription, cancelled", body = HookView),
        (status = "default", description = "A typed error (404 UNKNOWN_HOOK)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(hook = %id))]
async fn unsubscribe(
    State(s): State<Notify>,
    Path(id): Path<String>,
) -> Result<Json<HookView>, ApiError> {
    Ok(Json(s.hooks.unsubscribe(&id).await.map_err(refused)?))
}

/// An asset's price in micro-USD from the price book the host's quotes
/// use (on-chain feeds, configured fallbacks).
pub(crate) fn price_usd_e6(prices: &PriceBook, asset: &str) -> Result<u64, Unpriced> {
    prices.usd_e6(&format!("{}/USD", asset.trim()))
}
