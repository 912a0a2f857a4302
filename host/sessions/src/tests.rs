//! The session service over a real store (SQLite) and a scripted runner:
//! which form a route is signed in, what a refusal releases, the retry
//! after a concurrent approval, revoke, expiry and the rolling cap.

use std::sync::{
    atomic::{AtomicBool, AtomicU32, Ordering},
    Arc, Mutex,
};

use alloy::primitives::{Address, U256};
use async_trait::async_trait;
use relay_chain::{signer::RelayerSigner, typed};
use relay_config::{ChainConfig, HostConfig, TokenConfig};
use relay_store::Store;
use relay_types::{clock::ManualClock, RelayIntent};
use serde_json::{json, Value};

use super::*;

const KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const TOKEN: &str = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const ROUTER: &str = "0x0000000000000000000000000000000000000009";
const RECIPIENT: &str = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const NOW_MS: u64 = 1_700_000_000_000;

fn config() -> HostConfig {
    let mut c = HostConfig::default();
    for id in ["8453", "42161"] {
        let token = TokenConfig {
            address: TOKEN.into(),
            decimals: 6,
        };
        c.chains.insert(
            id.into(),
            ChainConfig {
                tokens: [("USDC".to_string(), token)].into_iter().collect(),
                router: Some(ROUTER.into()),
                ..Default::default()
            },
        );
    }
    c
}

/// A runner that prepares intents in the shape `POST /api/route/intent`
/// answers, records the bodies it is asked to execute, and refuses the
/// first when told to (approving the router "meanwhile").
#[derive(Default)]
struct Scripted {
    refuse_first: bool,
    approve_on_refusal: bool,
    route_exists: bool,
    approved: AtomicBool,
    prepared: AtomicU32,
    bodies: Mutex<Vec<Value>>,
}

fn intent() -> RelayIntent {
    RelayIntent {
        recipient: RECIPIENT.into(),
        to_chain: "42161".into(),
        to_token: TOKEN.into(),
        min_out: U256::from(1u64),
        rail: "floatlane".into(),
        plan_hash: Default::default(),
        fee_cap: U256::from(10u64),
        deadline: U256::from(NOW_MS / 1000 + 600),
    }
}

fn form(owner: Address, amount: U256, with_permit: bool) -> Value {
    let token: Address = TOKEN.parse().unwrap();
    let router: Address = ROUTER.parse().unwrap();
    let domain = |name: &str, contract| typed::Domain {
        name: name.into(),
        version: Some("1".into()),
        chain_id: 8453,
        verifying_contract: contract,
    };
    let mut sign = Vec::new();
    let mut fill = Vec::new();
    let mut body = json!({"mode": if with_permit { "erc2612" } else { "intent" }, "order": {"signature": null}});
    if with_permit {
        let d = domain("USD Coin", token);
        let deadline = U256::from(NOW_MS / 1000 + 600);
        sign.push(typed::permit(
            &d,
            (owner, router),
            amount,
            U256::ZERO,
            deadline,
        ));
        fill.push("erc2612.signature");
        body["erc2612"] = json!({"value": amount.to_string(), "deadline": deadline.to_string(), "signature": null});
    }
    let key = (owner, token, amount, U256::from(7u64));
    sign.push(typed::order(&domain("RelayRouter", router), key, &intent()));
    fill.push("order.signature");
    json!({"usable": true, "sign": sign, "fill": fill, "submitBody": body})
}

#[async_trait]
impl SessionRunner for Scripted {
    type Route = Value;
    type Ask = (Address, U256);
    type Receipt = String;
    type Error = String;

    fn parse(&self, route: &Value, owner: &str) -> Result<(RouteTerms, Self::Ask), String> {
        let token = || TokenTerm {
            symbol: "USDC".into(),
            address: Some(TOKEN.into()),
        };
        let amount = U256::from_str_radix(route["amount"].as_str().unwrap(), 10).unwrap();
        let terms = RouteTerms {
            from_chain: Some(8453),
            to_chain: Some(42161),
            to_chain_name: "42161".into(),
            from_token: token(),
            to_token: token(),
            recipient: route["toAddress"].as_str().unwrap().into(),
            amount,
        };
        Ok((terms, (owner.parse().unwrap(), amount)))
    }

    async fn prepare(&self, (owner, amount): &Self::Ask) -> Result<Value, String> {
        let n = self.prepared.fetch_add(1, Ordering::SeqCst);
        let approved = self.approved.load(Ordering::SeqCst);
        let allowance = if approved { U256::MAX } else { U256::ZERO };
        Ok(json!({
            "intentId": format!("rt_{n}"),
            "allowances": {"router": allowance.to_string()},
            "forms": {"erc2612": form(*owner, *amount, true), "intent": form(*owner, *amount, false)},
        }))
    }

    async fn execute(&self, body: Value, _key: Option<String>) -> Result<String, String> {
        let first = {
            let mut bodies = self.bodies.lock().unwrap();
            bodies.push(body);
            bodies.len() == 1
        };
        if first && self.refuse_first {
            if self.approve_on_refusal {
                self.approved.store(true, Ordering::SeqCst);
            }
            return Err("refused".into());
        }
        Ok(format!("rt_{}", self.prepared.load(Ordering::SeqCst) - 1))
    }

    async fn route_exists(&self, _id: &str) -> bool {
        self.route_exists
    }
}

struct World {
    service: SessionService,
    clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/t.db?mode=rwc", dir.path().display());
    let store = Store::connect(&url).await.unwrap();
    let clock = ManualClock::at(NOW_MS);
    let service = SessionService::new(SessionDeps {
        store: Arc::new(store),
        config: Arc::new(config()),
        keys: Some(RelayerSigner::from_hex(KEY).unwrap().session_keys()),
        clock: clock.clone(),
        sweep: None,
    });
    World {
        service,
        clock,
        _dir: dir,
    }
}

async fn issue(w: &World) -> SessionIssued {
    issue_for(w, 3_600).await
}

async fn issue_for(w: &World, ttl_secs: u64) -> SessionIssued {
    use relay_types::clock::Clock;
    let expires_at = w.clock.now_ms() / 1000 + ttl_secs;
    let body = json!({
        "refundTo": RECIPIENT,
        "policy": {"chains": [8453, 42161], "tokens": ["USDC"], "recipients": [RECIPIENT],
            "perTxCap": "2000000", "rolling24hCap": "5000000", "expiresAt": expires_at},
    });
    w.service
        .issue(&relay_wire::decode(&body).unwrap())
        .await
        .unwrap()
}

fn route(amount: u64) -> Value {
    json!({"amount": amount.to_string(), "toAddress": RECIPIENT})
}

async fn spent(w: &World, s: &SessionIssued) -> String {
    w.service.get(&s.id, Reader::Owner).await.unwrap().spent_24h
}

async fn run(
    w: &World,
    s: &SessionIssued,
    runner: &Scripted,
    amount: u64,
) -> Result<SessionExecuted<String>, ExecFailure<String>> {
    let bearer = Some(s.bearer.as_str());
    w.service
        .execute(runner, bearer, &route(amount), None)
        .await
}

#[tokio::test]
async fn the_first_route_approves_the_router_by_permit_and_later_ones_use_the_order_alone() {
    let w = world().await;
    let s = issue(&w).await;
    let first = Scripted::default();
    let done = run(&w, &s, &first, 2_000_000).await.unwrap();
    assert_eq!(
        (done.route_id.as_str(), done.receipt.as_str()),
        ("rt_0", "rt_0")
    );
    assert_eq!(
        (done.session.spent.as_str(), done.session.remaining.as_str()),
        ("2000000", "3000000")
    );
    let body = first.bodies.lock().unwrap()[0].clone();
    assert_eq!(body["mode"], "erc2612");
    assert_eq!(
        body["erc2612"]["value"],
        U256::MAX.to_string(),
        "a standing approval"
    );
    assert!(body["erc2612"]["signature"].is_string() && body["order"]["signature"].is_string());

    let later = Scripted::default();
    later.approved.store(true, Ordering::SeqCst);
    run(&w, &s, &later, 1_000_000).await.unwrap();
    let body = later.bodies.lock().unwrap()[0].clone();
    assert_eq!(body["mode"], "intent");
    assert!(body.get("erc2612").is_none(), "{body}");
    let view = w
        .service
        .get(&s.id, Reader::Bearer(Some(&s.bearer)))
        .await
        .unwrap();
    assert_eq!((view.spent_24h.as_str(), view.routes.len()), ("3000000", 2));
}

#[tokio::test]
async fn a_first_route_beaten_by_a_concurrent_approval_is_signed_again_as_an_order() {
    let w = world().await;
    let s = issue(&w).await;
    let runner = Scripted {
        refuse_first: true,
        approve_on_refusal: true,
        ..Default::default()
    };
    let done = run(&w, &s, &runner, 2_000_000).await.unwrap();
    let bodies = runner.bodies.lock().unwrap().clone();
    let modes: Vec<&Value> = bodies.iter().map(|b| &b["mode"]).collect();
    assert_eq!(modes, [&json!("erc2612"), &json!("intent")]);
    assert_eq!(done.route_id, "rt_1", "the second prepared intent");
    assert_eq!(spent(&w, &s).await, "2000000", "counted once");
}

#[tokio::test]
async fn a_refused_execute_releases_its_reservation_unless_its_route_exists() {
    let w = world().await;
    let s = issue(&w).await;
    let refused = Scripted {
        refuse_first: true,
        ..Default::default()
    };
    let e = run(&w, &s, &refused, 2_000_000).await.unwrap_err();
    assert!(
        matches!(e, ExecFailure::Run(ref m) if m == "refused"),
        "{e:?}"
    );
    assert_eq!(spent(&w, &s).await, "0", "released");
    let started = Scripted {
        refuse_first: true,
        route_exists: true,
        ..Default::default()
    };
    run(&w, &s, &started, 2_000_000).await.unwrap_err();
    assert_eq!(
        spent(&w, &s).await,
        "2000000",
        "its route exists: it stays counted"
    );
}

#[tokio::test]
async fn the_rolling_cap_says_what_remains_and_when_room_returns() {
    let w = world().await;
    let s = issue_for(&w, 2 * 86_400).await;
    for amount in [2_000_000, 2_000_000] {
        run(&w, &s, &Scripted::default(), amount).await.unwrap();
        w.clock.advance(1_000);
    }
    let over = run(&w, &s, &Scripted::default(), 1_500_000)
        .await
        .unwrap_err();
    let ExecFailure::Session(SessionError::Cap(cap)) = over else {
        panic!("{over:?}")
    };
    assert_eq!(cap.kind, CapKind::Rolling24h);
    assert_eq!(cap.spent, Some(U256::from(4_000_000u64)));
    assert_eq!(
        cap.room_at_ms,
        Some(NOW_MS + WINDOW_MS + 1),
        "when the first spend ages out"
    );
    assert_eq!(
        cap.retry_after_ms,
        Some(WINDOW_MS + 1 - 2_000),
        "measured from the refusal on the session's clock"
    );
    assert!(cap.to_string().contains("1000000 remains"), "{cap}");
    w.clock.advance(WINDOW_MS - 2_000 + 1);
    run(&w, &s, &Scripted::default(), 1_500_000).await.unwrap();
}

#[tokio::test]
async fn revoked_expired_and_unknown_bearers_are_refused_before_anything_runs() {
    let w = world().await;
    let s = issue(&w).await;
    let runner = Scripted::default();
    let bad = w
        .service
        .execute(&runner, Some("rsk_nope"), &route(1), None)
        .await;
    assert!(matches!(
        bad,
        Err(ExecFailure::Session(SessionError::Unauthorized(_)))
    ));
    w.clock.advance(3_600_000);
    let expired = run(&w, &s, &runner, 1_000_000).await.unwrap_err();
    assert!(
        matches!(expired, ExecFailure::Session(SessionError::Expired(_))),
        "{expired:?}"
    );
    let t = issue(&w).await;
    w.service.revoke(&t.id).await.unwrap();
    let revoked = run(&w, &t, &runner, 1_000_000).await.unwrap_err();
    assert!(
        matches!(revoked, ExecFailure::Session(SessionError::Revoked(_))),
        "{revoked:?}"
    );
    assert!(runner.bodies.lock().unwrap().is_empty(), "nothing ran");
    assert_eq!(
        w.service
            .status(&w.service.d.store.session(&t.id).await.unwrap().unwrap()),
        SessionStatus::Revoked
    );
}
