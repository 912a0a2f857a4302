//! The HTTP API (spec §4). One module per endpoint group; handlers parse,
//! call the engine, and shape the response. Every request gets a tracing
//! span; every failure is `{error, errorCode, retryable, …}` — unknown
//! paths and wrong methods included (404 `NOT_FOUND`). The HTTP edge
//! ([`layers`]: body, URI and time limits, strict JSON, request ids) with
//! rate limits (§8.1) and CORS (§5.10, [`limits`]) wraps every route;
//! [`metrics`] serves `GET /metrics`. The `admin` module serves the
//! operator's dashboard (`/admin`, over [`relay_admin`]) and reports every
//! error answer and rate-limit refusal to it.

mod admin;
mod agent;
mod around;
pub mod auth;
mod changelog;
mod compare;
pub mod concierge;
mod delivery;
mod discovery;
use relay_feature::edge;
mod error;
mod execute;
mod explorer;
mod floatlane;
mod gasless;
mod improve;
mod intent;
pub mod layers;
#[cfg(test)]
mod layout;
pub mod limits;
mod membership;
pub mod metrics;
pub mod openapi;
pub mod operations;
mod plan;
mod preflight;
mod pricefeeds;
mod quote;
mod recent;
mod refusal;
mod routes;
mod routing;
mod snapshot;
mod solve;
mod status;
mod track;
mod uptime;
pub mod usage;
mod why;

use axum::Router;
pub use error::{ApiError, Blame, ErrorCode};
use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_engine::{health::HealthCache, mesh::MeshInputs};
use relay_execution::{executor::Executor, relayer::Relayer, sandbox::Sandbox};
use relay_feature::Feature;
use relay_runtime::rails::RailSet;
use relay_store::Store;
pub use status::MCP_PATH;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

/// What every handler can reach: the host's [`Services`], shared. axum
/// clones a route's state for every request it serves, so the handle is one
/// reference count rather than a copy of each service's.
#[derive(Clone)]
pub struct AppState(Arc<Services>);

impl AppState {
    /// The handle to `services`.
    pub fn new(services: Services) -> Self {
        AppState(Arc::new(services))
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

/// The host's services, as the API reaches them through [`AppState`].
pub struct Services {
    /// Host configuration.
    pub config: Arc<HostConfig>,
    /// Installed rails.
    pub rails: Arc<RailSet>,
    /// The store.
    pub store: Store,
    /// The clock every handler reads time from (the store's).
    pub clock: relay_types::SharedClock,
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
    /// The SHA-256 of the operator's owner token (from the environment;
    /// `None`: nobody may spend the operator's funds) ([`auth`]).
    pub owner_token: Option<auth::OwnerTokenHash>,
    /// Developer keys: issue, usage, and the live set the rate limiter and
    /// the usage recorder ask on every request ([`relay_keys`], [`usage`]).
    pub keys: Arc<relay_keys::KeyService>,
    /// The USD price of an asset pair: on-chain feeds, configured
    /// fallbacks ([`relay_engine::oracle::PriceBook::usd_e6`]).
    pub prices: Arc<relay_engine::oracle::PriceBook>,
    /// What the features that start themselves left for their routes
    /// (netting, the yield account, sponsorship: [`relay_feature::Start`]).
    pub handles: relay_feature::Handles,
    /// The warm quote book every quote reads ([`relay_engine::quotebook`];
    /// its refresher runs as a host job).
    pub quote_book: Arc<relay_engine::quotebook::QuoteBook>,
    /// Routing: the mesh, the quoter, compare answers and the one execute
    /// service ([`relay_app::Routing`], built once by the binary).
    pub routing: Arc<relay_app::Routing>,
    /// What every adapter reports to the operator's dashboard (recent
    /// errors, rate-limit refusals).
    pub signals: Arc<relay_admin::signals::Signals>,
}

/// Every feature the host serves, each described once in its own home
/// ([`relay_feature::Feature`]: routes, rate-limit buckets, errorCodes).
/// Adding a feature is its module and one line here.
pub const FEATURES: &[Feature<AppState>] = &[
    discovery::FEATURE,
    routing::FEATURE,
    relay_primitives::http::feature(),
    relay_keys::http::feature(),
    relay_notify::http::feature(),
    relay_sessions::http::feature(),
    relay_yield_account::http::feature(),
    relay_netting::http::feature(),
    relay_x402::http::feature(),
    relay_sponsor::http::feature(),
    relay_analysis::http::feature(),
    relay_messaging::http::feature(),
    relay_privacy::http::feature(),
    relay_pool::http::feature(),
    concierge::FEATURE,
    explorer::FEATURE,
    admin::FEATURE,
    openapi::FEATURE,
];

/// Every `errorCode` this host answers with: the core's, then each
/// feature's own (what `GET /api/errors` lists).
pub fn error_codes() -> Vec<ErrorCode> {
    let mut all = ErrorCode::CORE.to_vec();
    for c in FEATURES.iter().flat_map(|f| f.errors) {
        if !all.contains(c) {
            all.push(*c);
        }
    }
    all
}

/// Every feature's rate-limit buckets.
pub fn limit_table() -> Vec<relay_feature::Limit> {
    FEATURES
        .iter()
        .flat_map(|f| f.limits.iter().copied())
        .collect()
}

/// The API's two doors over one rate limiter — the router (every
/// feature's routes behind the HTTP edge) and the public operations the
/// hosted MCP endpoint calls ([`operations`]) — and what the privacy
/// lane's gateway answers inner requests from: the router again, which the
/// caller keeps while it serves (the gateway holds it weakly, so a stopped
/// host's router and state are freed).
pub fn doors(state: AppState) -> (Router, operations::Operations, Arc<Router>) {
    let limiter = limits::RateLimiter::with_keys(
        &state.config.limits,
        state.keys.clone(),
        state.clock.clone(),
    );
    let limiter = Arc::new(match state.config.limits.backend {
        relay_config::LimitsBackend::Memory => limiter,
        relay_config::LimitsBackend::Store => limiter.sharing(state.store.clone()),
    });
    let operations = operations::Operations::new(&state, limiter.clone());
    let gateway = state.handles.get::<relay_privacy::gateway::Inner>();
    let router = http_router(state, limiter);
    let kept = Arc::new(router.clone());
    if let Some(inner) = gateway {
        inner.set(&kept);
    }
    (router, operations, kept)
}

/// The router over `limiter`.
fn http_router(state: AppState, limiter: Arc<limits::RateLimiter>) -> Router {
    metrics::handle();
    let (documented, doc) = FEATURES
        .iter()
        .fold(OpenApiRouter::with_openapi(openapi::base()), |r, f| {
            r.merge((f.routes)(&state))
        })
        .split_for_parts();
    openapi::finish(doc);
    let routes = documented
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::not_found);
    let observers = layers::Observers {
        signals: state.signals.clone(),
        keys: state.keys.clone(),
        state: state.clone(),
    };
    layers::edge(routes, &state.config.http, limiter, observers).with_state(state)
}

impl relay_feature::HasHandles for AppState {
    fn handles(&self) -> &relay_feature::Handles {
        &self.handles
    }
}

/// Runs `f` over the current mesh inputs: installed rails, operator state
/// (read fresh, so a CLI toggle shows at once) and cached health.
pub(crate) async fn with_mesh<T>(
    s: &AppState,
    f: impl FnOnce(&MeshInputs<'_>) -> T,
) -> Result<T, ApiError> {
    s.routing.with_mesh(f).await.map_err(routing_error)
}

/// A routing refusal as the API answers it.
pub(crate) fn routing_error(e: relay_app::RoutingError) -> ApiError {
    e.into()
}
