//! relay-sponsor: sponsored EIP-7702 transactions paid with x402 (spec
//! §2.15, §4.8) — the whole feature in one home: its configuration
//! (`[sponsor]`, [`config`]), the sponsorship records and their schema
//! ([`store`], migration 0012), the service, its errorCodes ([`errors`]),
//! the HTTP adapter with its rate-limit buckets ([`http::feature`]), and
//! the job that finishes sponsorships whose holder died (its
//! [`relay_feature::Service`] start). The host registers it with one line.
//!
//! A user whose EOA holds no ETH signs an EIP-7702 authorization that
//! delegates the account to the relay's batch executor (`RelayDelegate`)
//! and, optionally, a batch for its `executeSigned`; the relayer sends the
//! type-4 transaction and pays its gas. The relayer is paid first, in USDC,
//! through x402: an EIP-3009 `transferWithAuthorization` the relayer settles
//! on chain itself.
//!
//! - [`SponsorService::delegate`]: where the executor is, its ABI and the
//!   EIP-712 scheme of `executeSigned`.
//! - [`SponsorService::check`]: who signed a tuple (low-s), whether its nonce
//!   is the account's live nonce, whether it names the known executor, and
//!   whether its chain id is acceptable (0, any chain, only when the
//!   operator opts in).
//! - [`SponsorService::plan`]: the type-4 envelope, its gas, and its price
//!   (gas at cost plus the engine's gas markup, valued with the host's price
//!   feeds), with the x402 invoice.
//! - [`SponsorService::pay_and_sponsor`] and [`SponsorService::resume`]:
//!   the run ([`run`]) — settle the payment, then sponsor; each a journaled
//!   side effect, so a crash never charges without sponsoring (a settled
//!   payment whose sponsorship fails is refunded) nor sponsors twice.
//!
//! What it must never do: broadcast anything for a request that failed a
//! check, sponsor a call that does not go to the authority itself (the
//! relayer would be `msg.sender`), or hold a key (the senders sign).

pub mod check;
pub mod config;
pub mod delegate;
mod error;
pub mod errors;
pub mod http;
pub mod plan;
pub mod run;
pub mod store;
pub mod x402;

pub use config::{SponsorConfig, SECTION};
pub use error::SponsorError;

use relay_config::ConfigError;
use relay_feature::{Parts, ServiceError};
use relay_jobs::Jobs;
use std::sync::Arc;
use store::Sponsorships;

/// What the service needs: the host's parts (configuration with
/// `[sponsor]`, chain reads, USD prices, the relayer's senders — it pays
/// gas and is `payTo` unless configured; `None`: plans and checks only —
/// and time) and the sponsorship records.
#[derive(Clone)]
pub struct SponsorDeps {
    /// The host's parts.
    pub parts: Parts,
    /// Sponsorship records and the transaction journal.
    pub store: Sponsorships,
}

/// The sponsorship service.
#[derive(Clone)]
pub struct SponsorService {
    deps: SponsorDeps,
    settings: SponsorConfig,
    replica: String,
}

impl std::fmt::Debug for SponsorService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SponsorService")
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

impl SponsorService {
    /// A service over `deps`, with the host's `[sponsor]`.
    pub fn new(deps: SponsorDeps) -> Result<Self, ConfigError> {
        let settings = SponsorConfig::from_host(&deps.parts.config)?;
        Ok(SponsorService {
            // the lease holder's name: unique per service, not per process
            // (two hosts in one process are two replicas)
            replica: format!("r{}-{}", std::process::id(), uuid::Uuid::new_v4().simple()),
            settings,
            deps,
        })
    }

    /// The dependencies.
    pub fn deps(&self) -> &SponsorDeps {
        &self.deps
    }

    fn sponsor_config(&self) -> &SponsorConfig {
        &self.settings
    }

    fn now_ms(&self) -> u64 {
        self.deps.parts.clock.now_ms()
    }
}

impl relay_feature::Service for SponsorService {
    const FEATURE: &'static str = "sponsorship";
    type Error = ServiceError;

    /// Starts sponsorship when any chain has a delegate (`[sponsor]
    /// delegates`; else `None`: no chain is sponsored): applies its
    /// migration, builds the service and, when the host can send, starts
    /// the job that finishes paid sponsorships whose holder died
    /// (`sponsorships`, every `resume_interval_ms`; at once, so a
    /// restarted host finishes what its predecessor left as soon as the
    /// lease lapses).
    async fn start(parts: &Parts, jobs: &mut Jobs) -> Result<Option<Arc<Self>>, ServiceError> {
        let store = parts.store.clone().into();
        let parts = parts.clone();
        let service = SponsorService::new(SponsorDeps { parts, store })?;
        let cfg = service.sponsor_config();
        if cfg.delegates.is_empty() {
            return Ok(None);
        }
        service.deps.store.migrate(store::MIGRATIONS).await?;
        let every = std::time::Duration::from_millis(cfg.resume_interval_ms);
        let sends = service.deps.parts.senders.is_some() && cfg.resume_interval_ms > 0;
        let service = Arc::new(service);
        if sends {
            jobs.drive("sponsorships", every, service.clone(), |s| async move {
                s.resume().await
            });
        }
        Ok(Some(service))
    }
}
