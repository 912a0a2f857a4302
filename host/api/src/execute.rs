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
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use relay_engine::route::RouteAsk;
use relay_execution::{
    execute::{ExecuteError, ExecuteRequest, QuoteSource},
    receipt::RouteReceipt,
};
use relay_store::durable::IdemKey;
use serde_json::Value;

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

fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    (
        status,
        [("content-type", "application/json")],
        serde_json::to_string(body).unwrap_or_default(),
    )
        .into_response()
}

/// An error answer; a 401 carries its `WWW-Authenticate` challenge
/// (RFC 6750: the owner token's realm).
pub(super) fn error_response(e: ApiError) -> Response {
    relay_feature::operator::refusal(e, &[])
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
            idempotent(&x.app, body, &IdemKey::route(&key), run).await
        }
        None => respond(x, headers, body, None)
            .await
            .unwrap_or_else(error_response),
    }
}

/// `x-relay-rehearse: 1` (spec §5.4): run every check, move nothing.
pub(crate) fn rehearsal(headers: &HeaderMap) -> bool {
    headers
        .get("x-relay-rehearse")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| matches!(v.trim(), "1" | "true"))
}

/// The request's `x-idempotency-key` (spec §5.5), if it sent one.
pub(crate) use relay_feature::edge::idempotency_key;

/// A fund-moving request under `x-idempotency-key` (`key`; `run` answers
/// it), through the one guard ([`relay_feature::once::idempotent_route`]):
/// a repeat of a request that died after creating its route answers that
/// route's receipt.
pub(super) async fn idempotent<F, Fut>(
    s: &AppState,
    body: &Bytes,
    key: &IdemKey,
    run: F,
) -> Response
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Response, ApiError>>,
{
    let stale = s.config.execution.idempotency_stale_ms;
    relay_feature::once::idempotent_route((&s.store, stale), key, body, run, error_response).await
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
    let ask = x.parse_execute(&v)?;
    let req = ExecuteRequest {
        ask,
        sandbox: headers.get("x-relay-sandbox").and_then(|v| v.to_str().ok()) == Some("1"),
        idempotency_key: key.map(str::to_string),
        operator: auth::is_operator(s.owner_token.as_ref(), headers),
        rehearse: rehearsal(headers),
    };
    let done = x.service.execute(x, req).await?;
    Ok(json_response(
        StatusCode::OK,
        &relay_execution::receipt::of_executed(&done),
    ))
}
