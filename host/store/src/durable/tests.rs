//! The durable policies on in-memory SQLite with a [`ManualClock`]: no
//! sleeps, the clock moves when a test says so.

use super::*;
use crate::Store;
use relay_types::{Clock, ManualClock};
use std::sync::{
    atomic::{AtomicU32, Ordering},
    Arc,
};

/// A store on a fresh in-memory database (one the pool's connections
/// share) at `clock`, with a scratch table carrying lease columns.
async fn store(clock: Arc<ManualClock>) -> Store {
    static DB: AtomicU32 = AtomicU32::new(0);
    let n = DB.fetch_add(1, Ordering::Relaxed);
    let url = format!("sqlite:file:durable-{n}?mode=memory&cache=shared");
    let store = Store::connect(&url).await.expect("store").with_clock(clock);
    sqlx::query(
        "CREATE TABLE jobs (id TEXT PRIMARY KEY, state TEXT NOT NULL, holder TEXT, \
         until_ms BIGINT NOT NULL DEFAULT 0, created_ms BIGINT NOT NULL)",
    )
    .execute(store.pool())
    .await
    .expect("table");
    for (i, (id, state)) in [("j1", "open"), ("j2", "done"), ("j3", "open")]
        .iter()
        .enumerate()
    {
        sqlx::query("INSERT INTO jobs (id, state, created_ms) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(state)
            .bind(i as i64)
            .execute(store.pool())
            .await
            .expect("row");
    }
    store
}

const JOBS: Lease<'static> = Lease::new("jobs", "until_ms")
    .held_in("holder")
    .when("state = 'open'");

#[tokio::test]
async fn a_lease_is_taken_renewed_lapses_exactly_at_expiry_and_is_taken_over() {
    let clock = ManualClock::at(1_000);
    let s = store(clock.clone()).await;
    let at = |ttl: u64| (clock.now_ms(), clock.now_ms() + ttl);
    assert!(JOBS.claim(&s, "j1", Some("a"), at(100)).await.unwrap());
    assert!(
        !JOBS.claim(&s, "j1", Some("b"), at(100)).await.unwrap(),
        "live"
    );
    clock.advance(50);
    assert!(JOBS.renew(&s, "j1", Some("a"), 1_200).await.unwrap());
    clock.set(1_199);
    assert!(
        !JOBS.claim(&s, "j1", Some("b"), at(100)).await.unwrap(),
        "renewed"
    );
    clock.set(1_200);
    assert!(
        JOBS.claim(&s, "j1", Some("b"), at(100)).await.unwrap(),
        "lapsed at its end"
    );
    assert!(
        !JOBS.renew(&s, "j1", Some("a"), 9_999).await.unwrap(),
        "taken over"
    );
    assert!(!JOBS.release(&s, "j1", Some("a")).await.unwrap());
    assert!(JOBS.release(&s, "j1", Some("b")).await.unwrap());
    assert!(
        JOBS.claim(&s, "j1", Some("c"), at(100)).await.unwrap(),
        "released"
    );
}

#[tokio::test]
async fn acquire_renews_for_the_holder_and_refuses_anyone_else() {
    let clock = ManualClock::at(1_000);
    let s = store(clock.clone()).await;
    assert!(JOBS.acquire(&s, "j1", "a", (1_000, 1_100)).await.unwrap());
    assert!(JOBS.acquire(&s, "j1", "a", (1_050, 1_150)).await.unwrap());
    assert!(!JOBS.acquire(&s, "j1", "b", (1_149, 1_249)).await.unwrap());
    assert!(JOBS.acquire(&s, "j1", "b", (1_150, 1_250)).await.unwrap());
}

#[tokio::test]
async fn only_open_rows_are_claimed_oldest_first() {
    let clock = ManualClock::at(1_000);
    let s = store(clock).await;
    assert!(!JOBS
        .claim(&s, "j2", Some("a"), (1_000, 2_000))
        .await
        .unwrap());
    let ids = JOBS.lapsed_ids(&s, 1_000, "created_ms", 10).await.unwrap();
    assert_eq!(ids, ["j1", "j3"]);
    let next = |owner| JOBS.claim_next(&s, Some(owner), (1_000, 2_000), "created_ms");
    assert_eq!(next("a").await.unwrap().as_deref(), Some("j1"));
    assert_eq!(next("b").await.unwrap().as_deref(), Some("j3"));
    assert_eq!(next("c").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_twenty_concurrent_claims_one_wins() {
    let s = store(ManualClock::at(1_000)).await;
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let me = format!("r{i}");
                JOBS.claim(&s, "j1", Some(&me), (1_000, 2_000)).await
            })
        })
        .collect();
    let mut won = 0;
    for t in tasks {
        won += usize::from(t.await.expect("task").expect("claim"));
    }
    assert_eq!(won, 1);
}

fn answer(status: u16, body: &str) -> Result<(u16, String, String), String> {
    Ok((status, body.to_string(), body.to_string()))
}

#[tokio::test]
async fn a_repeat_replays_the_first_answer_and_other_bytes_are_refused() {
    let clock = ManualClock::at(1_000);
    let guard = Idempotency::new(store(clock).await, 60_000);
    let key = IdemKey::route("k1");
    let first = guard.once(&key, b"{\"a\":1}", || async { answer(201, "first") });
    assert!(matches!(first.await.unwrap(), Once::Ran(Ok(b)) if b == "first"));
    let again = guard.once(&key, b"{\"a\":1}", || async { answer(200, "second") });
    match again.await.unwrap() {
        Once::Seen(IdempotencyBegin::Replay { status, body }) => {
            assert_eq!((status, body.as_str()), (201, "first"));
        }
        other => panic!("{other:?}"),
    }
    // the same JSON with other bytes is another request
    let other = guard.once(&key, b"{ \"a\": 1 }", || async { answer(200, "x") });
    assert!(matches!(
        other.await.unwrap(),
        Once::Seen(IdempotencyBegin::Mismatch)
    ));
}

#[tokio::test]
async fn a_refused_request_gives_its_key_back() {
    let guard = Idempotency::new(store(ManualClock::at(1_000)).await, 60_000);
    let key = IdemKey::route("k2");
    let failed = guard.once(&key, b"body", || async {
        Err::<(u16, String, ()), _>("no")
    });
    assert!(matches!(failed.await.unwrap(), Once::Ran(Err("no"))));
    let retried = guard.once(&key, b"body", || async { answer(200, "ok") });
    assert!(matches!(retried.await.unwrap(), Once::Ran(Ok(_))));
}

#[tokio::test]
async fn an_unanswered_first_request_is_in_flight_until_it_goes_stale() {
    let clock = ManualClock::at(1_000);
    let guard = Idempotency::new(store(clock.clone()).await, 500);
    let key = IdemKey::route("k3");
    assert_eq!(
        guard.begin(&key, b"x").await.unwrap(),
        IdempotencyBegin::Fresh
    );
    clock.advance(499);
    let in_flight = IdempotencyBegin::InFlight {
        route: None,
        stale: false,
    };
    assert_eq!(guard.begin(&key, b"x").await.unwrap(), in_flight);
    clock.advance(1);
    // nothing was persisted under the dead request: the key is taken over
    assert_eq!(
        guard.begin(&key, b"x").await.unwrap(),
        IdempotencyBegin::Fresh
    );
}

#[tokio::test]
async fn scoped_keys_of_different_callers_never_collide() {
    let guard = Idempotency::new(store(ManualClock::at(1_000)).await, 60_000);
    let a = IdemKey::scoped("session", "ses_a", "k");
    let b = IdemKey::scoped("session", "ses_b", "k");
    assert_eq!(a.as_str(), "session:ses_a:k");
    assert_eq!(
        guard.begin(&a, b"1").await.unwrap(),
        IdempotencyBegin::Fresh
    );
    assert_eq!(
        guard.begin(&b, b"2").await.unwrap(),
        IdempotencyBegin::Fresh
    );
    assert_eq!(
        guard.begin(&IdemKey::route("k"), b"3").await.unwrap(),
        IdempotencyBegin::Fresh
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_twenty_concurrent_first_requests_one_runs() {
    let guard = Idempotency::new(store(ManualClock::at(1_000)).await, 60_000);
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let g = guard.clone();
            tokio::spawn(async move { g.begin(&IdemKey::route("k4"), b"same").await })
        })
        .collect();
    let mut fresh = 0;
    for t in tasks {
        let begun = t.await.expect("task").expect("begin");
        fresh += usize::from(begun == IdempotencyBegin::Fresh);
    }
    assert_eq!(fresh, 1);
}

#[test]
fn the_fingerprint_is_the_sha256_of_the_raw_bytes() {
    assert_eq!(
        fingerprint(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}
