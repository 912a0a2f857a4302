//! One nonce allocator per (relayer key, chain): hands out nonces in order
//! in-process, reconciles with the chain's pending count, and detects and
//! repairs gaps — a nonce nobody will ever fill stalls every later
//! transaction of the relayer — by sending a 0-value self-transfer at each
//! missing nonce.
//!
//! Multi-replica correctness (two hosts sharing a key): with a store
//! ([`NonceManager::shared`]) every allocation is one atomic upsert in the
//! database (`Store::allocate_nonce`), so replicas never hand out the same
//! nonce; without one (tests, tools) the allocator is in-process.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::{Duration, Instant},
};

use super::rpc::FailoverProvider;
use alloy::{
    network::TransactionBuilder,
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
};
use tokio::sync::Mutex;

/// Why a nonce operation failed.
#[derive(Debug, thiserror::Error)]
pub enum NonceError {
    /// The node could not be asked or refused a transaction.
    #[error("rpc: {0}")]
    Rpc(String),
    /// The store that keeps the replicas' shared nonce counter did not
    /// answer: nothing was allocated, and trying again later is safe.
    #[error("store: {0}")]
    Store(String),
}

fn rpc(e: impl std::fmt::Display) -> NonceError {
    NonceError::Rpc(e.to_string())
}

/// A repair: which nonces were missing, and the no-ops that filled them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GapRepair {
    /// The missing nonces.
    pub missing: Vec<u64>,
    /// The fill transactions.
    pub fills: Vec<B256>,
}

/// The allocator for one relayer on one chain. `provider` must sign as the
/// relayer (a wallet provider built from the host's `RelayerSigner`).
pub struct NonceManager {
    rpc: Arc<FailoverProvider>,
    relayer: Address,
    next: Mutex<Option<u64>>,
    shared: Option<(relay_store::Store, u64)>,
    /// Nonces handed out and not yet journaled: never gaps.
    in_flight: std::sync::Mutex<BTreeSet<u64>>,
    /// Nonces seen missing, and since when (see [`NonceManager::repair_gaps`]).
    suspects: std::sync::Mutex<BTreeMap<u64, Instant>>,
}

impl std::fmt::Debug for NonceManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NonceManager")
            .field("relayer", &self.relayer)
            .finish_non_exhaustive()
    }
}

impl NonceManager {
    /// An allocator that learns the chain's state on first use.
    pub fn new(provider: DynProvider, relayer: Address) -> Self {
        let rpc = FailoverProvider::single("rpc", provider, std::time::Duration::from_secs(10));
        NonceManager::over(Arc::new(rpc), relayer)
    }

    fn over(rpc: Arc<FailoverProvider>, relayer: Address) -> Self {
        NonceManager {
            rpc,
            relayer,
            next: Mutex::new(None),
            shared: None,
            in_flight: Default::default(),
            suspects: Default::default(),
        }
    }

    /// An allocator whose nonces come from `store`, shared with every
    /// replica serving the same key on `chain`.
    pub fn shared(
        rpc: Arc<FailoverProvider>,
        relayer: Address,
        store: relay_store::Store,
        chain: u64,
    ) -> Self {
        NonceManager {
            shared: Some((store, chain)),
            ..NonceManager::over(rpc, relayer)
        }
    }

    async fn pending_count(&self) -> Result<u64, NonceError> {
        let who = self.relayer;
        self.rpc
            .run("eth_getTransactionCount", |p| async move {
                p.get_transaction_count(who).pending().await
            })
            .await
            .map_err(rpc)
    }

    /// The next nonce, never handed out twice by this allocator.
    ///
    /// The nonce is in flight until [`NonceManager::release`]: the gap
    /// repair leaves it alone while its transaction is signed and journaled.
    pub async fn allocate(&self) -> Result<u64, NonceError> {
        self.allocate_run(1).await
    }

    /// `count` consecutive nonces, the first returned, each in flight until
    /// released ([`NonceManager::allocate`]): for a transaction that
    /// spends more than its own, as a self-sponsored EIP-7702
    /// authorization spends the next.
    pub async fn allocate_run(&self, count: u64) -> Result<u64, NonceError> {
        let count = count.max(1);
        if let Some((store, chain)) = &self.shared {
            let _hold = self.next.lock().await;
            let pending = self.pending_count().await?;
            let n = store
                .allocate_nonces(*chain, &self.relayer.to_string(), pending, count)
                .await
                .map_err(|e| NonceError::Store(e.to_string()))?;
            (n..n + count).for_each(|k| self.hold(k));
            return Ok(n);
        }
        let mut next = self.next.lock().await;
        let n = match *next {
            Some(n) => n,
            None => self.pending_count().await?,
        };
        *next = Some(n + count);
        (n..n + count).for_each(|k| self.hold(k));
        Ok(n)
    }

    fn hold(&self, n: u64) {
        lock(&self.in_flight).insert(n);
    }

    /// Ends nonce `n`'s flight: its transaction is journaled (the journal
    /// now protects it), or it was never signed (a real gap from now on).
    pub fn release(&self, n: u64) {
        lock(&self.in_flight).remove(&n);
    }

    /// Re-reads the chain after a nonce error: moves forward past nonces
    /// used elsewhere; never moves back over nonces already handed out.
    pub async fn reconcile(&self) -> Result<u64, NonceError> {
        let chain = self.pending_count().await?;
        let mut next = self.next.lock().await;
        let n = next.map_or(chain, |n| n.max(chain));
        *next = Some(n);
        Ok(n)
    }

    /// Nonces queued in the node's pool for the relayer (above a gap).
    async fn queued(&self) -> Result<BTreeSet<u64>, NonceError> {
        let pool: serde_json::Value = self
            .rpc
            .run("txpool_content", |p| async move {
                p.raw_request("txpool_content".into(), ()).await
            })
            .await
            .map_err(rpc)?;
        let mut out = BTreeSet::new();
        for section in ["queued", "pending"] {
            let by_sender = &pool[section];
            let Some(map) = by_sender.as_object() else {
                continue;
            };
            for (sender, txs) in map {
                if sender.parse::<Address>().ok() != Some(self.relayer) {
                    continue;
                }
                out.extend(
                    txs.as_object()
                        .into_iter()
                        .flat_map(|m| m.keys())
                        .filter_map(|k| k.parse::<u64>().ok()),
                );
            }
        }
        Ok(out)
    }

    /// Finds nonces below the highest one the relayer has in flight that no
    /// transaction holds, and fills each with a 0-value self-transfer.
    /// Nonces in `reserved` (journaled, about to be broadcast) and nonces
    /// this allocator has handed out and not yet released are not gaps. A
    /// nonce is filled only once it has been seen missing for `grace`: a
    /// replica sharing the key may have just taken it (its transaction is
    /// signed, journaled and broadcast within moments), and a no-op in its
    /// place would knock that transaction out.
    pub async fn repair_gaps(
        &self,
        reserved: &BTreeSet<u64>,
        grace: Duration,
    ) -> Result<GapRepair, NonceError> {
        let _hold = self.next.lock().await;
        let who = self.relayer;
        let mined = self
            .rpc
            .run("eth_getTransactionCount", |p| async move {
                p.get_transaction_count(who).latest().await
            })
            .await
            .map_err(rpc)?;
        let in_pool = self.queued().await?;
        let Some(&top) = in_pool.iter().next_back() else {
            return Ok(GapRepair::default());
        };
        let flying = lock(&self.in_flight).clone();
        let candidates: Vec<u64> = (mined..top)
            .filter(|n| !in_pool.contains(n) && !reserved.contains(n) && !flying.contains(n))
            .collect();
        let missing = self.overdue(&candidates, grace);
        let mut fills = Vec::new();
        for &n in &missing {
            let noop = TransactionRequest::default()
                .with_from(self.relayer)
                .with_to(self.relayer)
                .with_value(U256::ZERO)
                .with_nonce(n)
                .with_gas_limit(21_000);
            let sent = self
                .rpc
                .run("eth_sendTransaction", |p| {
                    let noop = noop.clone();
                    async move { p.send_transaction(noop).await.map(|s| *s.tx_hash()) }
                })
                .await
                .map_err(rpc)?;
            fills.push(sent);
        }
        if !missing.is_empty() {
            tracing::warn!(relayer = %self.relayer, ?missing, "nonce gap repaired with no-op transfers");
        }
        Ok(GapRepair { missing, fills })
    }

    /// Of `candidates` (missing now), those first seen missing at least
    /// `grace` ago; forgets suspects that are no longer missing.
    fn overdue(&self, candidates: &[u64], grace: Duration) -> Vec<u64> {
        let mut suspects = lock(&self.suspects);
        suspects.retain(|n, _| candidates.contains(n));
        let now = Instant::now();
        let due: Vec<u64> = candidates
            .iter()
            .copied()
            .filter(|n| now.duration_since(*suspects.entry(*n).or_insert(now)) >= grace)
            .collect();
        for n in &due {
            suspects.remove(n);
        }
        due
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
