//! The HTTP API (spec §4). One module per endpoint group; handlers parse,
//! call the engine, and shape the response. Every request gets a tracing
//! span; every failure is `{error, errorCode, retryable, …}` — unknown
//! paths and wrong methods included (404 `NOT_FOUND`). Rate limits (§8.1)
//! and CORS (§5.10) wrap every route ([`limits`]).

mod agent;
mod changelog;
mod compare;
mod delivery;
mod edge;
mod error;
mod execute;
mod floatlane;
mod gasless;
pub mod limits;
mod membership;
pub mod openapi;
mod plan;
mod preflight;
mod pricefeeds;
mod quote;
mod recent;
mod routes;
mod snapshot;
mod solve;
mod status;
mod track;
mod uptime;

use axum::Router;
pub use error::{ApiError, ErrorCode};
use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_engine::{health::HealthCache, mesh::MeshInputs};
use relay_execution::{executor::Executor, relayer::Relayer, sandbox::Sandbox};
use relay_registry::OperatorStateStore;
use relay_runtime::rails::RailSet;
use relay_store::Store;
use std::sync::Arc;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// Host configuration.
    pub config: Arc<HostConfig>,
    /// Installed rails.
    pub rails: Arc<RailSet>,
    /// The store.
    pub store: Store,
    /// Read-only chain access (failover across the operator's endpoints).
    pub reader: Arc<ChainReader>,
    /// Health readings (30 s cache).
    pub health: Arc<HealthCache>,
    /// In-memory sandbox routes.
    pub sandbox: Arc<Sandbox>,
    /// The relayer (absent without a key: execute answers RELAYER_UNAVAILABLE).
    pub relayer: Option<Arc<Relayer>>,
    /// Runs live routes.
    pub executor: Option<Arc<Executor>>,
}

/// The whole API router.
pub fn router(state: AppState) -> Router {
    let quoting = quote::Quoting::new(state.clone());
    let limiter = Arc::new(limits::RateLimiter::new(&state.config.limits));
    let reader = state.reader.clone();
    Router::new()
        .merge(status::routes())
        .merge(routes::routes())
        .merge(track::routes())
        .merge(gasless::routes())
        .merge(uptime::routes(&state))
        .merge(delivery::routes())
        .merge(snapshot::routes())
        .merge(changelog::routes())
        .merge(pricefeeds::routes())
        .merge(floatlane::routes(reader.clone()))
        .merge(membership::routes(reader))
        .merge(preflight::routes(quoting.clone()))
        .merge(plan::routes(quoting.clone()))
        .merge(solve::routes(quoting.clone()))
        .merge(agent::routes(quoting.clone()))
        .merge(recent::routes())
        .merge(execute::routes(quoting.clone()))
        .merge(quote::routes(quoting.clone()))
        .merge(compare::routes(quoting))
        .merge(openapi::routes())
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::not_found)
        .layer(axum::middleware::from_fn_with_state(limiter, limits::enforce))
        .layer(limits::cors())
        .layer(
            tower_http::trace::TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
                tracing::info_span!("http", method = %req.method(), path = %req.uri().path())
            }),
        )
        .with_state(state)
}

/// Verifies an execute's Permit2 signature (off-chain checks, then its
/// nonce on chain) against this host's relayer as spender.
pub(crate) async fn verify_permit(
    s: &AppState,
    ask: &relay_engine::request::ExecuteAsk,
) -> Result<(), ApiError> {
    let relayer = s.relayer.as_ref().ok_or_else(|| {
        ApiError::new(
            ErrorCode::RelayerUnavailable,
            "this host has no relayer key",
        )
    })?;
    let now = relay_types::now_ms() / 1000;
    relay_engine::request::verify_permit(&s.reader, &s.config, relayer.address(), ask, now)
        .await
        .map_err(ApiError::from)
}

/// Runs `f` over the current mesh inputs: installed rails, operator state
/// (read fresh, so a CLI toggle shows at once) and cached health.
pub(crate) async fn with_mesh<T>(
    s: &AppState,
    f: impl FnOnce(&MeshInputs<'_>) -> T,
) -> Result<T, ApiError> {
    let snap = s.rails.snapshot();
    let state = s
        .store
        .load_operator_state()
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    let health = s.health.get(&snap, &s.config).await;
    Ok(f(&MeshInputs {
        snap: &snap,
        state: &state,
        health: &health,
        config: &s.config,
    }))
}
