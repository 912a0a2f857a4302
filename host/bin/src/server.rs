//! Bringing the host up: store, broker, rails (with hot reload), HTTP.
//!
//! Two credentials come from the environment, never from the configuration
//! file, and are never logged: the relayer's key (`RELAY_RELAYER_KEY`, or
//! the passphrase of the encrypted keystore `relayer_keystore` names) and
//! the SHA-256 of the operator's owner token ([`OWNER_TOKEN_HASH_ENV`]),
//! without which `mode: self` is refused for everyone.

use relay_api::{
    self as api,
    auth::{BadOwnerTokenHash, OwnerTokenHash},
    AppState, Services,
};
use relay_app::{Routing, RoutingDeps};
use relay_capabilities::CapabilityBroker;
use relay_chain::reader::ChainReader;
use relay_chain::signer::{RelayerSigner, SignerError};
use relay_config::HostConfig;
use relay_engine::{health::HealthCache, oracle::PriceBook};
use relay_execution::{executor::Executor, relayer::Relayer, sandbox::Sandbox};
use relay_jobs::{CancellationToken, Jobs};
use relay_runtime::rails::RailSet;
use relay_store::Store;
use relay_types::SharedClock;
use std::{sync::Arc, time::Duration};

/// Why the host could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The store.
    #[error(transparent)]
    Store(#[from] relay_store::StoreError),
    /// The plugin runtime.
    #[error("plugin runtime: {0}")]
    Runtime(String),
    /// A feature's configuration table.
    #[error(transparent)]
    Config(#[from] relay_config::ConfigError),
    /// A feature did not start.
    #[error(transparent)]
    Feature(#[from] relay_feature::StartError),
    /// The owner token's hash in the environment is malformed.
    #[error("{OWNER_TOKEN_HASH_ENV}: {0}")]
    OwnerToken(BadOwnerTokenHash),
    /// Binding the listener.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: std::net::SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

/// Checks what [`HostConfig::load`] cannot: every feature table is one a
/// feature claims, and valid by that feature's own rules.
pub fn check_config(config: &HostConfig) -> Result<(), relay_config::ConfigError> {
    relay_feature::check_sections(config, relay_api::FEATURES)
}

/// The environment variable holding the hex SHA-256 of the operator's
/// owner token (`Authorization: Bearer <token>` on requests that spend the
/// operator's funds). Unset: nobody has that authority.
pub const OWNER_TOKEN_HASH_ENV: &str = "RELAY_OWNER_TOKEN_SHA256";

/// What the host is handed instead of reading it from its configuration.
#[derive(Debug, Default)]
pub struct Credentials {
    /// The relayer's signer; `None` runs without execution.
    pub signer: Option<RelayerSigner>,
    /// The relayer key pool's keys (executors; empty: the relayer key
    /// alone signs).
    pub pool: Vec<RelayerSigner>,
    /// The owner token's hash; `None` refuses `mode: self` for everyone.
    pub owner_token: Option<OwnerTokenHash>,
}

impl Credentials {
    /// Both from the environment (`RELAY_RELAYER_KEY` or the configured
    /// keystore with its passphrase, [`OWNER_TOKEN_HASH_ENV`]); a malformed
    /// value refuses to start,
    /// naming the variable and never the value.
    pub fn from_env(config: &HostConfig) -> Result<Self, StartError> {
        let signer = match RelayerSigner::from_config(config) {
            Ok(s) => Some(s),
            Err(SignerError::Missing) => None,
            Err(e) => return Err(StartError::Runtime(e.to_string())),
        };
        let pool = match &signer {
            Some(s) => RelayerSigner::pool_from_config(config, s.address())
                .map_err(|e| StartError::Runtime(e.to_string()))?,
            None => Vec::new(),
        };
        let owner_token = std::env::var(OWNER_TOKEN_HASH_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| OwnerTokenHash::from_hex(&v))
            .transpose()
            .map_err(StartError::OwnerToken)?;
        Ok(Credentials {
            signer,
            pool,
            owner_token,
        })
    }
}

/// What the features reach the application layer through: over the one
/// routing service, the yield account's delivery legs, the sessions'
/// forwarded execute and the route primitives' live runner and leg
/// planner; the sandbox routes notify registers and completes hooks on;
/// the session keys derived from the relayer's key and the relayer's
/// signer (statements, bundles, erasure statements; the key stays in the
/// chain crate's signer) and executor (upstream rechecks).
fn engine(
    routing: &Arc<Routing>,
    sandbox: &Arc<Sandbox>,
    clock: &SharedClock,
    relayer: Option<&Arc<Relayer>>,
) -> relay_feature::Handles {
    let mut handles = relay_feature::Handles::default();
    let forward: relay_sessions::http::Forwarder =
        Arc::new(relay_app::sessions::Forward(routing.clone()));
    handles.insert(forward);
    handles.insert(relayer.map(|r| r.signer().session_keys()));
    handles.insert(relay_app::primitives::live(routing));
    handles.insert(relayer.map(|r| r.signer().clone()));
    handles.insert(routing.deps().executor.clone());
    let legs: relay_yield_account::leg::Legs =
        Arc::new(relay_app::legs::EngineLegs::new(routing.clone()));
    handles.insert(legs);
    let sandboxed: relay_notify::Sandboxed = Arc::new(relay_app::sandbox::SandboxCompletions(
        sandbox.clone(),
        clock.clone(),
    ));
    handles.insert(sandboxed);
    handles
}

/// The warm quote book and its refresher (stops with the jobs).
fn quote_book_job(
    jobs: &mut Jobs,
    config: &HostConfig,
    store: &Store,
) -> Arc<relay_engine::quotebook::QuoteBook> {
    let clock = store.clock().clone();
    let mut book = relay_engine::quotebook::QuoteBook::for_config(config, clock);
    if config.limits.backend == relay_config::LimitsBackend::Store {
        let share =
            relay_app::bookshare::StoreShare::new(store.clone(), config.quote_book.stale_ms);
        let sharing = relay_engine::quotebook::Sharing::new(
            Arc::new(share),
            config.limits.on_backend_failure,
        );
        book = book.shared(sharing);
    }
    let book = Arc::new(book);
    if config.quote_book.enabled {
        jobs.add("quote-book", tokio::spawn(book.clone().run(jobs.token())));
    }
    book
}

/// The price book, read once now (quotes right after start are priced)
/// and refreshed by its job every `quote.feed_refresh_ms`.
async fn price_jobs(
    jobs: &mut Jobs,
    config: &Arc<HostConfig>,
    reader: &Arc<ChainReader>,
    clock: relay_types::SharedClock,
) -> Arc<PriceBook> {
    let book = Arc::new(PriceBook::new(config.clone(), reader.clone(), clock));
    if !config.pricefeeds.is_empty() {
        let read = book.refresh().await;
        tracing::info!(read, feeds = config.pricefeeds.len(), "price feeds read");
        let every = Duration::from_millis(config.quote.feed_refresh_ms.max(100));
        let job = relay_jobs::pricefeeds::spawn(jobs.token(), book.clone(), every);
        jobs.add("price-feeds", job);
    }
    book
}

/// How long shutdown waits for open requests to finish.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(3);

/// The parts of a running host, before it serves.
pub struct Host {
    /// Shared state of the API.
    pub state: AppState,
    /// Background jobs (resume, nonce gaps; plugin reload once serving).
    pub jobs: Jobs,
}

impl Host {
    /// Connects the store, builds the broker and loads the plugins, with
    /// the credentials of the environment ([`Credentials::from_env`]).
    pub async fn build(config: HostConfig) -> Result<Self, StartError> {
        let creds = Credentials::from_env(&config)?;
        Self::build_with(config, creds).await
    }

    /// Like [`Host::build`] with the credentials handed in (the devnet,
    /// tests).
    pub async fn build_with(config: HostConfig, creds: Credentials) -> Result<Self, StartError> {
        Self::build_on(config, creds, relay_types::clock::system()).await
    }

    /// Like [`Host::build_with`], every service reading time from `clock`
    /// (tests hand in a `ManualClock` they advance).
    pub async fn build_on(
        config: HostConfig,
        creds: Credentials,
        clock: relay_types::SharedClock,
    ) -> Result<Self, StartError> {
        check_config(&config)?;
        let Credentials {
            signer,
            pool,
            owner_token,
        } = creds;
        if owner_token.is_none() {
            tracing::warn!(
                "no {OWNER_TOKEN_HASH_ENV}: requests that spend the operator's funds (mode self) are refused"
            );
        }
        let store = Store::connect_with_clock(&config.database_url(), clock).await?;
        let broker = CapabilityBroker::new(&config.capabilities).with_clock(store.clock().clone());
        let broker = Arc::new(broker);
        let rails = Arc::new(
            RailSet::new(&config, broker).map_err(|e| StartError::Runtime(e.to_string()))?,
        );
        let snap = rails.reload_from(&config.plugins_dir).await;
        tracing::info!(
            loaded = snap.installed.len(),
            refused = snap.rejected.len(),
            dir = %config.plugins_dir.display(),
            "plugins scanned"
        );
        let relayer = signer.map(|s| Arc::new(Relayer::new((s, pool), &config, &store)));
        let reader = Arc::new(ChainReader::new(&config));
        let config = Arc::new(config);
        let executor = relayer
            .clone()
            .map(|r| {
                Executor::new(
                    store.clone(),
                    r,
                    rails.clone(),
                    config.clone(),
                    reader.clone(),
                )
            })
            .transpose()
            .map_err(StartError::Runtime)?
            .map(Arc::new);
        let mut jobs = Jobs::new(CancellationToken::new());
        if let (Some(ex), Some(r)) = (&executor, &relayer) {
            let e = &config.execution;
            let every = Duration::from_millis(e.resume_interval_ms.max(100));
            jobs.add(
                "resume",
                relay_jobs::resume::spawn(jobs.token(), store.clone(), ex.clone(), every),
            );
            if !r.pool_keys().is_empty() {
                let r = r.clone();
                jobs.repeat("key-pool", every, move || {
                    let r = r.clone();
                    async move { relay_jobs::key_pool::tick(&r).await }
                });
            }
            if e.gap_check_interval_ms > 0 {
                let every = Duration::from_millis(e.gap_check_interval_ms);
                jobs.add(
                    "nonce-gaps",
                    relay_jobs::nonce_gaps::spawn(jobs.token(), r.clone(), every),
                );
            }
        }
        let sandbox = Arc::new(relay_execution::sandbox::Sandbox::new(
            store.clock().clone(),
        ));
        let prices = price_jobs(&mut jobs, &config, &reader, store.clock().clone()).await;
        let parts = relay_feature::Parts {
            config: config.clone(),
            store: store.clone(),
            reader: reader.clone(),
            prices: prices.clone(),
            senders: relayer.as_ref().map(|r| r.sending()),
            clock: store.clock().clone(),
            owner: owner_token.clone(),
        };
        let quote_book = quote_book_job(&mut jobs, &config, &store);
        let health = Arc::new(HealthCache::new(
            Duration::from_millis(config.runtime.health_ttl_ms),
            reader.clone(),
            store.clock().clone(),
        ));
        // the one routing service every adapter and job shares
        let routing = Arc::new(Routing::new(RoutingDeps {
            config: config.clone(),
            rails: rails.clone(),
            store: store.clone(),
            reader: reader.clone(),
            health: health.clone(),
            sandbox: sandbox.clone(),
            relayer: relayer.clone(),
            executor: executor.clone(),
            prices: prices.clone(),
            quote_book: quote_book.clone(),
            clock: store.clock().clone(),
        }));
        let handles = relay_feature::start_all(
            api::FEATURES,
            &parts,
            &mut jobs,
            engine(&routing, &sandbox, store.clock(), relayer.as_ref()),
        )
        .await?;
        let keys = handles
            .get::<Arc<relay_keys::KeyService>>()
            .ok_or_else(|| StartError::Runtime("the keys feature left no service".into()))?;
        Ok(Host {
            state: AppState::new(Services {
                health,
                routing,
                reader,
                config,
                rails,
                clock: store.clock().clone(),
                store,
                sandbox,
                relayer,
                executor,
                owner_token,
                keys,
                prices,
                handles,
                quote_book,
                signals: Arc::default(),
            }),
            jobs,
        })
    }

    /// Serves the API until `shutdown` resolves; rescans plugins meanwhile.
    pub async fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartError> {
        let addr = self.state.config.listen;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Listen { addr, source })?;
        self.serve_on(listener, shutdown).await
    }

    /// Serves on an already-bound listener (tests bind port 0).
    pub async fn serve_on(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartError> {
        let Host { state, mut jobs } = self;
        if let Some(every) = relay_jobs::reload::period(state.config.runtime.reload_interval_ms) {
            let handle = relay_jobs::reload::spawn(
                jobs.token(),
                state.rails.clone(),
                state.health.clone(),
                state.config.plugins_dir.clone(),
                every,
            );
            jobs.add("plugin-reload", handle);
        }
        let probe = relay_jobs::health_probe::spawn(
            jobs.token(),
            state.health.clone(),
            state.rails.clone(),
            state.config.clone(),
            state.store.clone(),
        );
        jobs.add("health-probe", probe);
        let addr = listener.local_addr().ok();
        tracing::info!(?addr, "relay host listening");
        let http = state.config.http.clone();
        let limits = state.config.limits.clone();
        let shared =
            (limits.backend == relay_config::LimitsBackend::Store).then(|| state.store.clone());
        // `_gateway` is the router the privacy lane's gateway answers from:
        // kept while serving, freed with it
        let (router, operations, _gateway) = api::doors(state);
        let app = relay_mcp::hosted::with_mcp(router, operations, (&http, &limits), shared);
        crate::accept::serve(listener, app, &http, shutdown).await;
        jobs.shutdown().await;
        Ok(())
    }
}
