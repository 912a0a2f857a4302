//! The route primitives' live side (spec §2.12, §4.4): the runner of the
//! watcher's runs and a batch's legs — one execute under the run's key,
//! through the execute service `POST /api/route/execute` uses, with the
//! owner's authority the record carries — and the prices conditionals
//! read.

use std::sync::Arc;

use relay_engine::{oracle::PriceBook, request::ExecuteAsk};
use relay_errors::ApiError;
use relay_execution::{execute::ExecuteRequest, receipt::of_executed};
use relay_primitives::{
    price::{PriceSource, Usd},
    watcher::{execute_body, execute_request, RunResult, Runner, Watcher, WatcherDeps},
};
use relay_store::durable::{IdemKey, Idempotency, IdempotencyBegin, Once};
use serde_json::{json, Value};

use crate::Routing;

/// The live runner over the host's routing.
pub struct ExecuteRunner(Arc<Routing>);

impl ExecuteRunner {
    /// The runner over `routing`.
    pub fn new(routing: Arc<Routing>) -> Self {
        ExecuteRunner(routing)
    }
}

#[async_trait::async_trait]
impl Runner for ExecuteRunner {
    async fn run(&self, route: &Value, key: &str) -> RunResult {
        let d = self.0.deps();
        let guard = Idempotency::new(d.store.clone(), d.config.execution.idempotency_stale_ms);
        let key = IdemKey::route(key);
        // the run's request is the bytes its execute body serialises to
        let request = execute_body(route).to_string();
        let ran = guard
            .once(&key, request.as_bytes(), || async {
                let receipt = self.execute(route, key.as_str()).await?;
                Ok::<_, ApiError>((200, receipt.to_string(), receipt))
            })
            .await;
        match ran {
            Ok(Once::Ran(Ok(receipt))) => RunResult::Executed(receipt),
            Ok(Once::Ran(Err(e))) => {
                RunResult::Failed(json!({"error": e.message, "errorCode": e.code.as_str()}))
            }
            Ok(Once::Seen(seen)) => seen_before(&guard, &key, seen).await,
            Err(e) => RunResult::Retry(e.to_string()),
        }
    }
}

/// What a run whose key was seen before answers.
async fn seen_before(guard: &Idempotency, key: &IdemKey, seen: IdempotencyBegin) -> RunResult {
    match seen {
        IdempotencyBegin::Replay { status, body } => {
            let v: Value = serde_json::from_str(&body).unwrap_or_default();
            match status {
                200 => RunResult::Executed(v),
                _ => RunResult::Failed(v),
            }
        }
        IdempotencyBegin::InFlight {
            route: Some(id), ..
        } => RunResult::Executed(json!({"id": id, "status": "BRIDGING"})),
        IdempotencyBegin::InFlight { route: None, stale } => {
            if stale {
                // its first attempt died before creating a route: nothing moved
                let _ = guard.abandon(key).await;
            }
            RunResult::Retry("the run's first attempt is still executing".into())
        }
        IdempotencyBegin::Fresh => RunResult::Retry("the run's key was just freed".into()),
        IdempotencyBegin::Mismatch => RunResult::Failed(
            json!({"error": "the run's idempotency key was used with another body", "errorCode": "IDEMPOTENCY_KEY_REUSED"}),
        ),
    }
}

impl ExecuteRunner {
    async fn execute(&self, route: &Value, key: &str) -> Result<Value, ApiError> {
        let request = execute_request(route)?;
        let ask = ExecuteAsk::from_request(&request, &self.0.deps().config)?;
        let req = ExecuteRequest {
            ask,
            sandbox: false,
            idempotency_key: Some(key.to_string()),
            operator: true,
            rehearse: false,
        };
        let done = self.0.execute().execute(self.0.as_ref(), req).await?;
        Ok(serde_json::to_value(of_executed(&done)).unwrap_or_default())
    }
}

/// Conditionals' prices: the host's price book, the one
/// `GET /api/pricefeeds` shows and quotes convert with (a pair's fresh,
/// positive on-chain feed; its configured price only when it has no feed).
struct BookPrices(Arc<PriceBook>);

impl PriceSource for BookPrices {
    fn usd(&self, pair: &str) -> Option<Usd> {
        let e6 = self.0.usd_e6(pair).ok()?;
        Usd::from_answer(u128::from(e6), 6).filter(|u| u.0 > 0)
    }
}

/// The watcher of this host: its store, the live runner over routing, the
/// host's price book, and the gate (`primitives.live`, which
/// `PRIMITIVES_LIVE=1` turns on).
pub fn watcher(routing: &Arc<Routing>, live_gate: bool) -> Watcher {
    let d = routing.deps();
    Watcher::new(WatcherDeps {
        store: Arc::new(d.store.clone()),
        runner: Arc::new(ExecuteRunner::new(routing.clone())),
        prices: Arc::new(BookPrices(d.prices.clone())),
        lease_ms: d.config.primitives.lease_ms,
        live_gate,
    })
}
