//! Rate limits shared by replicas (`[limits] backend = "store"`): two
//! `relay serve` replicas on one Postgres database count one client once,
//! so the spec's 8 executes a minute (§8.1) hold whichever replica answers
//! — where the in-process default gives each replica its own 8; the same
//! holds for open router intents, event subscriptions and MCP sessions
//! per IP. With the
//! database gone, a request is served uncounted (`open`) or refused with
//! 503 `RATE_LIMITS_UNAVAILABLE` (`closed`), as configured; `/api/status`
//! says where the limits count.

use relay_config::{FailMode, HostConfig, LimitsBackend};
use relay_devnet::{Devnet, DevnetConfig};
use serde_json::{json, Value};

use crate::common::{self, post, serve, Running};

const CHAIN: u64 = 8453;

/// Two replicas on `db` counting in `backend`.
async fn replicas(
    devnet: &Devnet,
    dirs: &[tempfile::TempDir; 2],
    db: &str,
    (backend, fail): (LimitsBackend, FailMode),
) -> [Running; 2] {
    let tweak = |c: &mut HostConfig| {
        c.database_url = Some(db.to_string());
        c.limits.enabled = true;
        c.limits.backend = backend;
        c.limits.on_backend_failure = fail;
    };
    let a = serve(devnet, dirs[0].path(), tweak).await;
    let b = serve(devnet, dirs[1].path(), tweak).await;
    [a, b]
}

/// Sends `n` executes (an empty body: refused for it, but counted, like
/// every request), alternating replicas; their statuses and the last
/// answer.
async fn executes(hosts: &[Running; 2], n: usize) -> (Vec<u16>, Value) {
    let mut statuses = vec![];
    let mut last = Value::Null;
    for i in 0..n {
        let (status, text) = post(&hosts[i % 2].base, "/api/route/execute", &json!({}), &[]).await;
        statuses.push(status);
        last = serde_json::from_str(&text).unwrap_or(Value::Null);
    }
    (statuses, last)
}

fn dirs() -> [tempfile::TempDir; 2] {
    [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()]
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_one_store_give_a_client_the_limit_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();

    // in memory: each replica counts alone, so 16 executes pass the door
    let (d, db) = (dirs(), relay_fixtures::postgres_database());
    let hosts = replicas(&devnet, &d, &db, (LimitsBackend::Memory, FailMode::Open)).await;
    let (statuses, _) = executes(&hosts, 16).await;
    assert!(!statuses.contains(&429), "{statuses:?}");
    drop(hosts);

    // in the store: the 9th in the minute is 429 whichever replica answers
    let (d, db) = (dirs(), relay_fixtures::postgres_database());
    let hosts = replicas(&devnet, &d, &db, (LimitsBackend::Store, FailMode::Open)).await;
    let (statuses, _) = executes(&hosts, 8).await;
    assert!(statuses.iter().all(|s| *s == 400), "{statuses:?}");
    for host in &hosts {
        let (status, text) = post(&host.base, "/api/route/execute", &json!({}), &[]).await;
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (status, body["errorCode"].as_str()),
            (429, Some("RATE_LIMITED")),
            "{text}"
        );
        assert_eq!(body["retryable"], true);
        assert!(body["retryAfterMs"].as_u64().unwrap() > 0, "{text}");
    }
    // another bucket is unaffected, and the status says where limits count
    let (status, s) = common::get(&format!("{}/api/status", hosts[0].base)).await;
    assert_eq!(status, 200, "{s}");
    assert_eq!(
        s["limits"],
        json!({"backend": "store", "up": true, "onBackendFailure": "open"})
    );
    drop(hosts);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_store_serves_uncounted_when_open_and_refuses_when_closed() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    for fail in [FailMode::Open, FailMode::Closed] {
        let (d, db) = (dirs(), relay_fixtures::postgres_database());
        let hosts = replicas(&devnet, &d, &db, (LimitsBackend::Store, fail)).await;
        let (statuses, _) = executes(&hosts, 2).await;
        assert_eq!(statuses, [400, 400]);
        relay_fixtures::drop_postgres_database(&db);
        let (statuses, last) = executes(&hosts, 10).await;
        match fail {
            // past the limit, and never a 429: nothing can count them
            FailMode::Open => assert!(statuses.iter().all(|s| *s == 400), "{statuses:?}"),
            FailMode::Closed => {
                assert!(statuses.iter().all(|s| *s == 503), "{statuses:?}");
                assert_eq!(last["errorCode"], "RATE_LIMITS_UNAVAILABLE", "{last}");
                assert_eq!(last["retryable"], true);
            }
        }
        drop(hosts);
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_one_store_hold_a_clients_open_intents_to_one_cap() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN, 42161]))
        .await
        .unwrap();
    let (d, db) = (dirs(), relay_fixtures::postgres_database());
    let tweak = |c: &mut HostConfig| {
        c.database_url = Some(db.clone());
        c.limits.enabled = true;
        c.limits.backend = LimitsBackend::Store;
        c.limits.intents_per_ip = 3;
    };
    let hosts = [
        serve(&devnet, d[0].path(), tweak).await,
        serve(&devnet, d[1].path(), tweak).await,
    ];
    let owner = crate::router::fresh_wallet(&devnet, "limits-shared-intents").await;
    let body = json!({
        "fromChain": CHAIN, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC",
        "amount": "5000000", "fromAddress": owner.address(),
        "toAddress": relay_devnet::keys::seeded_signer("limits-shared-recipient").address(),
    });
    for i in 0..3 {
        let (status, text) = post(&hosts[i % 2].base, "/api/route/intent", &body, &[]).await;
        assert_eq!(status, 200, "intent {i}: {text}");
    }
    for host in &hosts {
        let (status, text) = post(&host.base, "/api/route/intent", &body, &[]).await;
        let refused: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (status, refused["errorCode"].as_str()),
            (429, Some("RATE_LIMITED")),
            "{text}"
        );
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("intents_per_ip"),
            "{text}"
        );
    }
    drop(hosts);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_one_store_hold_a_clients_subscriptions_to_one_cap() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let (d, db) = (dirs(), relay_fixtures::postgres_database());
    let tweak = |c: &mut HostConfig| {
        c.database_url = Some(db.clone());
        c.notify.max_subscriptions_per_caller = 2;
    };
    let hosts = [
        serve(&devnet, d[0].path(), tweak).await,
        serve(&devnet, d[1].path(), tweak).await,
    ];
    let body = json!({"type": "price", "asset": "ETH", "above": "1.5",
        "url": "http://127.0.0.1:9/relay-hook"});
    let subscribe = |host: &Running| {
        let base = host.base.clone();
        let body = body.clone();
        async move {
            let (status, text) = post(&base, "/api/events/subscribe", &body, &[]).await;
            (status, serde_json::from_str::<Value>(&text).unwrap())
        }
    };
    let (first, second) = (subscribe(&hosts[0]).await, subscribe(&hosts[1]).await);
    assert_eq!((first.0, second.0), (200, 200), "{first:?} {second:?}");
    for host in &hosts {
        let (status, refused) = subscribe(host).await;
        assert_eq!(
            (status, refused["errorCode"].as_str()),
            (409, Some("SUBSCRIPTION_LIMIT")),
            "{refused}"
        );
    }
    // cancelling one frees its place, on either replica
    let id = first.1["id"].as_str().unwrap();
    let cancelled = common::http()
        .delete(format!("{}/api/events/subscribe/{id}", hosts[1].base))
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.status(), 200);
    assert_eq!(subscribe(&hosts[0]).await.0, 200);
    assert_eq!(subscribe(&hosts[1]).await.0, 409);
    drop(hosts);
    devnet.stop();
}

/// `initialize` on `base`'s MCP endpoint: the status, the session, the body.
async fn open_mcp(base: &str) -> (u16, Option<String>, String) {
    crate::limits_attack::initialize(&common::http(), base).await
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_one_store_hold_a_clients_mcp_sessions_to_one_cap() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    for backend in [LimitsBackend::Memory, LimitsBackend::Store] {
        let (d, db) = (dirs(), relay_fixtures::postgres_database());
        let tweak = |c: &mut HostConfig| {
            c.database_url = Some(db.clone());
            c.limits.backend = backend;
            c.limits.enabled = true;
            c.limits.mcp_sessions_per_ip = 2;
        };
        let hosts = [
            serve(&devnet, d[0].path(), tweak).await,
            serve(&devnet, d[1].path(), tweak).await,
        ];
        let (a, b) = (&hosts[0].base, &hosts[1].base);
        let first = open_mcp(a).await;
        assert_eq!((first.0, open_mcp(a).await.0), (200, 200), "{}", first.2);
        let (status, _, text) = open_mcp(b).await;
        if backend == LimitsBackend::Memory {
            // each replica counts alone: the other gives the IP its own two
            assert_eq!(status, 200, "{text}");
            drop(hosts);
            relay_fixtures::drop_postgres_database(&db);
            continue;
        }
        assert_eq!(
            status, 429,
            "the IP holds its two on the other replica: {text}"
        );
        assert!(text.contains("mcp_sessions_per_ip"), "{text}");
        // closing one on the first replica frees a place on the second
        let closed = common::http()
            .delete(format!("{a}/mcp"))
            .header("mcp-session-id", first.1.unwrap())
            .send()
            .await
            .unwrap();
        assert!(closed.status().is_success(), "{}", closed.status());
        // (given back in the background: the first answer may still be 429)
        common::wait_for("a place freed on the second replica", async || {
            open_mcp(b).await.0 == 200
        })
        .await;
        drop(hosts);
        relay_fixtures::drop_postgres_database(&db);
    }
    devnet.stop();
}
