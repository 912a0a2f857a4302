//! Crash-safe sends on a real chain: a side effect journaled before its
//! broadcast is finished after a "crash" (a new sender, a new nonce
//! allocator, the same database) exactly once — the payout lands once, the
//! relayer's nonce moves once, and resuming again does nothing. A stuck
//! transaction is replaced at the same nonce with fees raised at least
//! 1.1× and pays once; one whose nonce another transaction took is not
//! sent (at once when the node refuses it); a send beside a pending
//! key-pool enrolment skips the nonce its authorization spends; dead and
//! hung RPC endpoints do not stop a send.

use crate::common;
use std::{sync::Arc, time::Duration};

use alloy::{
    consensus::{Transaction, TxEnvelope},
    eips::Decodable2718,
    primitives::{Address, Bytes, U256},
    providers::Provider,
    sol_types::SolCall,
};
use relay_chain::{
    rpc::FailoverProvider,
    sender::{Call, SendPolicy, Sender},
    signer::RelayerSigner,
};
use relay_devnet::{contracts::TestToken, keys, Devnet, DevnetConfig};
use relay_store::{Store, TxState};

const CHAIN: u64 = 8453;

struct World {
    devnet: Devnet,
    store_url: String,
    signer: RelayerSigner,
    usdc: Address,
}

impl World {
    async fn new() -> World {
        let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap().keep();
        let usdc = devnet.chain(CHAIN).unwrap().deployment.usdc;
        World {
            devnet,
            store_url: format!("sqlite://{}?mode=rwc", dir.join("relay.db").display()),
            signer: RelayerSigner::from_signer(keys::relayer()),
            usdc,
        }
    }

    /// A fresh process's view: new sender, new allocator, same database.
    async fn sender(&self) -> Sender {
        let live = self.devnet.chain(CHAIN).unwrap().rpc_url.clone();
        self.sender_over(&[live], SendPolicy::default()).await
    }

    /// A sender over `urls` (tried in order) with `policy`.
    async fn sender_over(&self, urls: &[String], policy: SendPolicy) -> Sender {
        let store = Store::connect(&self.store_url).await.unwrap();
        let rpc = FailoverProvider::new(urls, Some(&self.signer), Duration::from_millis(400));
        Sender::new(CHAIN, Arc::new(rpc), &self.signer, store, policy)
    }

    fn payout(&self, to: Address, amount: u64) -> Call {
        let data = TestToken::transferCall {
            to,
            value: U256::from(amount),
        }
        .abi_encode();
        Call {
            to: self.usdc,
            data: data.into(),
            value: U256::ZERO,
            gas_limit: 100_000,
        }
    }

    async fn balance(&self, who: Address) -> U256 {
        let p = self.devnet.chain(CHAIN).unwrap().provider();
        TestToken::new(self.usdc, &p)
            .balanceOf(who)
            .call()
            .await
            .unwrap()
    }

    async fn relayer_nonce(&self) -> u64 {
        let p = self.devnet.chain(CHAIN).unwrap().provider();
        p.get_transaction_count(self.signer.address())
            .await
            .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_between_journal_and_broadcast_pays_exactly_once() {
    let w = World::new().await;
    let who = Address::repeat_byte(0x31);
    let nonce0 = w.relayer_nonce().await;
    let planned = w
        .sender()
        .await
        .plan("rt_crash1", 1, &w.payout(who, 1_000_000))
        .await
        .unwrap();
    assert_eq!(planned.state, TxState::Planned);
    assert_eq!(
        w.balance(who).await,
        U256::ZERO,
        "nothing broadcast before the crash"
    );

    // Restart: resume finishes what the journal says, with the same signature.
    let receipts = w.sender().await.resume("rt_crash1").await.unwrap();
    assert_eq!(receipts.len(), 1);
    assert_eq!(
        format!("{:#x}", receipts[0].transaction_hash),
        planned.tx_hash.clone().unwrap()
    );
    assert_eq!(w.balance(who).await, U256::from(1_000_000u64));
    assert_eq!(w.relayer_nonce().await, nonce0 + 1);

    // Resuming again sends nothing.
    assert!(w
        .sender()
        .await
        .resume("rt_crash1")
        .await
        .unwrap()
        .is_empty());
    assert_eq!(w.balance(who).await, U256::from(1_000_000u64));
    let store = Store::connect(&w.store_url).await.unwrap();
    assert_eq!(
        store.journal_of("rt_crash1").await.unwrap()[0].state,
        TxState::Mined
    );
    w.devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_after_broadcast_is_not_broadcast_again() {
    let w = World::new().await;
    let who = Address::repeat_byte(0x32);
    let nonce0 = w.relayer_nonce().await;
    let planned = w
        .sender()
        .await
        .plan("rt_crash2", 1, &w.payout(who, 2_500_000))
        .await
        .unwrap();
    // The broadcast happened, then the process died before recording it.
    let p = w.devnet.chain(CHAIN).unwrap().provider();
    let raw: alloy::primitives::Bytes = planned.payload.parse().unwrap();
    p.send_raw_transaction(&raw)
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();

    let receipts = w.sender().await.resume("rt_crash2").await.unwrap();
    assert_eq!(receipts.len(), 1);
    assert_eq!(w.balance(who).await, U256::from(2_500_000u64), "paid once");
    assert_eq!(
        w.relayer_nonce().await,
        nonce0 + 1,
        "one nonce for one side effect"
    );
    w.devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ordinary_send_is_journaled_before_and_after() {
    let w = World::new().await;
    let who = Address::repeat_byte(0x33);
    let r = w
        .sender()
        .await
        .send("rt_plain", 0, &w.payout(who, 7))
        .await
        .unwrap();
    assert!(r.status());
    let store = Store::connect(&w.store_url).await.unwrap();
    let j = store.journal_of("rt_plain").await.unwrap();
    assert_eq!(j.len(), 1);
    assert_eq!(j[0].state, TxState::Mined);
    assert_eq!(
        j[0].tx_hash.as_deref(),
        Some(format!("{:#x}", r.transaction_hash).as_str())
    );
    assert_eq!(w.balance(who).await, U256::from(7u64));
    w.devnet.stop();
}

/// The max fee per gas a journaled attempt was signed with.
fn max_fee(payload: &str) -> u128 {
    let raw: Bytes = payload.parse().unwrap();
    TxEnvelope::decode_2718(&mut raw.as_ref())
        .unwrap()
        .max_fee_per_gas()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stuck_transaction_is_replaced_with_higher_fees_and_pays_once() {
    let w = World::new().await;
    let who = Address::repeat_byte(0x34);
    let nonce0 = w.relayer_nonce().await;
    let p = w.devnet.chain(CHAIN).unwrap().provider();
    // Blocks stop: the first broadcast sits in the pool, unmined.
    common::blocks(&p, false).await;
    let policy = SendPolicy {
        bump_after: Duration::from_millis(300),
        ..SendPolicy::default()
    };
    let live = w.devnet.chain(CHAIN).unwrap().rpc_url.clone();
    let sender = w.sender_over(&[live], policy).await;
    let call = w.payout(who, 4_000_000);
    let send = tokio::spawn(async move { sender.send("rt_stuck", 0, &call).await });
    let store = Store::connect(&w.store_url).await.unwrap();
    let attempts = journaled_until(&store, "rt_stuck", |a| {
        a.len() >= 2 && a[1].state == TxState::Sent
    })
    .await;
    assert!(attempts.len() >= 2, "replaced while stuck: {attempts:?}");
    assert_eq!(attempts[0].nonce, attempts[1].nonce, "same nonce");
    let (f0, f1) = (max_fee(&attempts[0].payload), max_fee(&attempts[1].payload));
    assert!(
        f1 * 10 >= f0 * 11,
        "fees raised at least 1.1x: {f0} -> {f1}"
    );
    common::blocks(&p, true).await;
    let receipt = send.await.unwrap().unwrap();
    assert!(receipt.status());
    assert_eq!(w.balance(who).await, U256::from(4_000_000u64), "paid once");
    assert_eq!(w.relayer_nonce().await, nonce0 + 1, "one nonce");
    let mined: Vec<_> = store
        .journal_of("rt_stuck")
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.state == TxState::Mined)
        .collect();
    assert_eq!(mined.len(), 1, "exactly one attempt mined");
    w.devnet.stop();
}

/// The journal of `route` once `done` holds of it.
async fn journaled_until(
    store: &Store,
    route: &str,
    done: impl Fn(&[relay_store::JournalEntry]) -> bool,
) -> Vec<relay_store::JournalEntry> {
    let mut attempts = Vec::new();
    common::wait_for("the journal", async || {
        attempts = store.journal_of(route).await.unwrap();
        done(&attempts)
    })
    .await;
    attempts
}

/// A broadcast transaction whose nonce another transaction of the key took
/// (here one sent around the relayer, with higher fees) never mines: once
/// the wait for its receipt ends the sender says so — not sent, journaled
/// failed — instead of an unknown outcome its owner would wait on forever.
#[tokio::test(flavor = "multi_thread")]
async fn a_transaction_whose_nonce_another_took_is_not_sent() {
    let w = World::new().await;
    let who = Address::repeat_byte(0x36);
    let p = w.devnet.chain(CHAIN).unwrap().provider();
    common::blocks(&p, false).await;
    let policy = SendPolicy {
        bump_after: Duration::from_secs(600),
        receipt_timeout: Duration::from_millis(1_500),
        ..SendPolicy::default()
    };
    let live = w.devnet.chain(CHAIN).unwrap().rpc_url.clone();
    let sender = w.sender_over(std::slice::from_ref(&live), policy).await;
    let call = w.payout(who, 2_000_000);
    let send = tokio::spawn(async move { sender.send("rt_taken", 0, &call).await });
    let store = Store::connect(&w.store_url).await.unwrap();
    let sent = journaled_until(&store, "rt_taken", |a| {
        a.first().is_some_and(|e| e.state == TxState::Sent)
    })
    .await;
    let ours = sent.first().expect("journaled");
    // The same key, the same nonce, a tenth of the gas and ten times the fee.
    let key = relay_devnet::deploy::wallet_provider(live.parse().unwrap(), keys::relayer());
    let fee = max_fee(&ours.payload) * 10;
    let other = alloy::rpc::types::TransactionRequest::default()
        .to(Address::repeat_byte(0x37))
        .nonce(ours.nonce.unwrap() as u64)
        .gas_limit(21_000)
        .max_fee_per_gas(fee)
        .max_priority_fee_per_gas(fee);
    let _ = key.send_transaction(other).await.unwrap();
    let _: serde_json::Value = p.raw_request("evm_mine".into(), ()).await.unwrap();

    let outcome = send.await.unwrap();
    assert!(
        matches!(outcome, Err(relay_chain::sender::SendError::NotSent(_))),
        "{outcome:?}"
    );
    assert_eq!(w.balance(who).await, U256::ZERO, "never paid");
    let after = store.journal_of("rt_taken").await.unwrap();
    assert!(
        after.iter().all(|e| e.state == TxState::Failed),
        "{after:?}"
    );
    common::blocks(&p, true).await;
    w.devnet.stop();
}

/// A policy that never replaces and waits an hour for a receipt: a send
/// that ends within a test's bound was told by the chain, not timed out.
fn patient() -> SendPolicy {
    SendPolicy {
        bump_after: Duration::from_secs(3_600),
        receipt_timeout: Duration::from_secs(3_600),
        ..SendPolicy::default()
    }
}

/// How long a test waits for a send told by the chain.
const TOLD_WITHIN: Duration = Duration::from_secs(60);

/// A journaled transaction whose nonce another transaction of the key
/// took and mined before it was broadcast (a crash in between, here) is
/// refused by the node: the sender asks the chain at once and answers not
/// sent, instead of waiting out the receipt timeout on a transaction that
/// can never mine.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_transaction_whose_nonce_another_took_is_not_sent_at_once() {
    let w = World::new().await;
    let who = Address::repeat_byte(0x38);
    let live = w.devnet.chain(CHAIN).unwrap().rpc_url.clone();
    let planned = w
        .sender_over(std::slice::from_ref(&live), patient())
        .await
        .plan("rt_refused", 0, &w.payout(who, 3_000_000))
        .await
        .unwrap();
    let key = relay_devnet::deploy::wallet_provider(live.parse().unwrap(), keys::relayer());
    let other = alloy::rpc::types::TransactionRequest::default()
        .to(Address::repeat_byte(0x39))
        .nonce(planned.nonce.unwrap() as u64)
        .gas_limit(21_000);
    let taken = key.send_transaction(other).await.unwrap();
    assert!(taken.get_receipt().await.unwrap().status());

    let resumed = w.sender_over(&[live], patient()).await;
    let outcome = tokio::time::timeout(TOLD_WITHIN, resumed.resume("rt_refused"))
        .await
        .expect("told by the chain, not by the receipt timeout");
    assert!(
        matches!(outcome, Err(relay_chain::sender::SendError::NotSent(_))),
        "{outcome:?}"
    );
    assert_eq!(w.balance(who).await, U256::ZERO, "never paid");
    let store = Store::connect(&w.store_url).await.unwrap();
    let after = store.journal_of("rt_refused").await.unwrap();
    assert!(
        after.iter().all(|e| e.state == TxState::Failed),
        "{after:?}"
    );
    w.devnet.stop();
}

/// Enrolling the key pool spends two nonces — its transaction's and its
/// self-sponsored authorization's. A transaction the key sends while the
/// enrolment is pending takes the one after both, so both mine.
#[tokio::test(flavor = "multi_thread")]
async fn a_send_beside_a_pending_enrolment_skips_its_authorizations_nonce() {
    let w = World::new().await;
    let who = Address::repeat_byte(0x3a);
    let nonce0 = w.relayer_nonce().await;
    let p = w.devnet.chain(CHAIN).unwrap().provider();
    common::blocks(&p, false).await;
    let live = w.devnet.chain(CHAIN).unwrap().rpc_url.clone();
    let policy = SendPolicy {
        bump_after: Duration::from_millis(500),
        ..patient()
    };
    let sender = Arc::new(w.sender_over(&[live], policy).await);
    let (s, signer) = (sender.clone(), w.signer.clone());
    let pool = vec![keys::relayer_pool(0).address()];
    let code = relay_devnet::RELAYER_ACCOUNT_ADDRESS;
    let enrol = tokio::spawn(async move { s.enrol(&signer, code, &pool).await });
    let store = Store::connect(&w.store_url).await.unwrap();
    let id = format!("relayer-account:{CHAIN}");
    journaled_until(&store, &id, |a| {
        a.first().is_some_and(|e| e.state == TxState::Sent)
    })
    .await;
    let (s, call) = (sender.clone(), w.payout(who, 5_000_000));
    let send = tokio::spawn(async move { s.send("rt_beside", 0, &call).await });
    let beside = journaled_until(&store, "rt_beside", |a| {
        a.first().is_some_and(|e| e.state == TxState::Sent)
    })
    .await;
    assert_eq!(beside[0].nonce, Some(nonce0 as i64 + 2), "{beside:?}");

    // Blocks again. anvil's pool keeps the send queued behind the nonce the
    // authorization spent (it never promotes it, as geth's pool does on the
    // next block); the send's own replacement, at the same nonce, is ready.
    common::blocks(&p, true).await;
    let (enrolled, sent) = tokio::time::timeout(TOLD_WITHIN, async {
        (enrol.await.unwrap(), send.await.unwrap())
    })
    .await
    .expect("both mined");
    assert!(enrolled.unwrap().status());
    assert!(sent.unwrap().status());
    assert_eq!(w.balance(who).await, U256::from(5_000_000u64), "paid once");
    assert_eq!(w.relayer_nonce().await, nonce0 + 3);
    w.devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_and_a_hung_endpoint_do_not_stop_a_send() {
    let w = World::new().await;
    let who = Address::repeat_byte(0x35);
    let (dead, hung, _hold) = common::dead_and_hung().await;
    let live = w.devnet.chain(CHAIN).unwrap().rpc_url.clone();
    let sender = w
        .sender_over(&[dead, hung, live], SendPolicy::default())
        .await;
    let r = sender
        .send("rt_failover", 0, &w.payout(who, 9))
        .await
        .unwrap();
    assert!(r.status());
    assert_eq!(w.balance(who).await, U256::from(9u64));
    w.devnet.stop();
}
