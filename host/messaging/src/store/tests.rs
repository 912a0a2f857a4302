use super::*;
use relay_sealed::message::{seal, Recipient};
use relay_store::Store;

fn row(text: &str) -> Row {
    seal(&Recipient::generate().mailbox(), text, 0)
        .unwrap()
        .remove(0)
}

/// Rows wait for their slot, a slot is released once with its decoys and
/// numbers every waiting row after the last, and a replay stores nothing.
async fn rows_release_once_in_feed_order(s: Store) {
    let s = Messages::from(s);
    s.migrate(MIGRATIONS).await.unwrap();
    let (a, b, c) = (row("a"), row("b"), row("c"));
    assert!(s.insert_row(&a, 60_000).await.unwrap());
    assert!(!s.insert_row(&a, 120_000).await.unwrap(), "a replay");
    assert!(s.insert_row(&b, 60_000).await.unwrap());
    assert!(s.insert_row(&c, 120_000).await.unwrap());
    assert_eq!(s.pending(60_000, 4248).await.unwrap(), (2, 0));
    assert_eq!(
        s.feed(0, 10).await.unwrap(),
        vec![],
        "nothing before release"
    );

    let decoy = row("decoy");
    assert_eq!(
        s.release(60_000, std::slice::from_ref(&decoy))
            .await
            .unwrap(),
        Some(3)
    );
    assert_eq!(s.release(60_000, &[row("x")]).await.unwrap(), None, "once");
    let first = s.feed(0, 10).await.unwrap();
    assert_eq!(first.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
    let mut keys: Vec<_> = first
        .iter()
        .map(|r| r.row.ephemeral_pub_key.clone())
        .collect();
    keys.sort();
    let mut want = vec![
        a.ephemeral_pub_key,
        b.ephemeral_pub_key.clone(),
        decoy.ephemeral_pub_key,
    ];
    want.sort();
    assert_eq!(
        keys, want,
        "the slot's rows and its decoy, nothing of the next slot"
    );
    assert_eq!(first.iter().find(|r| r.row.ct == b.ct).unwrap().row, b);

    assert_eq!(
        s.release(180_000, &[]).await.unwrap(),
        Some(1),
        "a missed slot's rows ride the next"
    );
    assert_eq!(s.feed(3, 10).await.unwrap()[0].seq, 4);
    assert_eq!(s.feed(0, 2).await.unwrap().len(), 2);
    assert_eq!(s.feed_bounds().await.unwrap(), Some((1, 4)));
    assert_eq!(s.last_slot().await.unwrap(), Some(180_000));
    assert_eq!(s.prune(120_000).await.unwrap(), 3);
    assert_eq!(s.feed_bounds().await.unwrap(), Some((4, 4)));
}

/// An entry's number is taken once.
async fn witness_numbers_are_taken_once(s: Store) {
    let s = Messages::from(s);
    s.migrate(MIGRATIONS).await.unwrap();
    let e = WitnessRow {
        s: 1,
        kind: "mailbox".into(),
        body: "{}".into(),
        b: "00".into(),
        r: "11".into(),
        t: 5,
    };
    assert!(s.append_witness(&e).await.unwrap());
    let again = WitnessRow {
        body: "other".into(),
        ..e.clone()
    };
    assert!(!s.append_witness(&again).await.unwrap());
    assert_eq!(s.witness(1, 20).await.unwrap(), vec![e]);
    assert_eq!(s.witness(2, 20).await.unwrap(), vec![]);
}

#[tokio::test]
async fn messages_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("m.db").display());
    let store = Store::connect(&url).await.unwrap();
    rows_release_once_in_feed_order(store.clone()).await;
    witness_numbers_are_taken_once(store).await;
}

#[tokio::test]
async fn messages_on_postgres() {
    let store = Store::connect(&relay_fixtures::postgres_database())
        .await
        .unwrap();
    rows_release_once_in_feed_order(store.clone()).await;
    witness_numbers_are_taken_once(store).await;
}
