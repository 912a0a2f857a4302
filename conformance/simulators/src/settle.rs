//! The settlement engine behind the aggregator simulators: quotes name a
//! deposit into the devnet's `BridgeDeposit` contract on the source chain;
//! a watcher per chain sees `Deposited` and pays the quoted amount out of
//! the destination chain's `BridgeDeposit` inventory with the bridge
//! operator key — real tokens on real chains. Unknown deposits, and every
//! deposit under `accept-then-fail`, are refunded to the depositor.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use alloy::{
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::Filter,
    sol_types::SolEvent,
};
use relay_devnet::{contracts::BridgeDeposit, deploy::wallet_provider, keys, Devnet};

use crate::faults::{FaultMode, Faults};

/// How often each chain is polled for deposits.
pub const POLL: Duration = Duration::from_millis(200);

/// A quote waiting for its deposit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingQuote {
    /// Destination chain.
    pub to_chain: u64,
    /// Destination token.
    pub to_token: Address,
    /// Amount to pay out.
    pub amount_out: U256,
}

/// Where a deposited transfer stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransferState {
    /// Seen; payout not yet mined.
    Pending,
    /// Paid out on the destination by this transaction.
    Done(B256),
    /// Refunded to the depositor by this transaction.
    Refunded(B256),
}

/// A deposit the simulator has seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The quote it settles.
    pub quote_id: B256,
    /// Source chain.
    pub from_chain: u64,
    /// Destination chain.
    pub to_chain: u64,
    /// Deposited amount.
    pub amount_in: U256,
    /// Amount paid out (or refunded).
    pub amount_out: U256,
    /// State.
    pub state: TransferState,
}

struct ChainHandle {
    bridge: Address,
    operator: DynProvider,
    /// Serialises the operator's transactions on this chain.
    lock: tokio::sync::Mutex<()>,
}

/// Quotes, transfers, and the operator's access to every chain.
pub struct Settlement {
    chains: HashMap<u64, ChainHandle>,
    quotes: Mutex<HashMap<B256, PendingQuote>>,
    transfers: Mutex<HashMap<B256, Transfer>>,
    faults: Arc<Faults>,
    counter: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Settlement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settlement").finish_non_exhaustive()
    }
}

impl Settlement {
    /// Settlement over every chain of `devnet`, obeying `faults`.
    pub fn new(devnet: &Devnet, faults: Arc<Faults>) -> Arc<Self> {
        let chains = devnet
            .chains()
            .iter()
            .map(|c| {
                let h = ChainHandle {
                    bridge: c.deployment.bridge_deposit,
                    operator: wallet_provider(c.url(), keys::bridge_operator()),
                    lock: tokio::sync::Mutex::new(()),
                };
                (c.chain_id, h)
            })
            .collect();
        Arc::new(Settlement {
            chains,
            quotes: Default::default(),
            transfers: Default::default(),
            faults,
            counter: Default::default(),
        })
    }

    /// The deposit contract on `chain`.
    pub fn bridge(&self, chain: u64) -> Option<Address> {
        self.chains.get(&chain).map(|c| c.bridge)
    }

    /// A fresh quote id.
    pub fn next_id(&self) -> B256 {
        let n = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        alloy::primitives::keccak256([n.to_be_bytes().as_slice(), &t.to_be_bytes()].concat())
    }

    /// Remembers a quote so its deposit can be settled.
    pub fn register(&self, id: B256, q: PendingQuote) {
        self.quotes.lock().expect("quotes lock").insert(id, q);
    }

    /// The transfer whose deposit was `src_tx`.
    pub fn transfer(&self, src_tx: B256) -> Option<Transfer> {
        self.transfers
            .lock()
            .expect("transfers lock")
            .get(&src_tx)
            .cloned()
    }

    /// Starts one deposit watcher per chain.
    pub fn spawn_watchers(self: &Arc<Self>) -> Vec<tokio::task::JoinHandle<()>> {
        self.chains
            .keys()
            .map(|chain| {
                let me = self.clone();
                let chain = *chain;
                tokio::spawn(async move { me.watch(chain).await })
            })
            .collect()
    }

    async fn watch(self: Arc<Self>, chain: u64) {
        let h = &self.chains[&chain];
        let mut from = h.operator.get_block_number().await.unwrap_or(0);
        loop {
            tokio::time::sleep(POLL).await;
            let Ok(head) = h.operator.get_block_number().await else {
                continue;
            };
            if head < from {
                continue;
            }
            let filter = Filter::new()
                .address(h.bridge)
                .event_signature(BridgeDeposit::Deposited::SIGNATURE_HASH)
                .from_block(from)
                .to_block(head);
            let Ok(logs) = h.operator.get_logs(&filter).await else {
                continue;
            };
            for log in logs {
                let (Some(tx), Ok(ev)) = (
                    log.transaction_hash,
                    log.log_decode::<BridgeDeposit::Deposited>(),
                ) else {
                    continue;
                };
                if let Err(e) = self.settle(chain, tx, ev.inner.data).await {
                    tracing::warn!(chain, %tx, error = %e, "simulator settlement failed");
                }
            }
            from = head + 1;
        }
    }

    async fn settle(
        &self,
        chain: u64,
        src_tx: B256,
        d: BridgeDeposit::Deposited,
    ) -> Result<(), String> {
        if self
            .transfers
            .lock()
            .expect("transfers lock")
            .contains_key(&src_tx)
        {
            return Ok(());
        }
        let quote = self
            .quotes
            .lock()
            .expect("quotes lock")
            .get(&d.quoteId)
            .cloned();
        let fail = self.faults.get().mode == FaultMode::AcceptThenFail;
        let mut t = Transfer {
            quote_id: d.quoteId,
            from_chain: chain,
            to_chain: quote.as_ref().map_or(chain, |q| q.to_chain),
            amount_in: d.amount,
            amount_out: quote.as_ref().map_or(d.amount, |q| q.amount_out),
            state: TransferState::Pending,
        };
        self.transfers
            .lock()
            .expect("transfers lock")
            .insert(src_tx, t.clone());
        t.state = match quote {
            Some(q) if !fail => TransferState::Done(
                self.send(
                    q.to_chain,
                    true,
                    q.to_token,
                    d.recipient,
                    q.amount_out,
                    d.quoteId,
                )
                .await?,
            ),
            _ => {
                t.amount_out = d.amount;
                TransferState::Refunded(
                    self.send(chain, false, d.token, d.sender, d.amount, d.quoteId)
                        .await?,
                )
            }
        };
        self.transfers
            .lock()
            .expect("transfers lock")
            .insert(src_tx, t);
        Ok(())
    }

    async fn send(
        &self,
        chain: u64,
        payout: bool,
        token: Address,
        to: Address,
        amount: U256,
        id: B256,
    ) -> Result<B256, String> {
        let h = self.chains.get(&chain).ok_or("unknown chain")?;
        let _guard = h.lock.lock().await;
        let c = BridgeDeposit::new(h.bridge, h.operator.clone());
        let sent = if payout {
            c.payout(token, to, amount, id).send().await
        } else {
            c.refund(token, to, amount, id).send().await
        };
        let receipt = sent
            .map_err(|e| e.to_string())?
            .get_receipt()
            .await
            .map_err(|e| e.to_string())?;
        Ok(receipt.transaction_hash)
    }
}
