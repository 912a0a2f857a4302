//! Retention (spec §8.2): with the clock advanced past 30 days, a settled
//! route's counterparty addresses are gone from the store, replaced by
//! keyed tags, and a spend statement still finds the route by address.

use relay_analysis::retention::{is_tag, Tagger};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_types::clock::ManualClock;
use relay_types::{Clock as _, SystemClock};
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
    let now = SystemClock.now_ms();
    let kept = relay_analysis::retention::sweep(&store, &tagger, now + 29 * DAY_MS, 30 * DAY_MS)
        .await
        .unwrap();
    assert_eq!(kept, 0);
    let (r, _) = store.get_route(&id).await.unwrap().unwrap();
    assert!(names_user(&r.sender));

    // The job, on a clock 31 days ahead.
    let clock = ManualClock::at(now + 31 * DAY_MS);
    let cancel = relay_jobs::CancellationToken::new();
    let job = relay_analysis::jobs::spawn_retention(
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

/// Signs an erasure request for anvil account `index` at `at`.
fn erasure_body(index: usize, at: u64) -> serde_json::Value {
    use alloy::signers::SignerSync;
    let key = keys::anvil_signer(index);
    let text = relay_analysis::erasure::request_text(&key.address(), at);
    let sig = key.sign_message_sync(text.as_bytes()).unwrap();
    json!({"address": key.address(), "issuedAt": at, "signature": sig.to_string()})
}

#[tokio::test(flavor = "multi_thread")]
async fn an_erasure_request_erases_the_address_at_once_and_is_attested_after_seven_days() {
    use crate::common::post;
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key_env = format!("RELAY_TEST_ERASURE_KEY_{}", std::process::id());
    // SAFETY of the test process: only this test reads this variable.
    std::env::set_var(&key_env, "erasure-test-key");
    let h = serve(&devnet, dir.path(), |c| {
        c.retention.secret_env = key_env.clone()
    })
    .await;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_address(1).to_string();
    let (_, done) =
        execute_to_end(&h.base, &permit_body(&devnet, (SRC, DST), 2_000_000, 702)).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let id = done["id"].as_str().unwrap().to_string();
    let store = h.host_state.store.clone();
    let hex = user[2..].to_lowercase();
    let names_user = |text: &str| text.to_lowercase().contains(&hex);
    let now = SystemClock.now_ms();

    // Refused: signed by someone else, too old, not an address; nothing erased.
    let mut forged = erasure_body(2, now);
    forged["address"] = json!(user);
    let (code, body) = post(&h.base, "/api/erasure/request", &forged, &[]).await;
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("ERASURE_SIGNATURE"), "{body}");
    let stale = erasure_body(1, now - 3_600_000);
    let (code, body) = post(&h.base, "/api/erasure/request", &stale, &[]).await;
    assert_eq!(
        (code, body.contains("ERASURE_STALE")),
        (400, true),
        "{body}"
    );
    let mut bad = erasure_body(1, now);
    bad["address"] = json!("0x1234");
    let (code, body) = post(&h.base, "/api/erasure/request", &bad, &[]).await;
    assert_eq!(
        (code, body.contains("INVALID_FIELD")),
        (400, true),
        "{body}"
    );
    let (r, _) = store.get_route(&id).await.unwrap().unwrap();
    assert!(names_user(&r.sender));

    // The owner's request erases the settled route at once.
    let (code, body) = post(&h.base, "/api/erasure/request", &erasure_body(1, now), &[]).await;
    assert_eq!(code, 200, "{body}");
    let asked: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(asked["status"], "pending", "{asked}");
    assert_eq!(asked["routesErased"], 1, "{asked}");
    assert!(asked.get("statement").is_none(), "{asked}");
    assert_eq!(
        asked["statementDueAt"].as_u64().unwrap(),
        asked["requestedAt"].as_u64().unwrap() + 7 * DAY_MS
    );
    let er = asked["id"].as_str().unwrap().to_string();
    let (r, _) = store.get_route(&id).await.unwrap().unwrap();
    assert_eq!(r.sender, relay_analysis::erasure::ERASED);
    assert!(!names_user(&serde_json::to_string(&r).unwrap()), "{r:?}");
    for e in store.journal_of(&id).await.unwrap() {
        assert!(
            !names_user(&e.payload),
            "journal payload still names the user"
        );
    }
    // The amounts stay; the address's statement no longer lists the route.
    let (_, receipt) = get(&format!("{}/api/route/status?id={id}", h.base)).await;
    assert_eq!(
        (receipt["status"].as_str(), names_user(&receipt.to_string())),
        (Some("DONE"), false)
    );
    let (_, st) = get(&format!("{}/api/statement/spend?address={user}", h.base)).await;
    assert_eq!(st["statement"]["routes"], json!([]), "{st}");

    // Asking again answers the same pending request.
    let (code, again) = post(
        &h.base,
        "/api/erasure/request",
        &erasure_body(1, now + 1),
        &[],
    )
    .await;
    assert_eq!(code, 200);
    assert!(again.contains(&er), "{again}");
    // The status needs the address too; before 7 days there is no statement.
    let status = |addr: String| format!("{}/api/erasure/status?id={er}&address={addr}", h.base);
    let (code, other) = get(&status(keys::anvil_address(2).to_string())).await;
    assert_eq!(
        (code, other["errorCode"].as_str()),
        (404, Some("UNKNOWN_ERASURE"))
    );
    let (code, pending) = get(&status(user.clone())).await;
    assert_eq!(
        (code, pending["status"].as_str()),
        (200, Some("pending")),
        "{pending}"
    );

    // The retention job, 7 days and a minute later, completes it.
    let clock = ManualClock::at(now + 7 * DAY_MS + 60_000);
    let cancel = relay_jobs::CancellationToken::new();
    let tagger = Tagger::new(b"erasure-test-key");
    let job = relay_analysis::jobs::spawn_retention(
        cancel.clone(),
        store.clone(),
        tagger,
        clock,
        (
            Duration::from_secs(3600),
            Duration::from_millis(30 * DAY_MS),
        ),
    );
    wait_for("the erasure request to complete", async || {
        get(&status(user.clone())).await.1["status"] == "completed"
    })
    .await;
    cancel.cancel();
    job.await.unwrap();
    let (_, completed) = get(&status(user.clone())).await;
    let row = store.erasure(&er).await.unwrap().unwrap();
    assert_eq!(row.address, "", "the request forgot the address");
    let statement = &completed["statement"];
    assert_eq!(statement["statement"]["scheme"], "relay-erasure-v1");
    assert_eq!(statement["statement"]["routesErased"], 1);
    assert_eq!(
        statement["statement"]["address"],
        json!(user.to_lowercase())
    );
    // The statement is the relayer's: its signature recovers to the relayer.
    let sig: alloy::primitives::Signature =
        statement["signature"].as_str().unwrap().parse().unwrap();
    let signer = sig
        .recover_address_from_msg(statement["message"].as_str().unwrap().as_bytes())
        .unwrap();
    assert_eq!(signer, keys::relayer().address());
    assert_eq!(statement["signer"], json!(signer.to_string()));
    devnet.stop();
}
