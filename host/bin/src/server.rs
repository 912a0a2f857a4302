//! Bringing the host up: store, broker, rails (with hot reload), HTTP.

use relay_api::{self as api, AppState};
use relay_capabilities::CapabilityBroker;
use relay_chain::reader::ChainReader;
use relay_chain::signer::{RelayerSigner, SignerError};
use relay_config::HostConfig;
use relay_engine::health::HealthCache;
use relay_execution::{executor::Executor, relayer::Relayer};
use relay_jobs::{CancellationToken, Jobs};
use relay_runtime::rails::RailSet;
use relay_store::Store;
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
    /// Background jobs (resume, nonce gaps; plugin reload once serving).
    pub jobs: Jobs,
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
        let mut jobs = Jobs::new(CancellationToken::new());
        if let (Some(ex), Some(r)) = (&executor, &relayer) {
            let e = &config.execution;
            let every = Duration::from_millis(e.resume_interval_ms.max(100));
            jobs.add(
                "resume",
                relay_jobs::resume::spawn(jobs.token(), store.clone(), ex.clone(), every),
            );
            if e.gap_check_interval_ms > 0 {
                let every = Duration::from_millis(e.gap_check_interval_ms);
                jobs.add(
                    "nonce-gaps",
                    relay_jobs::nonce_gaps::spawn(jobs.token(), r.clone(), every),
                );
            }
        }
        let reader = Arc::new(ChainReader::new(&config));
        Ok(Host {
            state: AppState {
                health: Arc::new(HealthCache::new(Duration::from_secs(30), reader.clone())),
                reader,
                config,
                rails,
                store,
                sandbox: Default::default(),
                relayer,
                executor,
            },
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
        let addr = listener.local_addr().ok();
        tracing::info!(?addr, "relay host listening");
        let app = api::router(state);
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
        jobs.shutdown().await;
        res.map_err(|source| StartError::Listen {
            addr: addr.unwrap_or(([0, 0, 0, 0], 0).into()),
            source,
        })
    }
}
