//! Retention (spec §8.2): with the clock advanced past 30 days, a settled
//! route's counterparty addresses are gone from the store, replaced by
//! keyed tags, and a spend statement still finds the route by address.

use relay_analysis::retention::{is_tag, Tagger};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_types::clock::ManualClock;
use serde_json::json;
use std::time::Duration;

use crate::common::{approve_permit2, execute_to_end, get, permit_body, serve, wait_for};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const DAY_MS: u64 = 86_400_000;

#[tokio::test(flavor = "multi_thread")]
async fn after_thirty_days_addresses_become_tags_and_statements_still_group_them() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key_env = format!("RELAY_TEST_RETENTION_KEY_{}", std::process::id());
    // SAFETY of the test process: only this test reads this variable.
    std::env::set_var(&key_env, "retention-test-key");
    let h = serve(&devnet, dir.path(), |c| {
        c.retention.secret_env = key_env.clone()
    })
    .await;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_address(1).to_string();
    let (_, done) =
        execute_to_end(&h.base, &permit_body(&devnet, (SRC, DST), 2_000_000, 701)).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let id = done["id"].as_str().unwrap().to_string();
    let store = h.host_state.store.clone();
    let hex = user[2..].to_lowercase();
    let names_user = |text: &str| text.to_lowercase().contains(&hex);

    // Within 30 days nothing changes.
    let tagger = Tagger::new(b"retention-test-key");
    let now = relay_types::now_ms();
    let kept = relay_analysis::retention::sweep(&store, &tagger, now + 29 * DAY_MS, 30 * DAY_MS)
        .await
        .unwrap();
    assert_eq!(kept, 0);
    let (r, _) = store.get_route(&id).await.unwrap().unwrap();
    assert!(names_user(&r.sender));

    // The job, on a clock 31 days ahead.
    let clock = ManualClock::at(now + 31 * DAY_MS);
    let cancel = relay_jobs::CancellationToken::new();
    let job = relay_jobs::retention::spawn(
        cancel.clone(),
        store.clone(),
        tagger.clone(),
        clock,
        (
            Duration::from_secs(3600),
            Duration::from_millis(30 * DAY_MS),
        ),
    );
    wait_for("the route's sender to become a tag", async || {
        let (r, _) = store.get_route(&id).await.unwrap().unwrap();
        is_tag(&r.sender)
    })
    .await;
    cancel.cancel();
    job.await.unwrap();

    let (r, _) = store.get_route(&id).await.unwrap().unwrap();
    assert_eq!(r.sender, tagger.tag(&user));
    assert!(
        !names_user(&serde_json::to_string(&r).unwrap()),
        "route body: {r:?}"
    );
    for e in store.journal_of(&id).await.unwrap() {
        assert!(
            !names_user(&e.payload),
            "journal payload still names the user"
        );
    }
    for e in store.outbox_of(&id).await.unwrap() {
        assert!(!names_user(&e.payload.to_string()), "outbox: {}", e.payload);
    }
    // The receipt and the amounts stay.
    let (_, receipt) = get(&format!("{}/api/route/status?id={id}", h.base)).await;
    assert_eq!(receipt["status"], "DONE");
    assert!(!names_user(&receipt.to_string()), "{receipt}");

    // A statement for the address still finds its route, by tag.
    let (code, st) = get(&format!("{}/api/statement/spend?address={user}", h.base)).await;
    assert_eq!(code, 200, "{st}");
    let routes = st["statement"]["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 1, "{st}");
    assert_eq!(routes[0]["id"], json!(id));
    assert_eq!(st["statement"]["totals"][0]["amountIn"], "2000000");
    let other = "0x000000000000000000000000000000000000bEEF";
    let (_, none) = get(&format!("{}/api/statement/spend?address={other}", h.base)).await;
    assert_eq!(none["statement"]["routes"], json!([]));
    devnet.stop();
}
