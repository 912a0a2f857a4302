//! The settlement engine every simulator shares — the machinery behind
//! "quote → deposit → payout":
//!
//! - a quote registers what it promised ([`QuoteSpec`]) and hands the
//!   wallet a call to `BridgeDeposit.deposit(token, amount, destChainId,
//!   recipient, quoteId)` on the source chain ([`DepositCall`]);
//! - a watcher per devnet chain sees `Deposited` (polling at a bounded
//!   interval) and matches it to its quote: same chain, token and amount,
//!   first deposit only;
//! - a matched deposit is delivered: paid out of the destination chain's
//!   `BridgeDeposit` inventory with the bridge operator key (`payout`), or
//!   credited on a simulated ledger; the amount is the quoted output,
//!   nothing further deducted;
//! - an unmatched deposit, a deposit under `accept-then-fail`, or one whose
//!   payout never happened and never will (not merely one whose sending
//!   reported an error: [`payout`]) is refunded to its sender in full
//!   (`refund`, or a ledger credit back);
//! - a matched deposit under `fail-on-destination` is neither paid out nor
//!   refunded: it fails on the destination and the funds stay in the bridge;
//! - deposit channels on simulated ledgers ([`ChannelSpec`]) deliver
//!   whatever arrives at their address, priced at the channel's rate.
//!
//! The upstream modules only translate their wire formats to and from this
//! engine; none of them moves funds itself.
//!
//! What it must never do: touch a key other than the devnet's publicly
//! known bridge operator, or pay a deposit twice.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use alloy::{
    primitives::{keccak256, Address, B256, U256},
    providers::DynProvider,
    rpc::types::{Filter, Log},
    sol_types::{SolCall, SolEvent},
};
use relay_devnet::{
    contracts::{BridgeDeposit, TestToken},
    deploy::wallet_provider,
    keys, Devnet,
};

mod payout;

use crate::{
    error::{SettleError, SimError},
    faults::Faults,
    ledger::{Ledger, Node},
    pricing::Rate,
    watch::watch_logs,
    Upstream,
};

/// Where a transfer delivers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// A token on a devnet chain.
    Evm {
        /// Chain id.
        chain: u64,
        /// Token (zero for the native coin).
        token: Address,
        /// Recipient.
        recipient: Address,
    },
    /// An asset on a simulated ledger.
    Ledger {
        /// Node.
        node: Node,
        /// Recipient address on that ledger.
        address: String,
        /// Asset symbol.
        asset: &'static str,
    },
}

impl Destination {
    /// The recipient (EVM address or ledger address).
    pub fn recipient(&self) -> String {
        match self {
            Destination::Evm { recipient, .. } => format!("{recipient:#x}"),
            Destination::Ledger { address, .. } => address.clone(),
        }
    }

    /// The chain id, or the node name.
    pub fn label(&self) -> String {
        match self {
            Destination::Evm { chain, .. } => chain.to_string(),
            Destination::Ledger { node, .. } => node.to_string(),
        }
    }
}

/// What a quote promised, registered until its deposit arrives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuoteSpec {
    /// The simulator that quoted it (whose faults apply).
    pub upstream: Upstream,
    /// Source chain.
    pub from_chain: u64,
    /// Source token (zero for the native coin).
    pub token: Address,
    /// The exact amount to deposit.
    pub amount_in: U256,
    /// Where it delivers.
    pub dest: Destination,
    /// What it delivers.
    pub amount_out: U256,
}

/// The deposit a wallet sends to execute a quote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepositCall {
    /// The quote id (the deposit's `quoteId`).
    pub quote_id: B256,
    /// `BridgeDeposit` on the source chain: call target and token spender.
    pub to: Address,
    /// `deposit(...)` calldata.
    pub data: Vec<u8>,
    /// Native value to send (the amount, for the native coin; else zero).
    pub value: U256,
}

/// A deposit channel on a simulated ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelSpec {
    /// The simulator that opened it.
    pub upstream: Upstream,
    /// The ledger the deposit address lives on.
    pub node: Node,
    /// The asset it accepts.
    pub asset: &'static str,
    /// Where deposits deliver.
    pub dest: Destination,
    /// How a deposit is priced into the destination asset.
    pub rate: Rate,
    /// Where refunds go on the ledger (default: the sender, when known).
    pub refund_address: Option<String>,
}

/// An open deposit channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    /// Channel id (quote id of its deliveries).
    pub id: B256,
    /// The simulated deposit address.
    pub address: String,
    /// What it does.
    pub spec: ChannelSpec,
}

/// Why a deposit was refunded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefundCause {
    /// No open quote matched it (unknown id, wrong chain, token or amount, reused).
    Unmatched,
    /// The quoting simulator was in `accept-then-fail`.
    AcceptThenFail,
    /// The payout itself failed.
    PayoutFailed,
}

/// Where a seen deposit stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransferState {
    /// Seen; neither delivered nor refunded yet.
    Pending,
    /// Delivered by this transaction (EVM hash or simulated ledger tx id).
    Delivered(String),
    /// Refunded to the sender by this transaction.
    Refunded {
        /// The refund transaction.
        tx: String,
        /// Why.
        cause: RefundCause,
    },
    /// Neither delivery nor refund went through (see the logs).
    Stuck(String),
    /// The quoting simulator was in `fail-on-destination`: the destination
    /// execution failed; nothing paid out, nothing refunded.
    FailedOnDestination,
}

/// A transfer as status endpoints report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome<'a> {
    /// Not settled yet.
    Pending,
    /// Delivered by this transaction.
    Delivered(&'a str),
    /// Failed; refunded by this transaction when it went through.
    Failed {
        /// The refund transaction.
        refund_tx: Option<&'a str>,
        /// Why, in words.
        reason: &'static str,
    },
}

impl Transfer {
    /// How status endpoints report this transfer.
    pub fn outcome(&self) -> Outcome<'_> {
        let reason = |c: &RefundCause| match c {
            RefundCause::Unmatched => "simulator: no open quote matched this deposit; refunded",
            RefundCause::AcceptThenFail => "simulator accept-then-fail: transfer failed; refunded",
            RefundCause::PayoutFailed => "simulator: payout failed; refunded",
        };
        match &self.state {
            TransferState::Pending => Outcome::Pending,
            TransferState::Delivered(tx) => Outcome::Delivered(tx),
            TransferState::Refunded { tx, cause } => Outcome::Failed {
                refund_tx: Some(tx),
                reason: reason(cause),
            },
            TransferState::Stuck(_) => Outcome::Failed {
                refund_tx: None,
                reason: "simulator: neither payout nor refund went through",
            },
            TransferState::FailedOnDestination => Outcome::Failed {
                refund_tx: None,
                reason: "simulator fail-on-destination: destination execution failed; not paid out, not refunded",
            },
        }
    }

    /// How far a pending transfer is through `delay`, 0.0 to 1.0 (1.0 when
    /// there is no delay).
    pub fn progress(&self, delay: Duration) -> f64 {
        if delay.is_zero() {
            return 1.0;
        }
        (self.seen_at.elapsed().as_secs_f64() / delay.as_secs_f64()).min(1.0)
    }
}

/// Where a refund goes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RefundTo {
    Evm {
        chain: u64,
        token: Address,
        to: Address,
    },
    Ledger {
        node: Node,
        asset: &'static str,
        to: String,
    },
}

/// A deposit the engine has seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The deposit transaction (EVM hash, or simulated ledger tx id).
    pub src_tx: String,
    /// The source chain id or node name.
    pub from: String,
    /// Who deposited.
    pub sender: String,
    /// What was deposited: the EVM token address (zero for the native
    /// coin), or the ledger asset symbol.
    pub token: String,
    /// The quote or channel it settles, when matched.
    pub quote_id: Option<B256>,
    /// The simulator that quoted it, when matched.
    pub upstream: Option<Upstream>,
    /// Where it delivers, when matched.
    pub dest: Option<Destination>,
    /// Deposited amount.
    pub amount_in: U256,
    /// Delivered (or to be delivered) amount; the refunded amount once refunded.
    pub amount_out: U256,
    /// When the deposit was seen.
    pub seen_at: Instant,
    /// The same, Unix seconds.
    pub seen_unix: u64,
    /// Where it stands.
    pub state: TransferState,
    refund_to: RefundTo,
}

/// What to do with a seen deposit.
enum Plan {
    Deliver { dest: Destination, id: B256 },
    Refund,
}

#[derive(Default)]
struct Book {
    quotes: HashMap<B256, (QuoteSpec, bool)>,
    channels: HashMap<String, Channel>,
    transfers: HashMap<String, Transfer>,
}

struct ChainHandle {
    bridge: Address,
    operator: DynProvider,
    /// Serialises the operator's transactions on this chain.
    lock: tokio::sync::Mutex<()>,
}

/// Quotes, channels, transfers, and the operator's access to every chain.
pub struct Settlement {
    chains: HashMap<u64, ChainHandle>,
    book: Mutex<Book>,
    ledger: Ledger,
    faults: HashMap<Upstream, Arc<Faults>>,
    delay: Duration,
    receipt_wait: Duration,
    counter: AtomicU64,
}

impl std::fmt::Debug for Settlement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settlement")
            .field("chains", &self.chains.keys().collect::<Vec<_>>())
            .field("delay", &self.delay)
            .finish_non_exhaustive()
    }
}

/// The gas limit of the operator's payouts and refunds: set, not
/// estimated, so a payout sent again while an earlier one of the same id is
/// pending goes out too (and reverts, `AlreadySettled`, should the earlier
/// one mine first; `payout`).
const SETTLE_GAS: u64 = 200_000;

fn key(tx: &str) -> String {
    tx.to_ascii_lowercase()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

impl Settlement {
    /// Settlement over every chain of `devnet`; `faults` are the simulators'
    /// (whose `accept-then-fail` applies to their own quotes); `delay` is
    /// how long a seen deposit waits before it settles (default zero),
    /// `receipt_wait` how long the operator waits for one receipt.
    pub fn new(
        devnet: &Devnet,
        faults: HashMap<Upstream, Arc<Faults>>,
        (delay, receipt_wait): (Duration, Duration),
    ) -> Arc<Self> {
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
            book: Mutex::default(),
            ledger: Ledger::default(),
            faults,
            delay,
            receipt_wait,
            counter: AtomicU64::new(0),
        })
    }

    /// The extra fee `u`'s faults add to its price, bps.
    pub fn extra_fee_bps(&self, u: Upstream) -> u64 {
        self.faults.get(&u).map_or(0, |f| f.get().extra_fee_bps)
    }

    /// The simulated non-EVM ledgers.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// How long a seen deposit waits before it settles.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// The deposit contract on `chain`.
    pub fn bridge(&self, chain: u64) -> Option<Address> {
        self.chains.get(&chain).map(|c| c.bridge)
    }

    /// A fresh, unguessable-enough id.
    pub fn fresh_id(&self) -> B256 {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        keccak256([n.to_be_bytes().as_slice(), &t.to_be_bytes()].concat())
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().expect("settlement book lock")
    }

    /// Registers `spec` and returns the deposit that executes it.
    pub fn quote_deposit(&self, spec: QuoteSpec) -> Result<DepositCall, SettleError> {
        let to = self
            .bridge(spec.from_chain)
            .ok_or(SettleError::UnknownChain(spec.from_chain))?;
        let (dest_chain, recipient) = match &spec.dest {
            Destination::Evm {
                chain, recipient, ..
            } => {
                self.bridge(*chain)
                    .ok_or(SettleError::UnknownChain(*chain))?;
                (*chain, *recipient)
            }
            Destination::Ledger { .. } => (0, Address::ZERO),
        };
        let quote_id = self.fresh_id();
        let call = BridgeDeposit::depositCall {
            token: spec.token,
            amount: spec.amount_in,
            destChainId: U256::from(dest_chain),
            recipient,
            quoteId: quote_id,
        };
        let value = if spec.token == Address::ZERO {
            spec.amount_in
        } else {
            U256::ZERO
        };
        self.book().quotes.insert(quote_id, (spec, false));
        Ok(DepositCall {
            quote_id,
            to,
            data: call.abi_encode(),
            value,
        })
    }

    /// Opens a deposit channel with a fresh simulated address.
    pub fn open_channel(&self, spec: ChannelSpec) -> Channel {
        let id = self.fresh_id();
        let address = spec.node.deposit_address(&hex::encode(id));
        let ch = Channel { id, address, spec };
        self.book().channels.insert(ch.address.clone(), ch.clone());
        ch
    }

    /// The channel whose deposit address is `address`.
    pub fn channel(&self, address: &str) -> Option<Channel> {
        self.book().channels.get(address).cloned()
    }

    /// The transfer whose deposit was `src_tx`.
    pub fn transfer(&self, src_tx: &str) -> Option<Transfer> {
        self.book().transfers.get(&key(src_tx)).cloned()
    }

    /// The transfers settling quote or channel `id`, first seen first.
    pub fn transfers_for(&self, id: B256) -> Vec<Transfer> {
        let mut v: Vec<Transfer> = self
            .book()
            .transfers
            .values()
            .filter(|t| t.quote_id == Some(id))
            .cloned()
            .collect();
        v.sort_by_key(|t| t.seen_at);
        v
    }

    /// Starts one `Deposited` watcher per chain, polling every `poll`.
    pub async fn spawn_watchers(
        self: &Arc<Self>,
        poll: Duration,
    ) -> Result<Vec<tokio::task::JoinHandle<()>>, SimError> {
        let mut tasks = Vec::new();
        for (chain, h) in &self.chains {
            let filter = Filter::new()
                .address(h.bridge)
                .event_signature(BridgeDeposit::Deposited::SIGNATURE_HASH);
            let (me, chain) = (self.clone(), *chain);
            let on_log = move |log: Log| {
                let me = me.clone();
                async move { me.on_deposit(chain, log) }
            };
            tasks.push(watch_logs(chain, h.operator.clone(), filter, poll, on_log).await?);
        }
        Ok(tasks)
    }

    fn on_deposit(self: &Arc<Self>, chain: u64, log: Log) {
        let (Some(tx), Ok(ev)) = (
            log.transaction_hash,
            log.log_decode::<BridgeDeposit::Deposited>(),
        ) else {
            return;
        };
        let d = ev.inner.data;
        let src_tx = format!("{tx:#x}");
        let plan = {
            let mut book = self.book();
            if book.transfers.contains_key(&key(&src_tx)) {
                return;
            }
            let (plan, matched) = match book.quotes.get_mut(&d.quoteId) {
                Some((q, used))
                    if !*used
                        && q.from_chain == chain
                        && q.token == d.token
                        && q.amount_in == d.amount =>
                {
                    *used = true;
                    let plan = Plan::Deliver {
                        dest: q.dest.clone(),
                        id: d.quoteId,
                    };
                    (plan, Some(q.clone()))
                }
                _ => (Plan::Refund, None),
            };
            let t = Transfer {
                src_tx: src_tx.clone(),
                from: chain.to_string(),
                sender: format!("{:#x}", d.sender),
                token: format!("{:#x}", d.token),
                quote_id: matched.as_ref().map(|_| d.quoteId),
                upstream: matched.as_ref().map(|q| q.upstream),
                dest: matched.as_ref().map(|q| q.dest.clone()),
                amount_in: d.amount,
                amount_out: matched.map_or(d.amount, |q| q.amount_out),
                seen_at: Instant::now(),
                seen_unix: unix_now(),
                state: TransferState::Pending,
                refund_to: RefundTo::Evm {
                    chain,
                    token: d.token,
                    to: d.sender,
                },
            };
            book.transfers.insert(key(&src_tx), t);
            plan
        };
        tracing::info!(chain, %src_tx, quote = %d.quoteId, "simulator saw a deposit");
        tokio::spawn(self.clone().run(src_tx, plan));
    }

    /// A payment on simulated `node` from a user's own (simulated) wallet
    /// `from`: credits `to`; when `to` is a deposit channel, its delivery
    /// follows. Returns the simulated transaction id.
    pub fn ledger_send(
        self: &Arc<Self>,
        node: Node,
        from: Option<&str>,
        to: &str,
        asset: &str,
        amount: u128,
    ) -> Result<String, SettleError> {
        let sim = node
            .asset(asset)
            .ok_or_else(|| SettleError::UnknownAsset(format!("{node}:{asset}")))?;
        let tx = self.ledger.credit(node, from, to, sim.symbol, amount);
        let Some(ch) = self.channel(to) else {
            return Ok(tx);
        };
        let amount_in = U256::from(amount);
        let matched = ch.spec.node == node && ch.spec.asset == sim.symbol && amount > 0;
        let refund_addr = ch
            .spec
            .refund_address
            .clone()
            .or_else(|| from.map(str::to_string))
            .unwrap_or_else(|| format!("{to}-refund"));
        let t = Transfer {
            src_tx: tx.clone(),
            from: node.to_string(),
            sender: from.unwrap_or("unknown").to_string(),
            token: sim.symbol.to_string(),
            quote_id: Some(ch.id),
            upstream: Some(ch.spec.upstream),
            dest: Some(ch.spec.dest.clone()),
            amount_in,
            amount_out: ch.spec.rate.price(amount_in).out,
            seen_at: Instant::now(),
            seen_unix: unix_now(),
            state: TransferState::Pending,
            refund_to: RefundTo::Ledger {
                node,
                asset: sim.symbol,
                to: refund_addr,
            },
        };
        self.book().transfers.insert(key(&tx), t);
        let plan = if matched {
            Plan::Deliver {
                dest: ch.spec.dest,
                id: keccak256(tx.as_bytes()),
            }
        } else {
            Plan::Refund
        };
        tokio::spawn(self.clone().run(tx.clone(), plan));
        Ok(tx)
    }

    /// Waits while the quoting upstream's `settleDelayMs` has not passed
    /// since the deposit was seen (re-read every 50 ms: clearing it
    /// releases the transfer).
    async fn held_by_upstream(&self, t: &Transfer) {
        let Some(f) = t.upstream.and_then(|u| self.faults.get(&u)) else {
            return;
        };
        loop {
            let hold = Duration::from_millis(f.get().settle_delay_ms);
            match hold.checked_sub(t.seen_at.elapsed()) {
                Some(left) if !left.is_zero() => {
                    tokio::time::sleep(left.min(Duration::from_millis(50))).await
                }
                _ => return,
            }
        }
    }

    fn set_state(&self, src_tx: &str, state: TransferState, amount_out: Option<U256>) {
        if let Some(t) = self.book().transfers.get_mut(&key(src_tx)) {
            t.state = state;
            if let Some(a) = amount_out {
                t.amount_out = a;
            }
        }
    }

    #[tracing::instrument(skip_all, fields(src_tx = %src_tx))]
    async fn run(self: Arc<Self>, src_tx: String, plan: Plan) {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        let Some(t) = self.transfer(&src_tx) else {
            return;
        };
        self.held_by_upstream(&t).await;
        let faults = t.upstream.and_then(|u| self.faults.get(&u));
        let failing = faults.is_some_and(|f| f.accepts_then_fails());
        if matches!(plan, Plan::Deliver { .. }) && faults.is_some_and(|f| f.fails_on_destination())
        {
            tracing::info!("simulator fail-on-destination: neither paying out nor refunding");
            return self.set_state(&src_tx, TransferState::FailedOnDestination, None);
        }
        let cause = match plan {
            Plan::Refund => RefundCause::Unmatched,
            Plan::Deliver { .. } if failing => RefundCause::AcceptThenFail,
            Plan::Deliver { dest, id } => match self.deliver_once(&dest, t.amount_out, id).await {
                Ok(tx) => {
                    tracing::info!(%tx, dest = %dest.label(), "simulator delivered");
                    return self.set_state(&src_tx, TransferState::Delivered(tx), None);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "simulator payout never happened; refunding");
                    RefundCause::PayoutFailed
                }
            },
        };
        let state = match self.refund(&t).await {
            Ok(tx) => {
                tracing::info!(%tx, ?cause, "simulator refunded");
                TransferState::Refunded { tx, cause }
            }
            Err(e) => {
                tracing::error!(error = %e, "simulator refund failed");
                TransferState::Stuck(e.to_string())
            }
        };
        self.set_state(&src_tx, state, Some(t.amount_in));
    }

    async fn deliver(
        &self,
        dest: &Destination,
        amount: U256,
        id: B256,
    ) -> Result<String, SettleError> {
        match dest {
            Destination::Evm {
                chain,
                token,
                recipient,
            } => {
                let tx = self
                    .operate(*chain, Op::Payout, *token, *recipient, amount, id)
                    .await?;
                Ok(format!("{tx:#x}"))
            }
            Destination::Ledger {
                node,
                address,
                asset,
            } => {
                let amount =
                    u128::try_from(amount).map_err(|e| SettleError::Amount(e.to_string()))?;
                Ok(self.ledger.credit(*node, None, address, asset, amount))
            }
        }
    }

    async fn refund(&self, t: &Transfer) -> Result<String, SettleError> {
        let id = keccak256(format!("refund:{}", t.src_tx).as_bytes());
        match &t.refund_to {
            RefundTo::Evm { chain, token, to } => {
                let tx = self
                    .operate(*chain, Op::Refund, *token, *to, t.amount_in, id)
                    .await?;
                Ok(format!("{tx:#x}"))
            }
            RefundTo::Ledger { node, asset, to } => {
                let amount =
                    u128::try_from(t.amount_in).map_err(|e| SettleError::Amount(e.to_string()))?;
                Ok(self.ledger.credit(*node, None, to, asset, amount))
            }
        }
    }

    async fn operate(
        &self,
        chain: u64,
        op: Op,
        token: Address,
        to: Address,
        amount: U256,
        id: B256,
    ) -> Result<B256, SettleError> {
        let h = self
            .chains
            .get(&chain)
            .ok_or(SettleError::UnknownChain(chain))?;
        let c = BridgeDeposit::new(h.bridge, h.operator.clone());
        // The lock orders the operator's nonces; it is held while sending,
        // not while waiting for the receipt, so payouts overlap as a real
        // upstream's do.
        let sent = {
            let _guard = h.lock.lock().await;
            match op {
                Op::Payout => c.payout(token, to, amount, id).gas(SETTLE_GAS).send().await,
                Op::Refund => c.refund(token, to, amount, id).gas(SETTLE_GAS).send().await,
            }
        }
        .map_err(|e| SettleError::chain(chain, e))?;
        let receipt = self.receipt(chain, *sent.tx_hash()).await?;
        if !receipt.status() {
            return Err(SettleError::chain(chain, "reverted"));
        }
        Ok(receipt.transaction_hash)
    }

    /// Mints devnet test tokens to `to` (their `mint` is open on the devnet
    /// only); returns the transaction hash.
    pub async fn mint(
        &self,
        chain: u64,
        token: Address,
        to: Address,
        amount: U256,
    ) -> Result<B256, SettleError> {
        let h = self
            .chains
            .get(&chain)
            .ok_or(SettleError::UnknownChain(chain))?;
        let _guard = h.lock.lock().await;
        let sent = TestToken::new(token, h.operator.clone())
            .mint(to, amount)
            .send()
            .await
            .map_err(|e| SettleError::chain(chain, e))?;
        let receipt = sent
            .get_receipt()
            .await
            .map_err(|e| SettleError::chain(chain, e))?;
        Ok(receipt.transaction_hash)
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Payout,
    Refund,
}
