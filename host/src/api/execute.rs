//! `POST /api/route/execute` (spec §2.7, §2.8, §3.1): parse and check the
//! request at the edge (every bad field a typed 4xx naming it; nothing moves
//! on a request that failed validation), pick the best applicable rail by
//! delivered amount, verify the Permit2 signature off-chain, then — sandbox,
//! dry run, or live — answer a RouteReceipt. Live routes are persisted
//! before anything is broadcast and run by the executor. An
//! `x-idempotency-key` replays the first response and moves nothing twice.

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
    Router,
};
use relay_plugin_api::{PrepareRequest, RailQuote, SourceMode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{ApiError, AppState, ErrorCode};
use crate::{
    capabilities::now_ms,
    engine::{request::parse_execute, select::best_quote},
    execution::{
        model::{RouteRecord, RouteStatus},
        receipt::receipt,
    },
    store::IdempotencyBegin,
};

/// The route fee withheld from the token in flight (spec §8.2), bps.
pub const ROUTE_FEE_BPS: u32 = 25;

pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/api/route/execute", post(execute))
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
async fn execute(State(s): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let key = headers
        .get("x-idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let Some(key) = key else {
        return respond(&s, &headers, &body)
            .await
            .unwrap_or_else(IntoResponse::into_response);
    };
    let fingerprint = hex::encode(Sha256::digest(&body));
    match s.store.idempotency_begin(&key, &fingerprint).await {
        Ok(IdempotencyBegin::Fresh) => {}
        Ok(IdempotencyBegin::Replay { status, body }) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            return (status, [("content-type", "application/json")], body).into_response();
        }
        Ok(IdempotencyBegin::InFlight) => {
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
    match respond(&s, &headers, &body).await {
        Ok(resp) => {
            let (parts, b) = resp.into_parts();
            let bytes = axum::body::to_bytes(b, 1 << 20).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if let Err(e) = s
                .store
                .idempotency_complete(&key, parts.status.as_u16(), &text)
                .await
            {
                tracing::error!(error = %e, "idempotency response not stored");
            }
            Response::from_parts(parts, axum::body::Body::from(bytes))
        }
        Err(e) => {
            // Nothing happened: the client may retry with the same key.
            let _ = s.store.idempotency_abandon(&key).await;
            e.into_response()
        }
    }
}

async fn respond(s: &AppState, headers: &HeaderMap, body: &Bytes) -> Result<Response, ApiError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(ErrorCode::MalformedBody, format!("body is not JSON: {e}")))?;
    let ask = parse_execute(&v, &s.config)?;
    let sandbox = headers.get("x-relay-sandbox").and_then(|v| v.to_str().ok()) == Some("1");
    let relayer = s.relayer.as_ref().map(|r| r.address());
    let (quote, rail) = best_quote(s, &ask).await?;
    let mut quote = withhold_route_fee(quote);
    if let Some(min) = ask.min_out {
        if quote.amount_out < min {
            return Err(ApiError::new(
                ErrorCode::InvalidField,
                format!(
                    "minOut: the best route now delivers {}, below {min}",
                    quote.amount_out
                ),
            ));
        }
        quote.min_out = quote.min_out.max(min);
    }
    let prefix = if sandbox { "sbx_" } else { "rt_" };
    let id = format!(
        "{prefix}{}",
        hex::encode(&Sha256::digest(format!("{}{:?}", now_ms(), body).as_bytes())[..10])
    );
    tracing::Span::current().record("route", id.as_str());
    if !sandbox && !ask.dry && ask.mode == SourceMode::Permit2 {
        crate::engine::request::verify_permit(s, &ask).await?;
    }
    let plan_relayer = relayer.map(|a| a.to_string()).unwrap_or_default();
    let prep = PrepareRequest {
        route_id: id.clone(),
        quote: quote.clone(),
        from_chain: ask.from_chain,
        to_chain: ask.to_chain,
        from_token_address: ask.from_token.address.clone(),
        to_token_address: ask.to_token.address.clone(),
        sender: ask.sender.clone(),
        recipient: ask.recipient.clone(),
        relayer: plan_relayer,
        mode: ask.mode,
    };
    let plan = rail
        .prepare(prep)
        .await
        .map_err(|e| ApiError::new(ErrorCode::RailsUnavailable, e.to_string()))?;
    let record = RouteRecord {
        id: id.clone(),
        status: RouteStatus::Pending,
        stage: Some("RECEIVING".into()),
        rail: quote.rail.clone(),
        lane: quote.lane.clone(),
        from_chain: ask.from_chain,
        to_chain: ask.to_chain,
        from_token: ask.from_token.symbol.clone(),
        to_token: ask.to_token.symbol.clone(),
        amount: ask.amount,
        estimated: quote.amount_out,
        min_out: quote.min_out,
        relay_fee: ask.amount.bps(ROUTE_FEE_BPS),
        sender: ask.sender.clone(),
        recipient: ask.recipient.clone(),
        mode: ask.mode,
        plan,
        next_step: 0,
        track_ref: None,
        src_tx: None,
        dest_tx: None,
        failure: None,
        created_ms: now_ms(),
        permit: ask.permit.clone(),
    };
    if sandbox {
        let r = s.sandbox.start(record);
        return Ok(json_response(StatusCode::OK, &receipt(&r, true, 0.0)));
    }
    if ask.dry {
        let mut r = record;
        r.status = RouteStatus::Dry;
        let mut v = receipt(&r, false, 0.0);
        v["broadcast"] = json!(false);
        v["wouldSend"] = json!(r.plan.steps);
        return Ok(json_response(StatusCode::OK, &v));
    }
    let executor = s.executor.clone().ok_or_else(|| {
        ApiError::new(
            ErrorCode::RelayerUnavailable,
            "this host has no relayer key (RELAY_RELAYER_KEY)",
        )
    })?;
    s.store
        .insert_route(&record)
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
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

/// The route fee comes out of the delivered amount.
fn withhold_route_fee(mut q: RailQuote) -> RailQuote {
    let fee = q.amount_in.bps(ROUTE_FEE_BPS);
    q.amount_out = q.amount_out.saturating_sub(fee);
    q.min_out = q.min_out.saturating_sub(fee);
    q
}
