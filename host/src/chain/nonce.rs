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

use std::collections::BTreeSet;

use std::sync::Arc;

use alloy::{
    network::TransactionBuilder,
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
};
use tokio::sync::Mutex;

use super::rpc::FailoverProvider;

/// Why a nonce operation failed.
#[derive(Debug, thiserror::Error)]
pub enum NonceError {
    /// The node could not be asked or refused a transaction.
    #[error("rpc: {0}")]
    Rpc(String),
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
    shared: Option<(crate::store::Store, u64)>,
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
        }
    }

    /// An allocator whose nonces come from `store`, shared with every
    /// replica serving the same key on `chain`.
    pub fn shared(
        rpc: Arc<FailoverProvider>,
        relayer: Address,
        store: crate::store::Store,
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
    pub async fn allocate(&self) -> Result<u64, NonceError> {
        if let Some((store, chain)) = &self.shared {
            let _hold = self.next.lock().await;
            let pending = self.pending_count().await?;
            return store
                .allocate_nonce(*chain, &self.relayer.to_string(), pending)
                .await
                .map_err(|e| NonceError::Rpc(format!("store: {e}")));
        }
        let mut next = self.next.lock().await;
        let n = match *next {
            Some(n) => n,
            None => self.pending_count().await?,
        };
        *next = Some(n + 1);
        Ok(n)
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
    /// Nonces in `reserved` (journaled, about to be broadcast) are not gaps.
    pub async fn repair_gaps(&self, reserved: &BTreeSet<u64>) -> Result<GapRepair, NonceError> {
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
        let missing: Vec<u64> = (mined..top)
            .filter(|n| !in_pool.contains(n) && !reserved.contains(n))
            .collect();
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
}
