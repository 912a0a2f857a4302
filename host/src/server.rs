//! Bringing the host up: store, broker, rails (with hot reload), HTTP.

use std::{sync::Arc, time::Duration};

use crate::{
    api::{self, AppState},
    capabilities::CapabilityBroker,
    config::HostConfig,
    engine::health::HealthCache,
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
        Ok(Host {
            state: AppState {
                config: Arc::new(config),
                rails,
                store,
                health: Arc::new(HealthCache::new(Duration::from_secs(30))),
                sandbox: Default::default(),
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
