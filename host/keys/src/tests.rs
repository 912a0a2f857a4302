use std::sync::Arc;

use relay_store::{KeyStore, Store};
use relay_types::clock::ManualClock;

use super::*;

/// Two o'clock, 1 Jan 2025, plus a little.
const T0: u64 = 1_735_696_800_000 + 12_345;

async fn store(dir: &tempfile::TempDir) -> Store {
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("k.db").display());
    Store::connect(&url).await.unwrap()
}

async fn service(store: &Store, clock: &Arc<ManualClock>) -> KeyService {
    KeyService::start(Arc::new(store.clone()), clock.clone())
        .await
        .unwrap()
}

#[test]
fn keys_are_ak_and_160_random_bits_in_hex() {
    let a = generate();
    let b = generate();
    assert_ne!(a, b);
    for k in [&a, &b] {
        assert!(k.starts_with("ak_"), "{k}");
        assert_eq!(k.len(), 3 + 40, "{k}");
        assert!(
            k[3..]
                .bytes()
                .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
            "{k}"
        );
        assert!(well_formed(k));
    }
    for bad in [
        "ak_",
        "ak_xyz",
        "AK_0123456789abcdef0123456789abcdef01234567",
        "ak_0123456789abcdef0123456789abcdef0123456",
        "ak_0123456789abcdef0123456789abcdef012345678",
        "ak_0123456789abcdef0123456789abcdef0123456g",
    ] {
        assert!(!well_formed(bad), "{bad}");
    }
}

#[test]
fn a_key_is_kept_as_its_sha256() {
    let h = KeyHash::of("abc");
    assert_eq!(
        h.hex(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(KeyHash::from_hex(&h.hex()), Some(h));
    assert_eq!(KeyHash::from_hex("abcd"), None);
    assert_eq!(KeyHash::from_hex("zz"), None);
}

#[test]
fn labels_are_short_printable_text() {
    assert_eq!(label(None).unwrap(), None);
    assert_eq!(label(Some("  ")).unwrap(), None);
    assert_eq!(label(Some(" ci bot ")).unwrap().as_deref(), Some("ci bot"));
    let emoji = "🔑".repeat(64);
    assert_eq!(label(Some(&emoji)).unwrap(), Some(emoji.clone()));
    for bad in [
        "x".repeat(65),
        "tab\there".into(),
        "line\nbreak".into(),
        "bidi\u{202E}txt".into(),
        "zero\u{200B}width".into(),
    ] {
        assert!(
            matches!(label(Some(&bad)), Err(KeyError::Label(_))),
            "{bad:?}"
        );
    }
}

#[tokio::test]
async fn created_keys_are_stored_hashed_and_revoked_keys_are_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let clock = ManualClock::at(T0);
    let keys = service(&store, &clock).await;
    let made = keys.create(Some("dashboard")).await.unwrap();
    assert_eq!(made.created, T0);
    assert_eq!(made.label.as_deref(), Some("dashboard"));
    assert!(made.note.contains("Shown once"));
    let row = store
        .key(&KeyHash::of(&made.key).hex())
        .await
        .unwrap()
        .unwrap();
    assert_ne!(row.key_hash, made.key);
    assert_eq!(row.prefix, made.key[..7]);
    assert!(keys.is_live(&made.key));
    assert!(!keys.is_live(&generate()));

    let me = keys.lookup(&made.key).await.unwrap();
    assert_eq!(
        (me.key.prefix.as_str(), me.status),
        (&made.key[..7], "active")
    );
    let gone = keys.revoke(&made.key).await.unwrap();
    assert_eq!(
        (gone.revoked, gone.prefix),
        (true, made.key[..7].to_string())
    );
    assert!(!keys.is_live(&made.key));
    assert!(matches!(
        keys.lookup(&made.key).await,
        Err(KeyError::Unknown)
    ));
    assert!(matches!(
        keys.revoke(&made.key).await,
        Err(KeyError::Unknown)
    ));
    assert!(matches!(
        keys.usage(&made.key).await,
        Err(KeyError::Unknown)
    ));
    assert!(matches!(
        keys.lookup("ak_nope").await,
        Err(KeyError::Unknown)
    ));
}

#[tokio::test]
async fn usage_sums_batches_per_window_and_is_pruned_after_a_day() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let clock = ManualClock::at(T0);
    let keys = service(&store, &clock).await;
    let key = keys.create(None).await.unwrap().key;
    let hash = keys.live_hash(&key).unwrap();
    // Two hours ago: only in the day.
    for _ in 0..3 {
        keys.record(hash, T0 - 7_200_000, "GET", "/api/old", 200);
    }
    for i in 0..25u64 {
        let (path, status) = if i % 5 == 0 {
            ("/api/route/status", 404)
        } else {
            ("/api/status", 200)
        };
        keys.record(hash, T0 + i, "GET", path, status);
    }
    assert_eq!(keys.flush().await.unwrap(), 28);
    keys.record(hash, T0 + 100, "POST", UNKNOWN_PATH, 404);
    assert_eq!(keys.flush().await.unwrap(), 1, "a second batch adds up");
    assert_eq!(keys.flush().await.unwrap(), 0);

    let u = keys.usage(&key).await.unwrap();
    assert_eq!((u.hour.total, u.hour.errors), (26, 6));
    assert_eq!((u.day.total, u.day.errors), (29, 6));
    let top: Vec<(&str, u64)> = u
        .day
        .top_paths
        .iter()
        .map(|p| (p.path.as_str(), p.count))
        .collect();
    assert_eq!(
        top,
        [
            ("/api/status", 20),
            ("/api/route/status", 5),
            ("/api/old", 3),
            (UNKNOWN_PATH, 1)
        ]
    );
    assert_eq!(u.recent.len(), 20);
    assert_eq!(
        (
            u.recent[0].ts,
            u.recent[0].method.as_str(),
            u.recent[0].status
        ),
        (T0 + 100, "POST", 404)
    );
    let ts: Vec<u64> = u.recent.iter().map(|r| r.ts).collect();
    let expected: Vec<u64> = std::iter::once(T0 + 100)
        .chain((6..25).rev().map(|i| T0 + i))
        .collect();
    assert_eq!(ts, expected, "newest first");

    clock.advance(3_600_000);
    let u = keys.usage(&key).await.unwrap();
    assert_eq!((u.hour.total, u.day.total), (0, 29));
    clock.advance(RETENTION_MS);
    assert!(keys.prune().await.unwrap() > 0);
    let u = keys.usage(&key).await.unwrap();
    assert_eq!((u.day.total, u.recent.len()), (0, 0));
}

#[tokio::test]
async fn another_replicas_creates_and_revokes_arrive_with_a_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let clock = ManualClock::at(T0);
    let a = service(&store, &clock).await;
    let b = service(&store, &clock).await;
    let key = a.create(None).await.unwrap().key;
    assert!(a.is_live(&key));
    assert!(!b.is_live(&key), "b has not looked yet");
    clock.advance(2_000);
    b.refresh().await.unwrap();
    assert!(b.is_live(&key));
    clock.advance(2_000);
    a.revoke(&key).await.unwrap();
    clock.advance(2_000);
    b.refresh().await.unwrap();
    assert!(!b.is_live(&key));
    // A replica that could not refresh for a while reloads everything.
    let other = a.create(None).await.unwrap().key;
    clock.advance(STALE_MS_FOR_TESTS);
    b.refresh().await.unwrap();
    assert!(b.is_live(&other));
    assert_eq!(b.live.len(), 1);
}

#[tokio::test]
async fn a_batch_the_store_refuses_is_kept_for_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let clock = ManualClock::at(T0);
    let keys = service(&store, &clock).await;
    let key = keys.create(None).await.unwrap().key;
    let hash = keys.live_hash(&key).unwrap();
    keys.record(hash, T0, "GET", "/api/status", 200);
    store.pool().close().await;
    assert!(keys.flush().await.is_err());
    let batch = keys.recorder.take();
    assert_eq!(batch.len(), 1, "kept");
}

const STALE_MS_FOR_TESTS: u64 = 31_000;
