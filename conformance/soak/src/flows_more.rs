//! The flows beyond a single signed execute: a policy-gated agent session
//! (issued by the owner, funded, spent by its bearer, revoked), a netting
//! withdrawal (enrol, deposit on chain, withdraw to a fresh address), and
//! a live route batch (the owner's, paid from the relayer's float).

use std::time::Duration;

use alloy::{primitives::Address, signers::SignerSync};
use serde_json::{json, Value};

use crate::world::{Lcg, Payout, Started, World, DST, SRC};

/// The devnet's owner token (publicly known: `relay devnet` prints it).
const OWNER: &str = "Bearer relay-devnet-owner-token";

fn route(amount: u64, to: Address) -> Value {
    json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
           "amount": amount.to_string(), "toAddress": to})
}

async fn owner_post(w: &World, name: &'static str, path: &str, body: &Value) -> Option<Value> {
    let answer = w
        .client
        .send_until(name, Duration::from_secs(20), |h, b| {
            h.post(format!("{b}{path}"))
                .header("authorization", OWNER)
                .json(body)
        })
        .await;
    match answer {
        Some((200, v)) => Some(v),
        _ => None,
    }
}

/// Issue, fund, spend once, revoke.
pub async fn session(w: &World, rng: &mut Lcg) {
    let (user, amount, recipient) = crate::flows::parties(w, rng);
    let refund = relay_devnet::keys::anvil_address(user);
    let policy = json!({
        "chains": [SRC, DST], "tokens": ["USDC"], "recipients": [recipient],
        "perTxCap": "40000000", "rolling24hCap": "80000000",
        "expiresAt": crate::world::now_secs() + 3_600,
    });
    let issue = json!({"label": "soak", "policy": policy, "refundTo": refund});
    let Some(s) = owner_post(w, "POST /api/session/issue", "/api/session/issue", &issue).await
    else {
        return;
    };
    let (Some(id), Some(bearer), Some(fund)) = (
        s["id"].as_str(),
        s["bearer"].as_str(),
        s["fundAddress"]
            .as_str()
            .and_then(|a| a.parse::<Address>().ok()),
    ) else {
        return;
    };
    if w.transfer_usdc(SRC, refund, fund, amount).await.is_ok() {
        let key = format!("soak-ses-{}", w.next());
        let auth = format!("Bearer {bearer}");
        let body = route(amount, recipient);
        let answer = w
            .client
            .send_until(
                "POST /api/session/execute",
                Duration::from_secs(20),
                |h, b| {
                    h.post(format!("{b}/api/session/execute"))
                        .header("authorization", &auth)
                        .header("x-idempotency-key", &key)
                        .json(&body)
                },
            )
            .await;
        if let Some((200, r)) = answer {
            if let Some(rid) = r["id"].as_str() {
                w.record(Started {
                    id: rid.to_string(),
                    kind: "session".into(),
                    payer: fund,
                    amount,
                    recipient,
                    hooked: false,
                });
            }
        }
    }
    owner_post(
        w,
        "POST /api/session/revoke",
        "/api/session/revoke",
        &json!({"id": id}),
    )
    .await;
}

/// Enrol (once per user), deposit on chain, withdraw to a fresh address.
pub async fn netting(w: &World, rng: &mut Lcg) {
    let _one = w.netting_lock.lock().await;
    let user = 1 + rng.below(8) as usize;
    let signer = relay_devnet::keys::anvil_signer(user);
    let who = signer.address();
    let who_lc = format!("{who:#x}");
    let Some((200, terms)) = w
        .client
        .send("GET /api/netting/terms", |h, b| {
            h.get(format!("{b}/api/netting/terms?address={who_lc}"))
        })
        .await
    else {
        return;
    };
    let Some(text) = terms["text"].as_str() else {
        return;
    };
    let Ok(sig) = signer.sign_message_sync(text.as_bytes()) else {
        return;
    };
    let enrol = json!({"address": who_lc, "signature": sig.to_string()});
    if !matches!(
        w.client
            .send("POST /api/netting/enroll", |h, b| h
                .post(format!("{b}/api/netting/enroll"))
                .json(&enrol))
            .await,
        Some((200, _))
    ) {
        return;
    }
    let deposit = 10_000_000u64;
    let Ok(tx) = w.transfer_usdc(SRC, who, w.relayer, deposit).await else {
        return;
    };
    let body = json!({"address": who_lc, "chainId": SRC, "txHash": tx});
    let credited = w
        .client
        .send_until(
            "POST /api/netting/deposit",
            Duration::from_secs(20),
            |h, b| h.post(format!("{b}/api/netting/deposit")).json(&body),
        )
        .await;
    if !matches!(credited, Some((200, _))) {
        return;
    }
    w.netting_deposit(deposit);
    let nonce = terms["nonce"].as_u64().unwrap_or(0) + 1;
    let amount = 5_000_000u64;
    let to = w.fresh_address();
    let text = format!(
        "relay-netting-withdraw:v1:from={who_lc}:amount={amount}:toChain={DST}:to={to:#x}:nonce={nonce}"
    );
    let Ok(sig) = signer.sign_message_sync(text.as_bytes()) else {
        return;
    };
    let body = json!({"address": who_lc, "amount": amount.to_string(), "toChain": DST,
                      "toAddress": format!("{to:#x}"), "nonce": nonce, "signature": sig.to_string()});
    let answer = w
        .client
        .send_until(
            "POST /api/netting/withdraw",
            Duration::from_secs(20),
            |h, b| h.post(format!("{b}/api/netting/withdraw")).json(&body),
        )
        .await;
    if let Some((200, r)) = answer {
        w.payout(Payout {
            id: r["id"].as_str().unwrap_or_default().to_string(),
            kind: "netting:withdraw".into(),
            recipient: to,
            state: r["state"].as_str().unwrap_or_default().to_string(),
            net: r["net"].as_str().and_then(|n| n.parse().ok()),
        });
    }
}

/// A live batch of two routes, paid from the relayer's float.
pub async fn batch(w: &World, _rng: &mut Lcg) {
    let legs: Vec<(u64, Address)> = (0..2)
        .map(|_| (20_000_000 + w.next() * 7, w.fresh_address()))
        .collect();
    let body = json!({"routes": legs.iter().map(|(a, to)| route(*a, *to)).collect::<Vec<_>>(), "live": true});
    let Some(b) = owner_post(w, "POST /api/route/batch", "/api/route/batch", &body).await else {
        return;
    };
    let Some(id) = b["id"].as_str() else { return };
    let path = format!("/api/route/batch/{id}/run");
    let Some(run) = owner_post(w, "POST /api/route/batch/{id}/run", &path, &json!({})).await else {
        return;
    };
    for r in run["runs"].as_array().into_iter().flatten() {
        let (Some(rid), Some(i)) = (r["routeId"].as_str(), r["index"].as_u64()) else {
            continue;
        };
        let Some((amount, recipient)) = legs.get(i as usize).copied() else {
            continue;
        };
        w.record(Started {
            id: rid.to_string(),
            kind: "batch".into(),
            payer: w.relayer,
            amount,
            recipient,
            hooked: false,
        });
    }
}
