//! `kill -9` of the real `relay serve` process at random points during a
//! batch of permit2 executes on the float lane and an aggregator rail
//! (lifi, through its simulator), restarting it each time, as an operator's
//! supervisor would. The chains and the upstream simulators live on in the
//! test process. The client retries each request with its idempotency key
//! until it gets an answer, as the API tells clients to.
//!
//! After the last restart: every route is terminal and DONE, each permit
//! was pulled exactly once (the user's balance fell by exactly the batch),
//! each payout was made once (the user's destination balance rose by
//! exactly the routes' deliveries), no route was lost.

use crate::common;

use std::time::{Duration, Instant};

use alloy::primitives::U256;
use common::{get, permit_body, spawn_host, wait_ready};
use relay_devnet::{keys, Devnet};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const KILLS: u64 = 3;
const PER_ROUND: u64 = 6;
const ROUTES: u64 = KILLS * PER_ROUND;

/// A small deterministic generator; the seed is printed to replay a run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const AMOUNT: u64 = 20_000_000;

/// Route `i`'s request, signed once: a retry sends the very same bytes.
fn body(devnet: &Devnet, i: u64) -> Value {
    let mut b = permit_body(devnet, (SRC, DST), AMOUNT + i * 10_000, 9_000 + i);
    b["rail"] = json!(if i.is_multiple_of(2) {
        "floatlane"
    } else {
        "lifi"
    });
    b
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_during_a_batch_loses_nothing_and_pays_once() {
    let common::HostSetup {
        devnet,
        sims: _sims,
        dir,
        base,
    } = common::HostSetup::new((SRC, DST), |_| {}).await;
    let books = common::UsdcBooks::open(&devnet, (SRC, DST), keys::anvil_address(1)).await;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("crash_resume seed {seed}");
    let mut rng = Lcg(seed);
    rng.below(1); // mix the seed's low bits up
    let bodies: Vec<Value> = (0..ROUTES).map(|i| body(&devnet, i)).collect();

    // Each round: start the host, fire this round's routes concurrently,
    // kill -9 after a random delay while requests and routes are in flight.
    for round in 0..KILLS {
        let mut child = spawn_host(dir.path());
        wait_ready(&base).await;
        let batch: Vec<_> = (round * PER_ROUND..(round + 1) * PER_ROUND)
            .map(|i| {
                let (base, body) = (base.clone(), bodies[i as usize].clone());
                tokio::spawn(async move {
                    common::submit_keyed(&base, &body, &format!("crash-{i}")).await
                })
            })
            .collect();
        let after = 5 + rng.below(1_200);
        tokio::time::sleep(Duration::from_millis(after)).await;
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let mut answered = 0;
        for t in batch {
            answered += matches!(t.await, Ok(Some(_))) as usize;
        }
        eprintln!(
            "round {round}: kill -9 after {after} ms, {answered}/{PER_ROUND} requests answered"
        );
    }

    // The last start: retry every key until it answers; wait for the routes.
    let mut child = spawn_host(dir.path());
    wait_ready(&base).await;
    let mut ids = Vec::new();
    for i in 0..ROUTES {
        let key = format!("crash-{i}");
        let deadline = Instant::now() + Duration::from_secs(90);
        let id = loop {
            if let Some(id) = common::submit_keyed(&base, &bodies[i as usize], &key).await {
                break id;
            }
            assert!(Instant::now() < deadline, "{key} never answered");
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        ids.push(id);
    }
    let delivered = common::all_done(&base, &ids).await;
    let (_, st) = get(&format!("{base}/api/status")).await;
    assert_eq!(st["status"], "operational", "{st}");
    let amounts: u64 = (0..ROUTES).map(|i| AMOUNT + i * 10_000).sum();
    books
        .assert_moved(&devnet, U256::from(amounts), delivered)
        .await;
    child.kill().unwrap();
    child.wait().unwrap();
    devnet.stop();
}
