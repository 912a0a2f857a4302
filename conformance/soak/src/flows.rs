//! The traffic: what API clients do, as they do it. Each flow is one
//! client action — reads (quotes, compares, status, the mesh), executes in
//! their forms (a Permit2 signature on the float lane and on each
//! aggregator rail, a router intent signed in one signature), sandbox
//! routes, route streams, webhooks, and the flows a client pays for
//! itself (`flows_paid`: sponsorships, yield spends). A flow that starts a
//! route records it in the [`World`]'s ledger with the unique amount it
//! pulls and the fresh address it pays.

use std::time::Duration;

use alloy::primitives::{Address, U256};
use serde_json::{json, Value};

use crate::world::{now_secs, Lcg, Started, World, DST, SRC, USERS};

/// How long a client keeps retrying one execute with its key.
const EXECUTE_PATIENCE: Duration = Duration::from_secs(20);

/// The flows and their weights (how often a worker picks each).
pub const MIX: &[(&str, u64)] = &[
    ("quote", 20),
    ("compare", 8),
    ("status", 15),
    ("mesh", 5),
    ("execute:floatlane", 8),
    ("execute:lifi", 4),
    ("execute:squid", 2),
    ("execute:bungee", 2),
    ("router:lifi", 3),
    ("sandbox", 4),
    ("stream", 3),
    ("session", 2),
    ("netting", 2),
    ("batch", 1),
    ("sponsor", 2),
    ("yield", 2),
];

/// Picks a flow by weight.
pub fn pick(rng: &mut Lcg) -> &'static str {
    let total: u64 = MIX.iter().map(|(_, w)| w).sum();
    let mut at = rng.below(total);
    for (name, w) in MIX {
        if at < *w {
            return name;
        }
        at -= w;
    }
    MIX[0].0
}

/// Runs flow `name` once.
pub async fn run(w: &World, name: &str, rng: &mut Lcg) {
    match name {
        "quote" => quote(w, rng).await,
        "compare" => compare(w, rng).await,
        "status" => status(w, rng).await,
        "mesh" => mesh(w).await,
        "sandbox" => sandbox(w, rng).await,
        "stream" => stream(w, rng).await,
        "router:lifi" => router(w, rng, "lifi").await,
        "session" => crate::flows_more::session(w, rng).await,
        "netting" => crate::flows_more::netting(w, rng).await,
        "batch" => crate::flows_more::batch(w, rng).await,
        "sponsor" => crate::flows_paid::sponsor(w, rng).await,
        "yield" => crate::flows_paid::yield_spend(w, rng).await,
        other => match other.strip_prefix("execute:") {
            Some(rail) => execute(w, rng, rail).await,
            None => tracing::warn!(flow = other, "unknown flow"),
        },
    }
}

fn route_request(amount: u64, to: Address) -> Value {
    json!({
        "fromChain": SRC, "toChain": DST, "fromToken": "USDC", "toToken": "USDC",
        "amount": amount.to_string(), "toAddress": to,
    })
}

async fn quote(w: &World, rng: &mut Lcg) {
    let body = route_request(2_000_000 + rng.below(50_000_000), w.fresh_address());
    w.client
        .send("POST /api/route/quote", |h, b| {
            h.post(format!("{b}/api/route/quote")).json(&body)
        })
        .await;
}

async fn compare(w: &World, rng: &mut Lcg) {
    let amount = 2_000_000 + rng.below(50_000_000);
    w.client
        .send("GET /api/route/compare", |h, b| {
            h.get(format!(
                "{b}/api/route/compare?fromChain={SRC}&toChain={DST}&amount={amount}&fromToken=USDC&toToken=USDC"
            ))
        })
        .await;
}

async fn status(w: &World, rng: &mut Lcg) {
    let Some(id) = w.some_route(rng.below(u64::MAX >> 1)) else {
        return;
    };
    w.client
        .send("GET /api/route/status", |h, b| {
            h.get(format!("{b}/api/route/status?id={id}"))
        })
        .await;
}

async fn mesh(w: &World) {
    w.client
        .send("GET /api/route/chains", |h, b| {
            h.get(format!("{b}/api/route/chains"))
        })
        .await;
    w.client
        .send("GET /api/status", |h, b| h.get(format!("{b}/api/status")))
        .await;
}

/// A user, a unique amount and a fresh recipient for one route.
pub fn parties(w: &World, rng: &mut Lcg) -> (usize, u64, Address) {
    let user = *USERS.start() + rng.below(USERS.clone().count() as u64) as usize;
    // unique per route: the chain's transfers of exactly this amount are
    // this route's
    let amount = 20_000_000 + w.next() * 7;
    (user, amount, w.fresh_address())
}

/// `user`'s Permit2 signature for the relayer over `amount` USDC on SRC.
fn permit(w: &World, user: usize, amount: u64) -> Value {
    relay_devnet::contracts::PermitGrant {
        chain: SRC,
        token: w.usdc[&SRC],
        amount: U256::from(amount),
        spender: w.relayer,
        nonce: U256::from((1u64 << 45) + w.next()),
        deadline: now_secs() + 900,
    }
    .signed_by(&relay_devnet::keys::anvil_signer(user))
}

/// Sends an execute with an idempotency key until it is answered, as a
/// client does; registers a webhook for the route it started.
async fn submit(
    w: &World,
    body: Value,
    kind: String,
    (user, amount, recipient): (usize, u64, Address),
) {
    let key = format!("soak-{}", w.next());
    let answer = w
        .client
        .send_until("POST /api/route/execute", EXECUTE_PATIENCE, |h, b| {
            h.post(format!("{b}/api/route/execute"))
                .header("x-idempotency-key", &key)
                .json(&body)
        })
        .await;
    let Some((200, r)) = answer else {
        return;
    };
    let Some(id) = r["id"].as_str().map(String::from) else {
        return;
    };
    let hooked = hook(w, &id, user).await;
    w.record(Started {
        id,
        kind,
        payer: relay_devnet::keys::anvil_address(user),
        amount,
        recipient,
        hooked,
    });
}

/// Registers the receiver for `id`'s events, proven by `user`'s signature
/// (the route's sender); whether it was.
async fn hook(w: &World, id: &str, user: usize) -> bool {
    use alloy::signers::SignerSync;
    let text = format!("relay-hook:v1:route={id}:url={}", w.hook_url);
    let Ok(sig) = relay_devnet::keys::anvil_signer(user).sign_message_sync(text.as_bytes()) else {
        return false;
    };
    let body = json!({
        "routeId": id, "url": w.hook_url, "secret": "soak-secret-0123456789",
        "signature": sig.to_string(),
    });
    let answer = w
        .client
        .send_until("POST /api/hooks", Duration::from_secs(20), |h, b| {
            h.post(format!("{b}/api/hooks")).json(&body)
        })
        .await;
    matches!(answer, Some((200 | 201, _)))
}

async fn execute(w: &World, rng: &mut Lcg, rail: &str) {
    let (user, amount, recipient) = parties(w, rng);
    let mut body = route_request(amount, recipient);
    body["mode"] = json!("permit2");
    body["live"] = json!(true);
    body["rail"] = json!(rail);
    body["permit2"] = permit(w, user, amount);
    submit(
        w,
        body,
        format!("permit2:{rail}"),
        (user, amount, recipient),
    )
    .await;
}

async fn router(w: &World, rng: &mut Lcg, rail: &str) {
    let (user, amount, recipient) = parties(w, rng);
    let owner = relay_devnet::keys::anvil_signer(user);
    let mut ask = route_request(amount, recipient);
    ask["fromAddress"] = json!(owner.address());
    ask["rail"] = json!(rail);
    let prepared = w
        .client
        .send_until("POST /api/route/intent", Duration::from_secs(20), |h, b| {
            h.post(format!("{b}/api/route/intent")).json(&ask)
        })
        .await;
    let Some((200, p)) = prepared else {
        return;
    };
    let form = &p["forms"]["permit2Witness"];
    if form["usable"] != true {
        return;
    }
    let Ok(body) = relay_chain::typed::sign_form(form, &owner) else {
        tracing::warn!("a prepared form that does not sign: {form}");
        return;
    };
    submit(w, body, format!("router:{rail}"), (user, amount, recipient)).await;
}

async fn sandbox(w: &World, rng: &mut Lcg) {
    let (user, amount, to) = parties(w, rng);
    let mut body = route_request(amount, to);
    body["mode"] = json!("permit2");
    body["permit2"] = permit(w, user, amount);
    w.client
        .send("POST /api/route/execute (sandbox)", |h, b| {
            h.post(format!("{b}/api/route/execute"))
                .header("x-relay-sandbox", "1")
                .json(&body)
        })
        .await;
}

/// Follows a live route's stream for a few seconds (or to its end).
async fn stream(w: &World, rng: &mut Lcg) {
    let Some(id) = w.some_route(rng.below(u64::MAX >> 1)) else {
        return;
    };
    let base = w.client.base().to_string();
    let started = std::time::Instant::now();
    let resp = w
        .client
        .http
        .get(format!("{base}/api/route/stream?id={id}"))
        .timeout(Duration::from_secs(8))
        .send()
        .await;
    let Ok(mut resp) = resp else {
        return;
    };
    let status = resp.status().as_u16();
    let mut events = 0;
    while let Ok(Some(chunk)) = resp.chunk().await {
        events += chunk.windows(6).filter(|c| c == b"event:").count();
        if events > 0 && started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    let wrong = (status == 200 && events == 0).then(|| format!("stream of {id}: no event"));
    w.client
        .note("GET /api/route/stream", (status, started.elapsed()), wrong);
}
