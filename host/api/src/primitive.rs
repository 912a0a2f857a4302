//! What the primitives' handlers share ([`crate::batch`],
//! [`crate::schedule`], [`crate::conditional`]; spec §2.12, §4.4): the
//! state, typed errors, the route check, the live authority check, and the
//! watcher's live runner over the one execute service.
//!
//! Authority (this project's design; the spec leaves it open): a record
//! with `live:true` must carry authority at creation or is refused. The
//! one authority served is the operator's owner credential
//! (`Authorization: Bearer <owner token>`, `authority:"owner"`, the
//! default): its runs execute as `mode:"self"` through the same execute
//! service as `POST /api/route/execute`, spending the operator's funds. No
//! credential → 401 `OPERATOR_AUTH_REQUIRED` naming `live`; `authority`
//! `session` or `permit2` → 400 `AUTHORITY_UNSUPPORTED` (not served yet).
//! A record without `live:true` needs no authority: it only simulates.
//!
//! Cancelling (`DELETE` of a schedule or conditional): only the owner's
//! credential (`Authorization: Bearer <owner token>`) or the record's own
//! cancel token — `cancelToken` in the create answer, sent back as the
//! header `x-cancel-token` — cancels a record
//! ([`relay_primitives::cancel`]). The token is stored hashed and shown
//! once. Neither → 401 `PRIMITIVE_CANCEL_UNAUTHORIZED`; a token that is not
//! the record's → 403 `PRIMITIVE_CANCEL_FORBIDDEN`; either way the record
//! stays as it was.

use super::{auth, edge::JsonObject, execute, quote::Quoting, ApiError, AppState, ErrorCode};
use axum::{
    http::HeaderMap,
    response::{IntoResponse, Response},
    Json,
};
use relay_engine::request::parse_execute;
use relay_execution::execute::ExecuteRequest;
use relay_primitives::{
    cancel::Canceller,
    price::{PriceSource, Usd},
    record::{self, Authority, UNSUPPORTED_AUTHORITIES},
    service::{Primitives, ServiceError},
    watcher::{RunResult, Runner, Watcher, WatcherDeps},
    Invalid,
};
use relay_store::IdempotencyBegin;
use serde::Serialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The handlers' state.
#[derive(Clone)]
pub(crate) struct Prim {
    /// Quoting (and the host's state).
    pub q: Quoting,
    /// The records.
    pub svc: Primitives,
}

impl Prim {
    pub(crate) fn new(q: Quoting) -> Self {
        let svc = Primitives::new(Arc::new(q.app.store.clone()));
        Prim { q, svc }
    }
}

impl From<Invalid> for ApiError {
    fn from(e: Invalid) -> Self {
        let code = match e.missing {
            true => ErrorCode::MissingField,
            false => ErrorCode::InvalidField,
        };
        ApiError::new(code, e.to_string()).field(e.field)
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let message = e.to_string();
        match e {
            ServiceError::NotFound { .. } => {
                ApiError::new(ErrorCode::PrimitiveNotFound, message).field("id")
            }
            ServiceError::Finished { .. } | ServiceError::AlreadyRun { .. } => {
                ApiError::new(ErrorCode::PrimitiveFinished, message).field("id")
            }
            ServiceError::CancelUnauthenticated { .. } => {
                ApiError::new(ErrorCode::PrimitiveCancelUnauthorized, message)
                    .field(CANCEL_TOKEN_HEADER)
                    .suggest("send the cancelToken the create answer carried as x-cancel-token, or the owner's Authorization: Bearer <owner token>")
            }
            ServiceError::CancelForbidden { .. } => {
                ApiError::new(ErrorCode::PrimitiveCancelForbidden, message)
                    .field(CANCEL_TOKEN_HEADER)
            }
            ServiceError::Store(e) => ApiError::new(ErrorCode::StoreUnavailable, e.to_string()),
        }
    }
}

/// The header a record's cancel token is sent in.
pub(crate) const CANCEL_TOKEN_HEADER: &str = "x-cancel-token";

/// Who asks to cancel a record: the owner (by credential), the holder of
/// a cancel token (checked by the service), or nobody.
pub(crate) fn canceller<'h>(s: &AppState, headers: &'h HeaderMap) -> Canceller<'h> {
    if auth::is_operator(s.owner_token.as_ref(), headers) {
        return Canceller::Owner;
    }
    match headers
        .get(CANCEL_TOKEN_HEADER)
        .map(|v| v.to_str().map(str::trim))
    {
        Some(Ok(t)) if !t.is_empty() => Canceller::Token(t),
        Some(_) => Canceller::Token(""),
        None => Canceller::Anonymous,
    }
}

/// `e` with its field (and message) under `at` (`routes[3]`, `route`).
pub(crate) fn within(at: &str, mut e: ApiError) -> ApiError {
    e.field = Some(e.field.map_or(at.to_string(), |f| format!("{at}.{f}")));
    e.message = format!("{at}.{}", e.message);
    e
}

/// Checks `route` (a RouteRequest with `toAddress`, as execute reads it)
/// found at `at`.
pub(crate) fn check_route(q: &Quoting, route: &Value, at: &str) -> Result<(), ApiError> {
    let o = route.as_object().ok_or_else(|| {
        ApiError::new(ErrorCode::InvalidField, format!("{at}: must be an object")).field(at)
    })?;
    if o.get("toAddress").is_none_or(Value::is_null) {
        let f = format!("{at}.toAddress");
        return Err(ApiError::new(ErrorCode::MissingField, format!("{f}: required")).field(f));
    }
    if let Some(mode) = o.get("mode").filter(|m| m.as_str() != Some("self")) {
        let f = format!("{at}.mode");
        return Err(ApiError::new(
            ErrorCode::AuthorityUnsupported,
            format!("{f}: {mode} — a primitive's runs execute as mode self (the owner's authority); omit mode"),
        )
        .field(f));
    }
    q.parse(route).map_err(|e| within(at, e))?;
    Ok(())
}

/// The authority of a record with `live`: the owner's credential, or a
/// typed refusal (module docs). `None` for a record that only simulates.
pub(crate) fn authority(
    s: &AppState,
    headers: &HeaderMap,
    body: &Map<String, Value>,
    live: bool,
) -> Result<Option<Authority>, ApiError> {
    match record::parse_authority(body)?.as_deref() {
        None | Some("owner") => {}
        Some(a) if UNSUPPORTED_AUTHORITIES.contains(&a) => {
            return Err(ApiError::new(
                ErrorCode::AuthorityUnsupported,
                format!("authority: {a:?} is not served yet; a live primitive runs on the owner's credential (authority \"owner\")"),
            )
            .field("authority"))
        }
        Some(a) => {
            return Err(ApiError::new(
                ErrorCode::InvalidField,
                format!("authority: {a:?} is not one of owner, session, permit2"),
            )
            .field("authority"))
        }
    }
    if !live {
        return Ok(None);
    }
    if !auth::is_operator(s.owner_token.as_ref(), headers) {
        return Err(ApiError::new(
            ErrorCode::OperatorAuthRequired,
            "live: a live primitive spends the operator's funds when it runs and needs the owner's credential at creation (Authorization: Bearer <owner token>); without live:true it only simulates",
        )
        .field("live"));
    }
    Ok(Some(Authority::Owner))
}

/// A handler's answer: the JSON, or the typed error (a 401 with its
/// challenge).
pub(crate) fn answer<T: Serialize>(r: Result<T, ApiError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => execute::error_response(e),
    }
}

/// The body as an object.
pub(crate) fn object(body: &axum::body::Bytes) -> Result<Map<String, Value>, ApiError> {
    Ok(JsonObject::parse(body)?.0)
}

/// The live runner of the watcher's runs and a batch's legs: one execute
/// under the run's key, through the execute service `POST
/// /api/route/execute` uses, with the owner's authority the record
/// carries.
pub(crate) struct ExecuteRunner(pub(crate) Quoting);

#[async_trait::async_trait]
impl Runner for ExecuteRunner {
    async fn run(&self, body: &Value, key: &str) -> RunResult {
        let s = &self.0.app;
        let fingerprint = hex::encode(Sha256::digest(body.to_string().as_bytes()));
        let stale_ms = s.config.execution.idempotency_stale_ms;
        match s.store.idempotency_begin(key, &fingerprint, stale_ms).await {
            Ok(IdempotencyBegin::Fresh) => {}
            Ok(IdempotencyBegin::Replay { status, body }) => {
                let v: Value = serde_json::from_str(&body).unwrap_or_default();
                return match status {
                    200 => RunResult::Executed(v),
                    _ => RunResult::Failed(v),
                };
            }
            Ok(IdempotencyBegin::InFlight {
                route: Some(id), ..
            }) => return RunResult::Executed(json!({"id": id, "status": "BRIDGING"})),
            Ok(IdempotencyBegin::InFlight { route: None, stale }) => {
                if stale {
                    // its first attempt died before creating a route: nothing moved
                    let _ = s.store.idempotency_abandon(key).await;
                }
                return RunResult::Retry("the run's first attempt is still executing".into());
            }
            Ok(IdempotencyBegin::Mismatch) => {
                return RunResult::Failed(
                    json!({"error": "the run's idempotency key was used with another body", "errorCode": "IDEMPOTENCY_KEY_REUSED"}),
                )
            }
            Err(e) => return RunResult::Retry(e.to_string()),
        }
        match self.execute(body, key).await {
            Ok(receipt) => {
                let text = receipt.to_string();
                if let Err(e) = s.store.idempotency_complete(key, 200, &text).await {
                    tracing::error!(error = %e, key, "run response not stored");
                }
                RunResult::Executed(receipt)
            }
            Err(e) => {
                let _ = s.store.idempotency_abandon(key).await;
                RunResult::Failed(json!({"error": e.message, "errorCode": e.code.as_str()}))
            }
        }
    }
}

impl ExecuteRunner {
    async fn execute(&self, body: &Value, key: &str) -> Result<Value, ApiError> {
        let ask = parse_execute(body, &self.0.app.config)?;
        let req = ExecuteRequest {
            ask,
            sandbox: false,
            idempotency_key: Some(key.to_string()),
            operator: true,
            rehearse: false,
        };
        let done = self.0.service.execute(&self.0, req).await?;
        Ok(serde_json::to_value(execute::shape(&done)).unwrap_or_default())
    }
}

/// Conditionals' prices: the host's price book, the one
/// `GET /api/pricefeeds` shows and quotes convert with (a pair's fresh,
/// positive on-chain feed; its configured price only when it has no feed).
struct BookPrices(Arc<relay_engine::oracle::PriceBook>);

impl PriceSource for BookPrices {
    fn usd(&self, pair: &str) -> Option<Usd> {
        let e6 = self.0.usd_e6(pair).ok()?;
        Usd::from_answer(u128::from(e6), 6).filter(|u| u.0 > 0)
    }
}

/// The watcher of this host: its store, the live runner over the execute
/// service, the host's price book, and the gate (`primitives.live`, which
/// `PRIMITIVES_LIVE=1` turns on).
pub fn watcher(s: &AppState, live_gate: bool) -> Watcher {
    let q = Quoting::of(s);
    Watcher::new(WatcherDeps {
        store: Arc::new(s.store.clone()),
        runner: Arc::new(ExecuteRunner(q)),
        prices: Arc::new(BookPrices(s.prices.clone())),
        lease_ms: s.config.primitives.lease_ms,
        live_gate,
    })
}
