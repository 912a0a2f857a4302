//! Paid names and name sales (spec §8.2) end to end on the devnet: a
//! priced name answers 402 with the x402 invoice, is bought with a real
//! EIP-3009 payment in the devnet's USDC (by a payment this test signs and
//! by the reference `x402` Python client), is logged with its payment in
//! the witness log, and is sold with both signatures and the price, the
//! seller paid the price less the 2 % (at least 1 USD) finalize fee — each
//! balance read on chain. Twenty buyers of one name at once: one pays, and
//! the same payment sent twenty times settles once.

use std::sync::Arc;

use alloy::{
    primitives::{Address, U256},
    signers::{local::PrivateKeySigner, SignerSync},
};
use base64::{engine::general_purpose::STANDARD, Engine};
use relay_devnet::{Devnet, DevnetConfig, Token};
use relay_types::{Clock as _, ManualClock, SystemClock};
use serde_json::{json, Value};

use crate::common::{self, serve, serve_at, usdc_balance};
use crate::sponsor::{now_secs, pay_with_python_x402, post, x_payment, CHAIN};

const LIST: &str = "/api/relaynames/list";
const TRANSFER: &str = "/api/messages/v2/handle/transfer";

fn lower(a: Address) -> String {
    format!("{a:#x}")
}

fn sign(wallet: &PrivateKeySigner, text: &str) -> String {
    let sig = wallet.sign_message_sync(text.as_bytes()).unwrap();
    format!("0x{}", hex::encode(sig.as_bytes()))
}

/// `wallet`'s signed listing of `name` for one year at `ts`.
fn listing(wallet: &PrivateKeySigner, name: &str, ts: u64) -> Value {
    let mut l = relay_messaging::names::Listing {
        name: name.to_ascii_lowercase(),
        owner: lower(wallet.address()),
        years: 1,
        ts,
        sig: String::new(),
    };
    l.sig = sign(wallet, &l.text());
    l.name = name.into(); // sent as typed; the host folds it before checking
    serde_json::to_value(l).unwrap()
}

/// A sale of `name` by `seller` to `buyer` for `price` USD, both signing at `ts`.
fn sale(
    seller: &PrivateKeySigner,
    buyer: &PrivateKeySigner,
    name: &str,
    price: &str,
    ts: u64,
) -> Value {
    let (from, to) = (lower(seller.address()), lower(buyer.address()));
    let text = |side: &str| {
        let gift = relay_messaging::http::transfer_text(side, name, &from, &to, ts);
        format!("{gift}\nprice: {price} USD")
    };
    json!({"name": name, "from": from, "to": to, "priceUsd": price,
        "release": {"ts": ts, "sig": sign(seller, &text("release"))},
        "accept": {"ts": ts, "sig": sign(buyer, &text("accept"))}})
}

/// A wallet holding `usdc` (smallest units) on [`CHAIN`] and no ETH.
async fn holding(devnet: &Devnet, usdc: u64) -> PrivateKeySigner {
    let w = PrivateKeySigner::random();
    devnet
        .mint(CHAIN, Token::Usdc, w.address(), U256::from(usdc))
        .await
        .unwrap();
    w
}

fn receipt(a: &common::Answer) -> Value {
    let h = a.headers.get("x-payment-response").expect("a receipt");
    serde_json::from_slice(&STANDARD.decode(h.as_bytes()).unwrap()).unwrap()
}

/// A one-chain devnet and a host serving it (`clock`: the host's time).
async fn devnet_and_host(
    clock: Option<relay_types::SharedClock>,
) -> (Devnet, tempfile::TempDir, common::Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = match clock {
        Some(c) => serve_at(&devnet, dir.path(), c, |_| {}).await,
        None => serve(&devnet, dir.path(), |_| {}).await,
    };
    (devnet, dir, host)
}

fn usdc(n: u64) -> U256 {
    U256::from(n * 1_000_000)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_priced_name_is_invoiced_bought_with_x402_logged_and_sold_with_the_fee() {
    let (devnet, _dir, host) = devnet_and_host(None).await;
    let base = &host.base;
    let relayer = devnet.relayer;
    let usdc_token = devnet.deployment(CHAIN).unwrap().usdc;
    let alice = holding(&devnet, 10_000_000).await;
    let start = usdc_balance(&devnet, CHAIN, relayer).await;

    let (status, q) = common::get(&format!("{base}/api/relaynames/quote?name=Alice")).await;
    assert_eq!((status, q["totalUsd"].as_str()), (200, Some("4.00")), "{q}");
    let body = listing(&alice, "Alice", SystemClock.now_ms());

    // without a payment: the invoice, in both x402 versions
    let a = post(base, LIST, &body, &[]).await;
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (402, Some("PAYMENT_REQUIRED")),
        "{}",
        a.body
    );
    let accepts = &a.body["accepts"][0];
    assert_eq!(accepts["maxAmountRequired"], "4000000", "{}", a.body);
    assert_eq!(accepts["payTo"], relayer.to_string());
    assert_eq!(accepts["asset"], usdc_token.to_string());
    assert_eq!(
        (accepts["network"].as_str(), a.body["priceUsd"].as_str()),
        (Some("base"), Some("4.00"))
    );
    let v2 = a.headers.get("payment-required").expect("the v2 invoice");
    let v2: Value = serde_json::from_slice(&STANDARD.decode(v2.as_bytes()).unwrap()).unwrap();
    assert_eq!(
        (
            v2["accepts"][0]["amount"].as_str(),
            v2["accepts"][0]["network"].as_str()
        ),
        (Some("4000000"), Some("eip155:8453"))
    );

    // an underpaid, a misdirected and an unfunded payment: refused, nothing moves
    let short = x_payment(&devnet, &alice, relayer, usdc(3), now_secs() + 300);
    let a = post(base, LIST, &body, &[("x-payment", &short)]).await;
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (402, Some("PAYMENT_INSUFFICIENT")),
        "{}",
        a.body
    );
    let elsewhere = x_payment(&devnet, &alice, alice.address(), usdc(4), now_secs() + 300);
    let a = post(base, LIST, &body, &[("x-payment", &elsewhere)]).await;
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (402, Some("PAYMENT_INVALID")),
        "{}",
        a.body
    );
    let lavish = x_payment(&devnet, &alice, relayer, usdc(10), now_secs() + 300);
    let a = post(base, LIST, &body, &[("x-payment", &lavish)]).await;
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (402, Some("PAYMENT_INVALID")),
        "an overpayment is a mistake: {}",
        a.body
    );
    let broke = PrivateKeySigner::random();
    let unfunded = x_payment(&devnet, &broke, relayer, usdc(4), now_secs() + 300);
    let a = post(base, LIST, &body, &[("x-payment", &unfunded)]).await;
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (402, Some("PAYMENT_UNFUNDED")),
        "{}",
        a.body
    );
    assert_eq!(
        usdc_balance(&devnet, CHAIN, alice.address()).await,
        usdc(10)
    );

    // paid: registered, the payment settled on chain, the receipt returned
    let paid = x_payment(&devnet, &alice, relayer, usdc(4), now_secs() + 300);
    let a = post(base, LIST, &body, &[("x-payment", &paid)]).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (a.body["name"].as_str(), a.body["owner"].as_str()),
        (Some("alice"), Some(lower(alice.address()).as_str()))
    );
    let order = a.body["order"].clone();
    assert_eq!(order["state"], "DONE", "{order}");
    let r = receipt(&a);
    assert_eq!(
        (r["success"].as_bool(), r["transaction"].clone()),
        (Some(true), order["settleTx"].clone())
    );
    assert_eq!(usdc_balance(&devnet, CHAIN, alice.address()).await, usdc(6));
    assert_eq!(usdc_balance(&devnet, CHAIN, relayer).await, start + usdc(4));

    // the same request again is a replayed listing; the spent payment on
    // a new listing (a renewal) is refused; nothing is charged twice
    let again = post(base, LIST, &body, &[("x-payment", &paid)]).await;
    assert_eq!(
        (again.status, again.body["errorCode"].as_str()),
        (409, Some("NAME_REPLAYED")),
        "{}",
        again.body
    );
    let renewal = listing(&alice, "alice", SystemClock.now_ms() + 1);
    let again = post(base, LIST, &renewal, &[("x-payment", &paid)]).await;
    assert_eq!(usdc_balance(&devnet, CHAIN, alice.address()).await, usdc(6));
    assert_eq!(
        (again.status, again.body["errorCode"].as_str()),
        (409, Some("PAYMENT_NONCE_USED")),
        "{}",
        again.body
    );
    let id = order["id"].as_str().unwrap();
    let (status, o) = common::get(&format!("{base}/api/relaynames/orders/{id}")).await;
    assert_eq!((status, o["state"].as_str()), (200, Some("DONE")), "{o}");
    let (status, _) = common::get(&format!("{base}/api/relaynames/orders/or_nope")).await;
    assert_eq!(status, 404);

    // the witness log's entry carries the payment
    let s = a.body["s"].as_u64().unwrap();
    let (_, range) = common::get(&format!(
        "{base}/api/messages/v2/witness/range?from={s}&limit=1"
    ))
    .await;
    let entry: Value = serde_json::from_str(range["entries"][0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(range["entries"][0]["kind"], "name");
    assert_eq!(
        (
            entry["paid"]["order"].as_str(),
            entry["paid"]["cents"].as_u64()
        ),
        (Some(id), Some(400)),
        "{entry}"
    );
    assert_eq!(entry["paid"]["settleTx"], order["settleTx"]);

    // a sale for 60.00: the invoice says the fee (2 %: 1.20), the buyer
    // pays, the seller gets 58.80, the name moves
    let bob = holding(&devnet, 100_000_000).await;
    let offer = sale(&alice, &bob, "alice", "60.00", SystemClock.now_ms());
    let a = post(base, TRANSFER, &offer, &[]).await;
    assert_eq!(
        (
            a.status,
            a.body["feeUsd"].as_str(),
            a.body["priceUsd"].as_str()
        ),
        (402, Some("1.20"), Some("60.00")),
        "{}",
        a.body
    );
    let mut forged = offer.clone();
    forged["priceUsd"] = json!("1.00");
    let a = post(base, TRANSFER, &forged, &[]).await;
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (400, Some("TRANSFER_SIGNATURE_INVALID")),
        "a price neither side signed: {}",
        a.body
    );
    let pay = x_payment(&devnet, &bob, relayer, usdc(60), now_secs() + 300);
    let headers = [("x-payment", pay.as_str()), ("x-idempotency-key", "sale-1")];
    let a = post(base, TRANSFER, &offer, &headers).await;
    assert_eq!(
        (a.status, a.body["owner"].as_str()),
        (200, Some(lower(bob.address()).as_str())),
        "{}",
        a.body
    );
    assert!(a.body["order"]["payoutTx"].is_string(), "{}", a.body);
    assert_eq!(usdc_balance(&devnet, CHAIN, bob.address()).await, usdc(40));
    assert_eq!(
        usdc_balance(&devnet, CHAIN, alice.address()).await,
        U256::from(6_000_000u64 + 58_800_000)
    );
    assert_eq!(
        usdc_balance(&devnet, CHAIN, relayer).await,
        start + usdc(4) + U256::from(1_200_000u64)
    );
    let replay = post(base, TRANSFER, &offer, &headers).await;
    assert_eq!(
        (replay.status, replay.body["order"]["id"].clone()),
        (200, a.body["order"]["id"].clone()),
        "{}",
        replay.body
    );
    assert_eq!(
        replay
            .headers
            .get("idempotent-replayed")
            .map(|v| v.as_bytes()),
        Some(&b"true"[..])
    );
    assert_eq!(
        usdc_balance(&devnet, CHAIN, bob.address()).await,
        usdc(40),
        "charged once"
    );
    let (_, q) = common::get(&format!("{base}/api/relaynames/quote?name=alice")).await;
    assert_eq!(q["owner"], lower(bob.address()), "{q}");
    let s = a.body["s"].as_u64().unwrap();
    let (_, range) = common::get(&format!(
        "{base}/api/messages/v2/witness/range?from={s}&limit=1"
    ))
    .await;
    let entry: Value = serde_json::from_str(range["entries"][0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        (
            entry["sale"]["priceCents"].as_u64(),
            entry["sale"]["feeCents"].as_u64()
        ),
        (Some(6_000), Some(120)),
        "{entry}"
    );
    drop(host);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_buyers_of_one_name_at_once_and_one_payment_sent_twenty_times_each_pay_once() {
    let (devnet, _dir, host) = devnet_and_host(None).await;
    let base = Arc::new(host.base.clone());
    let relayer = devnet.relayer;
    let start = usdc_balance(&devnet, CHAIN, relayer).await;
    let mut buyers = vec![];
    for _ in 0..20 {
        buyers.push(holding(&devnet, 10_000_000).await);
    }
    let ts = SystemClock.now_ms();
    let tasks: Vec<_> = buyers
        .iter()
        .map(|w| {
            let body = listing(w, "bobby", ts);
            let pay = x_payment(&devnet, w, relayer, usdc(4), now_secs() + 300);
            let base = base.clone();
            tokio::spawn(async move { post(&base, LIST, &body, &[("x-payment", &pay)]).await })
        })
        .collect();
    let mut won = vec![];
    for (i, t) in tasks.into_iter().enumerate() {
        let a = t.await.unwrap();
        match a.status {
            200 => won.push(i),
            409 => assert!(
                ["ORDER_PENDING", "NAME_TAKEN", "NAME_ORDER_REFUNDED"]
                    .contains(&a.body["errorCode"].as_str().unwrap()),
                "{}",
                a.body
            ),
            _ => panic!("{}: {}", a.status, a.body),
        }
    }
    assert_eq!(won.len(), 1, "one owner");
    for (i, w) in buyers.iter().enumerate() {
        let held = usdc_balance(&devnet, CHAIN, w.address()).await;
        assert_eq!(
            held,
            if won.contains(&i) { usdc(6) } else { usdc(10) },
            "buyer {i}"
        );
    }
    assert_eq!(usdc_balance(&devnet, CHAIN, relayer).await, start + usdc(4));

    // one payment sent twenty times at once, with one key and with none
    for (name, key) in [("carol", Some("buy-carol")), ("daisy", None)] {
        let w = holding(&devnet, 10_000_000).await;
        let body = listing(&w, name, SystemClock.now_ms());
        let pay = x_payment(&devnet, &w, relayer, usdc(4), now_secs() + 300);
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let (base, body, pay) = (base.clone(), body.clone(), pay.clone());
                tokio::spawn(async move {
                    let mut h = vec![("x-payment", pay.as_str())];
                    if let Some(k) = key {
                        h.push(("x-idempotency-key", k));
                    }
                    post(&base, LIST, &body, &h).await
                })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            let a = t.await.unwrap();
            match a.status {
                200 => ok += 1,
                409 => assert!(
                    [
                        "IDEMPOTENCY_IN_FLIGHT",
                        "PAYMENT_NONCE_USED",
                        "NAME_REPLAYED"
                    ]
                    .contains(&a.body["errorCode"].as_str().unwrap()),
                    "{}",
                    a.body
                ),
                _ => panic!("{name}: {}: {}", a.status, a.body),
            }
        }
        assert!(ok >= 1, "{name}: registered");
        assert_eq!(
            usdc_balance(&devnet, CHAIN, w.address()).await,
            usdc(6),
            "{name}: paid once"
        );
    }
    assert_eq!(
        usdc_balance(&devnet, CHAIN, relayer).await,
        start + usdc(12)
    );
    drop(host);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_in_its_premium_window_is_bought_at_the_decayed_premium_with_the_clock_moved() {
    let t0 = SystemClock.now_ms();
    let clock = ManualClock::at(t0);
    let (devnet, _dir, host) = devnet_and_host(Some(clock.clone())).await;
    let base = &host.base;
    let relayer = devnet.relayer;
    let (first, later) = (
        holding(&devnet, 10_000_000).await,
        holding(&devnet, 6_000_000_000).await,
    );
    let pay = x_payment(&devnet, &first, relayer, usdc(4), now_secs() + 300);
    let a = post(
        base,
        LIST,
        &listing(&first, "erin5", t0),
        &[("x-payment", &pay)],
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    use relay_messaging::names::{GRACE_MS, PREMIUM_MS, YEAR_MS};
    let halfway = t0 + YEAR_MS + GRACE_MS + PREMIUM_MS / 2;
    clock.set(halfway);
    let (_, q) = common::get(&format!("{base}/api/relaynames/quote?name=erin5")).await;
    assert_eq!(
        (q["state"].as_str(), q["totalUsd"].as_str()),
        (Some("premium"), Some("5004.00")),
        "{q}"
    );
    let body = listing(&later, "erin5", halfway);
    let a = post(base, LIST, &body, &[]).await;
    assert_eq!(
        a.body["accepts"][0]["maxAmountRequired"], "5004000000",
        "{}",
        a.body
    );
    let before = (halfway / 1_000).max(now_secs()) + 600;
    let pay = x_payment(
        &devnet,
        &later,
        relayer,
        U256::from(5_004_000_000u64),
        before,
    );
    let a = post(base, LIST, &body, &[("x-payment", &pay)]).await;
    assert_eq!(
        (a.status, a.body["owner"].as_str()),
        (200, Some(lower(later.address()).as_str())),
        "{}",
        a.body
    );
    assert_eq!(
        usdc_balance(&devnet, CHAIN, later.address()).await,
        U256::from(996_000_000u64)
    );
    drop(host);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_x402_python_client_buys_a_name() {
    let (devnet, _dir, host) = devnet_and_host(None).await;
    let buyer = holding(&devnet, 10_000_000).await;
    let url = format!("{}{LIST}", host.base);
    let body = listing(&buyer, "frank", SystemClock.now_ms());
    let answer = pay_with_python_x402(&devnet, &url, &body, &buyer, ("py-name", 4_000_000)).await;
    assert_eq!(
        (answer["status"].as_u64(), answer["body"]["name"].as_str()),
        (Some(200), Some("frank")),
        "{answer}"
    );
    assert_eq!(answer["receipt"]["success"], true, "{answer}");
    assert_eq!(usdc_balance(&devnet, CHAIN, buyer.address()).await, usdc(6));
    drop(host);
    devnet.stop();
}

/// A gift of `name` from `owner` to `receiver`, both signing at `ts`.
fn gift(owner: &PrivateKeySigner, receiver: &PrivateKeySigner, name: &str, ts: u64) -> Value {
    let (from, to) = (lower(owner.address()), lower(receiver.address()));
    let text = |side: &str| relay_messaging::http::transfer_text(side, name, &from, &to, ts);
    json!({"name": name, "from": from, "to": to,
        "release": {"ts": ts, "sig": sign(owner, &text("release"))},
        "accept": {"ts": ts, "sig": sign(receiver, &text("accept"))}})
}

/// A sale through a `relay serve` halted right after the buyer's payment
/// settled (`RELAY_FAULT_ORDER=settled`) and killed there with SIGKILL;
/// after the restart the resume job finishes it: the name moves and the
/// seller is paid once — or, when the seller gave the name away before
/// the order was resumed, the buyer is refunded in full. Never neither,
/// never twice.
async fn sale_killed_after_settling(
    devnet: &Devnet,
    sims: &relay_simulators::Simulators,
    given_away: bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    common::write_host_config(devnet, sims, dir.path(), port, |c| {
        let names = |m: &mut relay_messaging::MessagingConfig| {
            m.names.lease_ms = 8_000;
            m.names.resume_interval_ms = 200;
        };
        c.sections.edit(relay_messaging::SECTION, names).unwrap();
    });
    let base = format!("http://127.0.0.1:{port}");
    let relayer = devnet.relayer;
    let (seller, buyer, other) = (
        holding(devnet, 0).await,
        holding(devnet, 20_000_000).await,
        PrivateKeySigner::random(),
    );
    let name = if given_away {
        "given-away"
    } else {
        "sold-once"
    };
    let mut child =
        common::spawn_host_with(dir.path(), &[(relay_x402::orders::FAULT_ENV, "settled")]);
    common::wait_ready(&base).await;
    let free = post(
        &base,
        LIST,
        &listing(&seller, name, SystemClock.now_ms()),
        &[],
    )
    .await;
    assert_eq!(free.status, 200, "{}", free.body);
    let relayer0 = usdc_balance(devnet, CHAIN, relayer).await;
    let offer = sale(&seller, &buyer, name, "10.00", SystemClock.now_ms());
    let pay = x_payment(devnet, &buyer, relayer, usdc(10), now_secs() + 300);
    let headers = [("x-payment", pay.as_str()), ("x-idempotency-key", name)];
    let request = common::http()
        .post(format!("{base}{TRANSFER}"))
        .json(&offer)
        .header("x-payment", pay.as_str())
        .header("x-idempotency-key", name)
        .send();
    let pending = tokio::spawn(request);
    let log = dir.path().join("host.log");
    common::wait_for("the host to halt after settling", async || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("halted here until killed"))
    })
    .await;
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(pending.await.unwrap().is_err(), "the host died");
    assert_eq!(
        usdc_balance(devnet, CHAIN, relayer).await,
        relayer0 + usdc(10),
        "settled before the crash"
    );

    let mut child = common::spawn_host(dir.path());
    common::wait_ready(&base).await;
    if given_away {
        // within the dead holder's lease: the order is not resumed yet
        let g = post(
            &base,
            TRANSFER,
            &gift(&seller, &other, name, SystemClock.now_ms()),
            &[],
        )
        .await;
        assert_eq!(g.status, 200, "{}", g.body);
    }
    let mut last = Value::Null;
    common::wait_for("the order to finish after the restart", async || {
        let a = post(&base, TRANSFER, &offer, &headers).await;
        last = a.body.clone();
        a.status == 200 || a.body["errorCode"] == "NAME_ORDER_REFUNDED"
    })
    .await;
    let (_, q) = common::get(&format!("{base}/api/relaynames/quote?name={name}")).await;
    let (seller1, buyer1) = (
        usdc_balance(devnet, CHAIN, seller.address()).await,
        usdc_balance(devnet, CHAIN, buyer.address()).await,
    );
    if given_away {
        assert_eq!(last["errorCode"], "NAME_ORDER_REFUNDED", "{last}");
        assert_eq!(
            (seller1, buyer1),
            (U256::ZERO, usdc(20)),
            "refunded in full, nobody paid out"
        );
        assert_eq!(q["owner"], lower(other.address()), "{q}");
    } else {
        assert_eq!(last["owner"], lower(buyer.address()), "{last}");
        assert_eq!(
            (seller1, buyer1),
            (usdc(9), usdc(10)),
            "paid once, less the 1 USD fee"
        );
        assert_eq!(
            usdc_balance(devnet, CHAIN, relayer).await,
            relayer0 + usdc(1)
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_after_a_sale_settled_moves_the_name_once_or_refunds_after_restart() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    sale_killed_after_settling(&devnet, &sims, false).await;
    sale_killed_after_settling(&devnet, &sims, true).await;
    devnet.stop();
}
