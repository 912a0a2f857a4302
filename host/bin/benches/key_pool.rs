//! Routes per second with one, two and four relayer keys (issue 48): the
//! relayer key alone, then with one and three pool keys, each on a fresh
//! devnet of two chains mining a block every second — as a real chain
//! does, where one key's transactions wait for blocks — and the host's
//! default cap of 16 pending transactions per key on a chain
//! (`execution.max_pending_per_key`, what nodes keep executable per sender).
//!
//! A batch is [`BATCH`] float-lane routes, 5 USDC 8453 → 42161, each with
//! its own Permit2 signature from anvil account 1 signed before the clock
//! starts, POSTed at once and timed until every route is `DONE`. Per route
//! the route's key signs the pull on 8453 and the payout on 42161. One key
//! sends at most 16 a block per chain; four send 64. Criterion reports the
//! time per batch and routes/s; a summary line with the means follows.
//!
//! `cargo bench -p relay-host --bench key_pool`; under `cargo test
//! --benches` one small batch per key count.

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

mod support;

use std::{
    cell::{Cell, RefCell},
    time::{Duration, Instant},
};

use alloy::providers::Provider;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use relay_devnet::{keys, DevnetConfig};

const SRC: u64 = 8453;
const DST: u64 = 42161;
/// USDC base units per route (5 USDC).
const AMOUNT: u64 = 5_000_000;
/// The anvil account that signs the permits.
const USER: usize = 1;
/// How long one batch may take before the bench fails.
const BATCH_TIMEOUT: Duration = Duration::from_secs(300);

fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// Routes per measured batch: enough to fill four keys' slots.
fn batch() -> usize {
    if measuring() {
        96
    } else {
        8
    }
}

fn key_pool(c: &mut Criterion) {
    let mut group = c.benchmark_group("key_pool");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .throughput(Throughput::Elements(batch() as u64));
    let mut summary = Vec::new();
    for keys in [1usize, 2, 4] {
        let mut config = DevnetConfig::with_chains([SRC, DST]);
        config.block_time_secs = Some(1);
        let (rt, _dir, devnet, served) = support::start_with(config, keys - 1);
        let src = devnet.chain(SRC).expect("source").provider();
        let usdc = devnet.chain(SRC).expect("source").deployment.usdc;
        rt.block_on(support::approve_permit2(&src, usdc, USER));
        if keys > 1 {
            rt.block_on(wait_enrolled(&devnet, keys - 1));
        }
        let client = reqwest::Client::new();
        let nonce = Cell::new(1u64 << 41);
        let bodies = |n: usize| -> Vec<serde_json::Value> {
            (0..n)
                .map(|_| {
                    let k = nonce.get();
                    nonce.set(k + 1);
                    support::permit_body(&devnet, (SRC, DST), (USER, AMOUNT), k, Some("floatlane"))
                })
                .collect()
        };
        // warm-up: one route end to end
        rt.block_on(support::run_routes(
            &client,
            &served.base,
            &bodies(1),
            BATCH_TIMEOUT,
        ));
        let times = RefCell::new(Vec::new());
        group.bench_function(format!("keys/{keys}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let batch = bodies(batch());
                    let started = Instant::now();
                    rt.block_on(support::run_routes(
                        &client,
                        &served.base,
                        &batch,
                        BATCH_TIMEOUT,
                    ));
                    total += started.elapsed();
                    times.borrow_mut().push(started.elapsed());
                }
                total
            })
        });
        let times = times.into_inner();
        let per_sec = (times.len() * batch()) as f64 / times.iter().sum::<Duration>().as_secs_f64();
        summary.push(format!("{keys} keys {per_sec:.1} routes/s"));
        drop(served);
        devnet.stop();
    }
    group.finish();
    println!("key_pool summary: {}", summary.join(", "));
}

/// Waits until the relayer's account on both chains has the first `n`
/// pool keys registered (the host enrols them at start).
async fn wait_enrolled(devnet: &relay_devnet::Devnet, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    for chain in [SRC, DST] {
        let c = devnet.chain(chain).expect("chain");
        let account = relay_devnet::contracts::RelayerAccount::new(devnet.relayer, c.provider());
        for i in 0..n {
            let who = keys::relayer_pool(i).address();
            loop {
                let code = c
                    .provider()
                    .get_code_at(devnet.relayer)
                    .await
                    .expect("code");
                if !code.is_empty() && account.isExecutor(who).call().await.unwrap_or(false) {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "pool key {who} not enrolled on {chain}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

criterion_group!(benches, key_pool);
criterion_main!(benches);
