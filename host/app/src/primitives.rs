//! The route primitives' live side (spec §2.12, §4.4): the runner of the
//! watcher's runs and a batch's legs — one execute under the run's key,
//! through the execute service `POST /api/route/execute` uses, with the
//! owner's authority the record carries — and the planner of a batch's
//! legs, handed to the feature as [`Live`].

use std::sync::Arc;

use relay_engine::{quote::QuoteOutcome, request::ExecuteAsk, route::RouteAsk};
use relay_errors::ApiError;
use relay_execution::{execute::ExecuteRequest, receipt::of_executed};
use relay_primitives::{
    http::{Live, Planner},
    watcher::{execute_body, execute_request, RunResult, Runner},
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

/// Batch legs are planned as an execute would run them.
#[async_trait::async_trait]
impl Planner for Routing {
    async fn winner<'r>(
        &self,
        ask: &RouteAsk,
        rail: Option<&'r str>,
    ) -> Result<(QuoteOutcome, usize), ApiError> {
        Routing::winner(self, ask, rail).await
    }
}

/// What the route primitives run and plan with, over `routing`.
pub fn live(routing: &Arc<Routing>) -> Live {
    Live {
        runner: Arc::new(ExecuteRunner::new(routing.clone())),
        planner: routing.clone(),
    }
}
