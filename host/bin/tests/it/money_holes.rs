//! Issue #40's money holes, attacked as a stranger would on the devnet,
//! with fresh wallets and on-chain balances read before and after:
//!
//! - a route's own Permit2 pull, the relayer's payout and an x402
//!   settlement are never credited as netting deposits;
//! - an x402 payment signed by an empty account makes the relayer send
//!   nothing (its settlement would revert);
//! - twenty copies of one signed Permit2 body, sent at once with and
//!   without an idempotency key, make one route, one pull and no
//!   reverted transaction; twenty copies of one router body make one
//!   route and no 5xx;
//! - twenty copies of one signed netting withdrawal pay out once, and
//!   twenty copies of one x402 payment settle once.

use std::collections::BTreeSet;

use crate::{
    common::{self, approve_permit2, permit_body, serve, until_terminal, usdc_balance},
    netting, router, sponsor,
};
use alloy::{
    primitives::{Address, U256},
    providers::Provider,
    signers::local::PrivateKeySigner,
};
use futures::future::join_all;
use relay_devnet::{keys, Devnet, DevnetConfig};
use serde_json::Value;

const SRC: u64 = 8453;
const DST: u64 = 42161;

/// A devnet on `chains` and a host over it whose rate limits are off (the
/// twenty copies must reach the service, not the limiter).
async fn up<const N: usize>(chains: [u64; N]) -> (Devnet, tempfile::TempDir, common::Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains(chains))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| c.limits.enabled = false).await;
    (devnet, dir, h)
}

async fn nonce_of(devnet: &Devnet, chain: u64, who: Address) -> u64 {
    let p = devnet.chain(chain).unwrap().provider();
    p.get_transaction_count(who).await.unwrap()
}

/// POSTs `body` to `path` 20 times at once; every answer's status and body.
async fn twenty(base: &str, path: &str, body: &Value, key: Option<&str>) -> Vec<(u16, Value)> {
    twenty_as(base, path, body, key, None).await
}

/// [`twenty`] with an `Authorization` header.
async fn twenty_as(
    base: &str,
    path: &str,
    body: &Value,
    key: Option<&str>,
    auth: Option<&str>,
) -> Vec<(u16, Value)> {
    let client = crate::common::http();
    let sends = (0..20).map(|_| {
        let mut req = client.post(format!("{base}{path}")).json(body);
        if let Some(k) = key {
            req = req.header("x-idempotency-key", k);
        }
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        async move {
            let a = common::send(req).await;
            (a.status, a.body)
        }
    });
    join_all(sends).await
}

/// No answer is a 5xx, and every refusal is typed.
fn no_5xx(answers: &[(u16, Value)]) {
    for (status, body) in answers {
        assert!(*status < 500, "{status} {body}");
        if *status >= 400 {
            assert!(body["errorCode"].is_string(), "{status} {body}");
        }
    }
}

/// The route ids of the 200 answers.
fn ids(answers: &[(u16, Value)]) -> BTreeSet<String> {
    answers
        .iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, b)| b["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_routes_own_pull_and_payout_are_never_netting_deposits() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let base = &h.base;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_signer(1);
    let body = permit_body(&devnet, (SRC, DST), 10_000_000, 4_001);
    let (_, done) = common::execute_to_end(base, &body).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let pull = done["srcTx"].as_str().unwrap().to_string();
    let payout = done["destTx"].as_str().unwrap().to_string();

    let enrolled = netting::enrol(base, &user).await;
    assert_eq!(enrolled.status, 200, "{}", enrolled.body);
    let balances = async || {
        (
            usdc_balance(&devnet, SRC, user.address()).await,
            usdc_balance(&devnet, DST, user.address()).await,
            usdc_balance(&devnet, SRC, devnet.relayer).await,
            usdc_balance(&devnet, DST, devnet.relayer).await,
        )
    };
    let before = balances().await;
    for (chain, tx, why) in [(SRC, &pull, "was sent by"), (DST, &payout, "was sent by")] {
        let posted = netting::post(
            base,
            "/api/netting/deposit",
            &netting::deposit_body(user.address(), chain, tx),
        )
        .await;
        assert_eq!(
            (posted.status, posted.body["errorCode"].as_str()),
            (422, Some("NETTING_DEPOSIT_INVALID")),
            "{}",
            posted.body
        );
        assert!(
            posted.body["error"].as_str().unwrap().contains(why),
            "{}",
            posted.body
        );
    }
    assert_eq!(netting::balance_of(base, user.address()).await, 0);
    assert_eq!(balances().await, before, "nothing moved");
    // nothing to withdraw
    let w = netting::post(
        base,
        "/api/netting/withdraw",
        &netting::withdraw_body(&user, 1_000_000, (DST, user.address()), 1),
    )
    .await;
    assert!(
        (400..500).contains(&w.status) && w.body["retryable"] == false,
        "{}",
        w.body
    );
    assert_eq!(balances().await, before, "nothing moved");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_payer_sends_nothing_and_a_settlement_is_never_a_deposit() {
    let chain = sponsor::CHAIN;
    let (devnet, _dir, h) = up([chain]).await;
    let base = &h.base;
    let relayer = devnet.relayer;
    let user = sponsor::funded_user(&devnet).await;
    let body = sponsor::ask(
        &devnet,
        &user,
        (sponsor::random_address(), sponsor::random_address()),
    );
    let unpaid = sponsor::post(base, "/api/7702/sponsor", &body, &[]).await;
    assert_eq!(unpaid.status, 402, "{}", unpaid.body);
    let price: U256 = unpaid.body["accepts"][0]["maxAmountRequired"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    // an account holding nothing signs the payment: nothing is sent
    let empty = PrivateKeySigner::random();
    let nonce0 = nonce_of(&devnet, chain, relayer).await;
    let pay = sponsor::x_payment(&devnet, &empty, relayer, price, sponsor::now_secs() + 300);
    let refused = sponsor::post(base, "/api/7702/sponsor", &body, &[("x-payment", &pay)]).await;
    assert_eq!(
        (refused.status, refused.body["errorCode"].as_str()),
        (402, Some("PAYMENT_UNFUNDED")),
        "{}",
        refused.body
    );
    assert_eq!(refused.body["retryable"], false);
    assert_eq!(
        nonce_of(&devnet, chain, relayer).await,
        nonce0,
        "the relayer sent nothing"
    );

    // twenty copies of one real payment: one settlement, one sponsorship
    let pay = sponsor::x_payment(&devnet, &user, relayer, price, sponsor::now_secs() + 300);
    let user0 = usdc_balance(&devnet, chain, user.address()).await;
    let client = crate::common::http();
    let answers = join_all((0..20).map(|_| {
        let req = client
            .post(format!("{base}/api/7702/sponsor"))
            .header("x-payment", &pay)
            .json(&body);
        async move {
            let a = common::send(req).await;
            (a.status, a.body)
        }
    }))
    .await;
    no_5xx(&answers);
    let settled: BTreeSet<_> = answers
        .iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, b)| b["settleTx"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(settled.len(), 1, "{answers:?}");
    assert_eq!(
        usdc_balance(&devnet, chain, user.address()).await,
        user0 - price - U256::from(sponsor::USDC_OUT),
        "paid once, and the batch ran once"
    );
    let settle_tx = settled.into_iter().next().unwrap();

    // the settlement moved the user's USDC to the relayer: not a deposit
    assert_eq!(netting::enrol(base, &user).await.status, 200);
    let posted = netting::post(
        base,
        "/api/netting/deposit",
        &netting::deposit_body(user.address(), chain, &settle_tx),
    )
    .await;
    assert_eq!(
        (posted.status, posted.body["errorCode"].as_str()),
        (422, Some("NETTING_DEPOSIT_INVALID")),
        "{}",
        posted.body
    );
    assert_eq!(netting::balance_of(base, user.address()).await, 0);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_copies_of_one_signed_permit_make_one_route() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let base = &h.base;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_address(1);
    let amount = 3_000_000u64;
    let (user0, nonce0) = (
        usdc_balance(&devnet, SRC, user).await,
        nonce_of(&devnet, SRC, devnet.relayer).await,
    );

    // without a key
    let body = permit_body(&devnet, (SRC, DST), amount, 5_001);
    let answers = twenty(base, "/api/route/execute", &body, None).await;
    no_5xx(&answers);
    let routes = ids(&answers);
    assert_eq!(routes.len(), 1, "{answers:?}");
    let id = routes.into_iter().next().unwrap();
    let done = until_terminal(base, &id).await;
    assert_eq!(done["status"], "DONE", "{done}");

    // with one key: the same single effect
    let body = permit_body(&devnet, (SRC, DST), amount, 5_002);
    let answers = twenty(base, "/api/route/execute", &body, Some("twenty-one-key")).await;
    no_5xx(&answers);
    let routes = ids(&answers);
    assert_eq!(routes.len(), 1, "{answers:?}");
    let keyed = routes.into_iter().next().unwrap();
    assert_ne!(keyed, id);
    let done = until_terminal(base, &keyed).await;
    assert_eq!(done["status"], "DONE", "{done}");

    assert_eq!(
        usdc_balance(&devnet, SRC, user).await,
        user0 - U256::from(2 * amount),
        "each signature pulled once"
    );
    assert_eq!(
        nonce_of(&devnet, SRC, devnet.relayer).await,
        nonce0 + 2,
        "one pull per route on the source chain, nothing reverted"
    );

    // the same body later answers the same route, and moves nothing
    let again = common::send(
        crate::common::http()
            .post(format!("{base}/api/route/execute"))
            .json(&body),
    )
    .await;
    assert_eq!(
        (again.status, again.body["id"].as_str()),
        (200, Some(keyed.as_str())),
        "{}",
        again.body
    );
    assert_eq!(
        usdc_balance(&devnet, SRC, user).await,
        user0 - U256::from(2 * amount)
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_copies_of_one_router_body_make_one_route_and_no_5xx() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let user = router::fresh_wallet(&devnet, "money-holes-router").await;
    let recipient = keys::seeded_signer("money-holes-router-recipient").address();
    let prepared = router::prepare(&h, user.address(), recipient, None).await;
    let body = router::signed_body(&prepared["forms"]["permit2Witness"], &user);
    let nonce0 = nonce_of(&devnet, SRC, devnet.relayer).await;

    let answers = twenty(&h.base, "/api/route/execute", &body, None).await;
    no_5xx(&answers);
    let routes = ids(&answers);
    assert_eq!(
        routes,
        BTreeSet::from([prepared["intentId"].as_str().unwrap().to_string()]),
        "{answers:?}"
    );
    let id = routes.into_iter().next().unwrap();
    let done = until_terminal(&h.base, &id).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(
        usdc_balance(&devnet, SRC, user.address()).await,
        U256::ZERO,
        "pulled once"
    );
    assert_eq!(
        nonce_of(&devnet, SRC, devnet.relayer).await,
        nonce0 + 1,
        "one router call, nothing reverted"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_copies_of_one_netting_withdrawal_pay_out_once() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let base = &h.base;
    let user = keys::anvil_signer(5);
    assert_eq!(netting::enrol(base, &user).await.status, 200);
    let tx = netting::send_to_relayer(&devnet, SRC, 5, 5_000_000).await;
    let credited = netting::post(
        base,
        "/api/netting/deposit",
        &netting::deposit_body(user.address(), SRC, &tx),
    )
    .await;
    assert_eq!(credited.status, 200, "{}", credited.body);
    let to = PrivateKeySigner::random().address();
    let nonce0 = netting::relayer_nonce(&devnet, DST).await;

    let body = netting::withdraw_body(&user, 2_000_000, (DST, to), 1);
    let answers = twenty(base, "/api/netting/withdraw", &body, None).await;
    no_5xx(&answers);
    let paid = usdc_balance(&devnet, DST, to).await;
    assert!(
        paid > U256::ZERO && paid <= U256::from(2_000_000u64),
        "{paid}"
    );
    assert_eq!(
        netting::relayer_nonce(&devnet, DST).await,
        nonce0 + 1,
        "one payout"
    );
    assert_eq!(
        netting::balance_of(base, user.address()).await,
        3_000_000,
        "debited once"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_copies_of_one_keyed_operator_execute_pay_out_once() {
    let (devnet, _dir, h) = up([SRC, DST]).await;
    let to = PrivateKeySigner::random().address();
    let body = serde_json::json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC",
        "toToken": "USDC", "amount": "2000000", "mode": "self", "toAddress": to, "live": true});
    let owner = format!("Bearer {}", relay_host::devnet::DEVNET_OWNER_TOKEN);
    let nonce0 = nonce_of(&devnet, DST, devnet.relayer).await;
    let answers = twenty_as(
        &h.base,
        "/api/route/execute",
        &body,
        Some("operator-twenty"),
        Some(&owner),
    )
    .await;
    no_5xx(&answers);
    let routes = ids(&answers);
    assert_eq!(routes.len(), 1, "{answers:?}");
    let done = until_terminal(&h.base, routes.first().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let paid: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(usdc_balance(&devnet, DST, to).await, paid, "paid out once");
    assert_eq!(
        nonce_of(&devnet, DST, devnet.relayer).await,
        nonce0 + 1,
        "one payout"
    );
    devnet.stop();
}
