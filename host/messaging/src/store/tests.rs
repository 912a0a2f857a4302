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

/// A pass is spent once, with its row or not at all; counts stop at
/// their bounds, per caller and window, and twenty at once take no more.
async fn spends_and_counts_hold_their_bounds(s: Store) {
    let s = Messages::from(s);
    s.migrate(MIGRATIONS).await.unwrap();
    let (a, b) = (row("a"), row("b"));
    let nonce = format!("{:064x}", rand::random::<u128>());
    let spend = (nonce.as_str(), 9);
    assert_eq!(
        s.insert_row_spending(&a, 60_000, spend).await.unwrap(),
        Inserted::Stored
    );
    assert_eq!(
        s.insert_row_spending(&a, 60_000, ("ff", 9)).await.unwrap(),
        Inserted::Replayed
    );
    assert_eq!(
        s.insert_row_spending(&b, 60_000, spend).await.unwrap(),
        Inserted::PassSpent
    );
    assert!(
        s.insert_row(&b, 60_000).await.unwrap(),
        "b was not stored by the refused spend"
    );
    assert!(
        s.insert_row(&row("c"), 60_000).await.unwrap(),
        "nor was ff spent"
    );

    let caller = format!("{:032x}", rand::random::<u128>());
    let c = Count {
        counter: "claims",
        caller: &caller,
        window: 3,
    };
    assert_eq!(s.count(c, (1, 15), (5, 20)).await.unwrap(), Ok((1, 15)));
    assert_eq!(
        s.count(c, (1, 6), (5, 20)).await.unwrap(),
        Err(Over),
        "21 passes"
    );
    let tries = (0..20).map(|_| s.count(c, (1, 1), (5, 20)));
    let took = futures::future::join_all(tries).await;
    assert_eq!(
        took.iter().filter(|t| matches!(t, Ok(Ok(_)))).count(),
        4,
        "claims 2 to 5"
    );
    let next_day = Count { window: 4, ..c };
    assert_eq!(
        s.count(next_day, (1, 1), (5, 20)).await.unwrap(),
        Ok((1, 1))
    );
    s.prune_passes(10, 4, 0).await.unwrap();
    assert_eq!(
        s.count(c, (0, 0), (5, 20)).await.unwrap(),
        Ok((0, 0)),
        "day 3 dropped"
    );
    assert_eq!(
        s.count(next_day, (0, 0), (5, 20)).await.unwrap(),
        Ok((1, 1)),
        "day 4 kept"
    );
    assert_eq!(
        s.insert_row_spending(&row("d"), 60_000, spend)
            .await
            .unwrap(),
        Inserted::Stored,
        "a nonce of a key that no longer redeems is dropped (its token is refused before)"
    );
}

#[tokio::test]
async fn messages_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("m.db").display());
    let store = Store::connect(&url).await.unwrap();
    rows_release_once_in_feed_order(store.clone()).await;
    spends_and_counts_hold_their_bounds(store.clone()).await;
    witness_numbers_are_taken_once(store).await;
}

#[tokio::test]
async fn messages_on_postgres() {
    let store = Store::connect(&relay_fixtures::postgres_database())
        .await
        .unwrap();
    rows_release_once_in_feed_order(store.clone()).await;
    spends_and_counts_hold_their_bounds(store.clone()).await;
    witness_numbers_are_taken_once(store).await;
}
