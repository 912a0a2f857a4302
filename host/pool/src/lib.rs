//! relay-pool: the privacy pool (spec §4.11, §8.2) — BETA AND UNAUDITED —
//! the whole feature in one home: its configuration (`[pool]`,
//! [`config`]), notes ([`note`]), the Semaphore depth-20 prover and
//! verifier ([`zk`]), the mirror of the pool's Poseidon tree ([`tree`]),
//! withdrawals ([`withdraw`]) and their records ([`store`], migration
//! 0027), its errorCodes ([`errors`]), the HTTP adapter with its
//! rate-limit buckets ([`http::feature`]), and the job that sends held
//! withdrawals when their time comes and finishes the ones a crash
//! interrupted. The host registers it with one line.
//!
//! Notes of 0.00002 ETH are deposited into a contract that keeps their
//! commitments in a Poseidon Merkle tree (at most 250). A note is
//! withdrawn to any address with a Groth16 proof that it is in the tree,
//! without saying which one; the relayer sends the withdrawal and pays its
//! gas, and is paid a flat fee from the note. The proof binds the
//! recipient, the relayer and the fee, so a relayer (or anyone who sees
//! the proof) cannot redirect it.
//!
//! What it must never do: send a withdrawal whose proof, root, nullifier,
//! denomination or fee did not check, or that reverts in simulation; send
//! one twice; or lose one it accepted (a held or in-flight withdrawal
//! survives a crash: its record and its journaled transaction do).

pub mod config;
pub mod contract;
pub mod errors;
pub mod http;
pub mod note;
pub mod store;
pub mod tree;
pub mod withdraw;
pub mod zk;

pub use config::{PoolConfig, SECTION};

use alloy::primitives::{Address, U256};
use futures::future::BoxFuture;
use relay_chain::sender::Sender;
use relay_config::ConfigError;
use relay_feature::{Handles, Parts, StartError};
use relay_jobs::Jobs;
use relay_messaging::MessagingService;
use std::sync::Arc;

/// Why a pool call failed.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// A field of the request is malformed.
    #[error("{field}: {message}")]
    Invalid {
        /// The request's field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A refusal with one of [`errors::ALL`].
    #[error("{1}")]
    Refused(relay_errors::ErrorCode, String),
    /// The chain could not be read.
    #[error("the pool's chain: {0}")]
    Chain(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] relay_store::StoreError),
}

impl PoolError {
    fn refused(code: relay_errors::ErrorCode, message: impl Into<String>) -> Self {
        PoolError::Refused(code, message.into())
    }

    fn invalid(field: &str, message: impl Into<String>) -> Self {
        PoolError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The pool this host relays for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Its chain.
    pub chain_id: u64,
    /// The contract.
    pub address: Address,
    /// Wei per note (the contract's).
    pub denomination: U256,
    /// The most notes it takes (the contract's).
    pub cap: u64,
    /// This host's relayer: it sends withdrawals and is paid their fee.
    pub relayer: Address,
    /// The flat fee, wei.
    pub fee: U256,
    /// keccak256(chainId ‖ pool) >> 8.
    pub external_nullifier: U256,
}

/// The privacy pool's service.
pub struct PoolService {
    parts: Parts,
    config: PoolConfig,
    pool: Pool,
    store: store::Withdrawals,
    mirror: tree::Mirror,
    witness: Option<Arc<MessagingService>>,
}

impl std::fmt::Debug for PoolService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolService")
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

impl PoolService {
    /// The pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The settings.
    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    fn now_ms(&self) -> u64 {
        self.parts.clock.now_ms()
    }

    fn sender(&self) -> Result<&Arc<Sender>, PoolError> {
        let senders = self.parts.senders.as_ref();
        senders
            .and_then(|s| s.on(self.pool.chain_id))
            .ok_or_else(|| PoolError::Chain("the relayer cannot send on the pool's chain".into()))
    }
}

/// The feature's start: reads `[pool]`; with a pool configured and a
/// relayer that sends on its chain, reads the contract's figures (they
/// must be the spec's: 0.00002 ETH, 250 notes), applies the migration,
/// and starts the job that sends due and interrupted withdrawals. Leaves
/// `Option<Arc<PoolService>>` (`None`: no pool is served — also when its
/// chain cannot be read at start; a pool whose figures are not the spec's
/// stops the host, a configuration mistake). Registered
/// after sealed messaging, whose witness log it writes the pool's roots
/// to.
pub fn start<'a>(
    parts: &'a Parts,
    jobs: &'a mut Jobs,
    handles: &'a mut Handles,
) -> BoxFuture<'a, Result<(), StartError>> {
    Box::pin(async move {
        let fail = |e: Box<dyn std::error::Error + Send + Sync>| StartError::new("pool", e);
        let config = PoolConfig::from_host(&parts.config).map_err(|e| fail(e.into()))?;
        let relayer = parts.senders.as_ref().map(|s| s.relayer);
        let sends = parts.senders.as_ref().and_then(|s| s.on(config.chain_id));
        let (Some(relayer), Some(_), true) = (relayer, sends, config.chain_id != 0) else {
            handles.insert(None::<Arc<PoolService>>);
            return Ok(());
        };
        let (address, fee) = config
            .pool()
            .map_err(|m| fail(ConfigError::new(format!("pool.{m}")).into()))?;
        let at = (config.chain_id, address);
        let pool = match tree::read_pool(&parts.reader, at, (relayer, fee)).await {
            Ok(pool) => pool,
            // the chain is down: the rest of the host starts, the pool is
            // not served until a restart finds it
            Err(e @ tree::ReadPoolError::Unreadable(..)) => {
                tracing::warn!(error = %e, "the privacy pool is not served");
                handles.insert(None::<Arc<PoolService>>);
                return Ok(());
            }
            Err(e) => return Err(fail(e.into())),
        };
        let store = store::Withdrawals::from(parts.store.clone());
        store
            .migrate(store::MIGRATIONS)
            .await
            .map_err(|e| fail(e.into()))?;
        let every = std::time::Duration::from_millis(config.resume_interval_ms);
        let service = Arc::new(PoolService {
            witness: handles.get::<Option<Arc<MessagingService>>>().flatten(),
            parts: parts.clone(),
            config,
            pool,
            store,
            mirror: tree::Mirror::default(),
        });
        if every > std::time::Duration::ZERO {
            jobs.drive("pool-withdrawals", every, service.clone(), |s| async move {
                s.resume().await
            });
        }
        handles.insert(Some(service));
        Ok(())
    })
}
