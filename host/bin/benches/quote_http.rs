//! `POST /api/route/quote` and `POST /api/route/compare` through the full
//! HTTP stack, next to a bare axum JSON echo measured with the same client
//! in the same run (issue 12: the warm quote book and the hedged fan-out):
//!
//! - a real host on a real devnet (anvil 8453 and 42161), the packaged
//!   plugins and the upstream simulators, served on an ephemeral port as
//!   `host/bin/tests/it/common` serves it (rate limits off);
//! - upstream latency injected in-process with the simulators' faults at
//!   the public aggregators' median latencies
//!   ([`relay_simulators::FIELD_LATENCY_MS`]: LI.FI 1.45 s, Squid 1.07 s,
//!   Bungee 0.9 s, Allbridge/Chainflip 0.8 s, Circle 0.6 s); under `cargo
//!   test` a twentieth of them, so CI stays quick;
//! - `quote/warm`: 4.2–8.3 USDC 8453 → 42161, a different amount every
//!   call, on a lane the book keeps warm (one bucket); `quote/cold`: a
//!   lane never quoted before every call (a new slippage), the hedged live
//!   fan-out; `quote/echo`: the same body through a one-route axum echo
//!   (the HTTP floor);
//! - `compare/uncached`: the amount changes every call, so every call
//!   misses the 12 s compare cache (the book still answers);
//!   `compare/cached`: one amount, answered from the compare cache.
//!
//! After measuring it prints one summary line: warm p50/p90, cold p50 and
//! the engine's overhead over the slowest rail it awaited (the slowest
//! answering rail's injected latency, or the soft deadline when a rail was
//! late), and warm-quote throughput with 16 in flight against the echo's
//! (with the process's CPU time per request of each: server and client
//! share the machine's cores), how many of those warm answers asked a
//! rail live, and how many attestations each relayer signature covered
//! (quotes answered together are signed as one batch). The throughput is
//! measured in three rounds, each quotes then echoes, and the median round
//! is reported beside every round's ratio: a drift in the machine's speed
//! (a shared VM's is large) then touches both sides of a round.
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
use relay_simulators::{faults::FaultConfig, Upstream, FIELD_LATENCY_MS};
use serde_json::{json, Value};
use support::Served;
use tokio::runtime::Runtime;

const SRC: u64 = 8453;
const DST: u64 = 42161;
/// The warm lane's amounts: one power-of-two bucket, [2^22, 2^23).
const WARM_LOW: u64 = 4_200_000;
const WARM_SPAN: u64 = 4_100_000;

/// Requests in flight in the throughput part of the summary.
const IN_FLIGHT: usize = 16;

/// Rounds of the throughput part (quotes, then echoes).
const ROUNDS: usize = 3;

/// One round of the throughput part: `(req/s, answers that asked a rail
/// live, CPU µs per request)` of the quotes and of the echoes.
struct Round {
    quote: (f64, usize, Option<f64>),
    echo: (f64, usize, Option<f64>),
}

impl Round {
    /// Warm-quote throughput over the echo's.
    fn ratio(&self) -> f64 {
        self.quote.0 / self.echo.0
    }
}

/// The rail each simulated upstream serves on this lane.
const RAILS: [(&str, Upstream); 3] = [
    ("lifi", Upstream::Lifi),
    ("squid", Upstream::Squid),
    ("bungee", Upstream::Bungee),
];

/// Whether criterion measures (`cargo bench` passes `--bench`) rather than
/// running each function once (`cargo test`).
fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The injected latency of `u`, ms.
fn latency_ms(u: Upstream) -> u64 {
    let ms = FIELD_LATENCY_MS
        .iter()
        .find(|(x, _)| *x == u)
        .map_or(0, |(_, ms)| *ms);
    if measuring() {
        ms
    } else {
        ms / 20
    }
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

/// The recipient every quote names (anvil account 1; derived once, not
/// per request: deriving an address is a scalar multiplication).
static RECIPIENT: std::sync::LazyLock<alloy::primitives::Address> =
    std::sync::LazyLock::new(|| relay_devnet::keys::anvil_address(1));

/// The quote request for `amount` USDC base units at `slippage_bps`. It
/// names the recipient: the aggregator rails decline a request without
/// one. No sender: a quote naming one also prepares the router intent,
/// which asks the winning rail for a plan.
fn body(amount: u64, slippage_bps: u64) -> Value {
    json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "amount": amount.to_string(),
        "toAddress": *RECIPIENT,
        "slippage": format!("0.{slippage_bps:04}"),
    })
}

/// Everything measured; fields drop in order, the runtime last.
struct Stack {
    client: reqwest::Client,
    quote_url: String,
    compare_url: String,
    echo_url: String,
    /// Changes amounts and lanes per call.
    bump: AtomicU64,
    served: Served,
    _devnet: Devnet,
    _dir: tempfile::TempDir,
    rt: Runtime,
}

/// Nearest-rank percentile of `v` (sorted here), ms.
fn pct(v: &mut [f64], p: usize) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = (p * v.len()).div_ceil(100).clamp(1, v.len());
    v[rank - 1]
}

impl Stack {
    fn start() -> Self {
        let (rt, dir, devnet, served) = support::start([SRC, DST]);
        for (upstream, _) in FIELD_LATENCY_MS {
            let latency_ms = latency_ms(upstream);
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
            served,
            _devnet: devnet,
            _dir: dir,
            rt,
        };
        stack.assert_cold_then_warm();
        stack
    }

    /// POSTs `body` to `url`; the JSON answer, which must be a 200.
    async fn post(&self, url: &str, body: &Value) -> Value {
        let body = serde_json::to_vec(body).expect("body");
        let answer = self.post_bytes(url, body).await;
        serde_json::from_slice(answer.as_ref()).expect("JSON answer")
    }

    /// POSTs the JSON `body` to `url`; the answer's bytes, which must be
    /// a 200.
    async fn post_bytes(&self, url: &str, body: Vec<u8>) -> impl AsRef<[u8]> {
        let resp = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        let status = resp.status();
        let answer = resp.bytes().await.expect("body");
        assert!(status.is_success(), "{url}: {status}: {answer:?}");
        answer
    }

    fn next(&self) -> u64 {
        self.bump.fetch_add(1, Ordering::Relaxed)
    }

    /// A warm-lane body: a new amount of the warm bucket.
    fn warm_body(&self) -> Value {
        let i = self.next();
        body(WARM_LOW + (i * 7_919) % WARM_SPAN, 50)
    }

    fn warm(&self) -> Value {
        self.rt
            .block_on(self.post(&self.quote_url, &self.warm_body()))
    }

    /// A quote on a lane never quoted (a new slippage); the answer and how
    /// long it took, ms.
    fn cold(&self) -> (Value, f64) {
        let b = body(5_000_000, 100 + self.next() % 4_000);
        let started = Instant::now();
        let v = self.rt.block_on(self.post(&self.quote_url, &b));
        (v, started.elapsed().as_secs_f64() * 1_000.0)
    }

    fn echo(&self) -> Value {
        self.rt
            .block_on(self.post(&self.echo_url, &body(5_000_000, 50)))
    }

    fn compare_uncached(&self) -> Value {
        let v = self
            .rt
            .block_on(self.post(&self.compare_url, &self.warm_body()));
        assert_eq!(
            v["cached"], false,
            "a fresh amount misses the compare cache"
        );
        v
    }

    fn compare_cached(&self) -> Value {
        self.rt
            .block_on(self.post(&self.compare_url, &body(5_000_000, 50)))
    }

    /// The figures are only meaningful if the cold quote awaited the
    /// upstreams and the warm one did not: the first quote of the lane is
    /// live and every aggregator answers it; the next one is the book's.
    fn assert_cold_then_warm(&self) {
        let started = Instant::now();
        let q = self.warm();
        let took = started.elapsed().as_millis() as u64;
        for (rail, u) in RAILS {
            let c = rail_entry(&q, rail);
            assert!(c["ok"] == true && c["cached"] == false, "{rail}: {q}");
            assert!(took >= latency_ms(u), "{took} ms");
        }
        let warm = self.warm();
        for (rail, _) in RAILS {
            assert_eq!(rail_entry(&warm, rail)["cached"], true, "{warm}");
        }
    }

    /// Latencies of `n` sequential calls of `f`, ms.
    fn samples(&self, n: u32, f: impl Fn(&Self) -> Value) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let started = Instant::now();
                f(self);
                started.elapsed().as_secs_f64() * 1_000.0
            })
            .collect()
    }

    /// Requests per second with [`IN_FLIGHT`] always in flight (a finished
    /// request is replaced at once), `n` in all; how many answers had a
    /// rail asked live (a `compared` entry not `cached`) for them; and the
    /// process's CPU time per request, µs (server and client, when the
    /// platform tells). The client reads each answer's bytes and parses
    /// none, quote or echo alike: what is measured is the server.
    fn concurrent_rps(
        &self,
        url: &str,
        n: usize,
        body: impl Fn() -> Value,
    ) -> (f64, usize, Option<f64>) {
        use futures::StreamExt as _;
        let bodies: Vec<Vec<u8>> = (0..n)
            .map(|_| serde_json::to_vec(&body()).expect("body"))
            .collect();
        let live = std::sync::atomic::AtomicUsize::new(0);
        let needle: &[u8] = br#""cached":false"#;
        let cpu_before = process_cpu();
        let started = Instant::now();
        self.rt.block_on(
            futures::stream::iter(bodies.into_iter().map(|b| self.post_bytes(url, b)))
                .buffer_unordered(IN_FLIGHT)
                .for_each(|answer| {
                    let asked = memchr::memmem::find(answer.as_ref(), needle).is_some();
                    live.fetch_add(usize::from(asked), Ordering::Relaxed);
                    async {}
                }),
        );
        let rps = n as f64 / started.elapsed().as_secs_f64();
        let cpu = cpu_before
            .zip(process_cpu())
            .map(|(a, b)| (b - a).as_secs_f64() * 1e6 / n as f64);
        (rps, live.into_inner(), cpu)
    }

    /// A cold quote's time over the slowest rail it awaited, ms: the
    /// slowest answering aggregator's latency, or the soft deadline when a
    /// rail was late.
    fn overhead(&self) -> (f64, f64) {
        let (q, took) = self.cold();
        let answered = RAILS
            .iter()
            .filter(|(rail, _)| rail_entry(&q, rail)["ok"] == true)
            .map(|(_, u)| latency_ms(*u) as f64)
            .fold(0.0, f64::max);
        let soft = q["compared"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["errorKind"] == "LATE")
            .filter_map(|c| soft_deadline_ms(c["error"].as_str()?))
            .fold(0.0, f64::max);
        (took, took - answered.max(soft))
    }

    /// The one-line summary.
    fn summary(&self, full: bool) -> String {
        let (n, cold_n, per_round) = if full {
            (200, 20, 400 * IN_FLIGHT)
        } else {
            (5, 3, IN_FLIGHT)
        };
        let mut warm = self.samples(n, Self::warm);
        let mut echo = self.samples(n, Self::echo);
        let (mut cold, mut over): (Vec<f64>, Vec<f64>) =
            (0..cold_n).map(|_| self.overhead()).unzip();
        let t = self.throughput(per_round);
        format!(
            "quote_http: warm quote p50 {:.1} ms p90 {:.1} ms (echo p50 {:.2} ms); \
             cold quote p50 {:.0} ms, engine overhead over the slowest awaited rail \
             p50 {:.1} ms; {IN_FLIGHT} in flight: {t} (n={n}, cold n={cold_n})",
            pct(&mut warm, 50),
            pct(&mut warm, 90),
            pct(&mut echo, 50),
            pct(&mut cold, 50),
            pct(&mut over, 50),
        )
    }

    /// The host's `(relay_quote_attestations_total,
    /// relay_quote_attestation_signatures_total)` from `GET /metrics`.
    fn attestations(&self) -> (f64, f64) {
        let text = self.rt.block_on(async {
            let url = format!("{}/metrics", self.served.base);
            let resp = self.client.get(url).send().await.expect("metrics");
            resp.text().await.expect("metrics text")
        });
        let read = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
                .unwrap_or(0.0)
        };
        (
            read("relay_quote_attestations_total"),
            read("relay_quote_attestation_signatures_total"),
        )
    }

    /// Warm-quote throughput against the echo's, in [`ROUNDS`] rounds of
    /// `per_round` quotes then four times as many echoes, so a drift in
    /// the machine's speed touches both sides of a round alike: the
    /// median round's figures, and every round's ratio.
    fn throughput(&self, per_round: usize) -> String {
        let signed_before = self.attestations();
        let rounds: Vec<Round> = (0..ROUNDS)
            .map(|_| {
                let quote = self.concurrent_rps(&self.quote_url, per_round, || self.warm_body());
                let echo =
                    self.concurrent_rps(&self.echo_url, per_round * 4, || body(5_000_000, 50));
                Round { quote, echo }
            })
            .collect();
        let mut by_ratio: Vec<&Round> = rounds.iter().collect();
        by_ratio.sort_by(|a, b| a.ratio().total_cmp(&b.ratio()));
        let mid = by_ratio[by_ratio.len() / 2];
        let us = |c: Option<f64>| c.map_or("n/a".into(), |c| format!("{c:.0} µs"));
        let ratios: Vec<String> = rounds
            .iter()
            .map(|r| format!("{:.0}", r.ratio() * 100.0))
            .collect();
        let live: usize = rounds.iter().map(|r| r.quote.1).sum();
        let (quotes, signatures) = self.attestations();
        let batch = (quotes - signed_before.0) / (signatures - signed_before.1).max(1.0);
        format!(
            "warm quote {:.0} req/s vs echo {:.0} req/s ({:.0} %; rounds {} %), CPU per \
             request {} vs echo {}, {live} of {} warm answers asked a rail live, \
             {batch:.1} attestations per signature",
            mid.quote.0,
            mid.echo.0,
            mid.ratio() * 100.0,
            ratios.join(" / "),
            us(mid.quote.2),
            us(mid.echo.2),
            per_round * ROUNDS,
        )
    }
}

/// The CPU time this process has used (user and system, all threads),
/// where `/proc/self/stat` tells it.
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command's closing parenthesis; utime and stime
    // are the 14th and 15th of the whole line, in clock ticks (100 Hz on
    // Linux).
    let rest = stat.rsplit_once(')')?.1;
    let mut fields = rest.split_whitespace().skip(11);
    let ticks: u64 = fields.next()?.parse::<u64>().ok()? + fields.next()?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn rail_entry<'a>(q: &'a Value, rail: &str) -> &'a Value {
    q["compared"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["rail"] == rail))
        .unwrap_or_else(|| panic!("{rail} not compared: {q}"))
}

/// The soft deadline a `LATE` rail's error names, ms.
fn soft_deadline_ms(error: &str) -> Option<f64> {
    let after = error.split("by the ").nth(1)?;
    after.split(' ').next()?.parse().ok()
}

fn quote_http(c: &mut Criterion) {
    let s = Stack::start();
    let slow = Duration::from_secs(20);

    let mut g = c.benchmark_group("quote");
    g.sample_size(50);
    g.bench_function("warm", |b| b.iter(|| s.warm()));
    g.bench_function("echo", |b| b.iter(|| s.echo()));
    g.finish();

    let mut g = c.benchmark_group("quote");
    g.sample_size(10).measurement_time(slow);
    g.bench_function("cold", |b| b.iter(|| s.cold()));
    g.finish();

    let mut g = c.benchmark_group("compare");
    g.sample_size(50);
    g.bench_function("uncached", |b| b.iter(|| s.compare_uncached()));
    g.bench_function("cached", |b| b.iter(|| s.compare_cached()));
    g.finish();

    eprintln!("{}", s.summary(measuring()));
}

criterion_group!(benches, quote_http);
criterion_main!(benches);
