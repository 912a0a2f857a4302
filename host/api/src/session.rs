//! Policy-gated agent sessions (spec §2.13, §4.5, §5.6), thin over
//! [`relay_accounts::sessions`] (the design: where a session's funds are,
//! how spends are reserved, what revoke and expiry do):
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
//! The owner is the platform owner token ([`crate::auth`]): without it an
//! owner call is 401 `OPERATOR_AUTH_REQUIRED`; a missing or unknown
//! bearer is 401 `SESSION_UNAUTHORIZED`; both carry the RFC 6750
//! `WWW-Authenticate` challenge. Unknown body fields are refused.

use std::sync::Arc;

use async_trait::async_trait;
use axum::{
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
    Json,
};
use relay_accounts::sessions::{
    ExecFailure, Reader, RouteTerms, SessionError, SessionIssued, SessionList, SessionRevoked,
    SessionRunner, SessionService, SessionView, TokenTerm,
};
use relay_engine::request::ExecuteAsk;
use relay_execution::{execute::ExecuteRequest, receipt::RouteReceipt};
use relay_plugin_api::Token;
use relay_store::durable::IdemKey;
use relay_wire::SessionIssueRequest;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    auth,
    edge::{self, JsonObject},
    execute::{error_response, idempotency_key, idempotent},
    quote::Quoting,
    ApiError, AppState, ErrorCode,
};

/// The fields a session route may carry.
const ROUTE_FIELDS: &[&str] = &[
    "fromChain",
    "toChain",
    "fromToken",
    "toToken",
    "amount",
    "toAddress",
    "rail",
];

#[derive(Clone)]
struct Sessions {
    q: Quoting,
    sessions: Arc<SessionService>,
}

/// Policy-gated agent sessions (spec §4.5): an agent's routes, also
/// bounded by its session's caps.
/// The sessions' routes over the host's routing.
fn routes_of(s: &AppState) -> OpenApiRouter<AppState> {
    routes(super::quote::Quoting::of(s))
}

pub(crate) const FEATURE: relay_feature::Feature<crate::AppState> = relay_feature::Feature {
    name: "sessions",
    home: "host/accounts/src/sessions",
    spec: "§4.5",
    section: None,
    routes: routes_of,
    limits: &[relay_feature::Limit::post(
        "session-execute",
        "/api/session/execute",
        60,
    )],
    errors: &[
        crate::ErrorCode::SessionUnauthorized,
        crate::ErrorCode::SessionRevoked,
        crate::ErrorCode::SessionExpired,
        crate::ErrorCode::SessionPolicy,
        crate::ErrorCode::SessionCapExceeded,
        crate::ErrorCode::UnknownSession,
    ],
    start: None,
};

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    let sessions = q.app.sessions.clone();
    OpenApiRouter::new()
        .routes(routes!(issue))
        .routes(routes!(execute))
        .routes(routes!(list))
        .routes(routes!(revoke))
        .routes(routes!(read))
        .with_state(Sessions { q, sessions })
}

/// Refuses a caller without the owner token.
fn owner_only(s: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    if auth::is_operator(s.owner_token.as_ref(), headers) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::OperatorAuthRequired,
        "issuing, listing and revoking sessions needs the owner's credential: Authorization: Bearer <owner token>",
    ))
}

/// The forwarded execute ([`SessionRunner`]) over the API's quote source
/// and the one execute service.
struct Runner<'a>(&'a Quoting);

fn token(t: &Token) -> TokenTerm {
    TokenTerm {
        symbol: t.symbol.clone(),
        address: t.address.clone(),
    }
}

#[async_trait]
impl SessionRunner for Runner<'_> {
    type Route = serde_json::Map<String, Value>;
    type Ask = ExecuteAsk;
    type Receipt = RouteReceipt;
    type Error = ApiError;

    fn parse(
        &self,
        obj: &serde_json::Map<String, Value>,
        owner: &str,
    ) -> Result<(RouteTerms, ExecuteAsk), ApiError> {
        edge::only_fields(obj, ROUTE_FIELDS)?;
        if obj.get("toAddress").is_none_or(Value::is_null) {
            return Err(
                ApiError::new(ErrorCode::MissingField, "toAddress: required").field("toAddress"),
            );
        }
        let mut request = relay_wire::ExecuteRequest::decode(&Value::Object(obj.clone()))?;
        request.route.from_address = Some(owner.to_string());
        let ask = ExecuteAsk::from_request(&request, &self.0.app.config)?;
        let terms = RouteTerms {
            from_chain: ask.from_chain.evm_id(),
            to_chain: ask.to_chain.evm_id(),
            to_chain_name: ask.to_chain.to_string(),
            from_token: token(&ask.from_token),
            to_token: token(&ask.to_token),
            recipient: ask.recipient.clone(),
            amount: ask.amount.0,
        };
        Ok((terms, ask))
    }

    async fn prepare(&self, ask: &ExecuteAsk) -> Result<Value, ApiError> {
        let service = &self.0.service;
        let prepared = service.prepare_intent(self.0, ask.clone()).await?;
        serde_json::to_value(prepared)
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("intent: {e}")))
    }

    async fn execute(&self, body: Value, key: Option<String>) -> Result<RouteReceipt, ApiError> {
        let ask = self.0.parse_execute(&body)?;
        let req = ExecuteRequest {
            ask,
            sandbox: false,
            idempotency_key: key,
            operator: false,
            rehearse: false,
        };
        let done = self.0.service.execute(self.0, req).await?;
        Ok(relay_execution::receipt::of_executed(&done))
    }

    async fn route_exists(&self, id: &str) -> bool {
        matches!(self.0.app.store.get_route(id).await, Ok(Some(_)))
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
    pub session: relay_accounts::sessions::SpendView,
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
        (status = "default", description = "A typed error (401 OPERATOR_AUTH_REQUIRED, 400 INVALID_FIELD naming the policy field, …)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn issue(State(x): State<Sessions>, headers: HeaderMap, body: Bytes) -> Response {
    let answer = async {
        owner_only(&x.q.app, &headers)?;
        let JsonObject(obj) = JsonObject::parse(&body)?;
        let request: SessionIssueRequest =
            relay_wire::decode(&Value::Object(obj)).map_err(SessionError::from)?;
        Ok::<_, ApiError>(x.sessions.issue(&request).await?)
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
        (status = "default", description = "A typed error (401 SESSION_UNAUTHORIZED, 403 SESSION_POLICY / SESSION_CAP_EXCEEDED / SESSION_REVOKED / SESSION_EXPIRED, …)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn execute(State(x): State<Sessions>, headers: HeaderMap, body: Bytes) -> Response {
    let bearer = auth::bearer(&headers);
    let Some(key) = idempotency_key(&headers) else {
        return run(&x, bearer, &body, None)
            .await
            .unwrap_or_else(error_response);
    };
    // The key is the session's own: another session's key never collides.
    let row = match x.sessions.authenticate(bearer).await {
        Ok(row) => row,
        Err(e) => return error_response(e.into()),
    };
    let key = IdemKey::scoped("session", &row.id, &key);
    let run = || run(&x, bearer, &body, Some(key.as_str()));
    idempotent(&x.q.app, &body, &key, run).await
}

async fn run(
    x: &Sessions,
    bearer: Option<&str>,
    body: &Bytes,
    key: Option<&str>,
) -> Result<Response, ApiError> {
    let JsonObject(obj) = JsonObject::parse(body)?;
    let runner = Runner(&x.q);
    let done = x
        .sessions
        .execute(&runner, bearer, &obj, key.map(str::to_string))
        .await
        .map_err(|e| match e {
            ExecFailure::Session(e) => e.into(),
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
        (status = "default", description = "A typed error (401 SESSION_UNAUTHORIZED, 404 UNKNOWN_SESSION)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(session = %id))]
async fn read(State(x): State<Sessions>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let who = match auth::is_operator(x.q.app.owner_token.as_ref(), &headers) {
        true => Reader::Owner,
        false => Reader::Bearer(auth::bearer(&headers)),
    };
    json_or_error(x.sessions.get(&id, who).await.map_err(ApiError::from))
}

#[utoipa::path(
    post,
    path = "/api/session/revoke",
    tag = "sessions",
    summary = "Revoke a session (owner): new executes are refused, started routes complete, the unspent balance returns to refundTo",
    request_body(content = Object, example = json!({"id": "ses_0123456789abcdef01234567"})),
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>")),
    responses(
        (status = 200, description = "Revoked", body = SessionRevoked),
        (status = "default", description = "A typed error (401 OPERATOR_AUTH_REQUIRED, 404 UNKNOWN_SESSION)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn revoke(State(x): State<Sessions>, headers: HeaderMap, body: Bytes) -> Response {
    let answer = async {
        owner_only(&x.q.app, &headers)?;
        let JsonObject(obj) = JsonObject::parse(&body)?;
        edge::only_fields(&obj, &["id"])?;
        let id = match obj.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            None | Some(Value::Null) => {
                return Err(ApiError::new(ErrorCode::MissingField, "id: required").field("id"))
            }
            Some(_) => {
                return Err(
                    ApiError::new(ErrorCode::InvalidField, "id: must be a ses_ id").field("id"),
                )
            }
        };
        let revoked = x.sessions.revoke(&id).await?;
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
        (status = "default", description = "A typed error (401 OPERATOR_AUTH_REQUIRED)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn list(State(x): State<Sessions>, headers: HeaderMap) -> Response {
    let answer = async {
        owner_only(&x.q.app, &headers)?;
        Ok::<_, ApiError>(x.sessions.list().await?)
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
