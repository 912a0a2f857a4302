//! relay-netting: custodial netting accounts (spec §2.15, §4.7) — the
//! whole feature in one home: the double-entry ledger and its schema
//! ([`ledger`], migration 0015), the service, the HTTP adapter with its
//! rate-limit buckets and errorCodes ([`http::feature`]), and the job that
//! finishes payouts ([`start`]). The host registers it with one line.
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
use relay_chain::{reader::ChainReader, sender::Senders};
use relay_config::{ConfigError, HostConfig};
use relay_engine::oracle::PriceBook;
use relay_feature::{Handles, Parts};
use relay_jobs::Jobs;
use relay_store::StoreError;
use relay_types::clock::SharedClock;
use std::sync::Arc;

/// What the service needs.
#[derive(Clone)]
pub struct NettingDeps {
    /// Host configuration (`[netting]`, chains, tokens, gas markup).
    pub config: Arc<HostConfig>,
    /// Chain reads (receipts, balances, gas prices, simulation).
    pub reader: Arc<ChainReader>,
    /// USD prices (gas and USDC).
    pub prices: Arc<PriceBook>,
    /// The ledger and the transaction journal (`store.into()`).
    pub store: Ledger,
    /// The relayer (deposits go to it; payouts come from it); `None`:
    /// reads and previews only.
    pub payer: Option<Senders>,
    /// Time.
    pub clock: SharedClock,
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
        let settings = NettingConfig::from_host(&deps.config)?;
        Ok(NettingService { deps, settings })
    }

    fn cfg(&self) -> &NettingConfig {
        &self.settings
    }

    fn now_ms(&self) -> u64 {
        self.deps.clock.now_ms()
    }

    /// The covered chains: `[netting] chains`, or every configured chain
    /// listing the asset; each with its token address and decimals.
    pub fn covered(&self) -> Vec<(u64, Address, u8)> {
        let cfg = self.cfg();
        self.deps
            .config
            .chain_ids()
            .into_iter()
            .filter(|c| cfg.chains.is_empty() || cfg.chains.contains(c))
            .filter_map(|c| {
                let t = self
                    .deps
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
        self.deps.payer.as_ref().ok_or(NettingError::NoRelayer)
    }
}

/// Starts netting over the host's parts unless `[netting]` is off:
/// applies its migrations, builds the service and, when the host can pay
/// out, starts the job that finishes payouts whose holder died
/// (`netting-payouts`). Leaves [`http::Netting`] for its routes.
pub fn start<'a>(
    parts: &'a Parts,
    jobs: &'a mut Jobs,
    handles: &'a mut Handles,
) -> futures::future::BoxFuture<'a, Result<(), relay_feature::StartError>> {
    Box::pin(async move {
        let deps = NettingDeps {
            config: parts.config.clone(),
            reader: parts.reader.clone(),
            prices: parts.prices.clone(),
            store: parts.store.clone().into(),
            payer: parts.senders.clone(),
            clock: parts.clock.clone(),
        };
        let service = start_service(deps, jobs)
            .await
            .map_err(|e| relay_feature::StartError::new("netting", e))?;
        handles.insert(http::Netting(service));
        Ok(())
    })
}

/// Starts netting over `deps` (module docs of [`start`]); `None`: off.
async fn start_service(
    deps: NettingDeps,
    jobs: &mut Jobs,
) -> Result<Option<Arc<NettingService>>, StartError> {
    let service = NettingService::new(deps)?;
    let n = service.cfg();
    if !n.enabled {
        return Ok(None);
    }
    service.deps.store.migrate(ledger::MIGRATIONS).await?;
    let every = std::time::Duration::from_millis(n.resume_interval_ms);
    let pays = service.deps.payer.is_some() && n.resume_interval_ms > 0;
    let service = Arc::new(service);
    if pays {
        let s = service.clone();
        jobs.repeat("netting-payouts", every, move || {
            let s = s.clone();
            async move {
                let n = s.resume().await;
                if n > 0 {
                    tracing::info!(n, "netting withdrawals resumed");
                }
            }
        });
    }
    Ok(Some(service))
}

/// Why netting did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `[netting]` is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Its migrations did not apply.
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg(test)]
mod tests;
