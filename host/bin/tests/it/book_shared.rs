//! The quote book shared by replicas (issue 49, `[limits] backend =
//! "store"`): two replicas on one Postgres database, over one set of
//! upstream simulators, quoted in turn for two minutes. Each rail's
//! upstream receives no more than its budget in any minute — where each
//! replica on its own would refresh the lane at twice the budget — and
//! both replicas answer every quote from the book with fresh answers, the
//! second one from answers the first published.

use std::time::Duration;

use relay_config::{FailMode, HostConfig, LimitsBackend};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_registry::OperatorStateStore;
use relay_simulators::{Simulators, Upstream};
use relay_types::{Clock as _, SystemClock};
use serde_json::{json, Value};

use crate::common::{self, post, serve, Running};

const BASE: u64 = 8453;
const ARB: u64 = 42161;
/// Each rail's budget: upstream quotes a minute, for the deployment.
const RPM: usize = 30;
/// A lane's answer is refreshed once this old (one replica alone refreshes
/// each rail 20 times a minute; two on their own, 40 — over [`RPM`]).
const REFRESH_MS: u64 = 3_000;
/// Never served older than this.
const STALE_MS: u64 = 6_000;
/// How long the replicas are quoted.
const RUN: Duration = Duration::from_secs(120);
/// The upstreams measured, and the path of a quote at each.
const QUOTED: [(Upstream, &str, &str); 3] = [
    (Upstream::Lifi, "lifi", "/v1/quote"),
    (Upstream::Squid, "squid", "/v2/route"),
    (Upstream::Bungee, "bungee", "/v3/swap/quote"),
];

fn shared(c: &mut HostConfig, db: &str) {
    c.database_url = Some(db.to_string());
    c.limits.backend = LimitsBackend::Store;
    c.limits.on_backend_failure = FailMode::Open;
    c.quote_book.enabled = true;
    c.quote_book.default_rpm = RPM as u32;
    c.quote_book.refresh_ms = REFRESH_MS;
    c.quote_book.stale_ms = STALE_MS;
    c.quote_book.tick_ms = 100;
    c.quote.deadline_ms = 4_000;
}

/// Two replicas on `db`, the second pointed at the first's simulators.
async fn replicas(devnet: &Devnet, dirs: &[tempfile::TempDir; 2], db: &str) -> [Running; 2] {
    let a = serve(devnet, dirs[0].path(), |c| shared(c, db)).await;
    for rail in ["floatlane", "cctp", "stablebridge"] {
        let store = &a.host_state.store;
        store.set_rail_enabled(rail, false).await.unwrap();
    }
    let b = serve(devnet, dirs[1].path(), |c| {
        shared(c, db);
        *c = relay_host::devnet::point_rails_at(devnet, &a.sims, std::mem::take(c));
    })
    .await;
    [a, b]
}

/// One quote of the lane on `h`, and when it was asked (epoch ms).
async fn quote(h: &Running) -> (Value, u64) {
    let body = json!({"fromChain": BASE, "toChain": ARB, "fromToken": "USDC",
        "amount": "6000000", "toAddress": keys::anvil_address(1)});
    let sent = SystemClock.now_ms();
    let (code, text) = post(&h.base, "/api/route/quote", &body, &[]).await;
    assert_eq!(code, 200, "{text}");
    (serde_json::from_str(&text).unwrap(), sent)
}

/// The quotes `sims`' `upstream` received at `path` since `since_ms`:
/// their times, epoch ms.
async fn quotes_received(
    sims: &Simulators,
    (upstream, path): (Upstream, &str),
    since: u64,
) -> Vec<u64> {
    let url = format!("{}/simulator/requests?since={since}", sims.url(upstream));
    let (status, body) = common::get(&url).await;
    assert_eq!(status, 200, "{body}");
    let seen = body["requests"].as_array().unwrap();
    seen.iter()
        .filter(|r| r["path"] == path)
        .map(|r| r["atMs"].as_u64().unwrap())
        .collect()
}

/// The most of `times` (sorted) within any minute.
fn busiest_minute(times: &[u64]) -> usize {
    let mut start = 0;
    let mut most = 0;
    for (end, t) in times.iter().enumerate() {
        while t - times[start] >= 60_000 {
            start += 1;
        }
        most = most.max(end + 1 - start);
    }
    most
}

/// Each measured rail's entry in a quote answered by the book: priced,
/// served from the book and no older than the bound when asked.
fn served_fresh_from_book(q: &Value, sent_ms: u64) -> Result<(), String> {
    for (_, rail, _) in QUOTED {
        let c = q["compared"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["rail"] == rail))
            .ok_or_else(|| format!("{rail} not compared: {q}"))?;
        let at = c["quotedAt"].as_u64().unwrap_or(0);
        if c["ok"] != true || c["cached"] != true || sent_ms.saturating_sub(at) > STALE_MS {
            return Err(format!("{rail} not fresh from the book: {c}"));
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_keep_one_book_within_each_upstreams_budget() {
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let db = relay_fixtures::postgres_database();
    let hosts = replicas(&devnet, &dirs, &db).await;
    let started = SystemClock.now_ms();

    // The first quote is the lane's live fan-out on the first replica; the
    // second replica's first quote is served from what it published.
    let (first, _) = quote(&hosts[0]).await;
    assert_eq!(first["compared"][0]["cached"], false, "{first}");
    // every rail it asked, published (the second replica's first quote
    // is then served from them)
    let store = &hosts[0].host_state.store;
    let asked: Vec<String> = first["compared"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["rail"].as_str().unwrap().to_string())
        .collect();
    common::wait_for("the first replica's answers published", async || {
        let rows = store.answers_since(0).await.unwrap();
        asked.iter().all(|rail| rows.iter().any(|r| &r.1 == rail))
    })
    .await;
    let mut served = 0;
    let mut misses = vec![];
    let mut turn = 1;
    while SystemClock.now_ms() < started + RUN.as_millis() as u64 {
        let (q, sent) = quote(&hosts[turn % 2]).await;
        match served_fresh_from_book(&q, sent) {
            Ok(()) => served += 1,
            Err(why) => misses.push(format!("quote {turn}, replica {}: {why}", turn % 2)),
        }
        turn += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    for (upstream, rail, path) in QUOTED {
        let times = quotes_received(&hosts[0].sims, (upstream, path), started).await;
        let most = busiest_minute(&times);
        assert!(
            most <= RPM,
            "{rail}: {most} quotes in one minute (budget {RPM}): {times:?}"
        );
        // refreshed all along: about one every REFRESH_MS, shared
        assert!(
            times.len() >= 30,
            "{rail} refreshed only {} times: {times:?}",
            times.len()
        );
    }
    assert!(
        misses.is_empty(),
        "{} of {turn} quotes missed the book: {misses:#?}",
        misses.len()
    );
    assert!(served > 200, "{served}");
    devnet.stop();
}
