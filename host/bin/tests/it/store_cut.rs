//! The store refuses the journal write that follows each broadcast (a
//! SQLite trigger aborts every `sent` write, as a database that went away
//! between the broadcast and its record would): the transaction is out,
//! its record is not. No route is failed or refunded for it: each resumes
//! from its journal, which asks the chain first, and finishes once —
//! every permit pulled once, every payout made once, a refund owed paid
//! once and recorded.

use crate::common;

use alloy::primitives::U256;
use common::{approve_permit2, free_port, permit_body, spawn_host, until_terminal, wait_ready};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_simulators::{FaultConfig, FaultMode, Upstream};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const AMOUNT: u64 = 7_000_000;

/// Makes every journal write of a broadcast transaction fail.
const CUT: &str = "CREATE TRIGGER journal_cut BEFORE UPDATE OF state ON tx_journal \
                   WHEN NEW.state = 'sent' BEGIN SELECT RAISE(ABORT, 'the store went away'); END";

fn body(devnet: &Devnet, rail: &str, nonce: u64) -> Value {
    let mut b = permit_body(devnet, (SRC, DST), AMOUNT, nonce);
    b["rail"] = json!(rail);
    b
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_write_lost_after_the_broadcast_neither_fails_nor_refunds_the_route() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    approve_permit2(&devnet, SRC, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    common::write_host_config(&devnet, &sims, dir.path(), port, |c| {
        c.execution.resume_interval_ms = 500;
    });
    let base = format!("http://127.0.0.1:{port}");
    let mut host = spawn_host(dir.path());
    wait_ready(&base).await;
    let db = format!(
        "sqlite://{}",
        relay_fixtures::data_dir(&dir.path().join("data"))
            .join("relay.db")
            .display()
    );
    let cut = sqlx::SqlitePool::connect(&db).await.unwrap();
    sqlx::query(CUT).execute(&cut).await.unwrap();

    // Delivered: the float lane (the relayer pays out) and LI.FI (the
    // upstream does).
    let books = common::UsdcBooks::open(&devnet, (SRC, DST), keys::anvil_address(1)).await;
    let mut ids = Vec::new();
    for (i, rail) in ["floatlane", "lifi"].into_iter().enumerate() {
        let key = format!("cut-{rail}");
        let id = common::submit_keyed(&base, &body(&devnet, rail, 800 + i as u64), &key).await;
        ids.push(id.expect("accepted"));
    }
    let delivered = common::all_done(&base, &ids).await;
    books
        .assert_moved(&devnet, U256::from(2 * AMOUNT), delivered)
        .await;

    // Failed by the upstream after the deposit: refunded once, on record.
    sims.set_faults(Upstream::Lifi, FaultConfig::mode(FaultMode::AcceptThenFail));
    let books = common::UsdcBooks::open(&devnet, (SRC, DST), keys::anvil_address(1)).await;
    let id = common::submit_keyed(&base, &body(&devnet, "lifi", 810), "cut-refund").await;
    let failed = until_terminal(&base, &id.expect("accepted")).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    let refund_tx = failed["failure"]["refundTx"].as_str();
    assert!(refund_tx.is_some_and(|t| t.starts_with("0x")), "{failed}");
    let gas: U256 = failed["gasFee"].as_str().unwrap().parse().unwrap();
    books.assert_moved(&devnet, gas, U256::ZERO).await;

    host.kill().unwrap();
    host.wait().unwrap();
    devnet.stop();
}
