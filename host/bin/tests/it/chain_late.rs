//! The destination chain stops mining while a route's payout is out: no
//! receipt comes within `execution.receipt_timeout_ms`. Its outcome is
//! unknown, not failed — the route stays in flight, is taken up again from
//! its journal (the same signed payout, asked after on chain, never a
//! second one) and ends DONE, paid once, when the chain mines again. (A
//! route failed then, funds in doubt, was paid anyway a moment later.)

use crate::common;

use alloy::primitives::U256;
use common::{permit_body, spawn_host, wait_ready};
use relay_devnet::keys;
use serde_json::json;

const SRC: u64 = 8453;
const DST: u64 = 42161;
const AMOUNT: u64 = 6_000_000;
const RECEIPT_TIMEOUT_MS: u64 = 1_500;

#[tokio::test(flavor = "multi_thread")]
async fn a_payout_without_a_receipt_in_time_is_waited_for_not_failed() {
    let setup = common::HostSetup::new((SRC, DST), |c| {
        c.execution.resume_interval_ms = 300;
        c.execution.receipt_timeout_ms = RECEIPT_TIMEOUT_MS;
        c.execution.gas_bump_after_ms = 600_000;
    })
    .await;
    let _host = spawn_host(setup.dir.path());
    wait_ready(&setup.base).await;
    let db = setup.database().await;
    let dst = setup.devnet.chain(DST).unwrap().provider();
    common::blocks(&dst, false).await;

    let books = common::UsdcBooks::open(&setup.devnet, (SRC, DST), keys::anvil_address(1)).await;
    let mut body = permit_body(&setup.devnet, (SRC, DST), AMOUNT, 900);
    body["rail"] = json!("floatlane");
    let id = common::submit_keyed(&setup.base, &body, "late-payout")
        .await
        .expect("accepted");

    // The payout is out, unmined, past the receipt timeout, and taken up
    // again from its journal; the route stays in flight all along.
    let first = payout_sent(&db, &setup.base, &id, 0).await;
    payout_sent(&db, &setup.base, &id, first + RECEIPT_TIMEOUT_MS).await;

    common::blocks(&dst, true).await;
    let delivered = common::all_done(&setup.base, &[id]).await;
    books
        .assert_moved(&setup.devnet, U256::from(AMOUNT), delivered)
        .await;
    setup.devnet.stop();
}

/// When route `id`'s payout (its transaction on the destination chain) was
/// last journaled sent, once that is later than `after` (epoch ms); the
/// route must not end meanwhile.
async fn payout_sent(db: &sqlx::SqlitePool, base: &str, id: &str, after: u64) -> u64 {
    let mut at = 0;
    let what = "the payout journaled sent";
    common::wait_up_to(what, common::SETTLES_WITHIN, async || {
        let (_, route) = common::get(&format!("{base}/api/route/status?id={id}")).await;
        let status = route["status"].as_str().unwrap_or("");
        assert!(
            !["DONE", "FAILED"].contains(&status),
            "the route ended while its payout was pending: {route}"
        );
        let sent: Option<(Option<i64>,)> = sqlx::query_as(
            "SELECT MAX(updated_ms) FROM tx_journal WHERE route_id = ? AND chain = ? AND state = 'sent'",
        )
        .bind(id)
        .bind(DST.to_string())
        .fetch_optional(db)
        .await
        .unwrap();
        at = sent.and_then(|(ms,)| ms).unwrap_or(0) as u64;
        at > after
    })
    .await;
    at
}
