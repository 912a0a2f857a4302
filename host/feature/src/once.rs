//! One idempotency guard at the HTTP edge (spec §5.5): every fund-moving
//! call that honours `x-idempotency-key` (execute, a yield-account spend,
//! a session's execute) answers through [`idempotent`], over the store's
//! one guard ([`Idempotency`]) and the request's raw bytes. The first
//! request runs; a repeat of the same bytes replays its response byte for
//! byte; other bytes under the key are `IDEMPOTENCY_MISMATCH`; a repeat
//! while the first still runs is `IDEMPOTENCY_IN_FLIGHT`. A request that
//! was refused leaves the key unspent. Every replayed answer (the first
//! response again, or the receipt of the route the first request created)
//! carries [`REPLAYED`]`: true`, so a client can tell it from a first run.

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
};
use relay_errors::{ApiError, ErrorCode};
use relay_store::{
    durable::{IdemKey, Idempotency, IdempotencyBegin, Once},
    Store,
};

/// The header a replayed answer carries (`true`), as Stripe names it.
pub const REPLAYED: &str = "idempotent-replayed";

/// `resp`, marked as a replay.
fn replayed(mut resp: Response) -> Response {
    resp.headers_mut()
        .insert(REPLAYED, axum::http::HeaderValue::from_static("true"));
    resp
}

/// The key's first request created route `route` and never answered
/// (still running, or its process died: `stale`). Only the caller knows
/// how to answer for the route it started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedBefore {
    /// The route the first request created.
    pub route: String,
    /// Whether the first request is presumed dead.
    pub stale: bool,
}

/// Answers `run` once under `key` for the raw request bytes `body`
/// (`refused` shapes a refusal): the response, or the route a first
/// request created and left unanswered.
pub async fn idempotent<F, Fut>(
    guard: &Idempotency,
    key: &IdemKey,
    body: &[u8],
    run: F,
    refused: fn(ApiError) -> Response,
) -> Result<Response, CreatedBefore>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Response, ApiError>>,
{
    let ran = guard
        .once(key, body, || async {
            let (parts, b) = run().await?.into_parts();
            let bytes = axum::body::to_bytes(b, 1 << 20).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let resp = Response::from_parts(parts, axum::body::Body::from(bytes));
            Ok((resp.status().as_u16(), text, resp))
        })
        .await;
    match ran {
        Ok(Once::Ran(done)) => Ok(done.unwrap_or_else(refused)),
        Ok(Once::Seen(seen)) => seen_before(seen),
        Err(e) => Ok(ApiError::new(ErrorCode::StoreUnavailable, e.to_string()).into_response()),
    }
}

/// [`idempotent`] for a call that starts a route (an execute, a session's
/// execute) over `store`'s guard (`stale_ms`: when a first request that
/// never answered is presumed dead): a repeat whose first request created
/// its route and never answered gets that route's receipt, and when the
/// first is presumed dead that receipt becomes the key's response.
pub async fn idempotent_route<F, Fut>(
    (store, stale_ms): (&Store, u64),
    key: &IdemKey,
    body: &[u8],
    run: F,
    refused: fn(ApiError) -> Response,
) -> Response
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Response, ApiError>>,
{
    let guard = Idempotency::new(store.clone(), stale_ms);
    match idempotent(&guard, key, body, run, refused).await {
        Ok(answer) => answer,
        Err(CreatedBefore { route, stale }) => {
            created_before(store, &guard, key, (&route, stale)).await
        }
    }
}

/// The key's first request created route `id` and never answered (still
/// running, or its process died): the route's receipt, made the key's
/// response when the first request is presumed dead (`stale`).
async fn created_before(
    store: &Store,
    guard: &Idempotency,
    key: &IdemKey,
    (id, stale): (&str, bool),
) -> Response {
    let Ok(Some((r, _))) = store.get_route(id).await else {
        return ApiError::new(ErrorCode::StoreUnavailable, "the key's route is unreadable")
            .into_response();
    };
    let receipt = relay_execution::receipt::receipt(&r, false, 0.0);
    let text = serde_json::to_string(&receipt).unwrap_or_default();
    if stale {
        let _ = guard.complete(key, 200, &text).await;
    }
    replayed((StatusCode::OK, [("content-type", "application/json")], text).into_response())
}

/// The answer to a repeat while the key's first request still runs
/// (`IDEMPOTENCY_IN_FLIGHT`, retryable).
pub fn in_flight() -> Response {
    ApiError::new(
        ErrorCode::IdempotencyInFlight,
        "this idempotency key's first request is still executing",
    )
    .into_response()
}

/// The answer to a key seen before: its first response, or the typed
/// refusal, or the route its first request created.
fn seen_before(seen: IdempotencyBegin) -> Result<Response, CreatedBefore> {
    Ok(match seen {
        IdempotencyBegin::Replay { status, body } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            replayed((status, [("content-type", "application/json")], body).into_response())
        }
        IdempotencyBegin::InFlight {
            route: Some(route),
            stale,
        } => return Err(CreatedBefore { route, stale }),
        IdempotencyBegin::InFlight { route: None, .. } | IdempotencyBegin::Fresh => in_flight(),
        IdempotencyBegin::Mismatch => ApiError::new(
            ErrorCode::IdempotencyMismatch,
            "x-idempotency-key was already used with a different body",
        )
        .into_response(),
    })
}
