//! Upstream simulators for the devnet. Each speaks its real upstream's
//! public wire format (so pointing a rail at the real URL is configuration,
//! not code) and settles for real on the devnet's anvil chains. They are
//! simulators: they stand in only for upstreams that cannot be reached from
//! here, they bind loopback only, and their names say so.
//!
//! One module per upstream: [`lifi`], [`squid`], [`bungee`] (EVM
//! aggregators settling through [`settle`]), [`allbridge`] (EVM → stellar,
//! solana, tron), [`chainflip`] (EVM ↔ bitcoin), [`circle`] (CCTP
//! attestations). Non-EVM chains are simulated ledgers ([`ledger`]). Each
//! simulator also serves `POST /simulator/faults` ([`faults`]) and
//! `GET /simulator/ledger` ([`control`]).

pub mod aggregator;
pub mod allbridge;
pub mod bungee;
pub mod chainflip;
pub mod circle;
pub mod control;
pub mod faults;
pub mod ledger;
pub mod lifi;
pub mod settle;
pub mod squid;
pub mod tokens;

/// Every simulated bridge's fee, basis points of the amount.
pub const FEE_BPS: u64 = 10;

/// The delivered amount and the fee for `amount`, rescaled between token
/// decimals: the one pricing rule every simulator uses.
pub fn price(
    amount: alloy::primitives::U256,
    from_decimals: u8,
    to_decimals: u8,
) -> (alloy::primitives::U256, alloy::primitives::U256) {
    use alloy::primitives::U256;
    let fee = amount * U256::from(FEE_BPS) / U256::from(10_000u64);
    let ten = U256::from(10u8);
    let net = amount - fee;
    let out = if to_decimals >= from_decimals {
        net * ten.pow(U256::from(to_decimals - from_decimals))
    } else {
        net / ten.pow(U256::from(from_decimals - to_decimals))
    };
    (out, fee)
}

use std::{collections::HashMap, sync::Arc};

use axum::Router;
use relay_devnet::Devnet;

use crate::{faults::Faults, settle::Settlement, tokens::TokenBook};

/// The simulated upstreams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Upstream {
    /// LI.FI API v1.
    Lifi,
    /// Squid v2.
    Squid,
    /// Bungee / Socket v2.
    Bungee,
    /// Allbridge Core REST API.
    Allbridge,
    /// Chainflip swap API v2 (+ the simulated bitcoin ledger).
    Chainflip,
    /// Circle CCTP v2 attestation API.
    Circle,
}

impl Upstream {
    /// Every simulated upstream.
    pub const ALL: [Upstream; 6] = [
        Upstream::Lifi,
        Upstream::Squid,
        Upstream::Bungee,
        Upstream::Allbridge,
        Upstream::Chainflip,
        Upstream::Circle,
    ];
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
        let faults: HashMap<Upstream, Arc<Faults>> =
            Upstream::ALL.iter().map(|u| (*u, Arc::default())).collect();
        let settlement = Settlement::new(devnet, faults.values().cloned().collect());
        let mut tasks = settlement.spawn_watchers();
        let tokens = Arc::new(TokenBook::from_devnet(devnet));
        let f = |u: Upstream| faults[&u].clone();
        let (settle, t) = (settlement.clone(), tokens.clone());
        let routers = [
            (
                Upstream::Lifi,
                lifi::routes(lifi::Lifi {
                    settle: settle.clone(),
                    tokens: t.clone(),
                    faults: f(Upstream::Lifi),
                }),
            ),
            (
                Upstream::Squid,
                squid::routes(squid::Squid {
                    settle: settle.clone(),
                    tokens: t.clone(),
                    faults: f(Upstream::Squid),
                }),
            ),
            (
                Upstream::Bungee,
                bungee::routes(bungee::Bungee {
                    settle: settle.clone(),
                    tokens: t.clone(),
                    faults: f(Upstream::Bungee),
                    routes: Default::default(),
                }),
            ),
            (
                Upstream::Allbridge,
                allbridge::routes(allbridge::Allbridge {
                    settle: settle.clone(),
                    tokens: t.clone(),
                    faults: f(Upstream::Allbridge),
                }),
            ),
            (
                Upstream::Chainflip,
                chainflip::routes(chainflip::Chainflip::new(
                    settle.clone(),
                    t,
                    f(Upstream::Chainflip),
                )),
            ),
            (
                Upstream::Circle,
                circle::routes(circle::Circle::new(devnet, f(Upstream::Circle))),
            ),
        ];
        let control = control::Control {
            settle: settle.clone(),
            tokens: tokens.clone(),
        };
        let mut urls = HashMap::new();
        for (u, router) in routers {
            let router = router
                .merge(faults::routes(f(u)))
                .merge(control::routes(control.clone()));
            let (url, task) = serve(router).await?;
            tracing::info!(upstream = ?u, %url, "simulator listening");
            urls.insert(u, url);
            tasks.push(task);
        }
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
