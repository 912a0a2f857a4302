//! The sessions' HTTP adapter (spec §2.13, §4.5, §5.6), thin over
//! [`SessionService`] (the crate's docs: where a session's funds are, how
//! spends are reserved, what revoke and expiry do):
//!
//! - `POST /api/session/issue` (owner) `{label?, policy: {chains, tokens,
//!   recipients, perTxCap, rolling24hCap, expiresAt}, refundTo}` → the
//!   session, its `rsk_` bearer (shown once) and its `fundAddress`;
//! - `POST /api/session/execute` (bearer) `{fromChain, toChain, fromToken,
//!   toToken, amount, toAddress, rail?}` → the forwarded execute's
//!   RouteReceipt plus `session {id, spent, remaining}`; `x-idempotency-key`
//!   replays the first response and reserves nothing twice;
//! - `GET /api/session/{id}` (that session's bearer, or the owner) → state,
//!   policy, spend in the rolling window, routes;
//! - `POST /api/session/revoke {id}` (owner) → revoked;
//! - `GET /api/session/list` (owner) → every session (never a bearer).
//!
//! The owner is the platform owner token
//! ([`relay_feature::operator`]): without it an
//! owner call is 401 `OPERATOR_AUTH_REQUIRED`; a missing or unknown
//! bearer is 401 `SESSION_UNAUTHORIZED`; both carry the RFC 6750
//! `WWW-Authenticate` challenge. Unknown body fields are refused.

use std::sync::Arc;

use axum::{
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
    Json,
};
use relay_engine::request::ExecuteAsk;
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_execution::receipt::RouteReceipt;
use relay_feature::{
    edge::{idempotency_key, JsonObject},
    operator::{self, is_operator, OwnerTokenHash},
    Feature, HasHandles, Limit,
};
use relay_store::{durable::IdemKey, Store};
use relay_wire::{Loose, SessionIssueRequest, SessionRevokeRequest};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    errors, ExecFailure, Reader, SessionError, SessionIssued, SessionList, SessionRevoked,
    SessionRunner, SessionService, SessionView,
};

/// The forwarded execute the host hands the feature: a session's route
/// run through the host's one execute service (`relay_app::sessions`).
pub type Forwarder = Arc<
    dyn SessionRunner<
        Route = Map<String, Value>,
        Ask = ExecuteAsk,
        Receipt = RouteReceipt,
        Error = ApiError,
    >,
>;

/// What the handlers read: the service, the forwarded execute, the
/// owner token's hash and the idempotency guard's store.
#[derive(Clone)]
pub struct Sessions {
    /// The service.
    pub sessions: Arc<SessionService>,
    /// The forwarded execute.
    pub forward: Forwarder,
    /// The owner token's hash.
    pub owner: Option<OwnerTokenHash>,
    /// The store (idempotency keys, routes).
    pub store: Store,
    /// When a first request that never answered is presumed dead.
    pub stale_ms: u64,
}

/// A session's executes are fund-moving calls, bounded by its caps too.
const LIMITS: &[Limit] = &[Limit::post("session-execute", "/api/session/execute", 60)];

/// Policy-gated agent sessions (spec §4.5), as the host registers them.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "sessions",
        home: "host/sessions",
        spec: "§2.13, §4.5, §5.6",
        section: None,
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(crate::start),
    }
}

/// The routes over the host's state `s`, holding the [`Sessions`] handle
/// the start left.
fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    relay_feature::mount(s, routes())
}

fn routes() -> OpenApiRouter<Sessions> {
    OpenApiRouter::new()
        .routes(routes!(issue))
        .routes(routes!(execute))
        .routes(routes!(list))
        .routes(routes!(revoke))
        .routes(routes!(read))
}

/// An error answer; a 401 carries its RFC 6750 challenge (the owner
/// token's realm, or a session bearer's).
fn error_response(e: ApiError) -> Response {
    operator::refusal(
        e,
        &[(errors::SessionUnauthorized, operator::SESSION_CHALLENGE)],
    )
}

/// Refuses a caller without the owner token.
fn owner_only(x: &Sessions, headers: &HeaderMap) -> Result<(), ApiError> {
    if is_operator(x.owner.as_ref(), headers) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::OperatorAuthRequired,
        "issuing, listing and revoking sessions needs the owner's credential: Authorization: Bearer <owner token>",
    ))
}

/// The API error of a refusal.
/// The id a revoke names: required (`null` is none), a non-blank string.
fn revoked_id(request: SessionRevokeRequest) -> Result<String, SessionError> {
    match request.id {
        Some(Loose::Typed(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        None => Err(SessionError::Missing { field: "id".into() }),
        Some(Loose::Other(v)) if v == "null" => Err(SessionError::Missing { field: "id".into() }),
        Some(_) => Err(SessionError::Field {
            field: "id".into(),
            why: "must be a ses_ id".into(),
        }),
    }
}

fn refused(e: SessionError) -> ApiError {
    let message = e.to_string();
    match e {
        SessionError::Unauthorized(_) => ApiError::new(errors::SessionUnauthorized, message)
            .suggest(
                "send Authorization: Bearer rsk_… (the bearer POST /api/session/issue answered)",
            ),
        SessionError::Unknown(_) => ApiError::new(errors::UnknownSession, message).field("id"),
        SessionError::Revoked(_) => ApiError::new(errors::SessionRevoked, message),
        SessionError::Expired(_) => ApiError::new(errors::SessionExpired, message),
        SessionError::Policy { field, .. } => {
            ApiError::new(errors::SessionPolicy, message).field(field)
        }
        SessionError::Cap(c) => {
            let err = ApiError::new(errors::SessionCapExceeded, message).field("amount");
            match c.retry_after_ms {
                Some(ms) if ms > 0 => err.retry_after_ms(ms),
                _ => err,
            }
        }
        SessionError::Field { field, .. } => {
            ApiError::new(ErrorCode::InvalidField, message).field(field)
        }
        SessionError::Missing { field } => {
            ApiError::new(ErrorCode::MissingField, message).field(field)
        }
        SessionError::NoRelayer => ApiError::new(ErrorCode::RelayerUnavailable, message),
        SessionError::NoPermit(_) => ApiError::new(ErrorCode::RouterUnavailable, message),
        SessionError::Store(_) => ApiError::new(ErrorCode::StoreUnavailable, message),
    }
}

/// `POST /api/session/execute`: the forwarded execute's receipt and the
/// session's spend.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SessionReceipt {
    /// The RouteReceipt of `POST /api/route/execute`.
    #[serde(flatten)]
    pub receipt: RouteReceipt,
    /// The session after this route: `{id, spent, remaining}`.
    pub session: crate::SpendView,
}

#[utoipa::path(
    post,
    path = "/api/session/issue",
    tag = "sessions",
    summary = "Issue a policy-gated agent session (owner): its rsk_ bearer (shown once) and the address to fund",
    request_body = SessionIssueRequest,
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>")),
    responses(
        (status = 200, description = "The session and its bearer", body = SessionIssued),
        (status = "default", description = "A typed error (401 OPERATOR_AUTH_REQUIRED, 400 INVALID_FIELD naming the policy field, …)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn issue(State(x): State<Sessions>, headers: HeaderMap, body: Bytes) -> Response {
    let answer = async {
        owner_only(&x, &headers)?;
        let JsonObject(obj) = JsonObject::parse(&body)?;
        let request: SessionIssueRequest = relay_wire::decode(&Value::Object(obj))
            .map_err(SessionError::from)
            .map_err(refused)?;
        x.sessions.issue(&request).await.map_err(refused)
    };
    json_or_error(answer.await)
}

#[utoipa::path(
    post,
    path = "/api/session/execute",
    tag = "sessions",
    summary = "Execute a route from the session's funded address within its policy and caps (bearer); answers the forwarded execute's RouteReceipt",
    request_body(content = Object, example = json!({"fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC", "amount": "1500000", "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"})),
    params(
        ("authorization" = Option<String>, Header, description = "Bearer rsk_… (the session's bearer)"),
        ("x-idempotency-key" = Option<String>, Header, description = "replays the first response; reserves and moves nothing a second time"),
    ),
    responses(
        (status = 200, description = "The route started", body = SessionReceipt),
        (status = "default", description = "A typed error (401 SESSION_UNAUTHORIZED, 403 SESSION_POLICY / SESSION_CAP_EXCEEDED / SESSION_REVOKED / SESSION_EXPIRED, …)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn execute(State(x): State<Sessions>, headers: HeaderMap, body: Bytes) -> Response {
    let bearer = operator::bearer(&headers);
    let Some(key) = idempotency_key(&headers) else {
        return run(&x, bearer, &body, None)
            .await
            .unwrap_or_else(error_response);
    };
    // The key is the session's own: another session's key never collides.
    let row = match x.sessions.authenticate(bearer).await {
        Ok(row) => row,
        Err(e) => return error_response(refused(e)),
    };
    let key = IdemKey::scoped("session", &row.id, &key);
    let run = || run(&x, bearer, &body, Some(key.as_str()));
    relay_feature::once::idempotent_route((&x.store, x.stale_ms), &key, &body, run, error_response)
        .await
}

async fn run(
    x: &Sessions,
    bearer: Option<&str>,
    body: &Bytes,
    key: Option<&str>,
) -> Result<Response, ApiError> {
    let JsonObject(obj) = JsonObject::parse(body)?;
    let done = x
        .sessions
        .execute(x.forward.as_ref(), bearer, &obj, key.map(str::to_string))
        .await
        .map_err(|e| match e {
            ExecFailure::Session(e) => refused(e),
            ExecFailure::Run(e) => e,
        })?;
    let answer = SessionReceipt {
        receipt: done.receipt,
        session: done.session,
    };
    Ok(json_response(&answer))
}

#[utoipa::path(
    get,
    path = "/api/session/{id}",
    tag = "sessions",
    summary = "A session's status, policy, spend in the rolling 24 h window and routes (its bearer, or the owner)",
    params(
        ("id" = String, Path, description = "The ses_ id"),
        ("authorization" = Option<String>, Header, description = "Bearer rsk_… of this session, or Bearer <owner token>"),
    ),
    responses(
        (status = 200, description = "The session", body = SessionView),
        (status = "default", description = "A typed error (401 SESSION_UNAUTHORIZED, 404 UNKNOWN_SESSION)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(session = %id))]
async fn read(State(x): State<Sessions>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let who = match is_operator(x.owner.as_ref(), &headers) {
        true => Reader::Owner,
        false => Reader::Bearer(operator::bearer(&headers)),
    };
    json_or_error(x.sessions.get(&id, who).await.map_err(refused))
}

#[utoipa::path(
    post,
    path = "/api/session/revoke",
    tag = "sessions",
    summary = "Revoke a session (owner): new executes are refused, started routes complete, the unspent balance returns to refundTo",
    request_body = SessionRevokeRequest,
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>")),
    responses(
        (status = 200, description = "Revoked", body = SessionRevoked),
        (status = "default", description = "A typed error (401 OPERATOR_AUTH_REQUIRED, 404 UNKNOWN_SESSION)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn revoke(State(x): State<Sessions>, headers: HeaderMap, body: Bytes) -> Response {
    let answer = async {
        owner_only(&x, &headers)?;
        let JsonObject(obj) = JsonObject::parse(&body)?;
        let request: SessionRevokeRequest = relay_wire::decode(&Value::Object(obj))
            .map_err(SessionError::from)
            .map_err(refused)?;
        let id = revoked_id(request).map_err(refused)?;
        let revoked = x.sessions.revoke(&id).await.map_err(refused)?;
        // Return the balance now when nothing is in flight; the sweep job
        // retries otherwise.
        let sessions = x.sessions.clone();
        tokio::spawn(async move {
            if let Err(e) = sessions.sweep_due().await {
                tracing::warn!(error = %e, "session sweep after revoke failed");
            }
        });
        Ok(revoked)
    };
    json_or_error(answer.await)
}

#[utoipa::path(
    get,
    path = "/api/session/list",
    tag = "sessions",
    summary = "Every session (owner), newest first; never a bearer",
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>")),
    responses(
        (status = 200, description = "The sessions", body = SessionList),
        (status = "default", description = "A typed error (401 OPERATOR_AUTH_REQUIRED)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn list(State(x): State<Sessions>, headers: HeaderMap) -> Response {
    let answer = async {
        owner_only(&x, &headers)?;
        x.sessions.list().await.map_err(refused)
    };
    json_or_error(answer.await)
}

fn json_response(body: &impl Serialize) -> Response {
    use axum::response::IntoResponse;
    (StatusCode::OK, Json(body)).into_response()
}

fn json_or_error<T: Serialize>(r: Result<T, ApiError>) -> Response {
    match r {
        Ok(v) => json_response(&v),
        Err(e) => error_response(e),
    }
}
