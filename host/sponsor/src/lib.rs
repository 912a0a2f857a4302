//! Sponsored EIP-7702 transactions paid with x402 (spec §2.15, §4.8).
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
pub mod delegate;
mod error;
pub mod plan;
pub mod run;
pub mod x402;

pub use error::SponsorError;

use alloy::primitives::Address;
use relay_chain::{reader::ChainReader, sender::Sender};
use relay_config::HostConfig;
use relay_engine::oracle::PriceBook;
use relay_store::Store;
use relay_types::clock::SharedClock;
use std::{collections::HashMap, sync::Arc};

/// The relayer's side: its address and one crash-safe sender per chain.
#[derive(Clone, Debug)]
pub struct Senders {
    /// The relayer address (pays gas; `payTo` unless configured).
    pub relayer: Address,
    /// By chain id.
    pub by_chain: HashMap<u64, Arc<Sender>>,
}

/// What the service needs.
#[derive(Clone)]
pub struct SponsorDeps {
    /// Host configuration (`[sponsor]`, chains, tokens, fees).
    pub config: Arc<HostConfig>,
    /// Chain reads.
    pub reader: Arc<ChainReader>,
    /// USD prices (gas and the payment asset).
    pub prices: Arc<PriceBook>,
    /// Sponsorship records and the transaction journal.
    pub store: Store,
    /// The relayer; `None`: plans and checks only.
    pub senders: Option<Senders>,
    /// Time.
    pub clock: SharedClock,
}

/// The sponsorship service.
#[derive(Clone)]
pub struct SponsorService {
    deps: SponsorDeps,
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
    /// A service over `deps`.
    pub fn new(deps: SponsorDeps) -> Self {
        SponsorService {
            replica: format!("r{}", std::process::id()),
            deps,
        }
    }

    /// The dependencies.
    pub fn deps(&self) -> &SponsorDeps {
        &self.deps
    }

    fn sponsor_config(&self) -> &relay_config::SponsorConfig {
        &self.deps.config.sponsor
    }

    fn now_ms(&self) -> u64 {
        self.deps.clock.now_ms()
    }
}
