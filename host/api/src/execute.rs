//! `POST /api/route/execute` (spec §2.7, §2.8, §3.1): parse and check the
//! request at the edge (every bad field a typed 4xx naming it; nothing moves
//! on a request that failed validation), read the operator's credential
//! ([`crate::auth`]), run the execute service
//! ([`relay_execution::execute::ExecuteService`]: rail choice, Permit2
//! verification, operator authority, simulation, sandbox / dry / live) and
//! answer its RouteReceipt. An `x-idempotency-key` replays the first
//! response byte for byte and moves nothing twice.
//!
//! Router forms (`permit2-witness`, `erc2612`, `intent`) execute a
//! prepared intent (`POST /api/route/intent`) exactly as signed: the body
//! is checked against it field by field (`INTENT_MISMATCH` naming the
//! field), every signature off chain (`SIGNATURE_INVALID`,
//! `SIGNATURE_EXPIRED`, `NONCE_USED`), the router call simulated; only
//! then is the route created and its one router transaction sent.
//!
//! `mode: self` (the spec's default) spends the operator's own funds: it
//! needs `Authorization: Bearer <owner token>`, else 401
//! `OPERATOR_AUTH_REQUIRED` (a keyless client sends `mode: permit2`). A
//! route whose first transaction would revert is a 4xx naming the cause
//! (`PERMIT2_ALLOWANCE_MISSING`, `INSUFFICIENT_BALANCE`,
//! `PERMIT2_NONCE_USED`, `RAIL_CALL_REVERTS`), with nothing created or sent.

use utoipa_axum::{router::OpenApiRouter, routes};

use super::{auth, quote::Quoting, ApiError, AppState, ErrorCode};
use axum::{
    body::Bytes,
    extract::State,
    http::{header::WWW_AUTHENTICATE, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use relay_engine::{execute::Declined, request::parse_execute, route::RouteAsk};
use relay_execution::{
    execute::{ExecuteError, ExecuteRequest, Executed, QuoteSource},
    receipt::{dry_receipt, receipt, RouteReceipt},
    simulate::WouldRevert,
};
use relay_store::IdempotencyBegin;
use serde_json::Value;
use sha2::{Digest, Sha256};

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(execute)).with_state(q)
}

impl QuoteSource for Quoting {
    async fn quote(
        &self,
        ask: &RouteAsk,
    ) -> Result<relay_engine::quote::QuoteOutcome, ExecuteError> {
        QuoteSource::quote(self.app.routing.as_ref(), ask).await
    }
}

impl From<ExecuteError> for ApiError {
    fn from(e: ExecuteError) -> Self {
        let message = e.to_string();
        match e {
            ExecuteError::OperatorAuthRequired => ApiError::new(ErrorCode::OperatorAuthRequired, message)
                .field("mode")
                .suggest("without the operator's credential send mode \"permit2\" with a Permit2 signature of your own funds (PermitTransferFrom for spender = the relayer; GET /api/gasless/info); the operator sends Authorization: Bearer <owner token>"),
            ExecuteError::Request(e) => e.into(),
            ExecuteError::AttestationInvalid(_) => {
                ApiError::new(ErrorCode::AttestationInvalid, message).field("attestation")
            }
            ExecuteError::RailNotServing(_) => {
                ApiError::new(ErrorCode::UnroutableLane, message).field("rail")
            }
            ExecuteError::Unroutable(m) => ApiError::new(ErrorCode::UnroutableLane, m)
                .suggest("see GET /api/route/chains for the lanes this host serves"),
            ExecuteError::NoRoute(why) => super::quote::no_route(why),
            ExecuteError::Declined(d) => declined(d),
            ExecuteError::WouldRevert(w) => would_revert(&w, message),
            ExecuteError::RelayerUnavailable(m) => ApiError::new(ErrorCode::RelayerUnavailable, m),
            ExecuteError::Store(m) => ApiError::new(ErrorCode::StoreUnavailable, m),
            ExecuteError::IntentNotFound(_) => {
                ApiError::new(ErrorCode::IntentNotFound, message).field("intentId")
            }
            ExecuteError::IntentExpired(_) => ApiError::new(ErrorCode::IntentExpired, message)
                .field("intentId")
                .suggest("POST /api/route/intent again and sign the new terms"),
            ExecuteError::IntentMismatch { field, .. } => {
                ApiError::new(ErrorCode::IntentMismatch, message).field(field)
            }
            ExecuteError::Router(e) => router_error(e),
            ExecuteError::RouterUnavailable(m) => ApiError::new(ErrorCode::RouterUnavailable, m),
        }
    }
}

fn router_error(e: relay_chain::router::RouterError) -> ApiError {
    use relay_chain::router::RouterError as R;
    let message = e.to_string();
    let (code, field) = match e {
        R::Unsigned => (ErrorCode::SignatureInvalid, None),
        R::Signature { field, .. }
        | R::WrongSigner { field, .. }
        | R::ContractRefused { field, .. } => (ErrorCode::SignatureInvalid, Some(field)),
        R::Expired { field, .. } => (ErrorCode::SignatureExpired, Some(field)),
        R::NonceUsed { field, .. } => (ErrorCode::NonceUsed, Some(field)),
        R::PermitTooSmall { .. } => (ErrorCode::SignatureInvalid, Some("erc2612.value")),
        R::Read(_) => (ErrorCode::RelayerUnavailable, None),
    };
    let err = ApiError::new(code, message);
    match field {
        Some(f) => err.field(f),
        None => err,
    }
}

/// The error code of a transaction that would revert.
pub(super) fn revert_code(w: &WouldRevert) -> ErrorCode {
    match w {
        WouldRevert::AllowanceMissing { .. } => ErrorCode::Permit2AllowanceMissing,
        WouldRevert::InsufficientBalance { .. } => ErrorCode::InsufficientBalance,
        WouldRevert::NonceUsed(_) => ErrorCode::Permit2NonceUsed,
        WouldRevert::CallReverts { .. } => ErrorCode::RailCallReverts,
    }
}

fn would_revert(w: &WouldRevert, message: String) -> ApiError {
    let err = ApiError::new(revert_code(w), message);
    match w {
        WouldRevert::AllowanceMissing { .. } => err.field("permit2").suggest(
            "the owner approves Permit2 for the token once (one approve transaction), then sends the same request",
        ),
        WouldRevert::InsufficientBalance { .. } => err.field("amount"),
        WouldRevert::NonceUsed(_) => err
            .field("permit2.nonce")
            .suggest("sign a new permit with an unused nonce"),
        WouldRevert::CallReverts { .. } => err,
    }
}

fn declined(d: Declined) -> ApiError {
    let code = match &d {
        Declined::QuoteOnly(_) => ErrorCode::QuoteOnly,
        Declined::PriceMoved { .. } => ErrorCode::PriceMoved,
        Declined::FundsRequired { .. } | Declined::Failed(_) => ErrorCode::RailsUnavailable,
        Declined::Refused { .. } => ErrorCode::InvalidField,
    };
    let err = ApiError::new(code, d.to_string());
    match d {
        Declined::Refused { field: Some(f), .. } => err.field(f).suggest(
            "every rail that serves the lane refuses this field: fix it and send the request again",
        ),
        Declined::PriceMoved {
            fresh: Some(q),
            min,
            ..
        } => err
            .fresh_quote(serde_json::json!({
                "rail": q.rail, "lane": q.lane, "amountIn": q.amount_in,
                "amountOut": q.amount_out, "minOut": q.min_out,
                "lockedMinOut": min, "quotedAt": relay_types::now_ms(),
            }))
            .suggest("quote again: the fresh quote no longer meets the locked minOut"),
        _ => err,
    }
}

fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    (
        status,
        [("content-type", "application/json")],
        serde_json::to_string(body).unwrap_or_default(),
    )
        .into_response()
}

/// An error answer; a 401 carries its `WWW-Authenticate` challenge
/// (RFC 6750: the owner token's realm, or a session bearer's).
pub(super) fn error_response(e: ApiError) -> Response {
    let challenge = match e.code {
        ErrorCode::OperatorAuthRequired => Some(auth::CHALLENGE),
        ErrorCode::SessionUnauthorized => Some(auth::SESSION_CHALLENGE),
        _ => None,
    };
    let mut resp = e.into_response();
    if let Some(c) = challenge {
        resp.headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static(c));
    }
    resp
}

#[utoipa::path(
    post,
    path = "/api/route/execute",
    tag = "routing",
    summary = "Execute a route: a router form (permit2-witness, erc2612, intent: sign what POST /api/route/intent serves), mode permit2 with the user's signature, or mode self (the default: the operator's own funds, needs the owner token); sandbox and dry runs move nothing",
    request_body(content = relay_wire::ExecuteRequest, examples(
        ("permit2" = (summary = "Permit2 PermitTransferFrom for spender = the relayer (two source transactions)", value = json!({
            "fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC", "amount": "5000000",
            "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "mode": "permit2", "live": true,
            "permit2": {"owner": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "permitted": {"token": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "amount": "5000000"},
                "nonce": "7", "deadline": "1893456000", "signature": "0x…65 bytes…"}}))),
        ("permit2-witness" = (summary = "Permit2 witness transfer to the RelayRouter (+ an EIP-2612 permit for Permit2 on a first route); the body as POST /api/route/intent serves it, signatures filled", value = json!({
            "fromChain": 8453, "toChain": 42161, "fromToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "toToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "amount": "5000000",
            "fromAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "rail": "floatlane",
            "mode": "permit2-witness", "live": true, "intentId": "rt_0123456789abcdef0123",
            "intent": {"recipient": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "toChain": "42161", "toToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "minOut": "4987500", "rail": "floatlane", "planHash": "0x…32 bytes…", "feeCap": "12500", "deadline": "1893456000"},
            "permit2": {"owner": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "permitted": {"token": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "amount": "5000000"}, "nonce": "1234567", "deadline": "1893456000", "signature": "0x…"},
            "erc2612": {"value": "5000000", "deadline": "1893456000", "signature": "0x…"}}))),
        ("erc2612" = (summary = "EIP-2612 permit for the router + the router's RelayOrder", value = json!({
            "fromChain": 8453, "toChain": 42161, "fromToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "toToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "amount": "5000000",
            "fromAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "rail": "floatlane",
            "mode": "erc2612", "live": true, "intentId": "rt_0123456789abcdef0123",
            "intent": {"recipient": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "toChain": "42161", "toToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "minOut": "4987500", "rail": "floatlane", "planHash": "0x…", "feeCap": "12500", "deadline": "1893456000"},
            "order": {"owner": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "token": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "amount": "5000000", "nonce": "1234567", "signature": "0x…"},
            "erc2612": {"value": "5000000", "deadline": "1893456000", "signature": "0x…"}}))),
        ("intent" = (summary = "The router's RelayOrder alone (the owner approved the router)", value = json!({
            "fromChain": 8453, "toChain": 42161, "fromToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "toToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "amount": "5000000",
            "fromAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "rail": "floatlane",
            "mode": "intent", "live": true, "intentId": "rt_0123456789abcdef0123",
            "intent": {"recipient": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "toChain": "42161", "toToken": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "minOut": "4987500", "rail": "floatlane", "planHash": "0x…", "feeCap": "12500", "deadline": "1893456000"},
            "order": {"owner": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "token": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "amount": "5000000", "nonce": "1234567", "signature": "0x…"}}))),
        ("dry run" = (summary = "A guaranteed dry run: nothing signed or sent", value = json!({"fromChain": 8453, "toChain": 42161, "amount": "5000000", "fromToken": "USDC", "toToken": "USDC", "toAddress": "0x000000000000000000000000000000000000bEEF", "dryRun": true}))),
    )),
    params(
        ("x-relay-sandbox" = Option<String>, Header, description = "1: the zero-funds sandbox (an sbx_ id; stages advance on a timer)"),
        ("x-idempotency-key" = Option<String>, Header, description = "replays the first response and moves nothing a second time"),
        ("authorization" = Option<String>, Header, description = "Bearer <owner token>: required for mode self when it spends the relayer's float"),
    ),
    responses(
        (status = 200, description = "The RouteReceipt", body = RouteReceipt),
        (status = "default", description = "A typed error (401 OPERATOR_AUTH_REQUIRED, 422 PERMIT2_ALLOWANCE_MISSING, …)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn execute(State(q): State<Quoting>, headers: HeaderMap, body: Bytes) -> Response {
    answer(&q, &headers, &body).await
}

/// Answers an execute of `body` under `headers` exactly as
/// `POST /api/route/execute` does (the agent's sandbox run calls it
/// directly, never back through the router).
pub(super) async fn answer(q: &Quoting, headers: &HeaderMap, body: &Bytes) -> Response {
    let x = q;
    if rehearsal(headers) {
        let mut resp = respond(x, headers, body, None)
            .await
            .unwrap_or_else(error_response);
        resp.headers_mut().insert(
            "x-relay-rehearsal",
            axum::http::HeaderValue::from_static("1"),
        );
        return resp;
    }
    match idempotency_key(headers) {
        Some(key) => {
            let run = || respond(x, headers, body, Some(&key));
            idempotent(&x.app, body, &key, run).await
        }
        None => respond(x, headers, body, None)
            .await
            .unwrap_or_else(error_response),
    }
}

/// What a passed rehearsal's receipt says.
const REHEARSAL_NOTE: &str = "rehearsal (x-relay-rehearse): every check of a live execute passed; nothing was stored, signed or sent, no nonce or idempotency key was spent, and this id names no route — the same request without the header starts it";

/// `x-relay-rehearse: 1` (spec §5.4): run every check, move nothing.
pub(crate) fn rehearsal(headers: &HeaderMap) -> bool {
    headers
        .get("x-relay-rehearse")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| matches!(v.trim(), "1" | "true"))
}

/// The request's `x-idempotency-key` (spec §5.5), if it sent one.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get("x-idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// A fund-moving request under `x-idempotency-key` (`key`; `run` answers
/// it): the first request runs, a repeat replays its response byte for
/// byte; a repeat of a request that died after creating its route answers
/// that route's receipt. A request that was refused leaves the key
/// unspent.
pub(super) async fn idempotent<F, Fut>(s: &AppState, body: &Bytes, key: &str, run: F) -> Response
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Response, ApiError>>,
{
    let fingerprint = hex::encode(Sha256::digest(body));
    let stale_ms = s.config.execution.idempotency_stale_ms;
    match s.store.idempotency_begin(key, &fingerprint, stale_ms).await {
        Ok(IdempotencyBegin::Fresh) => {}
        Ok(IdempotencyBegin::Replay { status, body }) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            return (status, [("content-type", "application/json")], body).into_response();
        }
        Ok(IdempotencyBegin::InFlight {
            route: Some(id),
            stale,
        }) => return created_before(s, key, &id, stale).await,
        Ok(IdempotencyBegin::InFlight { route: None, .. }) => {
            return ApiError::new(
                ErrorCode::IdempotencyInFlight,
                "this idempotency key's first request is still executing",
            )
            .into_response()
        }
        Ok(IdempotencyBegin::Mismatch) => {
            return ApiError::new(
                ErrorCode::IdempotencyMismatch,
                "x-idempotency-key was already used with a different body",
            )
            .into_response()
        }
        Err(e) => return ApiError::new(ErrorCode::StoreUnavailable, e.to_string()).into_response(),
    }
    match run().await {
        Ok(resp) => {
            let (parts, b) = resp.into_parts();
            let bytes = axum::body::to_bytes(b, 1 << 20).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if let Err(e) = s
                .store
                .idempotency_complete(key, parts.status.as_u16(), &text)
                .await
            {
                tracing::error!(error = %e, "idempotency response not stored");
            }
            Response::from_parts(parts, axum::body::Body::from(bytes))
        }
        Err(e) => {
            // Nothing was persisted: the client may retry with the same key.
            let _ = s.store.idempotency_abandon(key).await;
            error_response(e)
        }
    }
}

/// The key's first request created route `id` and never answered (still
/// running, or its process died): answer the route's receipt, and when the
/// first request is presumed dead, make that the key's response.
async fn created_before(s: &AppState, key: &str, id: &str, stale: bool) -> Response {
    let found = s.store.get_route(id).await;
    let Ok(Some((r, _))) = found else {
        return ApiError::new(ErrorCode::StoreUnavailable, "the key's route is unreadable")
            .into_response();
    };
    let text = serde_json::to_string(&receipt(&r, false, 0.0)).unwrap_or_default();
    if stale {
        let _ = s.store.idempotency_complete(key, 200, &text).await;
    }
    (StatusCode::OK, [("content-type", "application/json")], text).into_response()
}

async fn respond(
    x: &Quoting,
    headers: &HeaderMap,
    body: &Bytes,
    key: Option<&str>,
) -> Result<Response, ApiError> {
    let s = &x.app;
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(ErrorCode::MalformedBody, format!("body is not JSON: {e}")))?;
    let ask = parse_execute(&v, &s.config)?;
    let req = ExecuteRequest {
        ask,
        sandbox: headers.get("x-relay-sandbox").and_then(|v| v.to_str().ok()) == Some("1"),
        idempotency_key: key.map(str::to_string),
        operator: auth::is_operator(s.owner_token.as_ref(), headers),
        rehearse: rehearsal(headers),
    };
    let done = x.service.execute(x, req).await?;
    Ok(json_response(StatusCode::OK, &shape(&done)))
}

/// The RouteReceipt of what became of the execute.
pub(super) fn shape(done: &Executed) -> RouteReceipt {
    match done {
        Executed::Live(r) => receipt(r, false, 0.0),
        Executed::Sandbox(r) => receipt(r, true, 0.0),
        Executed::Dry(r) => dry_receipt(r, 0.0),
        Executed::Rehearsed(r) => RouteReceipt {
            broadcast: Some(false),
            note: Some(REHEARSAL_NOTE.into()),
            ..receipt(r, false, 0.0)
        },
        Executed::FundsRequired {
            record,
            sandbox,
            note,
        } => RouteReceipt {
            note: Some(note.clone()),
            ..receipt(record, *sandbox, 0.0)
        },
    }
}
