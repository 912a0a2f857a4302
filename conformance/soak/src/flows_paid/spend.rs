//! A yield-account spend, as an agent makes one: a fresh agent deposits
//! USDC into the vault and lets the relayer pull some of its shares;
//! asks a quote; signs the EIP-712 intent and POSTs it live with an
//! idempotency key (the same key on every retry). Its delivery is an
//! ordinary route, recorded with the others.

use std::time::Duration;

use alloy::{
    primitives::{keccak256, Address, U256},
    signers::local::PrivateKeySigner,
};
use relay_devnet::client::ncaccount::{self, Intent};
use serde_json::{json, Value};

use super::Spent;
use crate::world::{now_secs, Lcg, Started, World, DST, SRC};

/// What the agent deposits (30 USDC) and lets the relayer pull (25 USDC).
const DEPOSIT: u64 = 30_000_000;
const ALLOWED: u64 = 25_000_000;
/// How long a client keeps retrying one request with its key.
const PATIENCE: Duration = Duration::from_secs(45);
/// The states a spend ends in.
pub(crate) const ENDED: [&str; 4] = ["DELIVERED", "REFUNDED", "FAILED", "NOT_RECORDED"];

/// Open the account, quote, spend.
pub async fn yield_spend(w: &World, _rng: &mut Lcg) {
    let agent = PrivateKeySigner::random();
    let me = agent.address();
    let vault = relay_devnet::deploy::vault_address();
    let opened = ncaccount::open(
        w.rpc[&SRC].clone(),
        (w.usdc[&SRC], vault),
        w.relayer,
        &agent,
        (U256::from(DEPOSIT), U256::from(ALLOWED)),
    )
    .await;
    let opened = match opened {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!("yield spend: opening the account: {e}");
            return;
        }
    };
    let amount = 10_000_000 + w.next() * 7;
    let to = w.fresh_address();
    let ask = json!({"agent": me, "srcChain": SRC, "amount": amount.to_string(),
                     "toChain": DST, "toAddress": to});
    let quoted = w
        .client
        .send_until(
            "POST /api/ncaccount/quote",
            Duration::from_secs(20),
            |h, b| h.post(format!("{b}/api/ncaccount/quote")).json(&ask),
        )
        .await;
    let Some((200, q)) = quoted else { return };
    if q["wouldSucceed"] != true {
        return;
    }
    let nonce = w.next();
    let intent = Intent {
        agent: me,
        src_chain: SRC,
        amount: U256::from(amount),
        to_chain: DST,
        to_address: to,
        nonce: U256::from(nonce),
        deadline: now_secs() + 900,
    };
    let body = ncaccount::spend_body(&agent, &intent, (SRC, vault));
    let key = format!("soak-nc-{}", w.next());
    let answer = w
        .client
        .send_until("POST /api/ncaccount/spend", PATIENCE, |h, b| {
            h.post(format!("{b}/api/ncaccount/spend"))
                .header("x-idempotency-key", &key)
                .json(&body)
        })
        .await;
    let mut rec = Spent {
        // the host names a spend by its agent, chain and nonce: followed
        // even when the answer was lost (a 409 NONCE_USED on the retry
        // after the first request's replica died); a 404 there means the
        // host never recorded it
        id: Some(spend_id(me, SRC, nonce)),
        state: None,
        agent: me,
        shares: opened.shares,
        amount,
        routed: q["routed"]
            .as_str()
            .and_then(|r| r.parse().ok())
            .unwrap_or_default(),
        recipient: to,
        route: None,
    };
    if let Some((200, r)) = &answer {
        follow(w, &mut rec, r);
    }
    w.paid.spends.lock().expect("ledger").push(rec);
}

/// Takes what spend answer `r` says into `rec`; records its delivery
/// route with the others the first time it is named.
pub(crate) fn follow(w: &World, rec: &mut Spent, r: &Value) {
    if let Some(id) = r["id"].as_str() {
        rec.id = Some(id.to_string());
    }
    rec.state = r["state"].as_str().map(String::from);
    if let (None, Some(route)) = (&rec.route, r["routeId"].as_str()) {
        rec.route = Some(route.to_string());
        // paid from the relayer's float: nothing pulled from a user
        w.record(Started {
            id: route.to_string(),
            kind: "yield-spend".into(),
            payer: w.relayer,
            amount: rec.routed,
            recipient: rec.recipient,
            hooked: false,
        });
    }
}

/// The id the host gives the spend of `agent` on `chain` with `nonce`
/// (`host/yield_account/src/spend.rs`).
fn spend_id(agent: Address, chain: u64, nonce: u64) -> String {
    let key = format!("{}:{chain}:{nonce}", agent.to_string().to_lowercase());
    format!("nc_{}", &hex::encode(keccak256(key.as_bytes()))[..24])
}
