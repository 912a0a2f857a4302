//! Route primitives on the devnet (spec §2.12, §4.4): a batch of 20 legs
//! is planned leg by leg (21 legs, or a leg without `toAddress`, refused
//! naming the field); a schedule every 10 s with count 3 runs three times
//! simulated and completes, moving nothing; with the gate on and
//! `live:true` a schedule moves real tokens, and without either nothing
//! moves; a conditional `timeAfter` fires after its time and not before; a
//! price condition fires only while it holds; the owner's DELETE cancels.

use crate::common::{self, get, post, serve, serve_at, until_terminal, usdc_balance, Running};
use alloy::primitives::{address, Address, U256};
use relay_devnet::{Devnet, DevnetConfig};
use relay_host::devnet::DEVNET_OWNER_TOKEN;
use relay_types::{Clock as _, ManualClock, SharedClock, SystemClock};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const PAYEE: Address = address!("0x00000000000000000000000000000000000Ca5e1");

fn owner() -> String {
    format!("Bearer {DEVNET_OWNER_TOKEN}")
}

fn route(amount: u64, to: Address) -> Value {
    json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
           "amount": amount.to_string(), "toAddress": to})
}

/// A devnet and a host whose watcher ticks every 200 ms; `live` is the gate.
async fn up(live: bool) -> (Devnet, tempfile::TempDir, Running) {
    up_at(live, None).await
}

/// Like [`up`]; with a clock, the host reads time from it (a test moves
/// a `ManualClock` to a run's time instead of waiting for it).
async fn up_at(live: bool, clock: Option<SharedClock>) -> (Devnet, tempfile::TempDir, Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tweak = |c: &mut relay_config::HostConfig| {
        c.primitives.tick_interval_ms = 200;
        c.primitives.live = live;
    };
    let h = match clock {
        Some(clock) => serve_at(&devnet, dir.path(), clock, tweak).await,
        None => serve(&devnet, dir.path(), tweak).await,
    };
    (devnet, dir, h)
}

/// POSTs `body` (as the owner when `as_owner`); status and JSON body.
async fn create(h: &Running, path: &str, body: &Value, as_owner: bool) -> (u16, Value) {
    let auth = owner();
    let headers: Vec<(&str, &str)> = match as_owner {
        true => vec![("authorization", auth.as_str())],
        false => vec![],
    };
    let (code, text) = post(&h.base, path, body, &headers).await;
    (
        code,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{code}: {text}")),
    )
}

/// DELETEs `path` as the owner (anyone else needs the record's
/// cancelToken: `ownership_attack.rs`).
async fn delete(h: &Running, path: &str) -> (u16, Value) {
    let req = crate::common::http()
        .delete(format!("{}{path}", h.base))
        .header("authorization", owner());
    let a = common::send(req).await;
    (a.status, a.body)
}

/// Polls `path` until its `status` is `want` (bounded by `secs`).
async fn until_status(h: &Running, path: &str, want: &str, secs: u64) -> Value {
    until(h, path, secs, |v| v["status"] == want).await
}

/// GETs `path` until `done` holds of its answer (the host's watcher works
/// on its own tick; `secs` bounds a hang).
async fn until(h: &Running, path: &str, secs: u64, done: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let (code, v) = get(&format!("{}{path}", h.base)).await;
        assert_eq!(code, 200, "{v}");
        if done(&v) {
            return v;
        }
        assert!(Instant::now() < end, "{path} never got there: {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn refused(code: u16, v: &Value, want: (u16, &str, &str)) {
    assert_eq!(
        (code, v["errorCode"].as_str(), v["field"].as_str()),
        (want.0, Some(want.1), Some(want.2)),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_of_twenty_legs_is_planned_and_bad_batches_are_refused_by_field() {
    let (devnet, _dir, h) = up(false).await;
    let legs: Vec<Value> = (0..20)
        .map(|i| route(1_000_000 + i * 1000, PAYEE))
        .collect();
    let (code, b) = create(&h, "/api/route/batch", &json!({"routes": legs}), false).await;
    assert_eq!(code, 200, "{b}");
    assert!(b["id"].as_str().unwrap().starts_with("batch_"), "{b}");
    assert_eq!(
        (b["status"].as_str(), b["live"].as_bool()),
        (Some("planned"), Some(false))
    );
    assert_eq!(b["legs"].as_array().unwrap().len(), 20);
    for (i, leg) in b["legs"].as_array().unwrap().iter().enumerate() {
        assert_eq!(leg["index"], i, "{leg}");
        assert_eq!(leg["route"], legs[i]);
        assert!(leg["plan"]["rail"].is_string(), "leg {i} planned: {leg}");
        let est: U256 = leg["plan"]["estOut"].as_str().unwrap().parse().unwrap();
        assert!(
            est > U256::ZERO && est < U256::from(1_000_000 + i * 1000),
            "{leg}"
        );
    }
    assert!(b["note"]
        .as_str()
        .unwrap()
        .contains("does not mean anything settled"));
    let (code, read) = get(&format!(
        "{}/api/route/batch/{}",
        h.base,
        b["id"].as_str().unwrap()
    ))
    .await;
    assert_eq!((code, &read), (200, &b));

    let mut too_many = legs.clone();
    too_many.push(route(1_000_000, PAYEE));
    let (code, e) = create(&h, "/api/route/batch", &json!({"routes": too_many}), false).await;
    refused(code, &e, (400, "INVALID_FIELD", "routes"));
    let mut no_to = legs[..5].to_vec();
    no_to[3].as_object_mut().unwrap().remove("toAddress");
    let (code, e) = create(&h, "/api/route/batch", &json!({"routes": no_to}), false).await;
    refused(code, &e, (400, "MISSING_FIELD", "routes[3].toAddress"));
    let mut bad_chain = legs[..2].to_vec();
    bad_chain[1]["toChain"] = json!(999_999);
    let (code, e) = create(&h, "/api/route/batch", &json!({"routes": bad_chain}), false).await;
    assert_eq!(
        (code, e["field"].as_str()),
        (400, Some("routes[1].toChain")),
        "{e}"
    );
    let live = json!({"routes": legs[..1], "live": true});
    let (code, e) = create(&h, "/api/route/batch", &live, false).await;
    refused(code, &e, (401, "OPERATOR_AUTH_REQUIRED", "live"));
    let (code, e) = get(&format!("{}/api/route/batch/batch_nope", h.base)).await;
    assert_eq!(
        (code, e["errorCode"].as_str()),
        (404, Some("PRIMITIVE_NOT_FOUND")),
        "{e}"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_schedule_every_ten_seconds_runs_three_times_simulated_then_completes() {
    // The host's clock stands still: each run waits for the test to move
    // it to the run's time, so the runs are exactly ten seconds apart.
    let clock = ManualClock::at(SystemClock.now_ms());
    let (devnet, _dir, h) = up_at(false, Some(clock.clone())).await;
    let before = usdc_balance(&devnet, DST, PAYEE).await;
    // live:true with the owner's credential, but the host's gate is off.
    let body =
        json!({"route": route(2_000_000, PAYEE), "everySeconds": 10, "count": 3, "live": true});
    let (code, s) = create(&h, "/api/route/schedule", &body, true).await;
    assert_eq!(code, 200, "{s}");
    let id = s["id"].as_str().unwrap();
    assert!(id.starts_with("sched_"), "{s}");
    assert_eq!(
        (s["status"].as_str(), s["active"].as_bool()),
        (Some("active"), Some(true))
    );
    assert_eq!(
        (s["remaining"].as_u64(), s["count"].as_u64()),
        (Some(3), Some(3))
    );
    assert!(s["nextRunAt"].is_u64(), "{s}");

    let path = format!("/api/route/schedule/{id}");
    let mut next = s["nextRunAt"].as_u64().unwrap();
    for n in 1..=3 {
        clock.set((next * 1000).max(clock.now_ms()));
        // The run is recorded, then the record moves past it: wait for
        // both (a view between the two still shows the old nextRunAt).
        let ran = until(&h, &path, 40, |v| {
            let moved = n == 3 || v["nextRunAt"].as_u64() > Some(next);
            v["runs"].as_array().map(Vec::len) == Some(n) && moved
        })
        .await;
        next = ran["nextRunAt"].as_u64().unwrap_or_default();
    }
    let done = until_status(&h, &path, "completed", 40).await;
    assert_eq!(
        (done["active"].as_bool(), done["remaining"].as_u64()),
        (Some(false), Some(0))
    );
    assert!(done["nextRunAt"].is_null(), "{done}");
    let runs = done["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "{done}");
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r["seq"], i + 1);
        assert_eq!(r["simulated"], true, "{r}");
        assert_eq!(
            r["wouldExecute"]["idempotencyKey"],
            format!("{id}:{}", i + 1)
        );
        assert_eq!(
            r["wouldExecute"]["body"]["toAddress"],
            body["route"]["toAddress"]
        );
        assert_eq!(r["wouldExecute"]["body"]["mode"], "self");
    }
    let gaps: Vec<u64> = runs
        .windows(2)
        .map(|w| w[1]["at"].as_u64().unwrap() - w[0]["at"].as_u64().unwrap())
        .collect();
    assert_eq!(gaps, [10, 10], "runs 10 s apart");
    assert_eq!(
        usdc_balance(&devnet, DST, PAYEE).await,
        before,
        "nothing moved"
    );
    assert!(
        h.host_state
            .store
            .recent_routes(10)
            .await
            .unwrap()
            .is_empty(),
        "no route created"
    );

    // DELETE cancels; a completed schedule cannot be; bounds and bad ids.
    let (code, c) = create(&h, "/api/route/schedule", &json!({"route": route(1_000_000, PAYEE), "everySeconds": 60, "count": 5, "at": "2099-01-01T00:00:00Z"}), false).await;
    assert_eq!(code, 200, "{c}");
    let cid = c["id"].as_str().unwrap();
    assert_eq!(c["at"], 4_070_908_800u64);
    let (code, gone) = delete(&h, &format!("/api/route/schedule/{cid}")).await;
    assert_eq!(
        (code, gone),
        (200, json!({"id": cid, "status": "cancelled"}))
    );
    let (_, c) = get(&format!("{}/api/route/schedule/{cid}", h.base)).await;
    assert_eq!(
        (c["status"].as_str(), c["active"].as_bool()),
        (Some("cancelled"), Some(false))
    );
    let (code, e) = delete(&h, &format!("/api/route/schedule/{id}")).await;
    assert_eq!(
        (code, e["errorCode"].as_str()),
        (409, Some("PRIMITIVE_FINISHED")),
        "{e}"
    );
    for bad in ["sched_nope", "cond_x"] {
        let (code, e) = get(&format!("{}/api/route/schedule/{bad}", h.base)).await;
        assert_eq!(code, 404, "{e}");
        assert!(e["error"].is_string(), "{e}");
        let (code, _) = delete(&h, &format!("/api/route/schedule/{bad}")).await;
        assert_eq!(code, 404);
    }
    for (b, want) in [
        (
            json!({"route": route(1, PAYEE), "everySeconds": 9, "count": 2}),
            (400, "INVALID_FIELD", "everySeconds"),
        ),
        (
            json!({"route": route(1, PAYEE), "everySeconds": 10, "count": 1001}),
            (400, "INVALID_FIELD", "count"),
        ),
        (
            json!({"route": route(1, PAYEE), "everySeconds": 10, "count": 0}),
            (400, "INVALID_FIELD", "count"),
        ),
        (json!({"everySeconds": 10}), (400, "MISSING_FIELD", "route")),
        (
            json!({"route": {"fromChain": SRC, "toChain": DST, "amount": "1"}}),
            (400, "MISSING_FIELD", "route.toAddress"),
        ),
        (
            json!({"route": route(1, PAYEE), "live": true}),
            (401, "OPERATOR_AUTH_REQUIRED", "live"),
        ),
        (
            json!({"route": route(1, PAYEE), "live": true, "authority": "session"}),
            (400, "AUTHORITY_UNSUPPORTED", "authority"),
        ),
    ] {
        let (code, e) = create(&h, "/api/route/schedule", &b, false).await;
        refused(code, &e, want);
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_gate_on_a_live_schedule_moves_real_tokens_and_a_simulated_one_nothing() {
    let (devnet, _dir, h) = up(true).await;
    let other: Address = address!("0x00000000000000000000000000000000000Ca5e2");
    let (paid0, other0) = (
        usdc_balance(&devnet, DST, PAYEE).await,
        usdc_balance(&devnet, DST, other).await,
    );
    let live =
        json!({"route": route(3_000_000, PAYEE), "everySeconds": 10, "count": 2, "live": true});
    let (code, s) = create(&h, "/api/route/schedule", &live, true).await;
    assert_eq!(code, 200, "{s}");
    let sim = json!({"route": route(3_000_000, other), "everySeconds": 10, "count": 2});
    let (code, quiet) = create(&h, "/api/route/schedule", &sim, false).await;
    assert_eq!(code, 200, "{quiet}");

    let id = s["id"].as_str().unwrap();
    let done = until_status(&h, &format!("/api/route/schedule/{id}"), "completed", 60).await;
    let mut delivered = U256::ZERO;
    for r in done["runs"].as_array().unwrap() {
        assert_eq!(
            (r["simulated"].as_bool(), r["ok"].as_bool()),
            (Some(false), Some(true)),
            "{r}"
        );
        let route_id = r["routeId"].as_str().unwrap();
        let end = until_terminal(&h.base, route_id).await;
        assert_eq!(end["status"], "DONE", "{end}");
        delivered += end["to"]["estimated"]
            .as_str()
            .unwrap()
            .parse::<U256>()
            .unwrap();
    }
    assert_eq!(done["runs"].as_array().unwrap().len(), 2);
    assert!(delivered > U256::ZERO);
    assert_eq!(
        usdc_balance(&devnet, DST, PAYEE).await - paid0,
        delivered,
        "real tokens moved"
    );

    let q = until_status(
        &h,
        &format!("/api/route/schedule/{}", quiet["id"].as_str().unwrap()),
        "completed",
        30,
    )
    .await;
    assert!(
        q["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["simulated"] == true),
        "{q}"
    );
    assert_eq!(
        usdc_balance(&devnet, DST, other).await,
        other0,
        "live:false moved nothing"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn conditionals_fire_only_once_their_condition_holds_and_delete_disarms() {
    let (devnet, _dir, h) = up(false).await;
    let now = SystemClock.now_ms() / 1000;
    let at = now + 3;
    let body = json!({"route": route(1_000_000, PAYEE), "when": {"type": "timeAfter", "at": at}});
    let (code, c) = create(&h, "/api/route/conditional", &body, false).await;
    assert_eq!(code, 200, "{c}");
    let id = c["id"].as_str().unwrap();
    assert!(id.starts_with("cond_"), "{c}");
    assert_eq!(c["status"], "armed");
    let path = format!("/api/route/conditional/{id}");
    let fired = until_status(&h, &path, "executed", 20).await;
    let run = &fired["runs"][0];
    assert_eq!(
        (run["event"].as_str(), run["simulated"].as_bool()),
        (Some("triggered"), Some(true)),
        "{fired}"
    );
    assert!(
        run["at"].as_u64().unwrap() >= at,
        "not before its time: {fired}"
    );

    // The configured ETH/USD price (3000): below 1,000,000 holds at once,
    // above 1,000,000 never does.
    let cond = |kind: &str| json!({"route": route(1_000_000, PAYEE), "when": {"type": kind, "asset": "ETH/USD", "value": "1000000"}});
    let (_, below) = create(&h, "/api/route/conditional", &cond("priceBelow"), false).await;
    let (_, above) = create(&h, "/api/route/conditional", &cond("priceAbove"), false).await;
    let b = until_status(
        &h,
        &format!("/api/route/conditional/{}", below["id"].as_str().unwrap()),
        "executed",
        10,
    )
    .await;
    assert!(
        b["runs"][0]["observed"]
            .as_str()
            .unwrap()
            .starts_with("ETH/USD "),
        "{b}"
    );
    let above_path = format!("/api/route/conditional/{}", above["id"].as_str().unwrap());
    let (_, a) = get(&format!("{}{above_path}", h.base)).await;
    assert_eq!(
        (a["status"].as_str(), a["runs"].as_array().map(Vec::len)),
        (Some("armed"), Some(0)),
        "{a}"
    );
    let (code, gone) = delete(&h, &above_path).await;
    assert_eq!((code, gone["status"].as_str()), (200, Some("cancelled")));
    let (_, a) = get(&format!("{}{above_path}", h.base)).await;
    assert_eq!(a["status"], "cancelled");
    let (code, e) = delete(&h, &path).await;
    assert_eq!(
        (code, e["errorCode"].as_str()),
        (409, Some("PRIMITIVE_FINISHED")),
        "{e}"
    );
    for (w, field) in [
        (
            json!({"type": "priceBelow", "value": "1"}),
            ("MISSING_FIELD", "when.asset"),
        ),
        (
            json!({"type": "priceBelow", "asset": "ETH/USD", "value": "1e3"}),
            ("INVALID_FIELD", "when.value"),
        ),
        (
            json!({"type": "timeAfter", "at": "later"}),
            ("INVALID_FIELD", "when.at"),
        ),
        (json!({"type": "never"}), ("INVALID_FIELD", "when.type")),
    ] {
        let (code, e) = create(
            &h,
            "/api/route/conditional",
            &json!({"route": route(1, PAYEE), "when": w}),
            false,
        )
        .await;
        refused(code, &e, (400, field.0, field.1));
    }
    devnet.stop();
}

/// The pid of the replica holding `id`'s lease now (its lease owner is
/// `w-<pid>-…`), if one does.
async fn lease_holder(pool: &sqlx::AnyPool, id: &str) -> Option<u32> {
    let now = SystemClock.now_ms() as i64;
    let row: Option<(Option<String>,)> =
        sqlx::query_as("SELECT lease_owner FROM primitives WHERE id = $1 AND lease_until_ms > $2")
            .bind(id)
            .bind(now)
            .fetch_optional(pool)
            .await
            .unwrap();
    row?.0?.split('-').nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_postgres_run_each_live_run_once_across_a_kill_9() {
    use sha2::{Digest, Sha256};
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    let db = relay_fixtures::postgres_database();
    let owner_hash = hex::encode(Sha256::digest(DEVNET_OWNER_TOKEN.as_bytes()));
    let env = [
        ("PRIMITIVES_LIVE", "1"),
        ("RELAY_OWNER_TOKEN_SHA256", owner_hash.as_str()),
    ];
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut replicas = Vec::new();
    for d in &dirs {
        let port = common::free_port();
        common::write_host_config(&devnet, &sims, d.path(), port, |c| {
            c.database_url = Some(db.clone());
            c.primitives.tick_interval_ms = 100;
            c.primitives.lease_ms = 3_000;
            c.execution.route_lease_ms = 3_000;
            c.execution.resume_interval_ms = 500;
            c.execution.idempotency_stale_ms = 3_000;
        });
        let child = common::spawn_host_with(d.path(), &env);
        let base = format!("http://127.0.0.1:{port}");
        common::wait_ready(&base).await;
        replicas.push((child, base));
    }
    let paid0 = usdc_balance(&devnet, DST, PAYEE).await;
    let body =
        json!({"route": route(2_000_000, PAYEE), "everySeconds": 10, "count": 3, "live": true});
    let (code, text) = post(
        &replicas[0].1,
        "/api/route/schedule",
        &body,
        &[("authorization", &owner())],
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let s: Value = serde_json::from_str(&text).unwrap();
    let id = s["id"].as_str().unwrap().to_string();

    // kill -9 whichever replica holds the schedule while a run is under way
    let store = relay_store::Store::connect(&db).await.unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    let holder = loop {
        if let Some(pid) = lease_holder(store.pool(), &id).await {
            break replicas.iter().position(|(c, _)| c.id() == pid);
        }
        assert!(Instant::now() < end, "no replica ever held {id}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // a little later (0 to 150 ms), so the kill lands anywhere in the run
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let after = u64::from(nanos % 150);
    tokio::time::sleep(Duration::from_millis(after)).await;
    let victim = holder.unwrap_or(0);
    eprintln!(
        "kill -9 replica {victim} {after} ms into its run (held it: {})",
        holder.is_some()
    );
    replicas[victim].0.kill().unwrap();
    replicas[victim].0.wait().unwrap();
    let survivor = replicas[1 - victim].1.clone();

    let end = Instant::now() + Duration::from_secs(120);
    let done = loop {
        let (code, v) = get(&format!("{survivor}/api/route/schedule/{id}")).await;
        assert_eq!(code, 200, "{v}");
        if v["status"] == "completed" {
            break v;
        }
        assert!(Instant::now() < end, "never completed: {v}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let runs = done["runs"].as_array().unwrap();
    let seqs: Vec<u64> = runs.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3], "each run once: {done}");
    let mut ids: Vec<&str> = runs
        .iter()
        .map(|r| r["routeId"].as_str().unwrap())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), 3, "three routes: {done}");
    let mut delivered = U256::ZERO;
    for r in runs {
        assert_eq!(
            (r["simulated"].as_bool(), r["ok"].as_bool()),
            (Some(false), Some(true)),
            "{r}"
        );
        let end = until_terminal(&survivor, r["routeId"].as_str().unwrap()).await;
        assert_eq!(end["status"], "DONE", "{end}");
        delivered += end["to"]["estimated"]
            .as_str()
            .unwrap()
            .parse::<U256>()
            .unwrap();
    }
    let routes = store.recent_routes(100).await.unwrap();
    assert_eq!(routes.len(), 3, "no route twice: {routes:?}");
    assert_eq!(
        usdc_balance(&devnet, DST, PAYEE).await - paid0,
        delivered,
        "paid once each"
    );
    for (mut c, _) in replicas {
        let _ = c.kill();
        let _ = c.wait();
    }
    devnet.stop();
}

/// Moves the devnet's ETH/USD feed on both chains to `usd` and waits until
/// the host's price book reads it.
async fn move_eth(devnet: &Devnet, h: &Running, usd: i64) {
    use alloy::primitives::I256;
    let answer = usd * 100_000_000;
    for chain in [SRC, DST] {
        devnet
            .set_price(chain, "ETH/USD", I256::unchecked_from(answer))
            .await
            .unwrap();
    }
    let want = u64::try_from(usd).unwrap() * 1_000_000;
    common::wait_for(&format!("ETH/USD read as {usd}"), async || {
        h.host_state.prices.usd_e6("ETH/USD").ok() == Some(want)
    })
    .await;
}

/// The watcher looks at the conditional at `path` twice after now (its
/// lease released with the look's time as the next look, `next_ms`), the
/// price book already reading the price the test set: it stays `armed`
/// with no runs. Looks, not a time window, so a loaded machine that ticks
/// late still proves the condition was evaluated.
async fn stays_armed(h: &Running, path: &str) {
    use relay_store::PrimitiveStore;
    let id = path.rsplit('/').next().unwrap();
    let mut since = h.host_state.clock.now_ms();
    for look in 1..=2 {
        let mut seen = 0;
        common::wait_up_to(&format!("look {look} at {id}"), LOOKS_WITHIN, async || {
            let row = h.host_state.store.primitive(id).await.unwrap().unwrap();
            seen = row.next_ms.unwrap_or(0);
            seen > since
        })
        .await;
        since = seen;
    }
    let (code, v) = get(&format!("{}{path}", h.base)).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        (v["status"].as_str(), v["runs"].as_array().map(Vec::len)),
        (Some("armed"), Some(0)),
        "{path} fired early: {v}"
    );
}

/// How long two watcher looks may take on a loaded machine.
const LOOKS_WITHIN: Duration = Duration::from_secs(60);

/// `path` fired: executed, one simulated `triggered` run that observed
/// ETH/USD at `usd`.
async fn fired(h: &Running, path: &str, usd: &str) {
    let v = until_status(h, path, "executed", 20).await;
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{v}");
    assert_eq!(
        (runs[0]["event"].as_str(), runs[0]["simulated"].as_bool()),
        (Some("triggered"), Some(true)),
        "{v}"
    );
    assert_eq!(runs[0]["observed"], format!("ETH/USD {usd}"), "{v}");
    assert_eq!(runs[0]["wouldExecute"]["body"]["mode"], "self", "{v}");
}

#[tokio::test(flavor = "multi_thread")]
async fn price_conditionals_wait_for_the_devnet_feed_to_cross_their_threshold() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.primitives.tick_interval_ms = 200;
        c.quote.feed_refresh_ms = 200;
    })
    .await;
    move_eth(&devnet, &h, 3000).await;
    let cond = |kind: &str, usd: &str| json!({"route": route(1_000_000, PAYEE), "when": {"type": kind, "asset": "ETH/USD", "value": usd}});
    let mut paths = Vec::new();
    for (kind, usd) in [("priceBelow", "2500"), ("priceAbove", "3500")] {
        let (code, c) = create(&h, "/api/route/conditional", &cond(kind, usd), false).await;
        assert_eq!((code, c["status"].as_str()), (200, Some("armed")), "{c}");
        paths.push(format!(
            "/api/route/conditional/{}",
            c["id"].as_str().unwrap()
        ));
    }
    let (below, above) = (&paths[0], &paths[1]);
    // ETH/USD at 3000: neither holds over several ticks.
    stays_armed(&h, below).await;
    stays_armed(&h, above).await;

    move_eth(&devnet, &h, 2000).await;
    fired(&h, below, "2000").await;
    stays_armed(&h, above).await;

    move_eth(&devnet, &h, 4000).await;
    fired(&h, above, "4000").await;
    let (_, b) = get(&format!("{}{below}", h.base)).await;
    assert_eq!(
        b["runs"].as_array().map(Vec::len),
        Some(1),
        "fired once: {b}"
    );
    devnet.stop();
}

/// Plans a live two-leg batch (as the owner) paying `to[0]` and `to[1]`.
async fn two_legs(h: &Running, to: [Address; 2]) -> (String, Value) {
    let body = json!({"routes": [route(2_000_000, to[0]), route(3_000_000, to[1])], "live": true});
    let (code, b) = create(h, "/api/route/batch", &body, true).await;
    assert_eq!((code, b["status"].as_str()), (200, Some("planned")), "{b}");
    let id = b["id"].as_str().unwrap().to_string();
    (format!("/api/route/batch/{id}/run"), b)
}

/// The two recipients of a batch and their USDC balances on the
/// destination before it runs.
async fn two_payees(devnet: &Devnet) -> ([Address; 2], [U256; 2]) {
    let to = [
        PAYEE,
        address!("0x00000000000000000000000000000000000Ca5e3"),
    ];
    let before = [
        usdc_balance(devnet, DST, to[0]).await,
        usdc_balance(devnet, DST, to[1]).await,
    ];
    (to, before)
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_gate_on_the_owner_runs_a_planned_batch_once_and_each_leg_pays() {
    let (devnet, _dir, h) = up(true).await;
    let (to, before) = two_payees(&devnet).await;
    let (run, planned) = two_legs(&h, to).await;
    let (code, e) = create(&h, &run, &json!({}), false).await;
    assert_eq!(
        (code, e["errorCode"].as_str()),
        (401, Some("OPERATOR_AUTH_REQUIRED")),
        "{e}"
    );

    let auth = owner();
    let keyed = [
        ("authorization", auth.as_str()),
        ("x-idempotency-key", "pay-1"),
    ];
    let (code, text) = post(&h.base, &run, &json!({}), &keyed).await;
    let b: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (code, b["status"].as_str()),
        (200, Some("completed")),
        "{b}"
    );
    assert_eq!(b["legs"], planned["legs"]);
    let runs = b["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{b}");
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r["index"], i, "{r}");
        assert_eq!(
            (r["status"].as_str(), r["simulated"].as_bool()),
            (Some("executed"), Some(false)),
            "{r}"
        );
        assert_eq!(
            r["key"],
            format!("{}:{}", planned["id"].as_str().unwrap(), i + 1)
        );
    }
    assert_ne!(runs[0]["routeId"], runs[1]["routeId"], "a route per leg");
    for (i, r) in runs.iter().enumerate() {
        let end = until_terminal(&h.base, r["routeId"].as_str().unwrap()).await;
        assert_eq!(end["status"], "DONE", "{end}");
        let got: U256 = end["to"]["estimated"].as_str().unwrap().parse().unwrap();
        assert!(got > U256::ZERO, "{end}");
        assert_eq!(
            usdc_balance(&devnet, DST, to[i]).await - before[i],
            got,
            "leg {i} paid its recipient"
        );
    }
    let (_, read) = get(&format!(
        "{}/api/route/batch/{}",
        h.base,
        planned["id"].as_str().unwrap()
    ))
    .await;
    assert_eq!(read, b);
    let (code, text) = post(&h.base, &run, &json!({}), &keyed).await;
    assert_eq!(code, 200, "the same key answers the run: {text}");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), b);

    let (code, e) = create(&h, &run, &json!({}), true).await;
    assert_eq!(
        (code, e["errorCode"].as_str()),
        (409, Some("PRIMITIVE_FINISHED")),
        "a batch runs once: {e}"
    );
    let (code, e) = create(&h, "/api/route/batch/batch_nope/run", &json!({}), true).await;
    assert_eq!(
        (code, e["errorCode"].as_str()),
        (404, Some("PRIMITIVE_NOT_FOUND")),
        "{e}"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_gate_a_batch_run_is_simulated_and_moves_nothing() {
    let (devnet, _dir, h) = up(false).await;
    let (to, before) = two_payees(&devnet).await;
    let (run, planned) = two_legs(&h, to).await;
    let (code, b) = create(&h, &run, &json!({}), true).await;
    assert_eq!(
        (code, b["status"].as_str()),
        (200, Some("completed")),
        "{b}"
    );
    let id = planned["id"].as_str().unwrap();
    for (i, r) in b["runs"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            (
                r["index"].as_u64(),
                r["status"].as_str(),
                r["simulated"].as_bool()
            ),
            (Some(i as u64), Some("simulated"), Some(true)),
            "{r}"
        );
        assert!(r["routeId"].is_null(), "{r}");
        let would = &r["wouldExecute"];
        assert_eq!(would["idempotencyKey"], format!("{id}:{}", i + 1));
        assert_eq!(would["body"]["toAddress"], json!(to[i]));
        assert_eq!(would["body"]["mode"], "self");
    }
    for i in 0..2 {
        assert_eq!(
            usdc_balance(&devnet, DST, to[i]).await,
            before[i],
            "nothing moved"
        );
    }
    assert!(
        h.host_state
            .store
            .recent_routes(10)
            .await
            .unwrap()
            .is_empty(),
        "no route created"
    );
    let (code, _) = create(&h, &run, &json!({}), true).await;
    assert_eq!(code, 409);
    devnet.stop();
}
