//! relay-yield-account: the non-custodial yield account and unified
//! balances (spec §2.15, §4.6) — the whole feature in one home: its
//! configuration (`[ncaccount]`, [`config`]), its spend records and their
//! schema ([`store`], migrations 0016 and 0018), the service, the HTTP
//! adapter with its rate-limit buckets and errorCodes ([`http::feature`])
//! and the job that finishes spends whose holder died (its start). The
//! host registers it with one line and hands it the engine's delivery
//! legs ([`leg::Legs`]).
//!
//! An agent holds the shares of an ERC-4626 vault over USDC (its yield
//! token, `[ncaccount] vaults`), grants the relayer an allowance of shares,
//! and spends across chains with one EIP-712 signature
//! ([`relay_chain::vault`]: domain `{name "RelayNCAccount", version "1",
//! chainId srcChain, verifyingContract the vault on srcChain}`).
//!
//! - [`YieldService::account`] and [`YieldService::venues`] ([`view`]):
//!   shares, their value, the allowance, the live APY measured on chain.
//! - [`YieldService::quote`] and [`YieldService::spend`] ([`spend`]): every
//!   check (signer, low-s, chain id of the domain, deadline, unused nonce,
//!   shares, allowance, a rail that routes the delivery, the redeem's
//!   simulation) runs before anything is broadcast; then the relayer
//!   redeems with `vault.withdraw(amount, relayer, agent)` — it pulls only
//!   what the on-chain allowance lets it — and routes `amount − fee`
//!   through the engine to the recipient ([`leg`], and `drive.rs`).
//!
//! What it must never do: broadcast for a refused intent, spend a nonce
//! twice, or pull more shares than the redeem of `amount` needs.

pub mod balances;
pub mod config;
mod drive;
mod error;
pub mod errors;
pub mod http;
pub mod leg;
pub mod spend;
pub mod store;
pub mod view;

pub use config::{YieldConfig, SECTION};
pub use error::YieldError;

use alloy::primitives::Address;
use relay_chain::{
    reader::ChainReader,
    sender::{Sender, Senders},
};
use relay_config::{ConfigError, HostConfig};
use relay_engine::oracle::PriceBook;
use relay_feature::{Handles, Parts, ServiceError};
use relay_jobs::Jobs;
use relay_types::clock::SharedClock;
use std::sync::Arc;
use store::Spends;

/// What the service needs.
#[derive(Clone)]
pub struct YieldDeps {
    /// Host configuration (chains, tokens).
    pub config: Arc<HostConfig>,
    /// The host's `[ncaccount]`.
    pub settings: YieldConfig,
    /// Chain reads.
    pub reader: Arc<ChainReader>,
    /// USD prices (balances).
    pub prices: Arc<PriceBook>,
    /// Spend records and the transaction journal.
    pub store: Spends,
    /// The relayer (its address is the spender agents approve) and its
    /// senders; `None`: views and quotes only.
    pub senders: Option<Senders>,
    /// Time.
    pub clock: SharedClock,
    /// The engine, which quotes and starts a spend's delivery.
    pub legs: leg::Legs,
}

/// The yield-account service.
#[derive(Clone)]
pub struct YieldService {
    deps: YieldDeps,
}

impl std::fmt::Debug for YieldService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("YieldService").finish_non_exhaustive()
    }
}

/// One vault the host knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VaultRef {
    /// The chain.
    pub chain_id: u64,
    /// The vault (share token).
    pub vault: Address,
    /// Its asset (the chain's `[ncaccount] asset` token).
    pub asset: Address,
    /// The asset's decimals.
    pub decimals: u8,
}

impl YieldService {
    /// A service over `deps`.
    pub fn new(deps: YieldDeps) -> Self {
        YieldService { deps }
    }

    /// The dependencies.
    pub fn deps(&self) -> &YieldDeps {
        &self.deps
    }

    fn now_secs(&self) -> u64 {
        self.deps.clock.now_ms() / 1_000
    }

    /// The vault on `chain`, with its asset as the chain's config names it.
    pub fn vault(&self, chain: u64) -> Result<VaultRef, YieldError> {
        let vault = self
            .deps
            .settings
            .vault(chain)
            .and_then(|v| v.parse().ok())
            .ok_or(YieldError::ChainUnsupported(chain))?;
        let (asset, decimals) = self.asset_on(chain)?;
        Ok(VaultRef {
            chain_id: chain,
            vault,
            asset,
            decimals,
        })
    }

    /// The `[ncaccount] asset` token on `chain` and its decimals.
    pub fn asset_on(&self, chain: u64) -> Result<(Address, u8), YieldError> {
        let cfg = &self.deps.config;
        let token = cfg
            .chains
            .get(&chain.to_string())
            .and_then(|c| c.tokens.get(&self.deps.settings.asset))
            .ok_or(YieldError::ChainUnsupported(chain))?;
        let address = token
            .address
            .parse()
            .map_err(|_| YieldError::ChainUnsupported(chain))?;
        Ok((address, token.decimals))
    }

    /// The delivery leg under route id `route_id` of `amount` from
    /// `src_chain` to `to` on `to_chain`, for `agent`.
    fn leg(
        &self,
        route_id: String,
        (src_chain, to_chain): (u64, u64),
        amount: alloy::primitives::U256,
        (agent, to): (Address, Address),
    ) -> leg::Leg {
        leg::Leg {
            route_id,
            src_chain,
            to_chain,
            symbol: self.deps.settings.asset.clone(),
            amount,
            agent,
            to_address: to,
        }
    }

    /// Every vault the host knows, by chain id.
    pub fn vaults(&self) -> Vec<VaultRef> {
        let mut ids: Vec<u64> = self
            .deps
            .settings
            .vaults
            .keys()
            .filter_map(|k| k.parse().ok())
            .collect();
        ids.sort_unstable();
        ids.into_iter().filter_map(|c| self.vault(c).ok()).collect()
    }

    fn relayer(&self) -> Result<Address, YieldError> {
        self.deps
            .senders
            .as_ref()
            .map(|s| s.relayer)
            .ok_or(YieldError::RelayerUnavailable(0))
    }

    fn sender(&self, chain: u64) -> Result<&Sender, YieldError> {
        self.deps
            .senders
            .as_ref()
            .and_then(|s| s.by_chain.get(&chain))
            .map(|s| s.as_ref())
            .ok_or(YieldError::RelayerUnavailable(chain))
    }
}

impl YieldService {
    /// The service over the host's `parts` and the engine's `legs`, with
    /// the host's `[ncaccount]`.
    pub fn over(parts: &Parts, legs: leg::Legs) -> Result<Self, ConfigError> {
        Ok(YieldService::new(YieldDeps {
            config: parts.config.clone(),
            settings: YieldConfig::from_host(&parts.config)?,
            reader: parts.reader.clone(),
            prices: parts.prices.clone(),
            store: parts.store.clone().into(),
            senders: parts.senders.clone(),
            clock: parts.clock.clone(),
            legs,
        }))
    }

    /// Starts the feature: applies its migrations, builds the service over
    /// the legs the host left in `handles` and, when the host can send,
    /// starts the job finishing spends whose holder died
    /// (`yield-spends`). Always served: balances need no vault.
    async fn start(
        parts: &Parts,
        jobs: &mut Jobs,
        handles: &Handles,
    ) -> Result<Arc<Self>, ServiceError> {
        let legs = handles
            .get::<leg::Legs>()
            .ok_or(ServiceError::MissingHandle(
                "delivery legs (the engine's leg router)",
            ))?;
        let service = Arc::new(YieldService::over(parts, legs)?);
        service.deps.store.migrate(store::MIGRATIONS).await?;
        let every = service.deps.settings.resume_interval_ms;
        if service.deps.senders.is_some() && every > 0 {
            let every = std::time::Duration::from_millis(every);
            jobs.drive("yield-spends", every, service.clone(), |s| async move {
                s.resume().await
            });
        }
        Ok(service)
    }
}

/// The yield account's [`relay_feature::Start`]: leaves
/// `Arc<YieldService>` in the handles.
fn start<'a>(
    parts: &'a Parts,
    jobs: &'a mut Jobs,
    handles: &'a mut Handles,
) -> futures::future::BoxFuture<'a, Result<(), relay_feature::StartError>> {
    Box::pin(async move {
        let service = YieldService::start(parts, jobs, handles)
            .await
            .map_err(|e| relay_feature::StartError::new("yield_account", e))?;
        handles.insert(service);
        Ok(())
    })
}
