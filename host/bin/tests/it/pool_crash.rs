//! `kill -9` of a real `relay serve` while a pool withdrawal is held, then
//! again while it is in flight — journaled, not yet broadcast, by fault
//! injection (`RELAY_FAULT_POOL=planned`): after the restarts the
//! withdrawal is sent once, the recipient paid once, and its ticket shows
//! HELD, SENDING, SENT. Never lost, never twice.

use alloy::primitives::U256;
use relay_devnet::{Devnet, DevnetConfig};
use serde_json::json;

use crate::common;
use crate::pool::{
    deposit, eth, held_until_sent, new_note, pool_cli, relayer_nonce, spent, withdraw, CHAIN, NOTE,
};

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_while_held_and_while_in_flight_neither_loses_nor_doubles_a_withdrawal() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    common::write_host_config(&devnet, &sims, dir.path(), port, |c| {
        let pool = |p: &mut relay_pool::PoolConfig| {
            // due two seconds after it is held; a crashed sender's
            // withdrawal is taken over a second after its lease lapses
            p.hold_min_ms = 2_000;
            p.hold_max_ms = 2_000;
            p.lease_ms = 1_000;
            p.resume_interval_ms = 100;
        };
        c.sections.edit(relay_pool::SECTION, pool).unwrap();
    });
    let base = format!("http://127.0.0.1:{port}");
    let log = dir.path().join("host.log");

    // 1. held, then the host dies before its time
    let mut host = common::spawn_host(dir.path());
    common::wait_ready(&base).await;
    let note = new_note(&base);
    deposit(&devnet, &base, &note, 1);
    let recipient = alloy::signers::local::PrivateKeySigner::random().address();
    let to = recipient.to_string();
    let mut body = pool_cli(
        &base,
        &["prove", "--to", &to],
        &[("RELAY_POOL_NOTE", &note)],
    );
    body["hold"] = json!({});
    let nonce = relayer_nonce(&devnet).await;
    let held = withdraw(&base, &body, &[]).await;
    host.kill().unwrap(); // SIGKILL
    host.wait().unwrap();
    assert_eq!(
        (held.status, held.body["state"].as_str()),
        (202, Some("HELD")),
        "{}",
        held.body
    );
    let ticket = held.body["ticket"].as_str().unwrap().to_string();
    assert_eq!(
        relayer_nonce(&devnet).await,
        nonce,
        "nothing sent before its time"
    );

    // 2. restarted with the fault: when it is due, the host journals the
    // transaction and halts before broadcasting it; killed there
    let mut host =
        common::spawn_host_with(dir.path(), &[(relay_pool::withdraw::FAULT_ENV, "planned")]);
    common::wait_for("the host to reach the fault point", async || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("halted here until killed"))
    })
    .await;
    host.kill().unwrap();
    host.wait().unwrap();
    assert_eq!(
        eth(&devnet, recipient).await,
        U256::ZERO,
        "halted before broadcasting"
    );

    // 3. restarted: the journaled transaction is finished, once
    let _host = common::spawn_host(dir.path());
    common::wait_ready(&base).await;
    let hold = format!("{base}/api/pool/hold?ticket={ticket}");
    let shown = held_until_sent(&hold).await;
    assert!(spent(&devnet, shown["nullifierHash"].as_str().unwrap()).await);
    assert_eq!(
        eth(&devnet, recipient).await,
        U256::from(NOTE - 2_000_000_000_000),
        "paid once"
    );
    assert_eq!(relayer_nonce(&devnet).await, nonce + 1, "one transaction");
    let again = withdraw(&base, &body, &[]).await;
    assert_eq!(again.body["errorCode"], "POOL_NULLIFIER_SPENT");
}
