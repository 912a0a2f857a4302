//! Crash-safe sending: a transaction is signed first, journaled with its
//! nonce, raw bytes and hash, and only then broadcast; the journal is
//! updated after the broadcast and again with the receipt. After a crash at
//! any point, [`Sender::resume`] looks the journaled hash up on chain and
//! re-broadcasts the very same signed bytes only if the chain has never
//! seen them — the same bytes can never mine twice, so there is no second
//! spend, and no second nonce is ever given to the same side effect.

use alloy::{
    consensus::TxEnvelope,
    eips::Encodable2718,
    network::{Ethereum, EthereumWallet, NetworkTransactionBuilder, TransactionBuilder},
    primitives::{Address, Bytes, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::{TransactionReceipt, TransactionRequest},
};

use super::{nonce::NonceManager, signer::RelayerSigner};
use crate::store::{JournalEntry, Store, TxState};

/// Why a send failed, and whether funds may have moved.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Nothing was broadcast: safe to fail over.
    #[error("not sent: {0}")]
    NotSent(String),
    /// The transaction may be on chain: never fail over, track it.
    #[error("sent ({hash}), outcome unknown: {message}")]
    Unknown {
        /// The journaled hash.
        hash: B256,
        /// What went wrong after broadcast.
        message: String,
    },
    /// Mined and reverted.
    #[error("reverted on chain: {0}")]
    Reverted(B256),
    /// The journal could not be written (nothing is broadcast unjournaled).
    #[error("journal: {0}")]
    Journal(String),
}

/// One side effect: a call the relayer signs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// Target.
    pub to: Address,
    /// Calldata.
    pub data: Bytes,
    /// Native value.
    pub value: U256,
    /// Gas limit.
    pub gas_limit: u64,
}

/// Signs, journals, broadcasts and tracks the relayer's transactions on one
/// chain.
pub struct Sender {
    chain_id: u64,
    provider: DynProvider,
    wallet: EthereumWallet,
    nonces: NonceManager,
    store: Store,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("chain_id", &self.chain_id)
            .finish_non_exhaustive()
    }
}

fn journal_err(e: impl std::fmt::Display) -> SendError {
    SendError::Journal(e.to_string())
}

impl Sender {
    /// A sender for `chain_id` through `provider`, signing as `signer`.
    pub fn new(chain_id: u64, provider: DynProvider, signer: &RelayerSigner, store: Store) -> Self {
        Sender {
            chain_id,
            nonces: NonceManager::new(provider.clone(), signer.address()),
            wallet: signer.wallet(),
            provider,
            store,
        }
    }

    /// Signs `call` with a fresh nonce and journals it as planned — nothing
    /// is broadcast yet. Returns the journal entry.
    pub async fn plan(
        &self,
        route_id: &str,
        step: i64,
        call: &Call,
    ) -> Result<JournalEntry, SendError> {
        let nonce = self
            .nonces
            .allocate()
            .await
            .map_err(|e| SendError::NotSent(e.to_string()))?;
        let gas_price = self
            .provider
            .get_gas_price()
            .await
            .map_err(|e| SendError::NotSent(e.to_string()))?;
        let tx = TransactionRequest::default()
            .with_to(call.to)
            .with_input(call.data.clone())
            .with_value(call.value)
            .with_nonce(nonce)
            .with_chain_id(self.chain_id)
            .with_gas_limit(call.gas_limit)
            .with_max_fee_per_gas(gas_price * 2 + 1_000_000_000)
            .with_max_priority_fee_per_gas(1_000_000_000);
        let envelope: TxEnvelope =
            <TransactionRequest as NetworkTransactionBuilder<Ethereum>>::build(tx, &self.wallet)
                .await
                .map_err(|e| SendError::NotSent(e.to_string()))?;
        let entry = JournalEntry {
            route_id: route_id.to_string(),
            step,
            attempt: 0,
            chain: self.chain_id.to_string(),
            nonce: Some(nonce as i64),
            payload: format!("0x{}", hex::encode(envelope.encoded_2718())),
            tx_hash: Some(format!("{:#x}", envelope.tx_hash())),
            state: TxState::Planned,
        };
        self.store.journal(&entry).await.map_err(journal_err)?;
        Ok(entry)
    }

    /// Broadcasts a journaled transaction unless the chain already has it,
    /// then waits for its receipt; the journal records each step.
    pub async fn complete(&self, mut entry: JournalEntry) -> Result<TransactionReceipt, SendError> {
        let hash: B256 = entry
            .tx_hash
            .as_deref()
            .and_then(|h| h.parse().ok())
            .ok_or_else(|| journal_err("entry has no hash"))?;
        let known = self
            .provider
            .get_transaction_by_hash(hash)
            .await
            .map_err(|e| SendError::Unknown {
                hash,
                message: e.to_string(),
            })?;
        if known.is_none() {
            let raw: Bytes = entry.payload.parse().map_err(journal_err)?;
            if let Err(e) = self.provider.send_raw_transaction(&raw).await {
                // The node may still have taken it; only the chain can tell.
                tracing::warn!(%hash, error = %e, "broadcast reported an error");
            }
        }
        entry.state = TxState::Sent;
        self.store.journal(&entry).await.map_err(journal_err)?;
        let receipt = self.wait_receipt(hash).await?;
        entry.state = if receipt.status() {
            TxState::Mined
        } else {
            TxState::Failed
        };
        self.store.journal(&entry).await.map_err(journal_err)?;
        if !receipt.status() {
            return Err(SendError::Reverted(hash));
        }
        Ok(receipt)
    }

    async fn wait_receipt(&self, hash: B256) -> Result<TransactionReceipt, SendError> {
        for _ in 0..600 {
            match self.provider.get_transaction_receipt(hash).await {
                Ok(Some(r)) => return Ok(r),
                Ok(None) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
                Err(e) => {
                    return Err(SendError::Unknown {
                        hash,
                        message: e.to_string(),
                    })
                }
            }
        }
        Err(SendError::Unknown {
            hash,
            message: "no receipt within 60 s".into(),
        })
    }

    /// Plans and completes one side effect.
    pub async fn send(
        &self,
        route_id: &str,
        step: i64,
        call: &Call,
    ) -> Result<TransactionReceipt, SendError> {
        let entry = self.plan(route_id, step, call).await?;
        self.complete(entry).await
    }

    /// After a restart: finishes every journaled side effect of `route_id`
    /// that was planned or sent but has no receipt recorded — without a
    /// second signature or nonce.
    pub async fn resume(&self, route_id: &str) -> Result<Vec<TransactionReceipt>, SendError> {
        let open: Vec<JournalEntry> = self
            .store
            .journal_of(route_id)
            .await
            .map_err(journal_err)?
            .into_iter()
            .filter(|e| {
                e.chain == self.chain_id.to_string()
                    && matches!(e.state, TxState::Planned | TxState::Sent)
            })
            .collect();
        let mut out = Vec::new();
        for e in open {
            out.push(self.complete(e).await?);
        }
        Ok(out)
    }
}
