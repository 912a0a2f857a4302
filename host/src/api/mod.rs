//! The HTTP API (spec §4). One module per endpoint group; handlers parse,
//! call the engine, and shape the response. Every request gets a tracing
//! span; every failure is `{error, errorCode, retryable, …}`.

mod error;
mod execute;
mod routes;
mod status;
mod track;

use std::sync::Arc;

use axum::Router;

pub use error::{ApiError, ErrorCode};

use relay_registry::OperatorStateStore;

use crate::{
    config::HostConfig,
    engine::{health::HealthCache, mesh::MeshInputs},
    execution::{executor::Executor, relayer::Relayer, sandbox::Sandbox},
    runtime::rails::RailSet,
    store::Store,
};

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// Host configuration.
    pub config: Arc<HostConfig>,
    /// Installed rails.
    pub rails: Arc<RailSet>,
    /// The store.
    pub store: Store,
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
    Router::new()
        .merge(status::routes())
        .merge(routes::routes())
        .merge(track::routes())
        .merge(execute::routes())
        .fallback(error::not_found)
        .layer(
            tower_http::trace::TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
                tracing::info_span!("http", method = %req.method(), path = %req.uri().path())
            }),
        )
        .with_state(state)
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
