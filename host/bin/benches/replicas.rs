//! Replicas behaving as one service (issue 49): 1, 2 and 4 hosts on one
//! Postgres database, sharing through it (`[limits] backend = "store"`),
//! behind a round-robin TCP proxy on loopback (each request a new
//! connection, so each goes to the next replica), over one set of
//! upstream simulators. For each count it prints:
//!
//! - **one client's minute**: 30 executes and 100 status reads sent at
//!   once by one client (`X-Forwarded-For`, the proxy trusted) — how many
//!   got through, against the spec's 8 and 60 a minute (§8.1);
//! - **each upstream's minute**: a warm lane quoted 8 times a second by
//!   rotating clients for a minute — the quotes LI.FI, Squid and Bungee
//!   received in it, against the rail budget (`default_rpm` 30);
//!
//! and criterion measures a warm quote through the proxy (latency and
//! throughput per replica count). All replicas share the machine's cores.
//!
//! `cargo bench -p relay-host --bench replicas` (Postgres: as the tests
//! find it); under `cargo test --benches` only 1 and 2 replicas, a
//! 3-second "minute", one quote each.

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

use std::{
    net::SocketAddr,
    sync::atomic::{AtomicUsize, Ordering},
    sync::Arc,
    time::Duration,
};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use relay_config::{FailMode, HostConfig, LimitsBackend};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_host::devnet::{host_config, point_rails_at, serve_on_loopback, ServedHost};
use relay_simulators::{Simulators, Upstream};
use serde_json::{json, Value};
use tokio::{net::TcpListener, runtime::Runtime};

const SRC: u64 = 8453;
const DST: u64 = 42161;
/// Each rail's upstream budget, quotes a minute.
const RPM: u32 = 30;
const QUOTED: [(Upstream, &str); 3] = [
    (Upstream::Lifi, "/v1/quote"),
    (Upstream::Squid, "/v2/route"),
    (Upstream::Bungee, "/v3/swap/quote"),
];

fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn counts() -> &'static [usize] {
    if measuring() {
        &[1, 2, 4]
    } else {
        &[1, 2]
    }
}

fn minute() -> Duration {
    Duration::from_secs(if measuring() { 60 } else { 3 })
}

/// A round-robin proxy to `backends`; its address.
async fn proxy(backends: Vec<SocketAddr>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap();
    let next = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let to = backends[next.fetch_add(1, Ordering::Relaxed) % backends.len()];
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(to).await {
                    // as a balancer does: no Nagle delay on either side
                    let _ = (client.set_nodelay(true), server.set_nodelay(true));
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    at
}

/// `n` replicas on `db` over `sims`, and the proxy in front.
async fn replicas(
    devnet: &Devnet,
    sims: &Simulators,
    (dir, db): (&std::path::Path, &str),
    n: usize,
) -> (Vec<ServedHost>, String) {
    let mut hosts = vec![];
    for i in 0..n {
        let home = dir.join(format!("r{n}-{i}"));
        let mut base = HostConfig {
            data_dir: relay_fixtures::data_dir(&home.join("data")),
            database_url: Some(db.to_string()),
            plugins_dir: relay_fixtures::plugins_copy(&home.join("plugins")),
            ..HostConfig::default()
        };
        base.limits.backend = LimitsBackend::Store;
        base.limits.on_backend_failure = FailMode::Open;
        base.limits.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
        base.quote_book.default_rpm = RPM;
        let config = point_rails_at(devnet, sims, host_config(devnet, base));
        hosts.push(serve_on_loopback(config).await.expect("host serves"));
    }
    let addrs = hosts
        .iter()
        .map(|h| h.base.trim_start_matches("http://").parse().unwrap())
        .collect();
    let front = format!("http://{}", proxy(addrs).await);
    (hosts, front)
}

fn client() -> reqwest::Client {
    // no kept connection: every request meets the proxy's next replica
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

/// One quote of the warm lane as client `ip`: its status, and whether any
/// rail was asked live for it (not served from the book).
async fn quote(front: &str, ip: &str) -> (u16, bool) {
    let body = json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC",
        "amount": "6000000", "toAddress": keys::anvil_address(1)});
    let sent = client()
        .post(format!("{front}/api/route/quote"))
        .header("x-forwarded-for", ip)
        .json(&body)
        .send()
        .await;
    let Ok(answer) = sent else { return (0, false) };
    let status = answer.status().as_u16();
    let body: Value = answer.json().await.unwrap_or_default();
    let compared = body["compared"].as_array().cloned().unwrap_or_default();
    (status, compared.iter().any(|c| c["cached"] == false))
}

/// Of `n` requests sent at once by one client, how many were not 429.
async fn through(front: &str, (method, path): (&str, &str), n: usize) -> usize {
    let ip = format!("203.0.113.{}", path.len());
    let sends = (0..n).map(|_| {
        let req = match method {
            "POST" => client().post(format!("{front}{path}")).json(&json!({})),
            _ => client().get(format!("{front}{path}")),
        };
        req.header("x-forwarded-for", &ip).send()
    });
    futures::future::join_all(sends)
        .await
        .into_iter()
        .filter(|r| r.as_ref().is_ok_and(|r| r.status().as_u16() != 429))
        .count()
}

/// The quotes each measured upstream received since `since_ms`.
async fn received(sims: &Simulators, since_ms: u64) -> Vec<usize> {
    let mut out = vec![];
    for (u, path) in QUOTED {
        let url = format!("{}/simulator/requests?since={since_ms}", sims.url(u));
        let body: Value = client()
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let seen = body["requests"].as_array().unwrap();
        out.push(seen.iter().filter(|r| r["path"] == path).count());
    }
    out
}

/// The warm lane quoted 8 times a second for a minute by rotating
/// clients; the quotes each upstream received meanwhile.
async fn upstream_minute(front: &str, sims: &Simulators) -> (Minute, Vec<usize>) {
    let start = relay_types::Clock::now_ms(&relay_types::SystemClock);
    let mut tick = tokio::time::interval(Duration::from_millis(125));
    let until = tokio::time::Instant::now() + minute();
    let mut sent = vec![];
    let mut i = 0u32;
    while tokio::time::Instant::now() < until {
        tick.tick().await;
        let (front, ip) = (front.to_string(), format!("10.9.{}.{}", i / 250, i % 250));
        sent.push(tokio::spawn(async move { quote(&front, &ip).await }));
        i += 1;
    }
    let answers: Vec<(u16, bool)> = futures::future::join_all(sent)
        .await
        .into_iter()
        .map(|a| a.unwrap_or((0, false)))
        .collect();
    let ok = answers.iter().filter(|(s, _)| *s == 200).count();
    let live = answers
        .iter()
        .filter(|(s, live)| *s == 200 && *live)
        .count();
    let failed: std::collections::BTreeMap<u16, usize> = answers
        .iter()
        .filter(|(s, _)| *s != 200)
        .fold(Default::default(), |mut m, (s, _)| {
            *m.entry(*s).or_default() += 1;
            m
        });
    (Minute { ok, live, failed }, received(sims, start).await)
}

/// What the warm lane's minute answered.
struct Minute {
    /// Quotes answered 200.
    ok: usize,
    /// Of those, answered with a rail asked live.
    live: usize,
    /// The other answers by status (0: no answer).
    failed: std::collections::BTreeMap<u16, usize>,
}

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let devnet = rt
        .block_on(Devnet::start(DevnetConfig::with_chains([SRC, DST])))
        .unwrap();
    let sims = rt.block_on(Simulators::start(&devnet)).unwrap();
    let mut group = c.benchmark_group("replicas");
    group.throughput(Throughput::Elements(1));
    for &n in counts() {
        let db = relay_fixtures::postgres_database();
        let (hosts, front) = rt.block_on(replicas(&devnet, &sims, (dir.path(), &db), n));
        let executes = rt.block_on(through(&front, ("POST", "/api/route/execute"), 30));
        let status = rt.block_on(through(&front, ("GET", "/api/status"), 100));
        let (quoted, upstream) = rt.block_on(upstream_minute(&front, &sims));
        println!(
            "replicas {n}: one client got through {executes}/30 executes (limit 8), \
             {status}/100 status reads (limit 60); in {:?} {} quotes answered ({} with a rail \
             asked live), not answered by status {:?}; LI.FI/Squid/Bungee received {upstream:?} \
             quotes (budget {RPM} a minute each)",
            minute(),
            quoted.ok,
            quoted.live,
            quoted.failed,
        );
        let mut k = 0u32;
        group.bench_function(format!("warm quote, {n} replicas"), |b| {
            b.iter(|| {
                k += 1;
                let ip = format!("10.8.{}.{}", (k / 250) % 250, k % 250);
                assert_eq!(rt.block_on(quote(&front, &ip)).0, 200);
            })
        });
        drop(hosts);
        relay_fixtures::drop_postgres_database(&db);
    }
    group.finish();
    devnet.stop();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(10));
    targets = bench
}
criterion_main!(benches);
