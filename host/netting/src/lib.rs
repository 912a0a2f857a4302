//! relay-netting: custodial netting accounts (spec §2.15, §4.7) — the
//! whole feature in one home: the double-entry ledger and its schema
//! ([`ledger`], migration 0015), the service, the HTTP adapter with its
//! rate-limit buckets and errorCodes ([`http::feature`]), and the job that
//! finishes payouts (its [`relay_feature::Service`] start). The host
//! registers it with one line.
//!
//! An address enrols by signing the terms text ([`texts::terms`]); it then
//! deposits USDC by sending it to the relayer on a covered chain and
//! posting the transaction ([`NettingService::deposit`]: the receipt is
//! read through the host's chain reader, credited once per transaction,
//! refused above the safe share of float), moves it for free to other
//! enrolled addresses ([`NettingService::transfer`]) and withdraws it to
//! any chain ([`NettingService::withdraw`]: the destination's payout cost
//! is withheld; the payout is a journaled transaction of the relayer, and
//! one that fails is credited back by a reversing entry).
//!
//! **Whose deposit is it.** A deposit is the depositor's own plain call
//! of the token contract: the transaction's sender is the enrolled
//! address, its target is the USDC contract, it moved USDC from that
//! address to the relayer, and its hash is none of the relayer's own
//! journaled transactions. Every other transaction that moves a user's
//! USDC to the relayer — the relayer's Permit2 pull of a route, an x402
//! settlement, a router call, a sponsored EIP-7702 batch — is sent by the
//! relayer (or another party) for something already paid for, and is
//! refused (`NETTING_DEPOSIT_INVALID`). A deposit address per account was
//! weighed and not chosen: it needs a sweep transaction per deposit
//! (relayer gas) and a derived key per account, where the sender check
//! binds a deposit to its depositor with one receipt read and no key.
//!
//! Every balance movement is an entry built in [`entries`]; every bound
//! (no negative balance, nonces spent once, caps, the safe share) is
//! checked inside the entry's database transaction. Amounts are USDC
//! smallest units (6 decimals), integers throughout.

pub mod config;
pub mod entries;
mod error;
pub mod errors;
mod funds;
pub mod http;
pub mod ledger;
mod moves;
pub mod texts;
mod withdraw;

pub use config::{NettingConfig, PPM, SECTION};
pub use error::NettingError;
pub use funds::{Caps, ChainReserve, Exit, Preview, Reserves};
pub use moves::{DepositAsk, Deposited, EnrolAsk, Enrolled, TransferAsk, Transferred};
pub use withdraw::{WithdrawAsk, Withdrawal, FAILED, PAID, PENDING};

use alloy::primitives::Address;
use ledger::Ledger;
use relay_chain::sender::Senders;
use relay_config::ConfigError;
use relay_feature::{Parts, ServiceError};
use relay_jobs::Jobs;
use std::sync::Arc;

/// What the service needs: the host's parts (configuration with
/// `[netting]`, chain reads, USD prices, the relayer's senders — `None`:
/// reads and previews only — and time) and its ledger.
#[derive(Clone)]
pub struct NettingDeps {
    /// The host's parts.
    pub parts: Parts,
    /// The ledger and the transaction journal.
    pub store: Ledger,
}

/// The netting service.
#[derive(Clone)]
pub struct NettingService {
    deps: NettingDeps,
    settings: NettingConfig,
}

impl std::fmt::Debug for NettingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NettingService").finish_non_exhaustive()
    }
}

impl NettingService {
    /// A service over `deps`, with the host's `[netting]`.
    pub fn new(deps: NettingDeps) -> Result<Self, ConfigError> {
        let settings = NettingConfig::from_host(&deps.parts.config)?;
        Ok(NettingService { deps, settings })
    }

    fn cfg(&self) -> &NettingConfig {
        &self.settings
    }

    fn now_ms(&self) -> u64 {
        self.deps.parts.clock.now_ms()
    }

    /// The covered chains: `[netting] chains`, or every configured chain
    /// listing the asset; each with its token address and decimals.
    pub fn covered(&self) -> Vec<(u64, Address, u8)> {
        let cfg = self.cfg();
        self.deps
            .parts
            .config
            .chain_ids()
            .into_iter()
            .filter(|c| cfg.chains.is_empty() || cfg.chains.contains(c))
            .filter_map(|c| {
                let t = self
                    .deps
                    .parts
                    .config
                    .chains
                    .get(&c.to_string())?
                    .tokens
                    .get(&cfg.asset)?;
                Some((c, t.address.parse().ok()?, t.decimals))
            })
            .collect()
    }

    /// The asset's token on covered chain `chain`.
    fn token_on(&self, chain: u64) -> Result<(Address, u8), NettingError> {
        self.covered()
            .into_iter()
            .find(|(c, _, _)| *c == chain)
            .map(|(_, t, d)| (t, d))
            .ok_or(NettingError::ChainUnsupported(chain))
    }

    fn payer(&self) -> Result<&Senders, NettingError> {
        self.deps
            .parts
            .senders
            .as_ref()
            .ok_or(NettingError::NoRelayer)
    }
}

impl relay_feature::Service for NettingService {
    const FEATURE: &'static str = "netting";
    type Error = ServiceError;

    /// Starts netting unless `[netting]` is off: applies its migrations,
    /// builds the service and, when the host can pay out, starts the job
    /// that finishes payouts whose holder died (`netting-payouts`).
    async fn start(parts: &Parts, jobs: &mut Jobs) -> Result<Option<Arc<Self>>, ServiceError> {
        let store = parts.store.clone().into();
        let parts = parts.clone();
        let service = NettingService::new(NettingDeps { parts, store })?;
        let n = service.cfg();
        if !n.enabled {
            return Ok(None);
        }
        service.deps.store.migrate(ledger::MIGRATIONS).await?;
        let every = std::time::Duration::from_millis(n.resume_interval_ms);
        let pays = service.deps.parts.senders.is_some() && n.resume_interval_ms > 0;
        let service = Arc::new(service);
        if pays {
            jobs.drive("netting-payouts", every, service.clone(), |s| async move {
                s.resume().await
            });
        }
        Ok(Some(service))
    }
}

#[cfg(test)]
mod tests;
