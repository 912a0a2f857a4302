//! Webhooks (spec §4.5, §6.1, §6.3), thin over [`relay_notify`]:
//!
//! - `POST /api/hooks {routeId, url, secret?, signature?}` →
//!   HookRegistered (`wh_` id, `pending`); `GET /api/hooks/{id}` → its
//!   state, deliveries and every attempt. Only the route's owner hooks it
//!   ([`relay_notify::hooks`]): `signature` is the route's sender's
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
//! send unsigned webhooks).

use std::sync::Arc;

use alloy::primitives::{Address, Signature};
use async_trait::async_trait;
use axum::{
    extract::{Path, State},
    http::HeaderMap,
    Json,
};
use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_engine::{
    oracle::{PriceBook, Unpriced},
    tokens,
};
use relay_execution::sandbox::Sandbox;
use relay_notify::{
    dispatch::SandboxRoutes,
    hooks::{hook_text, HookProof, HookRegistered, HookView, RouteKnown},
    subscribe::{Observe, Subscription},
};
use relay_plugin_api::ChainRef;
use relay_types::RouteStatus;
use serde_json::{Map, Value};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::{self, JsonObject},
    ApiError, AppState, ErrorCode,
};

/// Webhooks and event subscriptions (spec §4.5, §6): each registration makes
/// the host send requests.
pub(crate) const FEATURE: relay_feature::Feature<crate::AppState> = relay_feature::Feature {
    name: "notify",
    home: "host/notify",
    spec: "§4.5, §6",
    section: None,
    routes: |_| routes(),
    limits: &[
        relay_feature::Limit::post("hooks", "/api/hooks", 30),
        relay_feature::Limit::post("subscribe", "/api/events/subscribe", 30),
    ],
    errors: &[
        crate::ErrorCode::WebhookUrlRefused,
        crate::ErrorCode::UnknownHook,
        crate::ErrorCode::HookLimit,
        crate::ErrorCode::HookProofRequired,
        crate::ErrorCode::HookProofInvalid,
    ],
    start: None,
};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(hook_state))
        .routes(routes!(subscribe))
        .routes(routes!(unsubscribe))
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

/// An optional string field.
fn opt_text<'a>(body: &'a Map<String, Value>, field: &str) -> Result<Option<&'a str>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text(body, field).map(Some),
    }
}

/// What this host knows of a route id, and the route's sender.
async fn route_known(s: &AppState, id: &str) -> Result<(RouteKnown, String), ApiError> {
    if let Some((r, _)) = s.sandbox.get(id) {
        let known = match r.status {
            RouteStatus::Dry => RouteKnown::Dry,
            _ => RouteKnown::Sandbox,
        };
        return Ok((known, r.sender));
    }
    if !id.starts_with("rt_") {
        return Ok((RouteKnown::Unknown, String::new()));
    }
    let found = s
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
    s: &AppState,
    headers: &HeaderMap,
    signature: Option<&str>,
    (route, url, sender): (&str, &str, &str),
) -> HookProof {
    if super::auth::is_operator(s.owner_token.as_ref(), headers) {
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
    let sig: Signature = match signature.parse() {
        Ok(sig) => sig,
        Err(_) => return HookProof::Invalid("not a 65-byte hex signature".into()),
    };
    if sig.normalize_s().is_some() {
        return HookProof::Invalid("high-s signature".into());
    }
    match sig.recover_address_from_msg(hook_text(route, url).as_bytes()) {
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
    request_body(content = Object, example = json!({"routeId": "rt_0123456789abcdef0123", "url": "https://example.com/relay-hook", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "signature": "0x…: the route's sender's EIP-191 signature of relay-hook:v1:route=<routeId>:url=<url>"})),
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>: hooks any route without a signature")),
    responses(
        (status = 200, description = "Registered, pending", body = HookRegistered),
        (status = "default", description = "A typed error (400 WEBHOOK_URL_REFUSED, 401 HOOK_PROOF_REQUIRED, 403 HOOK_PROOF_INVALID, 404 UNKNOWN_ROUTE, 409 HOOK_LIMIT, …)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(route))]
async fn register(
    State(s): State<AppState>,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> Result<Json<HookRegistered>, ApiError> {
    edge::only_fields(&body, &["routeId", "url", "secret", "signature"])?;
    let route = text(&body, "routeId")?;
    tracing::Span::current().record("route", route);
    let url = text(&body, "url")?;
    let secret = opt_text(&body, "secret")?;
    let signature = opt_text(&body, "signature")?;
    let (known, sender) = route_known(&s, route).await?;
    let proof = hook_proof(&s, &headers, signature, (route, url, &sender));
    let hooks = &s.hooks;
    Ok(Json(
        hooks.register(route, url, secret, (known, proof)).await?,
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
        (status = "default", description = "A typed error (404 UNKNOWN_HOOK)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(hook = %id))]
async fn hook_state(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<HookView>, ApiError> {
    Ok(Json(s.hooks.view(&id).await?))
}

#[utoipa::path(
    post,
    path = "/api/events/subscribe",
    tag = "notify",
    summary = "Subscribe to price webhooks (an asset crossing a USD threshold) or balance webhooks (an address's token balance changing)",
    request_body(content = Object, example = json!({"type": "balance", "chainId": 8453, "token": "USDC", "address": "0x000000000000000000000000000000000000bEEF", "url": "https://example.com/relay-events", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})),
    responses(
        (status = 200, description = "The subscription, active", body = HookView),
        (status = "default", description = "A typed error (400 WEBHOOK_URL_REFUSED, INVALID_FIELD, UNKNOWN_CHAIN, UNKNOWN_TOKEN, …)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn subscribe(
    State(s): State<AppState>,
    JsonObject(body): JsonObject,
) -> Result<Json<HookView>, ApiError> {
    let sub = match text(&body, "type")? {
        "price" => {
            edge::only_fields(&body, &["type", "asset", "above", "below", "url", "secret"])?;
            let asset = text(&body, "asset")?;
            if let Err(Unpriced::NoPrice(_)) = price_usd_e6(&s.prices, asset) {
                return Err(ApiError::new(
                    ErrorCode::InvalidField,
                    format!("asset: the host has no price for {asset:?} (GET /api/pricefeeds lists them)"),
                )
                .field("asset"));
            }
            Subscription::price(asset, opt_text(&body, "above")?, opt_text(&body, "below")?)?
        }
        "balance" => {
            edge::only_fields(
                &body,
                &["type", "chainId", "token", "address", "url", "secret"],
            )?;
            balance_subscription(&s.config, &body)?
        }
        other => {
            return Err(ApiError::new(
                ErrorCode::InvalidField,
                format!("type: {other:?} is not a subscription type (price or balance)"),
            )
            .field("type"))
        }
    };
    let url = text(&body, "url")?;
    let secret = opt_text(&body, "secret")?;
    Ok(Json(s.hooks.subscribe(sub, url, secret).await?))
}

fn balance_subscription(
    config: &HostConfig,
    body: &Map<String, Value>,
) -> Result<Subscription, ApiError> {
    let chain = match body.get("chainId") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
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
    let token = text(body, "token")?;
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
    let address = text(body, "address")?;
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
        (status = "default", description = "A typed error (404 UNKNOWN_HOOK)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(hook = %id))]
async fn unsubscribe(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<HookView>, ApiError> {
    Ok(Json(s.hooks.unsubscribe(&id).await?))
}

/// An asset's price in micro-USD from the price book the host's quotes
/// use (on-chain feeds, configured fallbacks).
fn price_usd_e6(prices: &PriceBook, asset: &str) -> Result<u64, Unpriced> {
    prices.usd_e6(&format!("{}/USD", asset.trim()))
}

/// Watchers' view of the world: the host's price book and chain reads.
#[derive(Debug)]
pub struct HostObserve {
    /// The host's prices (on-chain feeds, configured fallbacks).
    pub prices: Arc<PriceBook>,
    /// Chain reads.
    pub reader: Arc<ChainReader>,
}

#[async_trait]
impl Observe for HostObserve {
    fn price_usd_e6(&self, asset: &str) -> Option<u64> {
        price_usd_e6(&self.prices, asset).ok()
    }

    async fn balance(&self, chain: u64, token: &str, owner: &str) -> Result<String, String> {
        let token: Address = token.parse().map_err(|_| format!("bad token {token}"))?;
        let owner: Address = owner.parse().map_err(|_| format!("bad address {owner}"))?;
        self.reader
            .token_balance(chain, token, owner)
            .await
            .map(|b| b.to_string())
            .map_err(|e| e.to_string())
    }
}

/// Sandbox routes' completions, for the dispatcher of this replica,
/// stamped on its clock.
#[derive(Debug)]
pub struct SandboxCompletions(pub Arc<Sandbox>, pub relay_types::SharedClock);

impl SandboxRoutes for SandboxCompletions {
    fn completion(&self, route_id: &str) -> Option<Value> {
        let (r, _) = self.0.get(route_id)?;
        let event = match r.status {
            RouteStatus::Done => "done",
            RouteStatus::Failed => "failed",
            _ => return None,
        };
        Some(relay_store::route_event(&r, event, self.1.now_ms(), true))
    }
}
