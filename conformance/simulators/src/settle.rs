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

use crate::{
    faults::{FaultMode, Faults},
    ledger::Ledger,
};

/// How often each chain is polled for deposits.
pub const POLL: Duration = Duration::from_millis(200);

/// Where a quote delivers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// A token on a devnet chain.
    Evm {
        /// Chain.
        chain: u64,
        /// Token.
        token: Address,
        /// Recipient.
        recipient: Address,
    },
    /// An asset on a simulated non-EVM ledger.
    Ledger {
        /// Node name (`solana`, `bitcoin`, …).
        node: &'static str,
        /// Recipient address on that ledger.
        address: String,
        /// Asset symbol.
        asset: String,
    },
}

impl Destination {
    /// The chain id, or the node name.
    pub fn name(&self) -> String {
        match self {
            Destination::Evm { chain, .. } => chain.to_string(),
            Destination::Ledger { node, .. } => node.to_string(),
        }
    }
}

/// A quote waiting for its deposit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingQuote {
    /// Where it delivers.
    pub dest: Destination,
    /// Amount to deliver.
    pub amount_out: U256,
}

/// Where a deposited transfer stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransferState {
    /// Seen; delivery not yet made.
    Pending,
    /// Delivered by this transaction (EVM hash or simulated ledger tx id).
    Done(String),
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
    /// Destination chain id or node name.
    pub to: String,
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
    transfers: Mutex<HashMap<String, Transfer>>,
    /// The simulated non-EVM ledgers.
    pub ledger: Arc<Ledger>,
    /// Deposit addresses on simulated ledgers → the quote they fund.
    channels: Mutex<HashMap<String, B256>>,
    faults: Vec<Arc<Faults>>,
    counter: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Settlement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settlement").finish_non_exhaustive()
    }
}

impl Settlement {
    /// Settlement over every chain of `devnet`. While any of `faults` is in
    /// `accept-then-fail`, deposits are refunded instead of delivered.
    pub fn new(devnet: &Devnet, faults: Vec<Arc<Faults>>) -> Arc<Self> {
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
            ledger: Default::default(),
            channels: Default::default(),
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

    /// The transfer whose deposit was `src_tx` (an EVM hash, or a
    /// simulated ledger tx id).
    pub fn transfer(&self, src_tx: &str) -> Option<Transfer> {
        let key = src_tx.to_ascii_lowercase();
        self.transfers
            .lock()
            .expect("transfers lock")
            .get(&key)
            .cloned()
    }

    /// The transfer that settles quote `id`, however its deposit arrived.
    pub fn transfer_for_quote(&self, id: B256) -> Option<Transfer> {
        let transfers = self.transfers.lock().expect("transfers lock");
        transfers.values().find(|t| t.quote_id == id).cloned()
    }

    fn put(&self, key: &str, t: Transfer) {
        let key = key.to_ascii_lowercase();
        self.transfers
            .lock()
            .expect("transfers lock")
            .insert(key, t);
    }

    /// Registers a quote delivering `amount_out` to `dest` and returns the
    /// deposit a wallet must make on `from_chain`: (quote id, deposit
    /// contract, calldata of `BridgeDeposit.deposit`).
    pub fn quote_deposit(
        &self,
        from_chain: u64,
        from_token: Address,
        amount: U256,
        dest: Destination,
        amount_out: U256,
    ) -> Option<(B256, Address, Vec<u8>)> {
        let bridge = self.bridge(from_chain)?;
        let (dest_chain, recipient) = match &dest {
            Destination::Evm {
                chain, recipient, ..
            } => (*chain, *recipient),
            Destination::Ledger { .. } => (0, Address::ZERO),
        };
        if dest_chain != 0 {
            self.bridge(dest_chain)?;
        }
        let id = self.next_id();
        self.register(id, PendingQuote { dest, amount_out });
        let call = BridgeDeposit::depositCall {
            token: from_token,
            amount,
            destChainId: U256::from(dest_chain),
            recipient,
            quoteId: id,
        };
        Some((id, bridge, alloy::sol_types::SolCall::abi_encode(&call)))
    }

    /// Opens a deposit address on simulated `node` whose deposits deliver
    /// `amount_out` to `dest`; returns (quote id, deposit address).
    pub fn open_ledger_channel(
        &self,
        node: &'static str,
        dest: Destination,
        amount_out: U256,
    ) -> (B256, String) {
        let id = self.next_id();
        self.register(id, PendingQuote { dest, amount_out });
        let h = hex::encode(id);
        let address = match node {
            "bitcoin" => format!("bcrt1qsim{}", &h[..30]),
            "tron" => format!("Tsim{}", &h[..30]),
            "stellar" => format!("GSIM{}", &h[..52]).to_ascii_uppercase(),
            _ => format!("Sim{}", &h[..41]),
        };
        self.channels
            .lock()
            .expect("channels lock")
            .insert(address.clone(), id);
        (id, address)
    }

    /// A payment on simulated `node` from a user's own (simulated) wallet:
    /// credits `to`; when `to` is a deposit channel, its quote is delivered.
    /// Returns the simulated tx id.
    pub async fn ledger_send(
        &self,
        node: &str,
        to: &str,
        asset: &str,
        amount: u128,
    ) -> Result<String, String> {
        let channel = self
            .channels
            .lock()
            .expect("channels lock")
            .get(to)
            .copied();
        let tx_id = self.ledger.credit(node, to, asset, amount);
        if let Some(quote_id) = channel {
            self.deliver_external(&tx_id, quote_id, U256::from(amount))
                .await?;
        }
        Ok(tx_id)
    }

    /// Mints devnet test tokens (their `mint` is open on the devnet only).
    pub async fn mint(
        &self,
        chain: u64,
        token: Address,
        to: Address,
        amount: U256,
    ) -> Result<B256, String> {
        let h = self.chains.get(&chain).ok_or("unknown chain")?;
        let _guard = h.lock.lock().await;
        let t = relay_devnet::contracts::TestToken::new(token, h.operator.clone());
        let sent = t.mint(to, amount).send().await.map_err(|e| e.to_string())?;
        let receipt = sent.get_receipt().await.map_err(|e| e.to_string())?;
        Ok(receipt.transaction_hash)
    }

    /// Delivers a deposit that arrived off-EVM (a simulated bitcoin send to
    /// a deposit channel), recorded under `src_id`.
    pub async fn deliver_external(
        &self,
        src_id: &str,
        quote_id: B256,
        amount_in: U256,
    ) -> Result<(), String> {
        let quote = self
            .quotes
            .lock()
            .expect("quotes lock")
            .get(&quote_id)
            .cloned();
        let quote = quote.ok_or("unknown channel")?;
        let mut t = Transfer {
            quote_id,
            from_chain: 0,
            to: quote.dest.name(),
            amount_in,
            amount_out: quote.amount_out,
            state: TransferState::Pending,
        };
        self.put(src_id, t.clone());
        t.state = TransferState::Done(self.deliver(&quote, quote_id).await?);
        self.put(src_id, t);
        Ok(())
    }

    async fn deliver(&self, q: &PendingQuote, id: B256) -> Result<String, String> {
        match &q.dest {
            Destination::Evm {
                chain,
                token,
                recipient,
            } => {
                let tx = self
                    .send(*chain, true, *token, *recipient, q.amount_out, id)
                    .await?;
                Ok(format!("{tx:#x}"))
            }
            Destination::Ledger {
                node,
                address,
                asset,
            } => {
                let amount = u128::try_from(q.amount_out).map_err(|e| e.to_string())?;
                Ok(self.ledger.credit(node, address, asset, amount))
            }
        }
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
        let key = format!("{src_tx:#x}");
        if self.transfer(&key).is_some() {
            return Ok(());
        }
        let quote = self
            .quotes
            .lock()
            .expect("quotes lock")
            .get(&d.quoteId)
            .cloned();
        let fail = self
            .faults
            .iter()
            .any(|f| f.get().mode == FaultMode::AcceptThenFail);
        let mut t = Transfer {
            quote_id: d.quoteId,
            from_chain: chain,
            to: quote.as_ref().map_or(chain.to_string(), |q| q.dest.name()),
            amount_in: d.amount,
            amount_out: quote.as_ref().map_or(d.amount, |q| q.amount_out),
            state: TransferState::Pending,
        };
        self.put(&key, t.clone());
        t.state = match quote {
            Some(q) if !fail => TransferState::Done(self.deliver(&q, d.quoteId).await?),
            _ => {
                t.amount_out = d.amount;
                let refund = self
                    .send(chain, false, d.token, d.sender, d.amount, d.quoteId)
                    .await?;
                TransferState::Refunded(refund)
            }
        };
        self.put(&key, t);
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
