//! Routing (spec §2.5–§2.8, §4.2): the live mesh of installed, enabled,
//! healthy rails, the best-of-N quote over the warm quote book, the compare
//! cache (spec §8.2: 12 s) and the one [`ExecuteService`].
//!
//! [`Routing::new`] is called once, by the binary's wiring; everything that
//! quotes or executes — every API handler, the yield account's delivery
//! legs, the route primitives' runner, agent sessions — holds this one
//! value, so prepared intents, live executes and session executes draw
//! route ids and Permit2/router nonces from one reservation set.

use std::{sync::Arc, time::Duration};

use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_engine::{
    answer::CompareResult,
    compare::TtlCache,
    health::HealthCache,
    mesh::MeshInputs,
    oracle::PriceBook,
    quote::{candidates, resting, NoRoute, QuoteOutcome, Quoter},
    quotebook::QuoteBook,
    route::RouteAsk,
};
use relay_execution::{
    execute::{ExecuteDeps, ExecuteError, ExecuteService, QuoteSource},
    executor::Executor,
    relayer::Relayer,
    sandbox::Sandbox,
};
use relay_registry::OperatorStateStore;
use relay_runtime::rails::RailSet;
use relay_store::Store;
use relay_types::clock::SharedClock;

/// What routing is built from (the binary's shared parts).
#[derive(Clone)]
pub struct RoutingDeps {
    /// Host configuration.
    pub config: Arc<HostConfig>,
    /// Installed rails.
    pub rails: Arc<RailSet>,
    /// The store (operator switches, routes, intents).
    pub store: Store,
    /// Chain reads and simulations.
    pub reader: Arc<ChainReader>,
    /// Health readings.
    pub health: Arc<HealthCache>,
    /// In-memory sandbox and dry-run routes.
    pub sandbox: Arc<Sandbox>,
    /// The relayer (absent without a key).
    pub relayer: Option<Arc<Relayer>>,
    /// Runs live routes (absent without a key).
    pub executor: Option<Arc<Executor>>,
    /// USD prices.
    pub prices: Arc<PriceBook>,
    /// The warm quote book.
    pub quote_book: Arc<QuoteBook>,
    /// The clock.
    pub clock: SharedClock,
}

/// Why routing could not answer.
#[derive(Debug, thiserror::Error)]
pub enum RoutingError {
    /// No enabled, healthy rail serves the lane (the message names it).
    #[error("{0}")]
    Unroutable(String),
    /// The rails that serve the lane are all out for now (health, quarantine).
    #[error("{0}")]
    Resting(String),
    /// The operator switches could not be read.
    #[error("store: {0}")]
    Store(String),
}

/// The routing service (module docs).
pub struct Routing {
    d: RoutingDeps,
    quoter: Arc<Quoter>,
    compare_cache: Arc<TtlCache<CompareResult>>,
    execute: Arc<ExecuteService>,
}

impl std::fmt::Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing").finish_non_exhaustive()
    }
}

impl Routing {
    /// The host's routing over `d` — built once per process.
    pub fn new(d: RoutingDeps) -> Self {
        let ttl = Duration::from_millis(d.config.quote.compare_cache_ms);
        let quoter = Quoter::with_book(d.config.clone(), d.prices.clone(), d.quote_book.clone());
        let execute = ExecuteService::new(ExecuteDeps {
            config: d.config.clone(),
            rails: d.rails.clone(),
            store: d.store.clone(),
            reader: d.reader.clone(),
            sandbox: d.sandbox.clone(),
            relayer: d.relayer.clone(),
            executor: d.executor.clone(),
            clock: d.clock.clone(),
        });
        Routing {
            quoter: Arc::new(quoter),
            compare_cache: Arc::new(TtlCache::new(ttl)),
            execute: Arc::new(execute),
            d,
        }
    }

    /// The engine's quoter (fan-out, ranking, the warm book).
    pub fn quoter(&self) -> &Arc<Quoter> {
        &self.quoter
    }

    /// Compare answers, kept for `quote.compare_cache_ms`.
    pub fn compare_cache(&self) -> &Arc<TtlCache<CompareResult>> {
        &self.compare_cache
    }

    /// The one execute service.
    pub fn execute(&self) -> &Arc<ExecuteService> {
        &self.execute
    }

    /// What routing was built from.
    pub fn deps(&self) -> &RoutingDeps {
        &self.d
    }

    /// Runs `f` over the live mesh: installed rails, operator switches,
    /// health.
    pub async fn with_mesh<T>(
        &self,
        f: impl FnOnce(&MeshInputs<'_>) -> T,
    ) -> Result<T, RoutingError> {
        let snap = self.d.rails.snapshot();
        let state = self
            .d
            .store
            .load_operator_state()
            .await
            .map_err(|e| RoutingError::Store(e.to_string()))?;
        let health = self.d.health.get(&snap, &self.d.config).await;
        Ok(f(&MeshInputs {
            snap: &snap,
            state: &state,
            health: &health,
            config: &self.d.config,
        }))
    }

    /// Quotes `ask` on every applicable rail;
    /// [`RoutingError::Unroutable`] when no rail serves the lane.
    #[tracing::instrument(skip_all, fields(lane = %format!("{}->{}", ask.from_chain, ask.to_chain)))]
    pub async fn quote(&self, ask: &RouteAsk) -> Result<QuoteOutcome, RoutingError> {
        let (found, resting) = self
            .with_mesh(|i| (candidates(i, ask), resting(i, ask)))
            .await?;
        if found.is_empty() && !resting.is_empty() {
            let why: Vec<String> = resting
                .iter()
                .map(|(r, why)| format!("{r}: {why}"))
                .collect();
            return Err(RoutingError::Resting(format!(
                "every rail that routes {} from {} to {} {} is unavailable now ({}); ask again shortly",
                ask.from_token.symbol,
                ask.from_chain,
                ask.to_chain,
                ask.to_token.symbol,
                why.join("; ")
            )));
        }
        if found.is_empty() {
            return Err(RoutingError::Unroutable(format!(
                "no enabled, healthy rail routes {} from {} to {} {}",
                ask.from_token.symbol, ask.from_chain, ask.to_chain, ask.to_token.symbol
            )));
        }
        let mut outcome = self.quoter.quote(found, ask).await;
        outcome.resting = resting;
        Ok(outcome)
    }

    /// Quotes `ask` and finds the answer an execute would use (optionally
    /// only `rail`'s): the outcome and the winner's index, every failure
    /// typed as a quote types it.
    pub async fn winner(
        &self,
        ask: &RouteAsk,
        rail: Option<&str>,
    ) -> Result<(QuoteOutcome, usize), relay_errors::ApiError> {
        let outcome = self.quote(ask).await?;
        let i = relay_engine::plan::executable(&outcome, rail)?;
        Ok((outcome, i))
    }
}

impl QuoteSource for Routing {
    async fn quote(&self, ask: &RouteAsk) -> Result<QuoteOutcome, ExecuteError> {
        Routing::quote(self, ask).await.map_err(|e| match e {
            RoutingError::Unroutable(m) => ExecuteError::Unroutable(m),
            RoutingError::Resting(m) => ExecuteError::NoRoute(Some(NoRoute::Unavailable(m))),
            RoutingError::Store(m) => ExecuteError::Store(m),
        })
    }
}

impl From<RoutingError> for relay_errors::ApiError {
    fn from(e: RoutingError) -> Self {
        use relay_errors::{ApiError, ErrorCode};
        match e {
            RoutingError::Unroutable(m) => ApiError::new(ErrorCode::UnroutableLane, m)
                .suggest("see GET /api/route/chains for the lanes this host serves"),
            RoutingError::Resting(m) => ApiError::new(ErrorCode::RailsUnavailable, m),
            RoutingError::Store(m) => ApiError::new(ErrorCode::StoreUnavailable, m),
        }
    }
}
