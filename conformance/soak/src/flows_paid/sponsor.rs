//! A sponsorship, as a wallet makes one: a fresh EOA with zero ETH (USDC
//! and USDT minted to it) signs an EIP-7702 authorization to the batch
//! executor and an `executeSigned` batch paying two fresh recipients;
//! the unpaid POST answers 402 with the x402 invoice; the EOA signs an
//! EIP-3009 payment of it and POSTs again with `X-PAYMENT` and an
//! idempotency key — the same key and payment on every retry.

use std::time::Duration;

use alloy::{
    primitives::{Address, U256},
    signers::local::PrivateKeySigner,
};
use relay_devnet::client::{
    sponsor::{self, Transfer},
    x402::{x_payment, Exact},
};
use serde_json::Value;

use super::Sponsored;
use crate::{
    client::Answer,
    world::{now_secs, Lcg, World, SRC},
};

/// What the payer is minted: 10 USDC and 5 USDT.
const MINTED: (u64, u64) = (10_000_000, 5_000_000);
/// How long a client keeps retrying one request with its key and payment.
const PATIENCE: Duration = Duration::from_secs(45);

/// POSTs the ask, with `payment` and `key` when given, retrying while the
/// API says to (the same key and payment each time).
pub(crate) async fn post(
    w: &World,
    body: &Value,
    paid: Option<(&str, &str)>,
    within: Duration,
) -> Option<Answer> {
    let name = match paid {
        Some(_) => "POST /api/7702/sponsor",
        None => "POST /api/7702/sponsor (unpaid)",
    };
    w.client
        .send_until(name, within, |h, b| {
            let r = h.post(format!("{b}/api/7702/sponsor")).json(body);
            match paid {
                Some((header, key)) => r
                    .header("x-payment", header)
                    .header("x-idempotency-key", key),
                None => r,
            }
        })
        .await
}

/// Delegate, batch, 402, pay, sponsored.
pub async fn sponsor(w: &World, _rng: &mut Lcg) {
    let user = PrivateKeySigner::random();
    let (usdc, usdt) = (w.usdc[&SRC], w.usdt[&SRC]);
    let minted = [(usdc, MINTED.0), (usdt, MINTED.1)];
    if let Err(e) = w.paid.mint(w, SRC, user.address(), &minted).await {
        tracing::warn!("sponsor: minting the payer's tokens: {e:#}");
        return;
    }
    // unique amounts: 1.5 USDC and 2 USDT, a few units more each time
    let n = w.next() % 10_000;
    let batch = [
        (w.fresh_address(), 1_500_000 + n),
        (w.fresh_address(), 2_000_000 + n),
    ];
    let transfers: Vec<Transfer> = [usdc, usdt]
        .iter()
        .zip(batch)
        .map(|(token, (to, amount))| Transfer {
            token: *token,
            to,
            amount: U256::from(amount),
        })
        .collect();
    let delegate = relay_devnet::DELEGATE_ADDRESS;
    let body = sponsor::ask(&user, (SRC, delegate), &transfers, now_secs() + 3_600);
    let key = format!("soak-sp-{}", w.next());
    let mut rec = Sponsored {
        id: None,
        state: None,
        payer: user.address(),
        minted: MINTED,
        pay_to: Address::ZERO,
        offered: Vec::new(),
        batch,
        ask: (body.clone(), String::new(), key.clone()),
    };
    // a second invoice when the price rose between the 402 and the payment
    for _ in 0..2 {
        let Some((402, invoice)) = post(w, &body, None, PATIENCE).await else {
            break;
        };
        let exact = match Exact::from_accept(&invoice["accepts"][0], SRC, now_secs() + 300) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("sponsor: {e}");
                break;
            }
        };
        let header = x_payment(&user, &exact);
        rec.pay_to = exact.pay_to;
        rec.offered.push(exact.value.saturating_to());
        rec.ask.1 = header.clone();
        match post(w, &body, Some((&header, &key)), PATIENCE).await {
            Some((402, r)) if r["errorCode"] == "PAYMENT_INSUFFICIENT" => continue,
            Some(answer) => {
                settle(&mut rec, &answer);
                break;
            }
            None => break,
        }
    }
    if !rec.offered.is_empty() {
        w.paid.sponsorships.lock().expect("ledger").push(rec);
    }
}

/// What `answer` says of the sponsorship: its record's state, or that the
/// payment was refused before anything was recorded (`UNPAID`), or
/// nothing yet (still in flight, or unanswered).
pub(crate) fn settle(rec: &mut Sponsored, (status, body): &Answer) {
    match status {
        200 => {
            rec.id = body["id"].as_str().map(String::from);
            rec.state = body["state"].as_str().map(String::from);
        }
        // a refused payment (402) or ask (4xx): the key names no record
        402 | 400 | 422 => rec.state = Some("UNPAID".into()),
        409 if body["retryable"] != true => rec.state = Some("UNPAID".into()),
        _ => {}
    }
}
