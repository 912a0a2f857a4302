//! Crash-safe sending: a transaction is signed first, journaled with its
//! nonce, raw bytes and hash, and only then broadcast; the journal is
//! updated after the broadcast and again with the receipt. After a crash at
//! any point, [`Sender::resume`] looks the journaled hash up on chain and
//! re-broadcasts the very same signed bytes only if the chain has never
//! seen them — the same bytes can never mine twice, so there is no second
//! spend, and no second nonce is ever given to the same side effect.
//!
//! A transaction still unmined after [`SendPolicy::bump_after`] is replaced
//! at the same nonce with fees raised 12.5 % (nodes require ≥ 10 %),
//! journaled as the step's next attempt before it is broadcast; whichever
//! attempt mines finishes the step. Every call goes through the chain's
//! [`FailoverProvider`]: a dead or hung endpoint hands over to the next.

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use alloy::{
    consensus::{Transaction, TxEnvelope},
    eips::{eip7702::SignedAuthorization, Decodable2718, Encodable2718},
    network::{Ethereum, EthereumWallet, NetworkTransactionBuilder, TransactionBuilder},
    primitives::{Address, Bytes, TxKind, B256, U256},
    providers::Provider,
    rpc::types::{TransactionReceipt, TransactionRequest},
};

use super::{nonce::NonceManager, rpc::FailoverProvider, signer::RelayerSigner};
use relay_store::{JournalEntry, Store, TxState};

/// Why a send failed, and whether funds may have moved.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Nothing was broadcast, or what was never mined and never can (its
    /// nonce was taken by another transaction): safe to fail over.
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
    /// The journal, or the store's shared nonce counter, could not be
    /// read or written (nothing is broadcast unjournaled): the store went
    /// away, and the side effect is finished from its journal later.
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

/// When to replace a stuck transaction and when to give up waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendPolicy {
    /// Replace an unmined transaction after this long (fees × 1.125).
    pub bump_after: Duration,
    /// Stop waiting for a receipt after this long (the outcome is then
    /// unknown: the route is never failed over, the journal keeps it).
    pub receipt_timeout: Duration,
    /// Most transactions of this key pending at once (0: no limit); the
    /// next waits for one to be mined. Nodes keep a few per sender
    /// executable (geth's `txpool.accountslots`, 16) and public endpoints
    /// refuse more: past it, a second key is what sends more.
    pub max_pending: usize,
}

impl Default for SendPolicy {
    fn default() -> Self {
        SendPolicy {
            bump_after: Duration::from_secs(30),
            receipt_timeout: Duration::from_secs(300),
            max_pending: 0,
        }
    }
}

/// Fee increase of a replacement, per mille (nodes require at least 10 %).
const BUMP_PER_MILLE: u128 = 1_125;
/// How long a read gas price is reused for the next transactions (their
/// fee cap is twice it plus a tip, so a second-old reading is ample).
const GAS_PRICE_TTL: Duration = Duration::from_secs(1);
/// First and longest wait between receipt polls: a fast chain (or a
/// devnet that mines on arrival) is asked again soon, a slow one no more
/// than every 100 ms.
const RECEIPT_POLL: (Duration, Duration) = (Duration::from_millis(5), Duration::from_millis(100));

/// How long a refused transaction's nonce must look taken by another
/// (mined past, no receipt of ours) before it is dropped.
const TAKEN_SETTLE: Duration = Duration::from_secs(2);

/// What the chain says of attempts without a receipt so far.
enum Fate {
    /// One of them mined (its index and receipt).
    Mined(Box<(usize, TransactionReceipt)>),
    /// Another transaction took their nonce.
    Taken,
}

impl Fate {
    fn mined(done: (usize, TransactionReceipt)) -> Fate {
        Fate::Mined(Box::new(done))
    }
}

/// The relayer's sending side as a feature sees it: its address and one
/// crash-safe sender per chain it sends on.
#[derive(Clone, Debug)]
pub struct Senders {
    /// The relayer address (pays gas; receives deposits and payments).
    pub relayer: Address,
    /// By chain id.
    pub by_chain: HashMap<u64, Arc<Sender>>,
}

impl Senders {
    /// The sender on `chain`.
    pub fn on(&self, chain: u64) -> Option<&Arc<Sender>> {
        self.by_chain.get(&chain)
    }
}

/// Signs, journals, broadcasts and tracks the relayer's transactions on one
/// chain.
pub struct Sender {
    chain_id: u64,
    rpc: Arc<FailoverProvider>,
    /// The relayer address its calls run as.
    address: Address,
    /// The key that signs (the relayer key, or a pool key).
    key: Address,
    /// For a pool key: the relayer's account its calls go through
    /// ([`crate::account`]).
    account: Option<Address>,
    wallet: EthereumWallet,
    nonces: NonceManager,
    store: Store,
    policy: SendPolicy,
    /// One permit per transaction pending ([`SendPolicy::max_pending`]).
    slots: Arc<tokio::sync::Semaphore>,
    /// The last gas price read, and when.
    gas_price: std::sync::Mutex<Option<(u128, Instant)>>,
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

fn not_sent(e: impl std::fmt::Display) -> SendError {
    SendError::NotSent(e.to_string())
}

/// A nonce that could not be allocated: nothing was signed. A store that
/// did not answer is the journal's kind of error — whoever sends leaves
/// the side effect to resume, it did not fail — the node's is `NotSent`.
fn nonce_err(e: crate::nonce::NonceError) -> SendError {
    match e {
        crate::nonce::NonceError::Store(e) => SendError::Journal(format!("nonce counter: {e}")),
        e => not_sent(e),
    }
}

fn hash_of(e: &JournalEntry) -> Result<B256, SendError> {
    e.tx_hash
        .as_deref()
        .and_then(|h| h.parse().ok())
        .ok_or_else(|| journal_err("entry has no hash"))
}

impl Sender {
    /// A sender for `chain_id` through `rpc` (whose providers sign as
    /// `signer`), taking nonces shared through `store`.
    pub fn new(
        chain_id: u64,
        rpc: Arc<FailoverProvider>,
        signer: &RelayerSigner,
        store: Store,
        policy: SendPolicy,
    ) -> Self {
        Sender {
            chain_id,
            nonces: NonceManager::shared(rpc.clone(), signer.address(), store.clone(), chain_id),
            address: signer.address(),
            key: signer.address(),
            account: None,
            wallet: signer.wallet(),
            rpc,
            store,
            slots: Arc::new(tokio::sync::Semaphore::new(match policy.max_pending {
                0 => tokio::sync::Semaphore::MAX_PERMITS,
                n => n,
            })),
            policy,
            gas_price: std::sync::Mutex::new(None),
        }
    }

    /// A slot for one more pending transaction of this key; held until it
    /// is mined (or given up on).
    async fn slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, SendError> {
        self.slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| not_sent("sender closed"))
    }

    /// A sender for a relayer pool key `executor` (whose providers in `rpc`
    /// sign as it): its calls run as the relayer's `account`
    /// ([`crate::account`]), its nonces are its own.
    pub fn executor(
        chain_id: u64,
        rpc: Arc<FailoverProvider>,
        (executor, account): (&RelayerSigner, Address),
        store: Store,
        policy: SendPolicy,
    ) -> Self {
        Sender {
            address: account,
            account: Some(account),
            ..Sender::new(chain_id, rpc, executor, store, policy)
        }
    }

    /// The key that signs this sender's transactions.
    pub fn key(&self) -> Address {
        self.key
    }

    /// The relayer address this sender's calls run as.
    pub fn address(&self) -> Address {
        self.address
    }

    /// `call` as this sender broadcasts it, and who sends it: a pool key's
    /// goes through the relayer's account. What a simulation must run.
    pub fn outgoing(&self, call: &Call) -> (Address, Call) {
        match self.account {
            Some(account) => (self.key, crate::account::wrap(account, call)),
            None => (self.key, call.clone()),
        }
    }

    /// Installs the relayer's account `code` on this (the relayer key's)
    /// sender's address and registers `executors`: one type-4 transaction
    /// to itself whose authorization carries its nonce + 1, journaled under
    /// `relayer-account:<chain>` like any side effect.
    pub async fn enrol(
        &self,
        signer: &RelayerSigner,
        code: Address,
        executors: &[Address],
    ) -> Result<TransactionReceipt, SendError> {
        if self.account.is_some() || signer.address() != self.key {
            return Err(not_sent("only the relayer key enrols its account"));
        }
        let call = crate::account::enrol_call(self.address, executors);
        let _slot = self.slot().await?;
        let gas_price = self.gas_price().await?;
        // The transaction's nonce, and the next for its authorization: no
        // other transaction of this key (any replica's) may take that one.
        let nonce = self.nonces.allocate_run(2).await.map_err(nonce_err)?;
        let planned = async {
            let auth = signer
                .sign_authorization(self.chain_id, code, nonce + 1)
                .map_err(not_sent)?;
            let id = format!("relayer-account:{}", self.chain_id);
            self.sign_and_journal(&call, (gas_price, &[auth]), nonce, &id, nonce as i64)
                .await
        }
        .await;
        self.nonces.release(nonce);
        // The authorization's nonce stays in flight (the gap repair would
        // take it for a hole) until the transaction that spends it ends.
        let sent = match planned {
            Ok(entry) => self.launch(vec![entry], false).await,
            Err(e) => Err(e),
        };
        self.nonces.release(nonce + 1);
        sent
    }

    /// The chain's gas price, read at most once per [`GAS_PRICE_TTL`].
    async fn gas_price(&self) -> Result<u128, SendError> {
        let cached = *self.gas_price.lock().expect("gas price lock");
        if let Some((price, _)) = cached.filter(|(_, at)| at.elapsed() < GAS_PRICE_TTL) {
            return Ok(price);
        }
        let price = self
            .rpc
            .run("eth_gasPrice", |p| async move { p.get_gas_price().await })
            .await
            .map_err(not_sent)?;
        *self.gas_price.lock().expect("gas price lock") = Some((price, Instant::now()));
        Ok(price)
    }

    /// The chain this sender sends on.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// Signs `call` with a fresh nonce and journals it as planned — nothing
    /// is broadcast yet. Returns the journal entry.
    pub async fn plan(
        &self,
        route_id: &str,
        step: i64,
        call: &Call,
    ) -> Result<JournalEntry, SendError> {
        self.plan_delegated(route_id, step, call, &[]).await
    }

    /// [`Sender::plan`] for a type-4 (EIP-7702) transaction carrying
    /// `auths`; with none, an EIP-1559 one.
    pub async fn plan_delegated(
        &self,
        route_id: &str,
        step: i64,
        call: &Call,
        auths: &[SignedAuthorization],
    ) -> Result<JournalEntry, SendError> {
        // Read the fee first: a nonce is taken only when it will be used.
        let gas_price = self.gas_price().await?;
        let nonce = self.nonces.allocate().await.map_err(nonce_err)?;
        let planned = self
            .sign_and_journal(call, (gas_price, auths), nonce, route_id, step)
            .await;
        // Journaled, the nonce is protected by the journal; not journaled,
        // it is a gap the repair may fill.
        self.nonces.release(nonce);
        planned
    }

    async fn sign_and_journal(
        &self,
        call: &Call,
        (gas_price, auths): (u128, &[SignedAuthorization]),
        nonce: u64,
        route_id: &str,
        step: i64,
    ) -> Result<JournalEntry, SendError> {
        let call = &self.outgoing(call).1;
        let mut tx = TransactionRequest::default()
            .with_to(call.to)
            .with_input(call.data.clone())
            .with_value(call.value)
            .with_nonce(nonce)
            .with_chain_id(self.chain_id)
            .with_gas_limit(call.gas_limit)
            .with_max_fee_per_gas(gas_price * 2 + 1_000_000_000)
            .with_max_priority_fee_per_gas(1_000_000_000);
        if !auths.is_empty() {
            tx.authorization_list = Some(auths.to_vec());
        }
        let entry = self.sign_entry(tx, route_id, step, 0).await?;
        self.store.journal(&entry).await.map_err(journal_err)?;
        Ok(entry)
    }

    async fn sign_entry(
        &self,
        tx: TransactionRequest,
        route_id: &str,
        step: i64,
        attempt: i64,
    ) -> Result<JournalEntry, SendError> {
        let nonce = tx.nonce;
        let envelope: TxEnvelope =
            <TransactionRequest as NetworkTransactionBuilder<Ethereum>>::build(tx, &self.wallet)
                .await
                .map_err(not_sent)?;
        Ok(JournalEntry {
            route_id: route_id.to_string(),
            step,
            attempt,
            chain: self.chain_id.to_string(),
            nonce: nonce.map(|n| n as i64),
            payload: format!("0x{}", hex::encode(envelope.encoded_2718())),
            tx_hash: Some(format!("{:#x}", envelope.tx_hash())),
            state: TxState::Planned,
            signer: Some(format!("{:#x}", self.key)),
        })
    }

    /// The replacement of `e`: same nonce, call and gas limit, fees raised
    /// by [`BUMP_PER_MILLE`], journaled as the next attempt.
    async fn bumped(&self, e: &JournalEntry) -> Result<JournalEntry, SendError> {
        let raw: Bytes = e.payload.parse().map_err(journal_err)?;
        let old = TxEnvelope::decode_2718(&mut raw.as_ref()).map_err(journal_err)?;
        let up = |fee: u128| fee.saturating_mul(BUMP_PER_MILLE) / 1_000 + 1;
        let mut tx = TransactionRequest::default()
            .with_nonce(old.nonce())
            .with_chain_id(self.chain_id)
            .with_gas_limit(old.gas_limit())
            .with_value(old.value())
            .with_input(old.input().clone())
            .with_max_fee_per_gas(up(old.max_fee_per_gas()))
            .with_max_priority_fee_per_gas(up(old.max_priority_fee_per_gas().unwrap_or(0)));
        if let TxKind::Call(to) = old.kind() {
            tx = tx.with_to(to);
        }
        // a replaced type-4 transaction keeps its authorizations
        tx.authorization_list = old.authorization_list().map(<[_]>::to_vec);
        let next = self
            .sign_entry(tx, &e.route_id, e.step, e.attempt + 1)
            .await?;
        self.store.journal(&next).await.map_err(journal_err)?;
        tracing::warn!(
            step = e.step,
            attempt = next.attempt,
            nonce = ?e.nonce,
            "transaction not mined in time; replaced with fees x1.125"
        );
        Ok(next)
    }

    /// Broadcasts the step's latest journaled attempt unless the chain
    /// already has it, replaces it while it stays unmined, and returns the
    /// receipt of whichever attempt mines; the journal records each move.
    pub async fn complete(
        &self,
        attempts: Vec<JournalEntry>,
    ) -> Result<TransactionReceipt, SendError> {
        let _slot = self.slot().await?;
        self.complete_held(attempts).await
    }

    /// [`Sender::complete`] in a slot the caller holds.
    async fn complete_held(
        &self,
        mut attempts: Vec<JournalEntry>,
    ) -> Result<TransactionReceipt, SendError> {
        attempts.sort_by_key(|e| e.attempt);
        if attempts.is_empty() {
            return Err(journal_err("no attempt to complete"));
        }
        if let Some(done) = self.mined(&attempts).await? {
            return self.finish(&mut attempts, done).await;
        }
        self.launch(attempts, true).await
    }

    /// Broadcasts the latest of `attempts` (asking the chain first when
    /// `may_be_known`) and waits for whichever mines ([`Sender::track`]).
    async fn launch(
        &self,
        attempts: Vec<JournalEntry>,
        may_be_known: bool,
    ) -> Result<TransactionReceipt, SendError> {
        let latest = attempts.last().cloned().expect("an attempt");
        let refused = !self.broadcast(latest, may_be_known).await?;
        self.track(attempts, refused).await
    }

    /// Waits for whichever of the broadcast `attempts` mines, replacing the
    /// latest while none does. While the node refuses the latest
    /// (`refused`: "nonce too low" when another transaction took the
    /// nonce), each poll also asks whether the nonce is gone
    /// ([`Sender::fate`]); once it has looked gone for [`TAKEN_SETTLE`]
    /// (an endpoint whose receipts lag its nonces cannot pass for a lost
    /// transaction) the attempts are dropped rather than waiting out the
    /// receipt timeout.
    async fn track(
        &self,
        mut attempts: Vec<JournalEntry>,
        mut refused: bool,
    ) -> Result<TransactionReceipt, SendError> {
        let deadline = Instant::now() + self.policy.receipt_timeout;
        let mut sent_at = Instant::now();
        let mut poll = RECEIPT_POLL.0;
        let mut gone_since: Option<Instant> = None;
        loop {
            tokio::time::sleep(poll).await;
            poll = (poll * 2).min(RECEIPT_POLL.1);
            let fate = match refused {
                true => self.fate(&attempts).await,
                false => self.mined(&attempts).await.map(|m| m.map(Fate::mined)),
            };
            match fate {
                Ok(Some(Fate::Mined(done))) => return self.finish(&mut attempts, *done).await,
                Ok(Some(Fate::Taken)) => {
                    let since = *gone_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= TAKEN_SETTLE {
                        return Err(self.dropped(&mut attempts).await);
                    }
                }
                Ok(None) => gone_since = None,
                // One poll the node did not answer says nothing about the
                // transaction: the next asks again, until the deadline.
                Err(e) => tracing::info!(error = %e, "receipt poll failed; asking again"),
            }
            if Instant::now() > deadline {
                return self.unresolved(&mut attempts).await;
            }
            if sent_at.elapsed() >= self.policy.bump_after {
                let next = self.bumped(attempts.last().expect("an attempt")).await?;
                attempts.push(next.clone());
                refused = !self.broadcast(next, true).await?;
                (sent_at, poll, gone_since) = (Instant::now(), RECEIPT_POLL.0, None);
            }
        }
    }

    /// The end of a wait for `attempts` that saw no receipt in time: the
    /// receipt that came last, `NotSent` when another transaction took
    /// their nonce ([`Sender::fate`]), else the outcome is unknown — the
    /// step's owner asks again later ([`Sender::complete`]), never sends it
    /// anew.
    async fn unresolved(
        &self,
        attempts: &mut [JournalEntry],
    ) -> Result<TransactionReceipt, SendError> {
        let hash = hash_of(attempts.last().expect("an attempt"))?;
        match self.fate(attempts).await? {
            Some(Fate::Mined(done)) => self.finish(attempts, *done).await,
            Some(Fate::Taken) => Err(self.dropped(attempts).await),
            None => Err(SendError::Unknown {
                hash,
                message: format!("no receipt within {:?}", self.policy.receipt_timeout),
            }),
        }
    }

    /// What the chain says of `attempts`: [`Fate::Mined`] when one has a
    /// receipt; [`Fate::Taken`] when the key's mined nonce has moved past
    /// theirs and still none has — another transaction took the nonce;
    /// `None` while the nonce is open.
    async fn fate(&self, attempts: &[JournalEntry]) -> Result<Option<Fate>, SendError> {
        let latest = attempts.last().expect("an attempt");
        let Some(nonce) = latest.nonce.and_then(|n| u64::try_from(n).ok()) else {
            return Ok(None);
        };
        let key = self.key;
        // Read before the receipts: a nonce one of the attempts took shows
        // that attempt's receipt below.
        let taken = self
            .rpc
            .run("eth_getTransactionCount", |p| async move {
                p.get_transaction_count(key).latest().await
            })
            .await
            .is_ok_and(|n| n > nonce);
        if let Some(done) = self.mined(attempts).await? {
            return Ok(Some(Fate::mined(done)));
        }
        Ok(taken.then_some(Fate::Taken))
    }

    /// Attempts whose nonce another transaction took never mined and never
    /// can: journaled failed, answered `NotSent` (nothing of the step
    /// happened).
    async fn dropped(&self, attempts: &mut [JournalEntry]) -> SendError {
        let latest = attempts.last().expect("an attempt");
        let hash = latest.tx_hash.clone().unwrap_or_default();
        let nonce = latest.nonce.map_or("?".into(), |n| n.to_string());
        for e in attempts.iter_mut() {
            e.state = TxState::Failed;
            if let Err(err) = self.store.journal(e).await {
                return journal_err(err);
            }
        }
        tracing::warn!(%hash, %nonce, "transaction dropped: its nonce was taken by another");
        SendError::NotSent(format!(
            "{hash} never mined: nonce {nonce} was taken by another transaction"
        ))
    }

    /// Sends `e`'s signed bytes unless the chain has them (asked only when
    /// `may_be_known`: an entry journaled before, not one this process has
    /// just signed); journals `sent`. `false` when the node refused them
    /// (it may still have taken them: only the chain can tell).
    async fn broadcast(&self, mut e: JournalEntry, may_be_known: bool) -> Result<bool, SendError> {
        let hash = hash_of(&e)?;
        let known = if may_be_known {
            self.rpc
                .run("eth_getTransactionByHash", |p| async move {
                    p.get_transaction_by_hash(hash).await
                })
                .await
                .map_err(|err| SendError::Unknown {
                    hash,
                    message: err.to_string(),
                })?
                .is_some()
        } else {
            false
        };
        let mut accepted = true;
        if !known {
            let raw: Bytes = e.payload.parse().map_err(journal_err)?;
            let sent = self
                .rpc
                .run("eth_sendRawTransaction", |p| {
                    let raw = raw.clone();
                    async move { p.send_raw_transaction(&raw).await.map(|_| ()) }
                })
                .await;
            if let Err(err) = sent {
                tracing::warn!(%hash, error = %err, "broadcast reported an error");
                accepted = false;
            }
        }
        e.state = TxState::Sent;
        self.store.journal(&e).await.map_err(journal_err)?;
        Ok(accepted)
    }

    /// The first attempt with a receipt, by index.
    async fn mined(
        &self,
        attempts: &[JournalEntry],
    ) -> Result<Option<(usize, TransactionReceipt)>, SendError> {
        for (i, e) in attempts.iter().enumerate() {
            let hash = hash_of(e)?;
            let receipt = self
                .rpc
                .run("eth_getTransactionReceipt", |p| async move {
                    p.get_transaction_receipt(hash).await
                })
                .await
                .map_err(|err| SendError::Unknown {
                    hash,
                    message: err.to_string(),
                })?;
            if let Some(r) = receipt {
                return Ok(Some((i, r)));
            }
        }
        Ok(None)
    }

    /// Journals the mined attempt's outcome and the others as replaced.
    async fn finish(
        &self,
        attempts: &mut [JournalEntry],
        (i, receipt): (usize, TransactionReceipt),
    ) -> Result<TransactionReceipt, SendError> {
        for (j, e) in attempts.iter_mut().enumerate() {
            e.state = match (j == i, receipt.status()) {
                (true, true) => TxState::Mined,
                _ => TxState::Failed,
            };
            self.store.journal(e).await.map_err(journal_err)?;
        }
        if !receipt.status() {
            return Err(SendError::Reverted(receipt.transaction_hash));
        }
        Ok(receipt)
    }

    /// Plans and completes one side effect.
    pub async fn send(
        &self,
        route_id: &str,
        step: i64,
        call: &Call,
    ) -> Result<TransactionReceipt, SendError> {
        let _slot = self.slot().await?;
        let entry = self.plan(route_id, step, call).await?;
        // Signed and journaled just now by this call: the chain cannot have
        // it yet, so it is broadcast without asking first (a crash from
        // here on resumes through `complete`, which does ask).
        self.launch(vec![entry], false).await
    }

    /// Finishes journal step `step` of `route_id`: completes its journaled
    /// attempts when it has any (after a crash: never a second
    /// transaction), else plans `call` and completes it.
    pub async fn run_step(
        &self,
        route_id: &str,
        step: i64,
        call: &Call,
    ) -> Result<TransactionReceipt, SendError> {
        let journaled: Vec<JournalEntry> = self
            .store
            .journal_of(route_id)
            .await
            .map_err(journal_err)?
            .into_iter()
            .filter(|e| e.step == step)
            .collect();
        let _slot = self.slot().await?;
        let attempts = match journaled.is_empty() {
            true => vec![self.plan(route_id, step, call).await?],
            false => journaled,
        };
        self.complete_held(attempts).await
    }

    /// The relayer's ERC-20 allowance of `token` to `spender`.
    pub async fn allowance(&self, token: Address, spender: Address) -> Result<U256, SendError> {
        alloy::sol! {
            #[sol(rpc)]
            interface IErc20Allowance {
                function allowance(address owner, address spender) external view returns (uint256);
            }
        }
        let owner = self.address;
        self.rpc
            .run("allowance", |p| async move {
                IErc20Allowance::new(token, &p)
                    .allowance(owner, spender)
                    .call()
                    .await
                    .map_err(|e| match e {
                        alloy::contract::Error::TransportError(t) => t,
                        other => {
                            alloy::transports::TransportErrorKind::custom_str(&other.to_string())
                        }
                    })
            })
            .await
            .map_err(|e| SendError::NotSent(format!("allowance: {e}")))
    }

    /// Fills nonce gaps of the relayer on this chain: nonces below its
    /// highest pooled transaction that neither the pool nor this host's
    /// journal (planned or sent, about to be broadcast) nor an allocation
    /// in flight holds, once missing for `grace`.
    pub async fn repair_gaps(
        &self,
        grace: std::time::Duration,
    ) -> Result<crate::nonce::GapRepair, SendError> {
        let journaled = self
            .store
            .open_nonces(self.chain_id, &format!("{:#x}", self.key))
            .await
            .map_err(journal_err)?;
        self.nonces
            .repair_gaps(&journaled, grace)
            .await
            .map_err(|e| SendError::NotSent(e.to_string()))
    }

    /// After a restart: finishes every journaled side effect of `route_id`
    /// on this chain that has no receipt recorded — without a second
    /// signature or nonce.
    pub async fn resume(&self, route_id: &str) -> Result<Vec<TransactionReceipt>, SendError> {
        let journal = self.store.journal_of(route_id).await.map_err(journal_err)?;
        let mut steps: std::collections::BTreeMap<i64, Vec<JournalEntry>> = Default::default();
        for e in journal
            .into_iter()
            .filter(|e| e.chain == self.chain_id.to_string())
        {
            steps.entry(e.step).or_default().push(e);
        }
        let mut out = Vec::new();
        for (_, attempts) in steps {
            if attempts.iter().any(|e| e.state == TxState::Mined) {
                continue;
            }
            if attempts
                .iter()
                .any(|e| matches!(e.state, TxState::Planned | TxState::Sent))
            {
                out.push(self.complete(attempts).await?);
            }
        }
        Ok(out)
    }
}
