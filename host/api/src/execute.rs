//! `POST /api/route/execute` (spec §2.7, §2.8, §3.1): parse and check the
//! request at the edge (every bad field a typed 4xx naming it; nothing moves
//! on a request that failed validation), pick the best applicable rail by
//! delivered amount, verify the Permit2 signature off-chain, then — sandbox,
//! dry run, or live — answer a RouteReceipt. Live routes are persisted
//! before anything is broadcast and run by the executor. An
//! `x-idempotency-key` replays the first response and moves nothing twice.

use super::{quote::Quoting, ApiError, AppState, ErrorCode};
use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
    Router,
};
use relay_engine::{
    attest,
    execute::{choose, Accepted, Declined},
    request::{parse_execute, ExecuteAsk},
};
use relay_execution::receipt::receipt;
use relay_plugin_api::{Amount, SourceMode};
use relay_store::IdempotencyBegin;
use relay_types::now_ms;
use relay_types::{RouteRecord, RouteStatus};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

pub(super) fn routes(q: Quoting) -> Router<AppState> {
    Router::new()
        .route("/api/route/execute", post(execute))
        .with_state(q)
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[tracing::instrument(skip_all, fields(route))]
async fn execute(State(q): State<Quoting>, headers: HeaderMap, body: Bytes) -> Response {
    let key = headers
        .get("x-idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match key {
        Some(key) => with_key(&q, &headers, &body, &key).await,
        None => respond(&q, &headers, &body, None)
            .await
            .unwrap_or_else(IntoResponse::into_response),
    }
}

/// An execute under `x-idempotency-key`: the first request runs, a repeat
/// replays its response byte for byte; a repeat of a request that died
/// after creating its route answers that route's receipt.
async fn with_key(q: &Quoting, headers: &HeaderMap, body: &Bytes, key: &str) -> Response {
    let s = &q.app;
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
    match respond(q, headers, body, Some(key)).await {
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
            e.into_response()
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
    let text = receipt(&r, false, 0.0).to_string();
    if stale {
        let _ = s.store.idempotency_complete(key, 200, &text).await;
    }
    (StatusCode::OK, [("content-type", "application/json")], text).into_response()
}

async fn respond(
    q: &Quoting,
    headers: &HeaderMap,
    body: &Bytes,
    key: Option<&str>,
) -> Result<Response, ApiError> {
    let s = &q.app;
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(ErrorCode::MalformedBody, format!("body is not JSON: {e}")))?;
    let mut ask = parse_execute(&v, &s.config)?;
    let sandbox = headers.get("x-relay-sandbox").and_then(|v| v.to_str().ok()) == Some("1");
    ask.min_out = price_lock(s, &ask)?;
    if !sandbox && !ask.dry_run && ask.live != Some(false) && ask.mode == SourceMode::Permit2 {
        crate::verify_permit(s, &ask).await?;
    }
    let outcome = q.run(&ask.route).await?;
    if let Some(want) = ask.rail.as_deref() {
        if !outcome.results.iter().any(|r| r.rail == want) {
            return Err(ApiError::new(
                ErrorCode::UnroutableLane,
                format!("rail {want:?} does not serve this lane now (not installed, disabled, or its lane switched off)"),
            )
            .field("rail"));
        }
    }
    if outcome.best().is_none() {
        return Err(super::quote::no_route(outcome.no_route()));
    }
    let prefix = if sandbox { "sbx_" } else { "rt_" };
    let id = format!(
        "{prefix}{}",
        hex::encode(&Sha256::digest(format!("{}{:?}", now_ms(), body).as_bytes())[..10])
    );
    tracing::Span::current().record("route", id.as_str());
    let relayer = s.relayer.as_ref().map(|r| r.address().to_string());
    let relayer = relayer
        .or_else(|| s.config.relayer.clone())
        .unwrap_or_default();
    let accepted = match choose(&s.rails, &outcome, &ask, &id, &relayer).await {
        Ok(a) => a,
        Err(Declined::FundsRequired {
            rail,
            lane,
            message,
        }) => return funds_required(s, &ask, id, (rail, lane), message, sandbox).await,
        Err(d) => return Err(declined(d)),
    };
    let dry = ask.is_dry(accepted.rail.manifest().role);
    let record = record(&ask, id, &accepted);
    if sandbox {
        let r = s.sandbox.start(record);
        return Ok(json_response(StatusCode::OK, &receipt(&r, true, 0.0)));
    }
    if dry {
        let mut r = record;
        r.status = RouteStatus::Dry;
        let mut v = receipt(&r, false, 0.0);
        v["broadcast"] = json!(false);
        v["wouldSend"] = json!(r.plan.steps);
        return Ok(json_response(StatusCode::OK, &v));
    }
    start_live(s, record, key).await
}

/// The minimum the recipient must get: the stricter of `minOut` and a
/// verified attestation's `minOut` (which must be for this very route).
fn price_lock(s: &AppState, ask: &ExecuteAsk) -> Result<Option<Amount>, ApiError> {
    let Some((terms, sig)) = &ask.attestation else {
        return Ok(ask.min_out);
    };
    let bad = |why: String| ApiError::new(ErrorCode::AttestationInvalid, why).field("attestation");
    let signer = s
        .relayer
        .as_ref()
        .map(|r| r.address())
        .ok_or_else(|| bad("this host has no relayer key to check it against".into()))?;
    attest::verify(terms, sig, signer, now_ms()).map_err(|e| bad(e.to_string()))?;
    let same_token = |a: &str, t: &relay_plugin_api::Token| {
        t.address
            .as_deref()
            .unwrap_or(&t.symbol)
            .eq_ignore_ascii_case(a)
    };
    let matches = terms.from_chain == ask.from_chain
        && terms.to_chain == ask.to_chain
        && terms.amount == ask.amount
        && same_token(&terms.from_token, &ask.from_token)
        && same_token(&terms.to_token, &ask.to_token);
    if !matches {
        return Err(bad(
            "the attested quote is for another route or amount".into()
        ));
    }
    Ok(Some(
        ask.min_out.map_or(terms.min_out, |m| m.max(terms.min_out)),
    ))
}

fn declined(d: Declined) -> ApiError {
    let code = match &d {
        Declined::QuoteOnly(_) => ErrorCode::QuoteOnly,
        Declined::PriceMoved { .. } => ErrorCode::PriceMoved,
        Declined::FundsRequired { .. } | Declined::Failed(_) => ErrorCode::RailsUnavailable,
    };
    ApiError::new(code, d.to_string())
}

fn record(ask: &ExecuteAsk, id: String, a: &Accepted) -> RouteRecord {
    let min_out = ask
        .min_out
        .map_or(a.quote.min_out, |m| a.quote.min_out.max(m));
    // A route that starts with the user's deposit waits for it.
    let status = match a.plan.steps.first() {
        Some(relay_plugin_api::PlanAction::DepositInstruction { .. }) => {
            RouteStatus::AwaitingDeposit
        }
        _ => RouteStatus::Pending,
    };
    RouteRecord {
        id,
        status,
        stage: Some("RECEIVING".into()),
        rail: a.rail.id().to_string(),
        lane: a.lane.clone(),
        from_chain: ask.from_chain,
        to_chain: ask.to_chain,
        from_token: ask.from_token.symbol.clone(),
        to_token: ask.to_token.symbol.clone(),
        amount: ask.amount,
        estimated: a.quote.amount_out,
        min_out,
        relay_fee: a.route_fee,
        gas_fee: a.gas_fee,
        sender: ask.sender.clone(),
        recipient: ask.recipient.clone(),
        mode: ask.mode,
        plan: a.plan.clone(),
        next_step: 0,
        track_ref: a.plan.track_ref.clone(),
        src_tx: None,
        dest_tx: None,
        failure: None,
        created_ms: now_ms(),
        permit: ask.permit.clone(),
        passed_over: a.passed.iter().map(|(r, w)| format!("{r}: {w}")).collect(),
    }
}

/// An unfunded lane (spec §3.1): the route is recorded as FUNDS_REQUIRED,
/// nothing is sent and no transaction is invented.
async fn funds_required(
    s: &AppState,
    ask: &ExecuteAsk,
    id: String,
    (rail, lane): (String, String),
    message: String,
    sandbox: bool,
) -> Result<Response, ApiError> {
    let mut r = RouteRecord {
        id,
        status: RouteStatus::FundsRequired,
        stage: None,
        rail,
        lane,
        from_chain: ask.from_chain,
        to_chain: ask.to_chain,
        from_token: ask.from_token.symbol.clone(),
        to_token: ask.to_token.symbol.clone(),
        amount: ask.amount,
        estimated: Amount::ZERO,
        min_out: Amount::ZERO,
        relay_fee: Amount::ZERO,
        gas_fee: Amount::ZERO,
        sender: ask.sender.clone(),
        recipient: ask.recipient.clone(),
        mode: ask.mode,
        plan: Default::default(),
        next_step: 0,
        track_ref: None,
        src_tx: None,
        dest_tx: None,
        failure: None,
        created_ms: now_ms(),
        permit: None,
        passed_over: Vec::new(),
    };
    if !sandbox {
        s.store
            .insert_route(&r)
            .await
            .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    } else {
        r = s.sandbox.start(r);
    }
    let mut v = receipt(&r, sandbox, 0.0);
    v["note"] = json!(format!("the relayer lacks float for this lane: {message}"));
    Ok(json_response(StatusCode::OK, &v))
}

/// Persists a live route before anything is broadcast and hands it to the
/// executor.
async fn start_live(
    s: &AppState,
    record: RouteRecord,
    key: Option<&str>,
) -> Result<Response, ApiError> {
    let executor = s.executor.clone().ok_or_else(|| {
        ApiError::new(
            ErrorCode::RelayerUnavailable,
            "this host has no relayer key (RELAY_RELAYER_KEY)",
        )
    })?;
    s.store
        .insert_route_for_key(&record, key)
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    let id = record.id.clone();
    tokio::spawn(async move {
        if let Err(e) = executor.run(&record.id).await {
            tracing::error!(route = %record.id, error = %e, "route execution stopped");
        }
    });
    let (r, _) = s
        .store
        .get_route(&id)
        .await
        .ok()
        .flatten()
        .ok_or_else(|| ApiError::new(ErrorCode::StoreUnavailable, "route vanished"))?;
    Ok(json_response(StatusCode::OK, &receipt(&r, false, 0.0)))
}
