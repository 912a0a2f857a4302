//! Bringing the host up: store, broker, rails (with hot reload), HTTP.

use std::{sync::Arc, time::Duration};

use crate::{
    api::{self, AppState},
    capabilities::CapabilityBroker,
    chain::signer::{RelayerSigner, SignerError},
    config::HostConfig,
    engine::health::HealthCache,
    execution::{executor::Executor, relayer::Relayer},
    runtime::rails::RailSet,
    store::Store,
};

/// Why the host could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The store.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The plugin runtime.
    #[error("plugin runtime: {0}")]
    Runtime(String),
    /// Binding the listener.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: std::net::SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

/// How long shutdown waits for open requests to finish.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(3);

/// The parts of a running host, before it serves.
pub struct Host {
    /// Shared state of the API.
    pub state: AppState,
}

impl Host {
    /// Connects the store, builds the broker and loads the plugins.
    pub async fn build(config: HostConfig) -> Result<Self, StartError> {
        let configured = config.relayer.as_deref().and_then(|a| a.parse().ok());
        let signer = match RelayerSigner::from_env(configured) {
            Ok(s) => Some(s),
            Err(SignerError::Missing) => None,
            Err(e) => return Err(StartError::Runtime(e.to_string())),
        };
        Self::build_with_signer(config, signer).await
    }

    /// Like [`Host::build`] with the relayer's signer handed in (the devnet,
    /// tests); `None` runs without execution.
    pub async fn build_with_signer(
        config: HostConfig,
        signer: Option<RelayerSigner>,
    ) -> Result<Self, StartError> {
        let store = Store::connect(&config.database_url()).await?;
        let broker = Arc::new(CapabilityBroker::new(&config.capabilities));
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
        let relayer = signer.map(|s| Arc::new(Relayer::new(s, &config, &store)));
        let config = Arc::new(config);
        let executor = relayer
            .clone()
            .map(|r| Executor::new(store.clone(), r, rails.clone(), config.clone()))
            .transpose()
            .map_err(StartError::Runtime)?
            .map(Arc::new);
        if let (Some(ex), Some(r)) = (&executor, &relayer) {
            spawn_ticks(store.clone(), ex.clone(), r.clone(), &config);
        }
        Ok(Host {
            state: AppState {
                config,
                rails,
                store,
                health: Arc::new(HealthCache::new(Duration::from_secs(30))),
                sandbox: Default::default(),
                relayer,
                executor,
            },
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
        let reload = spawn_reloader(&self.state);
        let addr = listener.local_addr().ok();
        tracing::info!(?addr, "relay host listening");
        let app = api::router(self.state);
        // Graceful shutdown waits for open connections; an idle keep-alive
        // client must not keep the host up, so the drain is bounded.
        let stopping = Arc::new(tokio::sync::Notify::new());
        let signal = {
            let stopping = stopping.clone();
            async move {
                shutdown.await;
                stopping.notify_waiters();
            }
        };
        let serve = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .with_graceful_shutdown(signal);
        let drained = async {
            stopping.notified().await;
            tokio::time::sleep(SHUTDOWN_DRAIN).await;
        };
        let res = tokio::select! {
            res = serve => res,
            _ = drained => {
                tracing::warn!("connections still open after the drain period; stopping anyway");
                Ok(())
            }
        };
        if let Some(h) = reload {
            h.abort();
        }
        res.map_err(|source| StartError::Listen {
            addr: addr.unwrap_or(([0, 0, 0, 0], 0).into()),
            source,
        })
    }
}

/// Resumes every route a previous run left unfinished: each side effect
/// already journaled is finished, never repeated.
/// Background ticks of a replica: picks up open routes nobody holds (at
/// start, and whenever a replica's lease lapses), and fills the relayer's
/// nonce gaps. Coordination is through the database (leases), so any
/// number of replicas may run these.
fn spawn_ticks(store: Store, executor: Arc<Executor>, relayer: Arc<Relayer>, config: &HostConfig) {
    let resume_every = Duration::from_millis(config.execution.resume_interval_ms.max(100));
    tokio::spawn(async move {
        loop {
            if let Ok(open) = store.open_routes().await {
                for id in open {
                    let ex = executor.clone();
                    tokio::spawn(async move {
                        tracing::info!(route = %id, "resuming route");
                        if let Err(e) = ex.run(&id).await {
                            tracing::error!(route = %id, error = %e, "resumed route stopped");
                        }
                    });
                }
            }
            tokio::time::sleep(resume_every).await;
        }
    });
    let gap_ms = config.execution.gap_check_interval_ms;
    if gap_ms == 0 {
        return;
    }
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(gap_ms)).await;
            for sender in relayer.senders() {
                // Missing on two checks in a row: not a nonce another
                // replica has just taken and is about to broadcast.
                match sender.repair_gaps(Duration::from_millis(gap_ms)).await {
                    Ok(r) if !r.missing.is_empty() => {
                        tracing::warn!(missing = ?r.missing, "relayer nonce gap filled")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::debug!(error = %e, "gap check failed"),
                }
            }
        }
    });
}

/// Polls the plugins directory and swaps in changed plugins.
fn spawn_reloader(state: &AppState) -> Option<tokio::task::JoinHandle<()>> {
    let every = state.config.runtime.reload_interval_ms;
    if every == 0 {
        return None;
    }
    let rails = state.rails.clone();
    let health = state.health.clone();
    let dir = state.config.plugins_dir.clone();
    Some(tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(every));
        tick.tick().await;
        loop {
            tick.tick().await;
            let before = fingerprints(&rails);
            let discovery = tokio::task::spawn_blocking({
                let dir = dir.clone();
                move || relay_registry::discover(&dir)
            })
            .await
            .unwrap_or_default();
            let unchanged = discovery.plugins.len() == before.len()
                && discovery
                    .plugins
                    .iter()
                    .all(|p| before.contains(&(p.key(), p.fingerprint.sha256.clone())));
            if unchanged && discovery.rejected.len() == rails.snapshot().rejected.len() {
                continue;
            }
            let snap = rails.apply(discovery).await;
            health.invalidate().await;
            tracing::info!(
                loaded = snap.installed.len(),
                refused = snap.rejected.len(),
                "plugins reloaded"
            );
        }
    }))
}

fn fingerprints(rails: &RailSet) -> Vec<(String, String)> {
    rails
        .snapshot()
        .installed
        .iter()
        .map(|i| (i.plugin.key(), i.plugin.fingerprint.sha256.clone()))
        .collect()
}
