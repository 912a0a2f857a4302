//! The subscription watcher against a real store (SQLite): a price that
//! crosses, goes back and crosses again fires twice (edge-triggered, not
//! once per tick); a balance change fires once with both values; two
//! watchers (two replicas) observing the same change make one delivery.

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc, Mutex,
};

use async_trait::async_trait;
use relay_notify::subscribe::{Observe, Subscription, Watcher};
use relay_store::{HookRow, HookStore, Store};
use serde_json::Value;

#[derive(Debug, Default)]
struct World {
    price: AtomicU64,
    balance: Mutex<String>,
}

#[async_trait]
impl Observe for World {
    fn price_usd_e6(&self, _: &str) -> Option<u64> {
        Some(self.price.load(Ordering::SeqCst))
    }
    async fn balance(&self, _: u64, _: &str, _: &str) -> Result<String, String> {
        Ok(self.balance.lock().unwrap().clone())
    }
}

async fn store() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/t.db?mode=rwc", dir.path().display());
    (Store::connect(&url).await.unwrap(), dir)
}

fn row(id: &str, sub: &Subscription) -> HookRow {
    HookRow {
        id: id.into(),
        kind: sub.kind().into(),
        route_id: None,
        url: "https://example.com/h".into(),
        secret: None,
        spec: Some(serde_json::to_string(sub).unwrap()),
        watch_state: None,
        status: "active".into(),
        created_ms: 1,
        updated_ms: 1,
    }
}

async fn events(s: &Store, id: &str) -> Vec<Value> {
    let mut v: Vec<Value> = s
        .deliveries_of(id, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|d| serde_json::from_str(&d.payload).unwrap())
        .collect();
    v.reverse();
    v
}

#[tokio::test]
async fn a_price_fires_on_each_crossing_and_a_balance_on_each_change() {
    let (s, _dir) = store().await;
    let world = Arc::new(World::default());
    world.price.store(2_000_000_000, Ordering::SeqCst);
    *world.balance.lock().unwrap() = "100".into();
    let price = Subscription::price("ETH", Some("2500"), None).unwrap();
    s.put_hook(&row("wh_p", &price)).await.unwrap();
    let bal = Subscription::Balance {
        chain_id: 1,
        token: "USDC".into(),
        token_address: "0x0000000000000000000000000000000000000001".into(),
        address: "0x0000000000000000000000000000000000000002".into(),
    };
    s.put_hook(&row("wh_b", &bal)).await.unwrap();
    let store: Arc<dyn HookStore> = Arc::new(s.clone());
    let a = Watcher::new(store.clone(), world.clone(), relay_types::clock::system());
    let b = Watcher::new(store, world.clone(), relay_types::clock::system());

    // Baselines: below the threshold, balance 100: nothing fires.
    assert_eq!(a.tick().await.unwrap(), 0);
    assert!(events(&s, "wh_p").await.is_empty());
    // Up, down, up: two crossings. Both replicas tick each time.
    for p in [2_600_000_000u64, 2_400_000_000, 2_500_000_000] {
        world.price.store(p, Ordering::SeqCst);
        let (x, y) = tokio::join!(a.tick(), b.tick());
        assert!(x.unwrap() + y.unwrap() <= 1);
    }
    let ev = events(&s, "wh_p").await;
    assert_eq!(ev.len(), 2, "{ev:#?}");
    assert_eq!(ev[0]["priceUsd"], "2600.000000");
    assert_eq!(ev[1]["priceUsd"], "2500.000000");
    assert!(ev.iter().all(|e| e["initial"] == false));
    // A balance change: one event, both values.
    *world.balance.lock().unwrap() = "175".into();
    let (x, y) = tokio::join!(a.tick(), b.tick());
    assert_eq!(x.unwrap() + y.unwrap(), 1);
    let ev = events(&s, "wh_b").await;
    assert_eq!(ev.len(), 1, "{ev:#?}");
    assert_eq!(
        (ev[0]["previous"].as_str(), ev[0]["balance"].as_str()),
        (Some("100"), Some("175"))
    );
    // Unsubscribed: no more events.
    assert!(s.move_hook("wh_b", "active", "cancelled", 2).await.unwrap());
    *world.balance.lock().unwrap() = "1".into();
    a.tick().await.unwrap();
    assert_eq!(events(&s, "wh_b").await.len(), 1);
}
