//! Custodial netting accounts (spec §4.7) end to end on the devnet: real
//! USDC sent to the relayer on anvil and credited once (posted twice, and
//! posted at once to two replicas sharing Postgres), free internal
//! transfers with monotonic nonces, a withdrawal that arrives on chain
//! less the payout cost, one below the payout cost refused with nothing
//! sent, and a deposit above the safe share refused.

use crate::common::{self, serve, usdc_balance};
use alloy::{
    primitives::{Address, U256},
    providers::Provider,
    signers::{local::PrivateKeySigner, SignerSync},
};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_netting::texts;
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const USDC: u64 = 1_000_000;

pub(crate) async fn post(base: &str, path: &str, body: &Value) -> common::Answer {
    common::send(
        crate::common::http()
            .post(format!("{base}{path}"))
            .json(body),
    )
    .await
}

pub(crate) async fn get(base: &str, path: &str) -> common::Answer {
    common::send(crate::common::http().get(format!("{base}{path}"))).await
}

fn sign(who: &PrivateKeySigner, text: &str) -> String {
    who.sign_message_sync(text.as_bytes()).unwrap().to_string()
}

/// Enrols `who`, signing the served terms.
pub(crate) async fn enrol(base: &str, who: &PrivateKeySigner) -> common::Answer {
    let terms = get(
        base,
        &format!("/api/netting/terms?address={}", who.address()),
    )
    .await;
    assert_eq!(terms.status, 200, "{}", terms.body);
    let text = terms.body["text"].as_str().unwrap();
    post(
        base,
        "/api/netting/enroll",
        &json!({"address": who.address(), "signature": sign(who, text)}),
    )
    .await
}

/// Anvil account `index` sends `amount` USDC to the relayer on `chain`;
/// the transaction hash.
pub(crate) async fn send_to_relayer(
    devnet: &Devnet,
    chain: u64,
    index: usize,
    amount: u64,
) -> String {
    let c = devnet.chain(chain).unwrap();
    let r = relay_devnet::contracts::TestToken::new(c.deployment.usdc, c.provider())
        .transfer(devnet.relayer, U256::from(amount))
        .from(keys::anvil_address(index))
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    assert!(r.status());
    format!("{:#x}", r.transaction_hash)
}

pub(crate) fn deposit_body(who: Address, chain: u64, tx: &str) -> Value {
    json!({"address": who, "chainId": chain, "txHash": tx})
}

fn transfer_body(from: &PrivateKeySigner, to: Address, amount: u64, nonce: u64) -> Value {
    let text = texts::transfer_text(&from.address(), &to, amount.into(), nonce);
    json!({"from": from.address(), "to": to, "amount": amount.to_string(), "nonce": nonce,
        "signature": sign(from, &text)})
}

pub(crate) fn withdraw_body(
    who: &PrivateKeySigner,
    amount: u64,
    (chain, to): (u64, Address),
    nonce: u64,
) -> Value {
    let text = texts::withdraw_text(&who.address(), amount.into(), (chain, &to), nonce);
    json!({"address": who.address(), "amount": amount.to_string(), "toChain": chain,
        "toAddress": to, "nonce": nonce, "signature": sign(who, &text)})
}

fn units(v: &Value) -> u64 {
    v.as_str().unwrap().parse().unwrap()
}

pub(crate) async fn balance_of(base: &str, who: Address) -> u64 {
    units(
        &get(base, &format!("/api/netting/terms?address={who}"))
            .await
            .body["balance"],
    )
}

pub(crate) async fn relayer_nonce(devnet: &Devnet, chain: u64) -> u64 {
    let p = devnet.chain(chain).unwrap().provider();
    p.get_transaction_count(devnet.relayer).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn enrol_deposit_transfer_and_withdraw_move_real_usdc_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let base = &h.base;
    let (a, b) = (keys::anvil_signer(5), keys::anvil_signer(6));
    let outsider = PrivateKeySigner::random();

    // enrolment: a signature by anyone else is refused; again is idempotent
    let terms = get(base, &format!("/api/netting/terms?address={}", a.address())).await;
    let text = terms.body["text"].as_str().unwrap();
    assert!(
        text.contains(&texts::lower(&a.address())) && text.contains("safe share"),
        "{text}"
    );
    let forged = post(
        base,
        "/api/netting/enroll",
        &json!({"address": a.address(), "signature": sign(&b, text)}),
    )
    .await;
    assert_eq!(
        (forged.status, forged.body["errorCode"].as_str()),
        (401, Some("NETTING_SIGNATURE_INVALID")),
        "{}",
        forged.body
    );
    let first = enrol(base, &a).await;
    assert_eq!(
        (first.status, &first.body["new"]),
        (200, &json!(true)),
        "{}",
        first.body
    );
    let again = enrol(base, &a).await;
    assert_eq!(
        (again.status, &again.body["new"]),
        (200, &json!(false)),
        "{}",
        again.body
    );
    assert_eq!(enrol(base, &b).await.status, 200);

    // a deposit: 20 USDC on chain, credited once though posted twice
    let float_before = usdc_balance(&devnet, SRC, devnet.relayer).await;
    let tx = send_to_relayer(&devnet, SRC, 5, 20 * USDC).await;
    assert_eq!(
        usdc_balance(&devnet, SRC, devnet.relayer).await - float_before,
        U256::from(20 * USDC)
    );
    let d1 = post(
        base,
        "/api/netting/deposit",
        &deposit_body(a.address(), SRC, &tx),
    )
    .await;
    assert_eq!(
        (d1.status, &d1.body["credited"]),
        (200, &json!(true)),
        "{}",
        d1.body
    );
    let d2 = post(
        base,
        "/api/netting/deposit",
        &deposit_body(a.address(), SRC, &tx),
    )
    .await;
    assert_eq!(
        (d2.status, &d2.body["credited"], &d2.body["entryId"]),
        (200, &json!(false), &d1.body["entryId"]),
        "{}",
        d2.body
    );
    assert_eq!(balance_of(base, a.address()).await, 20 * USDC);
    // someone else's transaction is not theirs to claim
    let theirs = post(
        base,
        "/api/netting/deposit",
        &deposit_body(b.address(), SRC, &tx),
    )
    .await;
    assert_eq!(
        theirs.body["errorCode"], "NETTING_DEPOSIT_INVALID",
        "{}",
        theirs.body
    );

    // transfers: free, nonces monotonic, both parties enrolled
    let t = post(
        base,
        "/api/netting/transfer",
        &transfer_body(&a, b.address(), 3 * USDC, 5),
    )
    .await;
    assert_eq!(t.status, 200, "{}", t.body);
    let replay = post(
        base,
        "/api/netting/transfer",
        &transfer_body(&a, b.address(), 3 * USDC, 5),
    )
    .await;
    assert_eq!(
        (replay.status, replay.body["errorCode"].as_str()),
        (409, Some("NETTING_NONCE_SPENT")),
        "{}",
        replay.body
    );
    let lower = post(
        base,
        "/api/netting/transfer",
        &transfer_body(&a, b.address(), USDC, 4),
    )
    .await;
    assert_eq!(
        lower.body["errorCode"], "NETTING_NONCE_SPENT",
        "{}",
        lower.body
    );
    let stranger = post(
        base,
        "/api/netting/transfer",
        &transfer_body(&a, outsider.address(), USDC, 6),
    )
    .await;
    assert_eq!(
        (
            stranger.body["errorCode"].as_str(),
            stranger.body["field"].as_str()
        ),
        (Some("NETTING_NOT_ENROLLED"), Some("to")),
        "{}",
        stranger.body
    );
    let overdraw = post(
        base,
        "/api/netting/transfer",
        &transfer_body(&b, a.address(), 4 * USDC, 1),
    )
    .await;
    assert_eq!(
        overdraw.body["errorCode"], "NETTING_INSUFFICIENT_BALANCE",
        "{}",
        overdraw.body
    );
    assert_eq!(
        (
            balance_of(base, a.address()).await,
            balance_of(base, b.address()).await
        ),
        (17 * USDC, 3 * USDC)
    );

    // a withdrawal below the payout cost: previewed as failing, refused, nothing sent
    let tiny = get(
        base,
        &format!("/api/netting/preview?amount=1&toChain={DST}"),
    )
    .await;
    assert_eq!(
        (tiny.status, &tiny.body["wouldSucceed"]),
        (200, &json!(false)),
        "{}",
        tiny.body
    );
    assert!(units(&tiny.body["payoutCost"]) >= 1, "{}", tiny.body);
    let nonce_before = relayer_nonce(&devnet, DST).await;
    let to = PrivateKeySigner::random().address();
    let refused = post(
        base,
        "/api/netting/withdraw",
        &withdraw_body(&b, 1, (DST, to), 2),
    )
    .await;
    assert_eq!(
        (refused.status, refused.body["errorCode"].as_str()),
        (422, Some("NETTING_BELOW_PAYOUT_COST")),
        "{}",
        refused.body
    );
    assert_eq!(
        relayer_nonce(&devnet, DST).await,
        nonce_before,
        "nothing was sent"
    );
    assert_eq!(
        balance_of(base, b.address()).await,
        3 * USDC,
        "nothing was debited"
    );

    // a withdrawal arrives on chain less the payout cost
    let preview = get(base, &format!("/api/netting/preview?amount={}", 2 * USDC)).await;
    let exits = preview.body["cheapestExit"].as_array().unwrap();
    assert_eq!(exits.len(), 2, "{}", preview.body);
    assert!(
        units(&exits[0]["payoutCost"]) <= units(&exits[1]["payoutCost"]),
        "{}",
        preview.body
    );
    let w = post(
        base,
        "/api/netting/withdraw",
        &withdraw_body(&b, 2 * USDC, (DST, to), 2),
    )
    .await;
    assert_eq!(
        (w.status, w.body["state"].as_str()),
        (200, Some("PAID")),
        "{}",
        w.body
    );
    let cost = units(&w.body["payoutCost"]);
    assert!(cost > 0 && cost < 2 * USDC, "{}", w.body);
    assert_eq!(
        usdc_balance(&devnet, DST, to).await,
        U256::from(2 * USDC - cost),
        "arrived less the payout cost"
    );
    assert_eq!(balance_of(base, b.address()).await, USDC);
    let replayed = post(
        base,
        "/api/netting/withdraw",
        &withdraw_body(&b, 2 * USDC, (DST, to), 2),
    )
    .await;
    assert_eq!(
        replayed.body["errorCode"], "NETTING_NONCE_SPENT",
        "{}",
        replayed.body
    );
    assert_eq!(
        usdc_balance(&devnet, DST, to).await,
        U256::from(2 * USDC - cost),
        "paid once"
    );

    // the withdrawal is on b's relayer-signed receipts, and viem checks them
    let receipts = get(base, &format!("/api/receipts/{}", b.address())).await;
    assert_eq!(receipts.status, 200, "{}", receipts.body);
    let list = receipts.body["receipts"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{}", receipts.body);
    let paid = &list[0]["receipt"];
    assert_eq!(paid["kind"], "withdrawal", "{paid}");
    assert_eq!(units(&paid["amountOut"]), 2 * USDC - cost, "{paid}");
    assert_eq!(units(&paid["fees"]), cost, "{paid}");
    assert_eq!(paid["toChain"], DST.to_string(), "{paid}");
    let file = dir.path().join("receipts.json");
    std::fs::write(&file, receipts.body.to_string()).unwrap();
    let signer = receipts.body["signer"].as_str().unwrap().to_string();
    assert_eq!(signer, devnet.relayer.to_string());
    assert!(crate::analysis::viem_checks_receipts(
        &file,
        &signer,
        &b.address().to_string()
    ));
    assert!(!crate::analysis::viem_checks_receipts(
        &file,
        &keys::anvil_address(9).to_string(),
        &b.address().to_string()
    ));

    // the reserves add up; the ledger's invariants hold
    let r = get(base, "/api/netting/reserves").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(units(&r.body["liabilities"]), 18 * USDC, "{}", r.body);
    assert_eq!(units(&r.body["payoutFees"]), cost, "{}", r.body);
    assert_eq!(r.body["chains"].as_array().unwrap().len(), 2);
    let check = relay_netting::ledger::Ledger::from(h.host_state.store.clone())
        .ledger_check()
        .await
        .unwrap();
    assert!(check.ok(), "{check:?}");
    devnet.stop();
}

/// A devnet host (`tweak` edits its config) with anvil account 5 enrolled.
async fn enrolled(
    tweak: impl FnOnce(&mut relay_config::HostConfig),
) -> (Devnet, tempfile::TempDir, common::Running, PrivateKeySigner) {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), tweak).await;
    let a = keys::anvil_signer(5);
    assert_eq!(enrol(&h.base, &a).await.status, 200);
    (devnet, dir, h, a)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deposit_above_the_safe_share_of_float_is_refused() {
    // 1 ppm of the relayer's 20,000,000 USDC across both chains: 20 USDC
    let (devnet, _dir, h, a) = enrolled(|c| netting(c, |n| n.safe_share_ppm = 1)).await;
    let tx = send_to_relayer(&devnet, SRC, 5, 25 * USDC).await;
    let d = post(
        &h.base,
        "/api/netting/deposit",
        &deposit_body(a.address(), SRC, &tx),
    )
    .await;
    assert_eq!(
        (d.status, d.body["errorCode"].as_str()),
        (409, Some("NETTING_SAFE_SHARE_EXCEEDED")),
        "{}",
        d.body
    );
    assert_eq!(balance_of(&h.base, a.address()).await, 0, "not credited");
    let r = get(&h.base, "/api/netting/reserves").await;
    assert_eq!(
        (
            units(&r.body["liabilities"]),
            r.body["safeSharePpm"].as_u64()
        ),
        (0, Some(1)),
        "{}",
        r.body
    );
    let small = send_to_relayer(&devnet, SRC, 5, 5 * USDC).await;
    let ok = post(
        &h.base,
        "/api/netting/deposit",
        &deposit_body(a.address(), SRC, &small),
    )
    .await;
    assert_eq!(
        (ok.status, &ok.body["credited"]),
        (200, &json!(true)),
        "{}",
        ok.body
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deposit_short_of_its_confirmations_is_pending_until_they_come() {
    let (devnet, _dir, h, a) = enrolled(|c| netting(c, |n| n.confirmations = 20)).await;
    let tx = send_to_relayer(&devnet, SRC, 5, 4 * USDC).await;
    let body = deposit_body(a.address(), SRC, &tx);
    // mined in the head block: 1 of 20 confirmations (or a few more, were
    // other transactions mined since)
    let early = post(&h.base, "/api/netting/deposit", &body).await;
    assert_eq!(
        (early.status, early.body["errorCode"].as_str()),
        (409, Some("NETTING_DEPOSIT_PENDING")),
        "{}",
        early.body
    );
    assert_eq!(early.body["retryable"], true, "{}", early.body);
    assert_eq!(balance_of(&h.base, a.address()).await, 0, "not credited");
    // 20 more blocks: enough, credited once
    let _: Value = devnet
        .chain(SRC)
        .unwrap()
        .provider()
        .raw_request("anvil_mine".into(), ("0x14",))
        .await
        .unwrap();
    let ok = post(&h.base, "/api/netting/deposit", &body).await;
    assert_eq!(
        (ok.status, &ok.body["credited"]),
        (200, &json!(true)),
        "{}",
        ok.body
    );
    assert_eq!(balance_of(&h.base, a.address()).await, 4 * USDC);
    let again = post(&h.base, "/api/netting/deposit", &body).await;
    assert_eq!(again.body["credited"], false, "{}", again.body);
    assert_eq!(balance_of(&h.base, a.address()).await, 4 * USDC);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deposit_posted_to_two_replicas_at_once_is_credited_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let db = relay_fixtures::postgres_database();
    let (da, dbd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let x = serve(&devnet, da.path(), |c| c.database_url = Some(db.clone())).await;
    let y = serve(&devnet, dbd.path(), |c| c.database_url = Some(db.clone())).await;
    let a = keys::anvil_signer(5);
    assert_eq!(enrol(&x.base, &a).await.status, 200);
    let tx = send_to_relayer(&devnet, SRC, 5, 7 * USDC).await;
    let body = deposit_body(a.address(), SRC, &tx);
    let (rx, ry) = tokio::join!(
        post(&x.base, "/api/netting/deposit", &body),
        post(&y.base, "/api/netting/deposit", &body)
    );
    assert_eq!(
        (rx.status, ry.status),
        (200, 200),
        "{} {}",
        rx.body,
        ry.body
    );
    let credited = [&rx, &ry]
        .iter()
        .filter(|r| r.body["credited"] == json!(true))
        .count();
    assert_eq!(credited, 1, "{} {}", rx.body, ry.body);
    assert_eq!(rx.body["entryId"], ry.body["entryId"]);
    assert_eq!(balance_of(&y.base, a.address()).await, 7 * USDC);
    let check = relay_netting::ledger::Ledger::from(x.host_state.store.clone())
        .ledger_check()
        .await
        .unwrap();
    assert!(
        check.ok() && check.liabilities.0 == (7 * USDC) as i64,
        "{check:?}"
    );
    devnet.stop();
}

/// Changes the host's `[netting]`.
fn netting(c: &mut relay_config::HostConfig, edit: impl FnOnce(&mut relay_netting::NettingConfig)) {
    c.sections.edit(relay_netting::SECTION, edit).unwrap();
}
