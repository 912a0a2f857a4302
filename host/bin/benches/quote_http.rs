//! `POST /api/route/quote` and `POST /api/route/compare` through the full
//! HTTP stack, next to a bare axum JSON echo measured with the same client
//! in the same run:
//!
//! - a real host on a real devnet (anvil 8453 and 42161), the packaged
//!   plugins and the upstream simulators, served on an ephemeral port as
//!   `host/bin/tests/it/common` serves it (rate limits off);
//! - upstream latency injected in-process with the simulators' faults
//!   ([`LATENCIES`]: lifi 50 ms, squid 80 ms, bungee 120 ms), so the fan-out
//!   waits at least for the slowest rail and the rest is the engine;
//! - `quote/host`: 5 USDC 8453 → 42161; `quote/echo`: the same body
//!   through a one-route axum echo (the HTTP floor);
//! - `compare/uncached`: the amount changes every call, so every call misses
//!   the 12 s compare cache and runs the fan-out; `compare/cached`: one
//!   amount, answered from the cache.
//!
//! After measuring it prints one summary line: quote and echo latency, the
//! engine's overhead over the slowest injected latency, sequential and
//! concurrent requests per second (a manual timed loop).
//!
//! `cargo bench -p relay-host --bench quote_http`; under `cargo test
//! --benches` each function runs once and the summary loop is short.

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

mod support;

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

use axum::{routing::post, Json, Router};
use criterion::{criterion_group, criterion_main, Criterion};
use relay_devnet::Devnet;
use relay_simulators::{faults::FaultConfig, Upstream};
use serde_json::{json, Value};
use support::Served;
use tokio::runtime::Runtime;

const SRC: u64 = 8453;
const DST: u64 = 42161;
const AMOUNT: u64 = 5_000_000;

/// Injected upstream latency per aggregator simulator, ms.
const LATENCIES: [(Upstream, &str, u64); 3] = [
    (Upstream::Lifi, "lifi", 50),
    (Upstream::Squid, "squid", 80),
    (Upstream::Bungee, "bungee", 120),
];

/// Requests in flight in the concurrent part of the summary.
const IN_FLIGHT: usize = 16;

/// The slowest injected latency: the floor of every fan-out.
fn slowest_ms() -> u64 {
    LATENCIES.iter().map(|(_, _, ms)| *ms).max().unwrap_or(0)
}

/// A bare axum server with one POST route answering its JSON body; the
/// URL of that route.
async fn serve_echo() -> String {
    let app = Router::new().route("/echo", post(|Json(v): Json<Value>| async move { Json(v) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listener");
    let url = format!("http://{}/echo", listener.local_addr().expect("local addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// The quote request for `amount` USDC base units. It names the sender
/// (anvil account 1; the recipient defaults to it): the aggregator rails
/// decline a request without a recipient, and the fan-out must await them.
fn body(amount: u64) -> Value {
    json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "amount": amount.to_string(),
        "fromAddress": relay_devnet::keys::anvil_address(1),
    })
}

/// Everything measured; fields drop in order, the runtime last.
struct Stack {
    client: reqwest::Client,
    quote_url: String,
    compare_url: String,
    echo_url: String,
    /// Changes the compare amount per call (cache misses).
    bump: AtomicU64,
    _served: Served,
    _devnet: Devnet,
    _dir: tempfile::TempDir,
    rt: Runtime,
}

impl Stack {
    fn start() -> Self {
        let (rt, dir, devnet, served) = support::start([SRC, DST]);
        for (upstream, _, latency_ms) in LATENCIES {
            served.sims.set_faults(
                upstream,
                FaultConfig {
                    latency_ms,
                    ..Default::default()
                },
            );
        }
        let echo_url = rt.block_on(serve_echo());
        let stack = Stack {
            client: reqwest::Client::new(),
            quote_url: format!("{}/api/route/quote", served.base),
            compare_url: format!("{}/api/route/compare", served.base),
            echo_url,
            bump: AtomicU64::new(0),
            _served: served,
            _devnet: devnet,
            _dir: dir,
            rt,
        };
        stack.assert_fan_out_waits_for_every_rail();
        stack
    }

    /// POSTs `body` to `url`; the JSON answer, which must be a 200.
    async fn post(&self, url: &str, body: &Value) -> Value {
        let resp = self
            .client
            .post(url)
            .json(body)
            .send()
            .await
            .expect("request");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        assert!(status.is_success(), "{url}: {status}: {text}");
        serde_json::from_str(&text).expect("JSON answer")
    }

    fn quote(&self) -> Value {
        self.rt.block_on(self.post(&self.quote_url, &body(AMOUNT)))
    }

    fn echo(&self) -> Value {
        self.rt.block_on(self.post(&self.echo_url, &body(AMOUNT)))
    }

    fn compare_uncached(&self) -> Value {
        let amount = AMOUNT + 1 + self.bump.fetch_add(1, Ordering::Relaxed);
        let v = self
            .rt
            .block_on(self.post(&self.compare_url, &body(amount)));
        assert_eq!(v["cached"], false, "a fresh amount misses the cache");
        v
    }

    fn compare_cached(&self) -> Value {
        self.rt
            .block_on(self.post(&self.compare_url, &body(AMOUNT)))
    }

    /// The figures are only meaningful if the slowest rail was awaited:
    /// every latency-injected rail answers the quote, which takes at least
    /// the slowest latency.
    fn assert_fan_out_waits_for_every_rail(&self) {
        let started = Instant::now();
        let q = self.quote();
        let took = started.elapsed();
        let compared = q["compared"].as_array().expect("compared rails");
        for (_, rail, _) in LATENCIES {
            assert!(
                compared
                    .iter()
                    .any(|c| c["rail"] == rail && c["ok"] == true),
                "{rail} did not answer: {q}"
            );
        }
        assert!(took >= Duration::from_millis(slowest_ms()), "{took:?}");
        let warm = self.compare_cached();
        assert!(!warm["best"].is_null(), "{warm}");
    }

    /// Mean latency of `n` sequential calls of `f`, ms.
    fn mean_ms(&self, n: u32, f: impl Fn(&Self) -> Value) -> f64 {
        let started = Instant::now();
        for _ in 0..n {
            f(self);
        }
        started.elapsed().as_secs_f64() * 1_000.0 / f64::from(n)
    }

    /// Requests per second with [`IN_FLIGHT`] requests to `url` in flight,
    /// `n` in all.
    fn concurrent_rps(&self, url: &str, n: usize) -> f64 {
        let started = Instant::now();
        self.rt.block_on(async {
            let mut left = n;
            while left > 0 {
                let wave = left.min(IN_FLIGHT);
                let b = body(AMOUNT);
                futures::future::join_all((0..wave).map(|_| self.post(url, &b))).await;
                left -= wave;
            }
        });
        n as f64 / started.elapsed().as_secs_f64()
    }

    /// The one-line summary: a manual timed loop of quotes and echoes.
    fn summary(&self, full: bool) -> String {
        let (n, waves) = if full {
            (30, 4 * IN_FLIGHT)
        } else {
            (3, IN_FLIGHT)
        };
        let quote_ms = self.mean_ms(n, Self::quote);
        let echo_ms = self.mean_ms(n, Self::echo);
        let compare_ms = self.mean_ms(n, Self::compare_uncached);
        let quote_rps = self.concurrent_rps(&self.quote_url, waves);
        let echo_rps = self.concurrent_rps(&self.echo_url, waves * 10);
        let slowest = slowest_ms();
        format!(
            "quote_http: quote {quote_ms:.1} ms, compare (uncached) {compare_ms:.1} ms, \
             echo {echo_ms:.3} ms; engine overhead over the slowest rail ({slowest} ms) \
             {:.1} ms; sequential quote {:.1} req/s vs echo {:.0} req/s; \
             {IN_FLIGHT} in flight: quote {quote_rps:.1} req/s vs echo {echo_rps:.0} req/s \
             (n={n})",
            quote_ms - slowest as f64,
            1_000.0 / quote_ms,
            1_000.0 / echo_ms,
        )
    }
}

/// Whether criterion measures (`cargo bench` passes `--bench`) rather than
/// running each function once (`cargo test`).
fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn quote_http(c: &mut Criterion) {
    let s = Stack::start();
    // Fan-outs take over 120 ms each: ten samples fit in eight seconds.
    let slow = Duration::from_secs(8);

    let mut g = c.benchmark_group("quote");
    g.sample_size(10).measurement_time(slow);
    g.bench_function("host", |b| b.iter(|| s.quote()));
    g.bench_function("echo", |b| b.iter(|| s.echo()));
    g.finish();

    let mut g = c.benchmark_group("compare");
    g.sample_size(10).measurement_time(slow);
    g.bench_function("uncached", |b| b.iter(|| s.compare_uncached()));
    g.bench_function("cached", |b| b.iter(|| s.compare_cached()));
    g.finish();

    eprintln!("{}", s.summary(measuring()));
}

criterion_group!(benches, quote_http);
criterion_main!(benches);
