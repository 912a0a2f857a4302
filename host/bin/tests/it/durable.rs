//! Durable execution under faults, on the devnet with real anvil chains:
//! two replicas sharing one Postgres database and one relayer key execute
//! an idempotency key once and never hand out a nonce twice; a nonce gap on
//! the relayer account is found and filled, and the route behind it
//! completes; a dead and a hung RPC endpoint ahead of the live one do not
//! stop a route; two tasks of one replica reaching for one route (the
//! request that made it and the resume tick) run it once.

use crate::common;
use alloy::{primitives::U256, providers::Provider};
use common::{
    approve_permit2, dead_and_hung, execute_to_end, permit_body, post, serve, until_terminal,
    usdc_balance,
};
use relay_devnet::{keys, Devnet, DevnetConfig};
use serde_json::Value;

const SRC: u64 = 8453;
const DST: u64 = 42161;

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_postgres_execute_a_key_once_and_share_nonces() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let db = relay_fixtures::postgres_database();
    let (da, db_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = serve(&devnet, da.path(), |c| c.database_url = Some(db.clone())).await;
    let b = serve(&devnet, db_dir.path(), |c| {
        c.database_url = Some(db.clone())
    })
    .await;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_address(1);
    let before = usdc_balance(&devnet, SRC, user).await;

    // The same key at both replicas at once: one execution.
    let body = permit_body(&devnet, (SRC, DST), 3_000_000, 1);
    let key = [("x-idempotency-key", "dup-1")];
    let (ra, rb) = tokio::join!(
        post(&a.base, "/api/route/execute", &body, &key),
        post(&b.base, "/api/route/execute", &body, &key),
    );
    let ids: Vec<String> = [&ra, &rb]
        .iter()
        .filter(|(code, _)| *code == 200)
        .map(|(_, t)| {
            serde_json::from_str::<Value>(t).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(!ids.is_empty(), "{ra:?} {rb:?}");
    assert!(
        ids.windows(2).all(|w| w[0] == w[1]),
        "one route id: {ids:?}"
    );
    for (code, text) in [&ra, &rb] {
        assert!(
            *code == 200 || (*code == 409 && text.contains("IDEMPOTENCY_IN_FLIGHT")),
            "{code} {text}"
        );
    }
    assert_eq!(until_terminal(&a.base, &ids[0]).await["status"], "DONE");

    // Different routes at both replicas at once: one relayer key, shared
    // nonces, every route DONE.
    let mut calls = Vec::new();
    for n in 0..6u64 {
        let host = if n.is_multiple_of(2) {
            &a.base
        } else {
            &b.base
        };
        let body = permit_body(&devnet, (SRC, DST), 1_000_000, 10 + n);
        calls.push(async move { post(host, "/api/route/execute", &body, &[]).await });
    }
    let answers = futures::future::join_all(calls).await;
    for (code, text) in &answers {
        assert_eq!(*code, 200, "{text}");
        let id = serde_json::from_str::<Value>(text).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        let done = until_terminal(&a.base, &id).await;
        assert_eq!(done["status"], "DONE", "{done}");
    }
    assert_eq!(
        before - usdc_balance(&devnet, SRC, user).await,
        U256::from(3_000_000u64 + 6 * 1_000_000),
        "each permit pulled exactly once"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nonce_gap_on_the_relayer_is_filled_and_the_route_completes() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    approve_permit2(&devnet, SRC, 1).await;
    let relayer = devnet.relayer;
    let provider = devnet.chain(SRC).unwrap().provider();
    let pending = provider
        .get_transaction_count(relayer)
        .pending()
        .await
        .unwrap();
    // A nonce taken and never used (a crash between allocation and the
    // journal): every later transaction of the relayer would stall.
    let lost = h
        .host_state
        .store
        .allocate_nonce(SRC, &relayer.to_string(), pending)
        .await
        .unwrap();
    assert_eq!(lost, pending);
    let (_, done) = execute_to_end(&h.base, &permit_body(&devnet, (SRC, DST), 2_000_000, 77)).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let mined = provider
        .get_transaction_count(relayer)
        .latest()
        .await
        .unwrap();
    assert!(
        mined > lost + 1,
        "the gap at {lost} was filled ({mined} mined)"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_and_a_hung_rpc_endpoint_do_not_stop_a_route() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let (dead, hung, _hold) = dead_and_hung().await;
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.execution.rpc_timeout_ms = 500;
        for chain in c.chains.values_mut() {
            chain.rpc.splice(0..0, [dead.clone(), hung.clone()]);
        }
        for urls in c.capabilities.rpc.values_mut() {
            urls.splice(0..0, [dead.clone(), hung.clone()]);
        }
    })
    .await;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_address(1);
    let before = usdc_balance(&devnet, DST, user).await;
    let (_, done) = execute_to_end(&h.base, &permit_body(&devnet, (SRC, DST), 2_000_000, 88)).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(usdc_balance(&devnet, DST, user).await - before, delivered);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn two_tasks_of_one_replica_reaching_for_one_route_pay_once() {
    use relay_plugin_api::{Amount, ChainRef, ExecutionPlan, PlanAction, SourceMode};
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.execution.resume_interval_ms = 600_000
    })
    .await;
    let recipient = keys::anvil_address(5);
    let before = usdc_balance(&devnet, DST, recipient).await;
    // An operator route (mode self) whose one step pays 1 USDC out of float.
    let mut route = common::sample_route("rt_twotasks000001");
    route.mode = SourceMode::Operator;
    route.recipient = recipient.to_string();
    route.plan = ExecutionPlan {
        steps: vec![PlanAction::InventoryPayout {
            chain: ChainRef::Evm(DST),
            token: devnet.chain(DST).unwrap().deployment.usdc.to_string(),
            to: recipient.to_string(),
            amount: Amount::from_u128(1_000_000),
        }],
        track_ref: None,
    };
    h.host_state.store.insert_route(&route).await.unwrap();
    // The request that made it and the resume tick, at once.
    let ex = h.host_state.executor.clone().unwrap();
    let (a, b) = tokio::join!(ex.run(&route.id), ex.run(&route.id));
    let ran: Vec<_> = [a.unwrap(), b.unwrap()].into_iter().flatten().collect();
    assert_eq!(ran.len(), 1, "one task ran it, the other stood back");
    assert_eq!(ran[0].status, relay_types::route::RouteStatus::Done);
    assert_eq!(
        usdc_balance(&devnet, DST, recipient).await - before,
        U256::from(1_000_000u64),
        "paid once"
    );
    devnet.stop();
}

/// Two replicas on one Postgres preparing router intents for one owner at
/// once hand out distinct Permit2 nonces: each nonce an intent gets is
/// held in the store, not only in the replica that chose it. (Held per
/// replica, the later of two routes with one nonce passed its checks while
/// the earlier was unmined and reverted on chain, at the relayer's
/// expense — the soak caught it.)
#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_preparing_intents_for_one_owner_never_share_a_nonce() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let db = relay_fixtures::postgres_database();
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let tweak = |c: &mut relay_config::HostConfig| c.database_url = Some(db.clone());
    let hosts = [
        serve(&devnet, dirs[0].path(), tweak).await,
        serve(&devnet, dirs[1].path(), tweak).await,
    ];
    let owner = crate::router::fresh_wallet(&devnet, "durable-intent-nonces").await;
    let body = serde_json::json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
        "amount": "5000000", "fromAddress": owner.address(),
        "toAddress": keys::seeded_signer("durable-intent-recipient").address(),
    });
    let prepares = (0..8).map(|i| {
        let (base, body) = (hosts[i % 2].base.clone(), body.clone());
        async move { post(&base, "/api/route/intent", &body, &[]).await }
    });
    let mut nonces = std::collections::BTreeSet::new();
    for (status, text) in futures::future::join_all(prepares).await {
        assert_eq!(status, 200, "{text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert!(
            nonces.insert(crate::router::witness_nonce(&answer)),
            "a nonce handed out twice: {nonces:?}"
        );
    }
    drop(hosts);
    devnet.stop();
}
