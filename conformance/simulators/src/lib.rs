//! Upstream simulators for the devnet. Each speaks its real upstream's
//! public wire format (so pointing a rail at the real URL is configuration,
//! not code) and settles for real on the devnet's anvil chains. They are
//! simulators: they stand in only for upstreams that cannot be reached from
//! here, they bind loopback only, and their names say so.
//!
//! Implemented: LI.FI (`lifi`), Circle's CCTP attestation service
//! (`circle`). Each also serves `POST /simulator/faults` ([`faults`]).

pub mod circle;
pub mod faults;
pub mod lifi;
pub mod settle;
pub mod tokens;

use std::{collections::HashMap, sync::Arc};

use axum::Router;
use relay_devnet::Devnet;

use crate::{faults::Faults, settle::Settlement, tokens::TokenBook};

/// The simulated upstreams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Upstream {
    /// LI.FI API v1.
    Lifi,
    /// Circle CCTP v2 attestation API.
    Circle,
}

/// Why the simulators could not start.
#[derive(Debug, thiserror::Error)]
#[error("simulator: {0}")]
pub struct SimError(String);

/// Running simulators; dropping stops them.
pub struct Simulators {
    urls: HashMap<Upstream, String>,
    faults: HashMap<Upstream, Arc<Faults>>,
    /// The aggregators' settlement engine.
    pub settlement: Arc<Settlement>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Simulators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulators")
            .field("urls", &self.urls)
            .finish_non_exhaustive()
    }
}

async fn serve(router: Router) -> Result<(String, tokio::task::JoinHandle<()>), SimError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| SimError(e.to_string()))?;
    let url = format!(
        "http://{}",
        listener.local_addr().map_err(|e| SimError(e.to_string()))?
    );
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok((url, task))
}

impl Simulators {
    /// Starts every simulator over `devnet`.
    pub async fn start(devnet: &Devnet) -> Result<Self, SimError> {
        let lifi_faults = Arc::new(Faults::default());
        let circle_faults = Arc::new(Faults::default());
        let settlement = Settlement::new(devnet, lifi_faults.clone());
        let mut tasks = settlement.spawn_watchers();
        let lifi = lifi::Lifi {
            settle: settlement.clone(),
            tokens: Arc::new(TokenBook::from_devnet(devnet)),
            faults: lifi_faults.clone(),
        };
        let circle = circle::Circle::new(devnet, circle_faults.clone());
        let mut urls = HashMap::new();
        for (u, router) in [
            (
                Upstream::Lifi,
                lifi::routes(lifi).merge(faults::routes(lifi_faults.clone())),
            ),
            (
                Upstream::Circle,
                circle::routes(circle).merge(faults::routes(circle_faults.clone())),
            ),
        ] {
            let (url, task) = serve(router).await?;
            tracing::info!(upstream = ?u, %url, "simulator listening");
            urls.insert(u, url);
            tasks.push(task);
        }
        let faults = HashMap::from([
            (Upstream::Lifi, lifi_faults),
            (Upstream::Circle, circle_faults),
        ]);
        Ok(Simulators {
            urls,
            faults,
            settlement,
            tasks,
        })
    }

    /// Base URL of an upstream's simulator.
    pub fn url(&self, u: Upstream) -> &str {
        &self.urls[&u]
    }

    /// The fault switch of an upstream's simulator.
    pub fn faults(&self, u: Upstream) -> &Arc<Faults> {
        &self.faults[&u]
    }
}

impl Drop for Simulators {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}
