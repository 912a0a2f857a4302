//! `kill -9` of a real `relay serve` between settling an x402 payment and
//! sending the sponsored type-4 transaction (spec §4.8), by fault injection
//! (`RELAY_FAULT_SPONSOR`): after a restart the sponsorship is sent once and
//! paid once — or, when its authorization went stale meanwhile, the payment
//! is refunded in full and nothing is sent. Never neither, never twice.

use crate::common::{self, token_balance, usdc_balance};
use crate::sponsor::{
    ask, code_of, funded_user, now_secs, post, random_address, tx_count, x_payment, CHAIN,
    USDC_OUT, USDT_OUT,
};

use alloy::{primitives::U256, providers::Provider, signers::local::PrivateKeySigner};
use relay_chain::eip7702::designator;
use relay_devnet::{Devnet, DevnetConfig, Token};
use serde_json::Value;

/// Runs one sponsorship through a `relay serve` that halts at `point`
/// (`RELAY_FAULT_SPONSOR`) and is killed there with SIGKILL, restarts it, and checks the outcome: sponsored
/// exactly once and paid exactly once — or, when the user `spoil`s its
/// authorization while the host is down, refunded in full and nothing sent.
async fn crash_at(
    devnet: &Devnet,
    sims: &relay_simulators::Simulators,
    (point, spoil): (&str, bool),
    database_url: Option<String>,
) {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    common::write_host_config(devnet, sims, dir.path(), port, |c| {
        c.database_url = database_url;
        let sponsor = |s: &mut relay_sponsor::SponsorConfig| {
            s.lease_ms = 2_000;
            s.resume_interval_ms = 200;
        };
        c.sections.edit(relay_sponsor::SECTION, sponsor).unwrap();
    });
    let base = format!("http://127.0.0.1:{port}");
    let relayer = devnet.relayer;
    let user = funded_user(devnet).await;
    let (r1, r2) = (random_address(), random_address());
    let body = ask(devnet, &user, (r1, r2));
    let mut child = common::spawn_host_with(dir.path(), &[(relay_sponsor::run::FAULT_ENV, point)]);
    common::wait_ready(&base).await;
    let unpaid = post(&base, "/api/7702/sponsor", &body, &[]).await;
    let price: U256 = unpaid.body["accepts"][0]["maxAmountRequired"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let (user0, relayer0) = (
        usdc_balance(devnet, CHAIN, user.address()).await,
        usdc_balance(devnet, CHAIN, relayer).await,
    );
    let pay = x_payment(devnet, &user, relayer, price, now_secs() + 300);
    let key = format!("crash-{point}");
    let headers = [
        ("x-payment", pay.as_str()),
        ("x-idempotency-key", key.as_str()),
    ];
    let request = crate::common::http()
        .post(format!("{base}/api/7702/sponsor"))
        .json(&body)
        .header("x-payment", pay.as_str())
        .header("x-idempotency-key", key.as_str())
        .send();
    let pending = tokio::spawn(request);
    // The host halts at `point`; kill -9 it there.
    let log = dir.path().join("host.log");
    common::wait_for("the host to reach the fault point", async || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("halted here until killed"))
    })
    .await;
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let died = pending.await.unwrap();
    assert!(died.is_err(), "the host died at {point}: {died:?}");
    assert_eq!(
        usdc_balance(devnet, CHAIN, relayer).await,
        relayer0 + price,
        "{point}: settled before the crash"
    );

    if spoil {
        spend_a_nonce(devnet, &user).await;
    }
    let mut child = common::spawn_host(dir.path());
    common::wait_ready(&base).await;
    let want = if spoil { "REFUNDED" } else { "SPONSORED" };
    let mut last = Value::Null;
    common::wait_for("the sponsorship to finish after the restart", async || {
        let a = post(&base, "/api/7702/sponsor", &body, &headers).await;
        last = a.body.clone();
        a.status == 200 && a.body["state"] == want
    })
    .await;
    let d = devnet.deployment(CHAIN).unwrap();
    let (user1, relayer1) = (
        usdc_balance(devnet, CHAIN, user.address()).await,
        usdc_balance(devnet, CHAIN, relayer).await,
    );
    if spoil {
        // the tuple went stale while the host was down: refunded, nothing sent
        assert!(
            last["refundTx"].is_string() && last["txHash"].is_null(),
            "{last}"
        );
        assert_eq!(
            (user1, relayer1),
            (user0, relayer0),
            "{point}: refunded in full"
        );
        assert_eq!(usdc_balance(devnet, CHAIN, r1).await, U256::ZERO);
        assert!(code_of(devnet, user.address()).await.is_empty());
        child.kill().unwrap();
        child.wait().unwrap();
        return;
    }
    assert_eq!(
        usdc_balance(devnet, CHAIN, r1).await,
        U256::from(USDC_OUT),
        "{point}: {last}"
    );
    assert_eq!(
        token_balance(devnet, CHAIN, Token::Usdt, r2).await,
        U256::from(USDT_OUT)
    );
    assert_eq!(
        user1,
        user0 - price - U256::from(USDC_OUT),
        "{point}: paid once"
    );
    assert_eq!(
        relayer1,
        relayer0 + price,
        "{point}: no refund after a sponsorship"
    );
    assert_eq!(
        code_of(devnet, user.address()).await,
        designator(d.delegate)
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The user spends its account nonce (given a little ETH for it), so the
/// nonce-0 authorization it paid to have sponsored goes stale.
async fn spend_a_nonce(devnet: &Devnet, user: &PrivateKeySigner) {
    let c = devnet.chain(CHAIN).unwrap();
    relay_devnet::deploy::set_balance(&c.provider(), user.address(), U256::from(10u64.pow(17)))
        .await
        .unwrap();
    let wallet = relay_devnet::deploy::wallet_provider(c.url(), user.clone());
    let tx = alloy::rpc::types::TransactionRequest::default()
        .to(user.address())
        .value(U256::ZERO);
    wallet
        .send_transaction(tx)
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    assert_eq!(tx_count(devnet, user.address()).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_between_settling_and_sponsoring_sponsors_once_or_refunds_after_restart() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    crash_at(&devnet, &sims, ("settled", false), None).await;
    crash_at(&devnet, &sims, ("planned", false), None).await;
    crash_at(&devnet, &sims, ("settled", true), None).await;
    // the same journal and lease on Postgres
    let pg = relay_fixtures::postgres_database();
    crash_at(&devnet, &sims, ("planned", false), Some(pg)).await;
    devnet.stop();
}

/// Two replicas on one Postgres; a sponsorship whose settlement waits on a
/// block for three times the lease (the chain stops mining). The replica
/// that took the payment keeps its lease while it waits (it renews it
/// during the step), the other never drives the record, and the batch runs
/// once with the payment charged once — no refund of a sponsorship that
/// ran. (Found by the soak: the lease was renewed without naming its
/// holder, both replicas drove the record, one sponsored it and the other
/// refunded the payment.)
#[tokio::test(flavor = "multi_thread")]
async fn a_settlement_slower_than_the_lease_is_driven_once() {
    const LEASE_MS: u64 = 2_000;
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let db = relay_fixtures::postgres_database();
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let tweak = |c: &mut relay_config::HostConfig| {
        c.database_url = Some(db.clone());
        let s = |s: &mut relay_sponsor::SponsorConfig| {
            s.lease_ms = LEASE_MS;
            s.resume_interval_ms = 100;
        };
        c.sections.edit(relay_sponsor::SECTION, s).unwrap();
    };
    let host = common::serve(&devnet, dirs[0].path(), tweak).await;
    let _other = common::serve(&devnet, dirs[1].path(), tweak).await;
    let pg = sqlx::PgPool::connect(&db).await.unwrap();
    let chain = devnet.chain(CHAIN).unwrap().provider();
    let user = funded_user(&devnet).await;
    let (r1, r2) = (random_address(), random_address());
    let body = ask(&devnet, &user, (r1, r2));
    let unpaid = post(&host.base, "/api/7702/sponsor", &body, &[]).await;
    let price: U256 = unpaid.body["accepts"][0]["maxAmountRequired"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let pay = x_payment(&devnet, &user, devnet.relayer, price, now_secs() + 300);
    let user0 = usdc_balance(&devnet, CHAIN, user.address()).await;
    let headers = [
        ("x-payment", pay.clone()),
        ("x-idempotency-key", "slow-settle".to_string()),
    ];
    common::blocks(&chain, false).await;
    let (base, paid_body, sent_headers) = (host.base.clone(), body.clone(), headers.clone());
    let answer = tokio::spawn(async move {
        let h: Vec<(&str, &str)> = sent_headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        post(&base, "/api/7702/sponsor", &paid_body, &h).await
    });
    // The settlement is broadcast and waits for a block ...
    common::wait_up_to(
        "the settlement broadcast",
        common::SETTLES_WITHIN,
        async || {
            let (sent,): (i64,) =
                sqlx::query_as("SELECT COUNT(*) FROM tx_journal WHERE step = 0 AND state = 'sent'")
                    .fetch_one(&pg)
                    .await
                    .unwrap();
            sent > 0
        },
    )
    .await;
    let holder = || async {
        let (owner,): (Option<String>,) = sqlx::query_as("SELECT lease_owner FROM sponsorships")
            .fetch_one(&pg)
            .await
            .unwrap();
        owner
    };
    let taker = holder().await;
    assert!(
        taker.is_some(),
        "the replica that took the payment holds it"
    );
    // ... that comes three leases later (the stimulus: a stalled chain).
    tokio::time::sleep(std::time::Duration::from_millis(3 * LEASE_MS)).await;
    assert_eq!(
        holder().await,
        taker,
        "the other replica never took the record over"
    );
    common::blocks(&chain, true).await;
    let first = answer.await.unwrap();
    let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut last = first.body.clone();
    common::wait_up_to(
        "the sponsorship to end",
        common::SETTLES_WITHIN,
        async || {
            let again = post(&host.base, "/api/7702/sponsor", &body, &h).await;
            last = again.body;
            again.status == 200
        },
    )
    .await;
    assert_eq!(
        last["state"], "SPONSORED",
        "first {} {}, then {last}",
        first.status, first.body
    );
    crate::sponsor::assert_batch_ran(&devnet, (r1, r2)).await;
    assert_eq!(
        usdc_balance(&devnet, CHAIN, user.address()).await,
        user0 - price - U256::from(USDC_OUT),
        "charged once, never refunded"
    );
    drop(host);
    devnet.stop();
}
