//! The store goes away mid-route, made to by SQLite triggers on the host's
//! own database (as a database restart would):
//!
//! - it refuses the journal write that follows each broadcast: the
//!   transaction is out, its record is not;
//! - it refuses a write of a route that waits on its bridge (its lease
//!   renewal), once;
//! - it refuses the payout's nonce (the replicas' shared counter), once.
//!
//! No route is failed or refunded for it: each resumes from its journal,
//! which asks the chain first, and finishes once — every permit pulled
//! once, every payout made once, a refund owed paid once and recorded.

use crate::common;

use alloy::primitives::U256;
use common::{permit_body, spawn_host, until_terminal, wait_ready};
use relay_devnet::{keys, Devnet};
use relay_simulators::{FaultConfig, FaultMode, Upstream};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const AMOUNT: u64 = 7_000_000;

/// Makes every journal write of a broadcast transaction fail.
const JOURNAL_CUT: &str = "CREATE TRIGGER journal_cut BEFORE UPDATE OF state ON tx_journal \
                   WHEN NEW.state = 'sent' BEGIN SELECT RAISE(ABORT, 'the store went away'); END";

/// Makes the second lease renewal of a route that waits on its bridge (its
/// next step `await-upstream`; a renewal leaves the version as it was)
/// fail: the first is the executor's as it takes up the step, the second
/// is the wait's own, between two looks at the bridge. `RAISE(FAIL)`
/// keeps the trigger's count of renewals.
const CUT_THE_WAIT: [&str; 3] = [
    "CREATE TABLE waiting_renewals (n INTEGER NOT NULL)",
    "INSERT INTO waiting_renewals VALUES (0)",
    "CREATE TRIGGER route_cut BEFORE UPDATE ON routes \
     WHEN NEW.version = OLD.version AND json_extract(NEW.body, \
     '$.plan.steps[' || json_extract(NEW.body, '$.nextStep') || '].action') = 'await-upstream' \
     BEGIN UPDATE waiting_renewals SET n = n + 1; \
     SELECT RAISE(FAIL, 'the store went away') WHERE (SELECT n FROM waiting_renewals) = 2; END",
];

/// Makes the first nonce allocation on the destination chain fail (the
/// replicas' shared counter lives in the store): the float lane's payout.
/// An upsert fires the insert trigger, and the update one on a row there
/// already; the count says which call it is.
const CUT_THE_NONCE: [&str; 4] = [
    "CREATE TABLE nonce_cuts (n INTEGER NOT NULL)",
    "INSERT INTO nonce_cuts VALUES (0)",
    "CREATE TRIGGER nonce_cut_insert BEFORE INSERT ON relayer_nonces WHEN NEW.chain = '42161' \
     BEGIN UPDATE nonce_cuts SET n = n + 1; \
     SELECT RAISE(FAIL, 'the store went away') WHERE (SELECT n FROM nonce_cuts) = 1; END",
    "CREATE TRIGGER nonce_cut_update BEFORE UPDATE ON relayer_nonces WHEN NEW.chain = '42161' \
     BEGIN UPDATE nonce_cuts SET n = n + 1; \
     SELECT RAISE(FAIL, 'the store went away') WHERE (SELECT n FROM nonce_cuts) = 1; END",
];

fn body(devnet: &Devnet, rail: &str, nonce: u64) -> Value {
    let mut b = permit_body(devnet, (SRC, DST), AMOUNT, nonce);
    b["rail"] = json!(rail);
    b
}

/// A devnet, its simulators and a `relay serve` over them resuming every
/// half second, with a connection to the host's database.
struct Cut {
    setup: common::HostSetup,
    db: sqlx::SqlitePool,
    _host: common::HostProcess,
}

impl Cut {
    async fn start() -> Self {
        let setup = common::HostSetup::new((SRC, DST), |c| {
            c.execution.resume_interval_ms = 500;
        })
        .await;
        let host = spawn_host(setup.dir.path());
        wait_ready(&setup.base).await;
        let db = setup.database().await;
        Cut {
            setup,
            db,
            _host: host,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_write_lost_after_the_broadcast_neither_fails_nor_refunds_the_route() {
    let cut = Cut::start().await;
    let (devnet, sims, base, db) = (&cut.setup.devnet, &cut.setup.sims, &cut.setup.base, &cut.db);
    sqlx::query(JOURNAL_CUT).execute(db).await.unwrap();

    // Delivered: the float lane (the relayer pays out) and LI.FI (the
    // upstream does).
    let books = common::UsdcBooks::open(devnet, (SRC, DST), keys::anvil_address(1)).await;
    let mut ids = Vec::new();
    for (i, rail) in ["floatlane", "lifi"].into_iter().enumerate() {
        let key = format!("cut-{rail}");
        let id = common::submit_keyed(base, &body(devnet, rail, 800 + i as u64), &key).await;
        ids.push(id.expect("accepted"));
    }
    let delivered = common::all_done(base, &ids).await;
    books
        .assert_moved(devnet, U256::from(2 * AMOUNT), delivered)
        .await;

    // Failed by the upstream after the deposit: refunded once, on record.
    sims.set_faults(Upstream::Lifi, FaultConfig::mode(FaultMode::AcceptThenFail));
    let books = common::UsdcBooks::open(devnet, (SRC, DST), keys::anvil_address(1)).await;
    let id = common::submit_keyed(base, &body(devnet, "lifi", 810), "cut-refund").await;
    let failed = until_terminal(base, &id.expect("accepted")).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    let refund_tx = failed["failure"]["refundTx"].as_str();
    assert!(refund_tx.is_some_and(|t| t.starts_with("0x")), "{failed}");
    let gas: U256 = failed["gasFee"].as_str().unwrap().parse().unwrap();
    books.assert_moved(devnet, gas, U256::ZERO).await;

    cut.setup.devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_route_whose_store_goes_away_while_it_waits_on_the_bridge_is_paid_once_and_not_refunded()
{
    let cut = Cut::start().await;
    let (devnet, sims, base, db) = (&cut.setup.devnet, &cut.setup.sims, &cut.setup.base, &cut.db);
    for q in CUT_THE_WAIT {
        sqlx::query(q).execute(db).await.unwrap();
    }
    // The bridge holds the deposit a while: the route waits on it.
    sims.set_faults(
        Upstream::Lifi,
        FaultConfig {
            settle_delay_ms: 3_000,
            ..FaultConfig::default()
        },
    );
    let books = common::UsdcBooks::open(devnet, (SRC, DST), keys::anvil_address(1)).await;
    let id = common::submit_keyed(base, &body(devnet, "lifi", 820), "cut-wait").await;
    let delivered = common::all_done(base, &[id.expect("accepted")]).await;
    books
        .assert_moved(devnet, U256::from(AMOUNT), delivered)
        .await;
    let (renewals,): (i64,) = sqlx::query_as("SELECT n FROM waiting_renewals")
        .fetch_one(db)
        .await
        .unwrap();
    assert!(renewals >= 2, "the store went away while the route waited");

    cut.setup.devnet.stop();
}

/// The store does not answer as the payout takes its nonce (nothing is
/// signed yet): the route is not failed and refunded for it — it resumes
/// and pays once.
#[tokio::test(flavor = "multi_thread")]
async fn a_nonce_the_store_could_not_hand_out_neither_fails_nor_refunds_the_route() {
    let cut = Cut::start().await;
    let (devnet, base, db) = (&cut.setup.devnet, &cut.setup.base, &cut.db);
    for q in CUT_THE_NONCE {
        sqlx::query(q).execute(db).await.unwrap();
    }
    let books = common::UsdcBooks::open(devnet, (SRC, DST), keys::anvil_address(1)).await;
    let id = common::submit_keyed(base, &body(devnet, "floatlane", 830), "cut-nonce").await;
    let delivered = common::all_done(base, &[id.expect("accepted")]).await;
    books
        .assert_moved(devnet, U256::from(AMOUNT), delivered)
        .await;
    let (cuts,): (i64,) = sqlx::query_as("SELECT n FROM nonce_cuts")
        .fetch_one(db)
        .await
        .unwrap();
    assert!(cuts >= 2, "the payout's nonce was refused once: {cuts}");

    cut.setup.devnet.stop();
}
