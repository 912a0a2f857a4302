//! The relayer key pool: two `relay serve` replicas on one Postgres
//! database, each with the relayer key and three pool keys, enrol the
//! relayer's account on both chains; a batch of Permit2 routes (the float
//! lane and an aggregator rail, through its simulator) is spread over the
//! keys; one replica is `kill -9`ed mid-batch and the other finishes its
//! routes. Every route is DONE, each on one key — every transaction it
//! journaled was signed by that key, and the chain agrees — each permit was
//! pulled once, each payout made once, and no key is left with a nonce gap.
//! Nobody but a pool key can make the relayer's account call anything.

use crate::common;

use std::{collections::BTreeMap, time::Duration};

use alloy::{
    network::TransactionBuilder,
    primitives::{Address, U256},
    providers::Provider,
    rpc::types::TransactionRequest,
    sol_types::SolCall,
};
use common::{
    approve_permit2, free_port, permit_body, spawn_host_with, usdc_balance, wait_ready, wait_up_to,
};
use relay_devnet::{keys, Devnet, DevnetConfig};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const ROUTES: u64 = 16;
const AMOUNT: u64 = 4_000_000;

fn pool_env() -> String {
    (0..3)
        .map(|i| format!("0x{}", hex::encode(keys::relayer_pool(i).to_bytes())))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether the relayer's account on `chain` runs the account code with
/// every pool key registered.
async fn enrolled(devnet: &Devnet, chain: u64) -> bool {
    let c = devnet.chain(chain).unwrap();
    let code = c.provider().get_code_at(devnet.relayer).await.unwrap();
    if relay_chain::eip7702::delegated_to(&code) != Some(relay_devnet::RELAYER_ACCOUNT_ADDRESS) {
        return false;
    }
    let account = relay_devnet::contracts::RelayerAccount::new(devnet.relayer, c.provider());
    for i in 0..3 {
        let who = keys::relayer_pool(i).address();
        if !account.isExecutor(who).call().await.unwrap() {
            return false;
        }
    }
    true
}

/// Whether the replica at `base` says (`/metrics`) it has `chain`
/// enrolled: its routes there spread over the pool.
async fn spreads(base: &str, chain: u64) -> bool {
    let Ok(resp) = common::http().get(format!("{base}/metrics")).send().await else {
        return false;
    };
    let text = resp.text().await.unwrap_or_default();
    let gauge = format!("relay_relayer_pool_enrolled{{chain=\"{chain}\"}} ");
    text.lines()
        .any(|l| l.strip_prefix(&gauge).is_some_and(|v| v.trim() == "1"))
}

/// The one key that signed every journaled transaction of `id`, checked
/// against each transaction's sender on chain.
async fn route_key(devnet: &Devnet, store: &relay_store::Store, id: &str) -> Address {
    let journal = store.journal_of(id).await.unwrap();
    let mined: Vec<_> = journal
        .iter()
        .filter(|e| e.state == relay_store::TxState::Mined)
        .collect();
    assert!(!mined.is_empty(), "{id} journaled no mined transaction");
    let mut keys = std::collections::BTreeSet::new();
    for e in mined {
        let signer: Address = e.signer.as_deref().expect("a signer").parse().unwrap();
        let chain: u64 = e.chain.parse().unwrap();
        let hash = e.tx_hash.as_deref().unwrap().parse().unwrap();
        let provider = devnet.chain(chain).unwrap().provider();
        let tx = provider
            .get_transaction_by_hash(hash)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            tx.inner.signer(),
            signer,
            "{id}: the chain names the journaled key"
        );
        keys.insert(signer);
    }
    assert_eq!(keys.len(), 1, "{id} ran on one key: {keys:?}");
    keys.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn routes_spread_over_the_key_pool_and_a_killed_replica_finishes_on_its_own_keys() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    approve_permit2(&devnet, SRC, 1).await;
    let db = relay_fixtures::postgres_database();
    let pool = pool_env();
    let env = [("RELAY_RELAYER_POOL_KEYS", pool.as_str())];
    let (da, db_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (pa, pb) = (free_port(), free_port());
    for (dir, port) in [(da.path(), pa), (db_dir.path(), pb)] {
        common::write_host_config(&devnet, &sims, dir, port, |c| {
            c.database_url = Some(db.clone())
        });
    }
    let mut a = spawn_host_with(da.path(), &env);
    let _b = spawn_host_with(db_dir.path(), &env);
    let (base_a, base_b) = (
        format!("http://127.0.0.1:{pa}"),
        format!("http://127.0.0.1:{pb}"),
    );
    wait_ready(&base_a).await;
    wait_ready(&base_b).await;
    // The chain enrolled is not yet each replica knowing it: a replica
    // whose enrolment lost the race to the other's finds it on its next
    // pass, and routes it takes meanwhile are the relayer key's alone.
    for chain in [SRC, DST] {
        wait_up_to(
            &format!("the key pool enrolled on {chain}"),
            Duration::from_secs(60),
            async || enrolled(&devnet, chain).await,
        )
        .await;
        for base in [&base_a, &base_b] {
            wait_up_to(
                &format!("{base} spreads routes on {chain} over the pool"),
                Duration::from_secs(60),
                async || spreads(base, chain).await,
            )
            .await;
        }
    }

    let books = common::UsdcBooks::open(&devnet, (SRC, DST), keys::anvil_address(1)).await;
    let bodies: Vec<Value> = (0..ROUTES)
        .map(|i| {
            let mut b = permit_body(&devnet, (SRC, DST), AMOUNT + i * 1_000, 70_000 + i);
            b["rail"] = json!(if i.is_multiple_of(2) {
                "floatlane"
            } else {
                "lifi"
            });
            b
        })
        .collect();
    // Every route at once, half at each replica; replica A dies once four
    // of its routes are running.
    let (tx, mut started_on_a) = tokio::sync::mpsc::unbounded_channel();
    let calls: Vec<_> = (0..ROUTES)
        .map(|i| {
            let on_a = i.is_multiple_of(2);
            let base = if on_a { &base_a } else { &base_b }.clone();
            let (body, tx) = (bodies[i as usize].clone(), tx.clone());
            tokio::spawn(async move {
                let id = common::submit_keyed(&base, &body, &format!("pool-{i}")).await;
                if let (true, Some(id)) = (on_a, &id) {
                    let _ = tx.send(id.clone());
                }
                id
            })
        })
        .collect();
    let mut running = Vec::new();
    while running.len() < 4 {
        running.push(started_on_a.recv().await.expect("A answers"));
    }
    a.kill().unwrap(); // SIGKILL
    a.wait().unwrap();
    let mut cut = 0;
    for id in &running {
        let (_, r) = common::get(&format!("{base_b}/api/route/status?id={id}")).await;
        cut += !matches!(r["status"].as_str(), Some("DONE" | "FAILED")) as usize;
    }
    assert!(cut > 0, "the kill cut at least one route short");
    eprintln!("{cut} of A's running routes cut short by the kill");
    for c in calls {
        let _ = c.await;
    }
    // Each request again at B with its key until it answers (A's routes
    // are picked up by B once A's leases lapse).
    let mut ids = Vec::new();
    for i in 0..ROUTES {
        let key = format!("pool-{i}");
        let mut id = None;
        wait_up_to(
            &format!("{key} answered"),
            Duration::from_secs(90),
            async || {
                id = common::submit_keyed(&base_b, &bodies[i as usize], &key).await;
                id.is_some()
            },
        )
        .await;
        ids.push(id.unwrap());
    }
    let delivered = common::all_done(&base_b, &ids).await;
    let amounts: u64 = (0..ROUTES).map(|i| AMOUNT + i * 1_000).sum();
    books
        .assert_moved(&devnet, U256::from(amounts), delivered)
        .await;

    // Each route on one key, the keys spread over the pool.
    let store = relay_store::Store::connect(&db).await.unwrap();
    let mut per_key: BTreeMap<Address, usize> = BTreeMap::new();
    for id in &ids {
        *per_key
            .entry(route_key(&devnet, &store, id).await)
            .or_default() += 1;
    }
    eprintln!("routes per key: {per_key:?}");
    let pool_keys: Vec<Address> = (0..3).map(|i| keys::relayer_pool(i).address()).collect();
    assert!(
        per_key
            .keys()
            .all(|k| *k == devnet.relayer || pool_keys.contains(k)),
        "{per_key:?}"
    );
    assert!(
        per_key.len() >= 3,
        "routes spread over the keys: {per_key:?}"
    );
    // No key is left with a transaction stuck behind a missing nonce.
    for chain in [SRC, DST] {
        let p = devnet.chain(chain).unwrap().provider();
        for who in pool_keys.iter().chain([&devnet.relayer]) {
            let latest = p.get_transaction_count(*who).latest().await.unwrap();
            let pending = p.get_transaction_count(*who).pending().await.unwrap();
            assert_eq!(latest, pending, "chain {chain} key {who}: nothing queued");
        }
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn only_a_pool_key_makes_the_relayers_account_call() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    common::write_host_config(&devnet, &sims, dir.path(), port, |_| {});
    let pool = pool_env();
    let _host = spawn_host_with(dir.path(), &[("RELAY_RELAYER_POOL_KEYS", pool.as_str())]);
    wait_ready(&format!("http://127.0.0.1:{port}")).await;
    wait_up_to(
        "the key pool enrolled",
        Duration::from_secs(60),
        async || enrolled(&devnet, SRC).await,
    )
    .await;

    let c = devnet.chain(SRC).unwrap();
    let usdc = c.deployment.usdc;
    let thief = keys::anvil_address(5);
    let held = usdc_balance(&devnet, SRC, devnet.relayer).await;
    use relay_devnet::contracts::RelayerAccount as A;
    let transfer = relay_devnet::contracts::TestToken::transferCall {
        to: thief,
        value: held,
    }
    .abi_encode();
    let attempts = [
        A::runCall {
            to: usdc,
            value: U256::ZERO,
            data: transfer.into(),
        }
        .abi_encode(),
        A::setExecutorsCall {
            who: vec![thief],
            allowed: true,
        }
        .abi_encode(),
    ];
    for data in attempts {
        let tx = TransactionRequest::default()
            .with_from(thief)
            .with_to(devnet.relayer)
            .with_input(data)
            .with_gas_limit(200_000);
        let sent = c.provider().send_transaction(tx).await.unwrap();
        let receipt = sent.get_receipt().await.unwrap();
        assert!(
            !receipt.status(),
            "a stranger's call through the account reverts"
        );
    }
    assert_eq!(usdc_balance(&devnet, SRC, devnet.relayer).await, held);
    let account = A::new(devnet.relayer, c.provider());
    assert!(!account.isExecutor(thief).call().await.unwrap());
    devnet.stop();
}
