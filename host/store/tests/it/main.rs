//! The store on both backends: SQLite (a file) and Postgres (a fresh
//! database per test, shared by two "replicas"). Route changes are
//! versioned and carry their outbox event; claims are leases; idempotency
//! keys execute once under concurrency. No chain: these are the store's
//! own integration tests, on the real databases.

use relay_store::durable::{IdemKey, Idempotency};
use relay_store::{IdempotencyBegin, JournalEntry, Store, TxState};
use relay_types::route::{RouteRecord, RouteStatus};

fn route(id: &str) -> RouteRecord {
    RouteRecord::sample(id, 1_735_696_800_000)
}

async fn backends() -> Vec<(&'static str, String)> {
    let dir = tempfile::tempdir().unwrap().keep();
    vec![
        (
            "sqlite",
            format!("sqlite://{}?mode=rwc", dir.join("relay.db").display()),
        ),
        ("postgres", relay_fixtures::postgres_database()),
    ]
}

/// Two stores over one database, as two replicas hold it.
async fn replicas(url: &str) -> [Store; 2] {
    [
        Store::connect(url).await.unwrap(),
        Store::connect(url).await.unwrap(),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn route_changes_are_versioned_and_each_writes_its_event() {
    for (name, url) in backends().await {
        let store = Store::connect(&url).await.unwrap();
        let mut r = route("rt_versioned");
        store.insert_route(&r).await.unwrap();
        let (got, v) = store.get_route("rt_versioned").await.unwrap().unwrap();
        assert_eq!((got.clone(), v), (r.clone(), 1), "{name}");

        r.status = RouteStatus::Bridging;
        r.src_tx = Some("0xabc".into());
        assert_eq!(
            store.update_route(&r, 1, "status").await.unwrap(),
            Some(2),
            "{name}"
        );
        // A writer holding the old version loses.
        assert_eq!(
            store
                .update_route(&route("rt_versioned"), 1, "status")
                .await
                .unwrap(),
            None,
            "{name}"
        );
        r.status = RouteStatus::Done;
        r.dest_tx = Some("0xdef".into());
        assert_eq!(store.update_route(&r, 2, "done").await.unwrap(), Some(3));

        let events = store.outbox_of("rt_versioned").await.unwrap();
        let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
        assert_eq!(names, vec!["created", "status", "done"], "{name}");
        assert_eq!(events[2].payload["status"], "DONE");
        assert_eq!(events[2].payload["destTx"], "0xdef");
        assert_eq!(events[1].payload["srcTx"], "0xabc");
        assert_eq!(
            store
                .get_route("rt_versioned")
                .await
                .unwrap()
                .unwrap()
                .0
                .status,
            RouteStatus::Done
        );
        assert!(
            store.open_routes().await.unwrap().is_empty(),
            "{name}: a done route is not open"
        );
        assert!(store.get_route("rt_missing").await.unwrap().is_none());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn claims_are_leases_one_owner_at_a_time() {
    for (name, url) in backends().await {
        let [a, b] = replicas(&url).await;
        a.insert_route(&route("rt_claim")).await.unwrap();
        assert!(
            a.claim_route("rt_claim", "replica-a", 60_000)
                .await
                .unwrap(),
            "{name}"
        );
        assert!(
            !b.claim_route("rt_claim", "replica-b", 60_000)
                .await
                .unwrap(),
            "{name}"
        );
        assert!(
            a.claim_route("rt_claim", "replica-a", 60_000)
                .await
                .unwrap(),
            "renewal"
        );
        assert!(
            b.open_routes().await.unwrap().is_empty(),
            "claimed routes are not open"
        );
        a.release_route("rt_claim", "replica-a").await.unwrap();
        assert!(
            b.claim_route("rt_claim", "replica-b", 60_000)
                .await
                .unwrap(),
            "{name}"
        );
        // An expired lease is free for anyone.
        assert!(b.claim_route("rt_claim", "replica-b", 0).await.unwrap());
        let mut got = false;
        for _ in 0..100 {
            if a.claim_route("rt_claim", "replica-a", 60_000)
                .await
                .unwrap()
            {
                got = true;
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(got, "{name}: expired lease was not taken over");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_journal_records_each_side_effect_before_and_after() {
    for (name, url) in backends().await {
        let store = Store::connect(&url).await.unwrap();
        let mut e = JournalEntry {
            route_id: "rt_j".into(),
            step: 0,
            attempt: 0,
            chain: "8453".into(),
            nonce: Some(7),
            payload: "0x02f8…".into(),
            tx_hash: None,
            state: TxState::Planned,
            signer: Some("0xabc0000000000000000000000000000000000001".into()),
        };
        store.journal(&e).await.unwrap();
        e.tx_hash = Some("0xhash".into());
        e.state = TxState::Sent;
        store.journal(&e).await.unwrap();
        let mut replacement = e.clone();
        replacement.attempt = 1;
        replacement.state = TxState::Mined;
        store.journal(&replacement).await.unwrap();
        let j = store.journal_of("rt_j").await.unwrap();
        assert_eq!(j, vec![e, replacement], "{name}");
    }
}

/// The store's idempotency guard (requests unanswered for a minute are
/// stale).
fn guard(s: &Store) -> Idempotency {
    Idempotency::new(s.clone(), 60_000)
}

/// Begins `key` for the request bytes `body` with the stale limit
/// `stale_ms`.
/// Two executors that both planned one step (the first lost its lease
/// while it ran): the second's transaction is refused its slot, so only
/// the journaled one is broadcast; the holder still moves its own entry.
#[tokio::test(flavor = "multi_thread")]
async fn a_journal_slot_holds_one_transaction() {
    for (name, url) in backends().await {
        let [a, b] = replicas(&url).await;
        let planned = |hash: &str| JournalEntry {
            route_id: "rt_slot".into(),
            step: 1,
            attempt: 0,
            chain: "8453".into(),
            nonce: Some(3),
            payload: format!("0x{hash}"),
            tx_hash: Some(format!("0x{hash}")),
            state: TxState::Planned,
            signer: Some("0xabc0000000000000000000000000000000000001".into()),
        };
        let mine = planned("aa");
        a.journal(&mine).await.unwrap();
        let theirs = planned("bb");
        let refused = b.journal(&theirs).await;
        assert!(
            matches!(refused, Err(relay_store::StoreError::Conflict(_))),
            "{name}: {refused:?}"
        );
        let sent = JournalEntry {
            state: TxState::Sent,
            ..mine.clone()
        };
        b.journal(&sent).await.unwrap();
        assert_eq!(a.journal_of("rt_slot").await.unwrap(), vec![sent], "{name}");
    }
}

async fn begin(s: &Store, key: &str, body: &str, stale_ms: u64) -> IdempotencyBegin {
    Idempotency::new(s.clone(), stale_ms)
        .begin(&IdemKey::route(key), body.as_bytes())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idempotency_key_executes_once_across_replicas() {
    for (name, url) in backends().await {
        let replicas = replicas(&url).await;
        let tasks: Vec<_> = (0..16)
            .map(|i| {
                let s = replicas[i % 2].clone();
                tokio::spawn(async move { begin(&s, "key-1", "fp-1", 60_000).await })
            })
            .collect();
        let mut fresh = 0;
        for t in tasks {
            match t.await.unwrap() {
                IdempotencyBegin::Fresh => fresh += 1,
                other => assert_eq!(
                    other,
                    IdempotencyBegin::InFlight {
                        route: None,
                        stale: false
                    },
                    "{name}"
                ),
            }
        }
        assert_eq!(fresh, 1, "{name}: exactly one request executes");
        let s = &replicas[1];
        assert_eq!(
            begin(s, "key-1", "other body", 60_000).await,
            IdempotencyBegin::Mismatch
        );
        guard(&replicas[0])
            .complete(&IdemKey::route("key-1"), 200, "{\"id\":\"rt_1\"}")
            .await
            .unwrap();
        assert_eq!(
            begin(s, "key-1", "fp-1", 60_000).await,
            IdempotencyBegin::Replay {
                status: 200,
                body: "{\"id\":\"rt_1\"}".into()
            }
        );
        begin(s, "key-2", "fp", 60_000).await;
        guard(s).abandon(&IdemKey::route("key-2")).await.unwrap();
        assert_eq!(
            begin(s, "key-2", "fp", 60_000).await,
            IdempotencyBegin::Fresh,
            "{name}"
        );
        // A first request that died before creating a route: once stale,
        // the key is taken over.
        begin(s, "key-3", "fp", 60_000).await;
        assert_eq!(
            begin(s, "key-3", "fp", 0).await,
            IdempotencyBegin::Fresh,
            "{name}"
        );
        // One that created its route: a retry finds the route, never a second.
        begin(s, "key-4", "fp", 60_000).await;
        replicas[0]
            .insert_route_for_key(&route("rt_key4"), Some("key-4"))
            .await
            .unwrap();
        assert_eq!(
            begin(s, "key-4", "fp", 0).await,
            IdempotencyBegin::InFlight {
                route: Some("rt_key4".into()),
                stale: true
            },
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_writers_of_one_version_have_one_winner() {
    for (name, url) in backends().await {
        let [a, b] = replicas(&url).await;
        a.insert_route(&route("rt_race")).await.unwrap();
        let mut ra = route("rt_race");
        ra.status = RouteStatus::Bridging;
        let mut rb = ra.clone();
        rb.status = RouteStatus::Failed;
        let (x, y) = tokio::join!(
            a.update_route(&ra, 1, "status"),
            b.update_route(&rb, 1, "failed")
        );
        let wins = [x.unwrap(), y.unwrap()]
            .iter()
            .filter(|v| v.is_some())
            .count();
        assert_eq!(wins, 1, "{name}");
        assert_eq!(
            a.outbox_of("rt_race").await.unwrap().len(),
            2,
            "{name}: the loser wrote no event"
        );
    }
}

/// The next change `rx` hears of, within 10 s.
async fn heard(
    rx: &mut tokio::sync::broadcast::Receiver<relay_store::events::RouteChange>,
) -> relay_store::events::RouteChange {
    tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv())
        .await
        .expect("a change within 10 s")
        .expect("the channel is open")
}

/// Every change `rx` hears of until it is quiet for 500 ms.
async fn all_heard(
    rx: &mut tokio::sync::broadcast::Receiver<relay_store::events::RouteChange>,
) -> Vec<relay_store::events::RouteChange> {
    let mut seen = vec![];
    while let Ok(Ok(c)) =
        tokio::time::timeout(std::time::Duration::from_millis(500), rx.recv()).await
    {
        seen.push(c);
    }
    seen
}

#[tokio::test(flavor = "multi_thread")]
async fn route_changes_are_pushed_to_subscribers_on_every_replica() {
    use relay_store::events::RouteChange::{self, Resync};
    let pushed = || RouteChange::Route("rt_pushed".into());
    for (name, url) in backends().await {
        let pg = name == "postgres";
        let a = Store::connect(&url).await.unwrap();
        let mut on_a = a.route_events().subscribe();
        let b = Store::connect(&url).await.unwrap();
        let mut on_b = b.route_events().subscribe();
        if pg {
            // Each replica's listener says it listens with a resync.
            assert_eq!(heard(&mut on_a).await, Resync);
            assert_eq!(heard(&mut on_b).await, Resync);
        }
        let mut r = route("rt_pushed");
        a.insert_route(&r).await.unwrap();
        assert_eq!(heard(&mut on_a).await, pushed(), "{name}");
        r.status = RouteStatus::Bridging;
        b.update_route(&r, 1, "status").await.unwrap();
        assert_eq!(heard(&mut on_b).await, pushed(), "{name}");
        // A change another replica wrote reaches this one's subscribers
        // on Postgres (SQLite has one host), and a replica never hears its
        // own change twice.
        let (want_a, want_b) = if pg {
            (vec![pushed()], vec![pushed()])
        } else {
            (vec![], vec![])
        };
        assert_eq!(
            all_heard(&mut on_a).await,
            want_a,
            "{name}: B's change on A"
        );
        assert_eq!(
            all_heard(&mut on_b).await,
            want_b,
            "{name}: A's change on B"
        );
    }
}
