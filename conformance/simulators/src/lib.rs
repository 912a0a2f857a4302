//! Upstream **simulators** for the devnet. Each speaks its real upstream's
//! public wire format — so pointing a rail at the real URL is
//! configuration, not code — and settles for real on the devnet's anvil
//! chains. They are simulators, and say so: they stand in only for
//! upstreams that cannot be reached from here, every answer carries an
//! `x-simulator` header, and non-EVM chains are simulated ledgers.
//!
//! | module | upstream, version followed |
//! |---|---|
//! | [`lifi`] | LI.FI API v1 (`li.quest`, OpenAPI 1.0.0) |
//! | [`squid`] | Squid API v2 (`v2.api.squidrouter.com`) |
//! | [`bungee`] | Socket Swap V3 (`dedicated-backend.socket.tech/v3/swap`) |
//! | [`allbridge`] | Allbridge Core REST API (`allbridge-core-rest-api`, SDK 3.x era) |
//! | [`chainflip`] | Chainflip SDK swap backend v2 + Broker API JSON-RPC |
//! | [`circle`] | Circle CCTP v2 attestation API (`iris-api`, OpenAPI 1.0) |
//!
//! Shared machinery: [`settle`] (quote → deposit → payout/refund),
//! [`watch`] (chain log polling), [`ledger`] (simulated non-EVM ledgers),
//! [`faults`] (error, garbage, hang, accept-then-fail), [`control`] (the
//! `/simulator/*` devnet endpoints), [`aggregator`], [`pricing`], [`tokens`].
//!
//! What it must never do: listen anywhere but 127.0.0.1, reach outside the
//! machine, or hold a key that is not the devnet's publicly known bridge
//! operator, attester or deployer (the deployer only moves the devnet's
//! price feeds: [`feeds`]).

pub mod aggregator;
pub mod allbridge;
pub mod bungee;
pub mod chainflip;
pub mod circle;
pub mod control;
pub mod error;
pub mod faults;
pub mod feeds;
pub mod http;
pub mod ledger;
pub mod lifi;
pub mod pricing;
pub mod requests;
pub mod settle;
pub mod squid;
pub mod tokens;
pub mod watch;

use crate::{faults::Faults, settle::Settlement, tokens::TokenBook};
use axum::Router;
pub use error::{SettleError, SimError};
pub use faults::{FaultConfig, FaultMode};
pub use ledger::Node;
use relay_devnet::Devnet;
use std::{collections::HashMap, sync::Arc, time::Duration};

/// The simulated upstreams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Upstream {
    /// LI.FI API v1.
    Lifi,
    /// Squid API v2.
    Squid,
    /// Bungee (Socket) API v2.
    Bungee,
    /// Allbridge Core REST API.
    Allbridge,
    /// Chainflip swap backend + broker (and the simulated bitcoin ledger).
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

    /// Short name (`lifi`, …), also the `x-simulator` header value.
    pub fn name(self) -> &'static str {
        match self {
            Upstream::Lifi => "lifi",
            Upstream::Squid => "squid",
            Upstream::Bungee => "bungee",
            Upstream::Allbridge => "allbridge",
            Upstream::Chainflip => "chainflip",
            Upstream::Circle => "circle",
        }
    }

    /// The public API version whose wire format the simulator follows.
    pub fn follows(self) -> &'static str {
        match self {
            Upstream::Lifi => "LI.FI API v1 (docs.li.fi API reference, OpenAPI 1.0.0; @lifi/types 17.x status enums)",
            Upstream::Squid => "Squid API v2 (docs.squidrouter.com: Get a route, Get Route Status)",
            Upstream::Bungee => "Socket Swap V3 (docs.socket.tech /v3/swap/quote userOps=tx, /v3/swap/status; read 2026-11)",
            Upstream::Allbridge => "Allbridge Core REST API (allbridge-core-rest-api, @allbridge/bridge-core-sdk 3.x types)",
            Upstream::Chainflip => "Chainflip SDK swap backend v2 (/v2/quote, /v2/swaps/{id}) + Broker API JSON-RPC",
            Upstream::Circle => "Circle CCTP v2 attestation API (GET /v2/messages/{sourceDomainId}, OpenAPI 1.0)",
        }
    }
}

/// The public median quote latencies of the real upstreams (issue 12),
/// ms: what [`SimConfig::with_latencies`] injects for a realistic bench.
/// Tests keep the default (none) so they stay fast.
pub const FIELD_LATENCY_MS: [(Upstream, u64); 6] = [
    (Upstream::Lifi, 1_450),
    (Upstream::Squid, 1_070),
    (Upstream::Bungee, 900),
    (Upstream::Allbridge, 800),
    (Upstream::Chainflip, 800),
    (Upstream::Circle, 600),
];

/// What the Circle simulator waits for before an attestation is complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircleConfig {
    /// Blocks mined on top of the burn's block (default 0).
    pub confirmations: u64,
    /// Polls answered `pending_confirmations` first (default 1).
    pub pending_polls: u32,
}

impl Default for CircleConfig {
    fn default() -> Self {
        CircleConfig {
            confirmations: 0,
            pending_polls: 1,
        }
    }
}

/// How the Allbridge Core simulator indexes transfers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllbridgeConfig {
    /// Status polls of each seen transfer answered as the REST API answers
    /// a transaction Allbridge has not indexed yet — `400 {"statusCode":400,
    /// "message":"Bad request"}` — before its status (default 1).
    pub not_indexed_polls: u32,
}

impl Default for AllbridgeConfig {
    fn default() -> Self {
        AllbridgeConfig {
            not_indexed_polls: 1,
        }
    }
}

/// How the simulators start.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Initial faults per upstream (default: none anywhere).
    pub faults: HashMap<Upstream, FaultConfig>,
    /// How often the watchers poll each chain (default 200 ms).
    pub poll_interval: Duration,
    /// How long a seen deposit waits before it settles (default 0), so
    /// intermediate statuses can be observed.
    pub settle_delay: Duration,
    /// How long the bridge operator waits for a payout's receipt before it
    /// asks the chain what became of it (default 30 s; `settle::payout`).
    pub receipt_wait: Duration,
    /// The Circle attestation timing.
    pub circle: CircleConfig,
    /// The Allbridge Core indexing window.
    pub allbridge: AllbridgeConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            faults: HashMap::new(),
            poll_interval: Duration::from_millis(200),
            settle_delay: Duration::ZERO,
            receipt_wait: Duration::from_secs(30),
            circle: CircleConfig::default(),
            allbridge: AllbridgeConfig::default(),
        }
    }
}

impl SimConfig {
    /// Every upstream in `latencies` answers after its latency (ms), on top
    /// of whatever fault it already has.
    pub fn with_latencies(mut self, latencies: &[(Upstream, u64)]) -> Self {
        for (u, ms) in latencies {
            self.faults.entry(*u).or_default().latency_ms = *ms;
        }
        self
    }
}

/// What every upstream simulator's handlers reach.
#[derive(Clone, Debug)]
pub struct SimContext {
    /// The settlement engine.
    pub settle: Arc<Settlement>,
    /// The devnet's EVM assets.
    pub tokens: Arc<TokenBook>,
    /// This simulator's faults.
    pub faults: Arc<Faults>,
    /// The devnet's price feeds (DEVNET ONLY control).
    pub feeds: Arc<feeds::FeedControl>,
}

/// Running simulators, one loopback HTTP server per upstream; dropping
/// (or [`Simulators::stop`]) stops them.
pub struct Simulators {
    urls: HashMap<Upstream, String>,
    faults: HashMap<Upstream, Arc<Faults>>,
    settlement: Arc<Settlement>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Simulators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulators")
            .field("urls", &self.urls)
            .finish_non_exhaustive()
    }
}

impl Simulators {
    /// Starts every simulator over `devnet` with the default [`SimConfig`].
    pub async fn start(devnet: &Devnet) -> Result<Self, SimError> {
        Self::start_with(devnet, SimConfig::default()).await
    }

    /// Starts every simulator over `devnet` with `config`.
    #[tracing::instrument(skip_all)]
    pub async fn start_with(devnet: &Devnet, config: SimConfig) -> Result<Self, SimError> {
        let faults: HashMap<Upstream, Arc<Faults>> = Upstream::ALL
            .iter()
            .map(|u| {
                let c = config.faults.get(u).copied().unwrap_or_default();
                (*u, Arc::new(Faults::new(c)))
            })
            .collect();
        let settlement = Settlement::new(
            devnet,
            faults.clone(),
            (config.settle_delay, config.receipt_wait),
        );
        let mut tasks = settlement.spawn_watchers(config.poll_interval).await?;
        let tokens = Arc::new(TokenBook::from_devnet(devnet));
        let feeds = Arc::new(feeds::FeedControl::new(devnet));
        let ctx = |u: Upstream| SimContext {
            settle: settlement.clone(),
            tokens: tokens.clone(),
            faults: faults[&u].clone(),
            feeds: feeds.clone(),
        };
        let (circle, circle_tasks) = circle::CircleSimulator::start(
            devnet,
            ctx(Upstream::Circle),
            config.circle,
            config.poll_interval,
        )
        .await?;
        tasks.extend(circle_tasks);
        let mut urls = HashMap::new();
        for u in Upstream::ALL {
            let api: Router = match u {
                Upstream::Lifi => lifi::routes(ctx(u)),
                Upstream::Squid => squid::routes(ctx(u)),
                Upstream::Bungee => bungee::routes(ctx(u)),
                Upstream::Allbridge => allbridge::routes(ctx(u), config.allbridge),
                Upstream::Chainflip => chainflip::routes(ctx(u)),
                Upstream::Circle => circle::routes(circle.clone()),
            };
            let log = Arc::new(requests::Requests::default());
            let router = requests::counted(api, log.clone())
                .merge(requests::routes(log))
                .merge(faults::routes(faults[&u].clone()))
                .merge(control::routes(ctx(u), u));
            let (url, task) = http::serve(u.name(), router).await?;
            tracing::info!(upstream = u.name(), %url, "simulator listening (not the real upstream)");
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

    /// Base URL of an upstream's simulator (`http://127.0.0.1:<port>`).
    pub fn url(&self, u: Upstream) -> &str {
        &self.urls[&u]
    }

    /// LI.FI simulator base URL (the real one is `https://li.quest`).
    pub fn lifi_url(&self) -> &str {
        self.url(Upstream::Lifi)
    }

    /// Squid simulator base URL (the real one is `https://v2.api.squidrouter.com`).
    pub fn squid_url(&self) -> &str {
        self.url(Upstream::Squid)
    }

    /// Bungee simulator base URL (the real one is `https://dedicated-backend.socket.tech`).
    pub fn bungee_url(&self) -> &str {
        self.url(Upstream::Bungee)
    }

    /// Allbridge Core REST API simulator base URL (the real one is self-hosted).
    pub fn allbridge_url(&self) -> &str {
        self.url(Upstream::Allbridge)
    }

    /// Chainflip simulator base URL: swap backend at the root, Broker API
    /// JSON-RPC at `/broker` (the real ones are `https://chainflip-swap.chainflip.io`
    /// and a broker's own URL).
    pub fn chainflip_url(&self) -> &str {
        self.url(Upstream::Chainflip)
    }

    /// Circle attestation simulator base URL (the real one is `https://iris-api.circle.com`).
    pub fn circle_url(&self) -> &str {
        self.url(Upstream::Circle)
    }

    /// Current faults of an upstream's simulator.
    pub fn faults(&self, u: Upstream) -> FaultConfig {
        self.faults[&u].get()
    }

    /// Sets the faults of an upstream's simulator.
    pub fn set_faults(&self, u: Upstream, c: FaultConfig) {
        self.faults[&u].set(c);
    }

    /// The settlement engine (quotes, transfers, simulated ledgers).
    pub fn settlement(&self) -> &Arc<Settlement> {
        &self.settlement
    }

    /// A simulated ledger balance.
    pub fn ledger_balance(&self, node: Node, address: &str, asset: &str) -> u128 {
        self.settlement.ledger().balance(node, address, asset)
    }

    /// "Sends BTC" on the simulated bitcoin ledger to `to` (a Chainflip
    /// deposit address, or any address); returns the simulated tx id.
    pub fn send_btc(&self, to: &str, sats: u64) -> Result<String, SettleError> {
        self.settlement
            .ledger_send(Node::Bitcoin, None, to, "BTC", u128::from(sats))
    }

    /// Stops every simulator and watcher.
    pub fn stop(self) {}
}

impl Drop for Simulators {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}
