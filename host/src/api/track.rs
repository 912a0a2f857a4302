//! `GET /api/route/status` and `GET /api/route/stream` (spec §4.2, §6.2):
//! a route's receipt, and its changes as server-sent events — one event at
//! once, `event: status` on every change, `event: done` on a terminal state,
//! then the stream closes.

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::{Query, State},
    response::sse::{Event, KeepAlive, Sse},
    routing::get,
    Json, Router,
};
use futures::Stream;
use serde::Deserialize;
use serde_json::Value;

use super::{ApiError, AppState, ErrorCode};
use crate::{capabilities::now_ms, execution::receipt::receipt};

/// How often a stream re-reads the route.
const STREAM_POLL: Duration = Duration::from_millis(500);

pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/route/status", get(status))
        .route("/api/route/stream", get(stream))
}

#[derive(Debug, Deserialize)]
struct IdQuery {
    id: Option<String>,
}

/// The receipt of a route and whether it is terminal.
async fn current(s: &AppState, id: &str) -> Result<(Value, bool), ApiError> {
    if id.starts_with("sbx_") {
        if let Some((r, elapsed)) = s.sandbox.get(id) {
            return Ok((receipt(&r, true, elapsed), r.status.is_terminal()));
        }
    } else if id.starts_with("rt_") {
        let found = s
            .store
            .get_route(id)
            .await
            .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
        if let Some((r, _)) = found {
            let elapsed = now_ms().saturating_sub(r.created_ms) as f64 / 1000.0;
            return Ok((receipt(&r, false, elapsed), r.status.is_terminal()));
        }
    }
    Err(ApiError::new(ErrorCode::UnknownRoute, "unknown route id"))
}

fn required_id(q: IdQuery) -> Result<String, ApiError> {
    q.id.filter(|i| !i.is_empty())
        .ok_or_else(|| ApiError::new(ErrorCode::MissingField, "id: query parameter is required"))
}

#[tracing::instrument(skip_all, fields(route))]
async fn status(
    State(s): State<AppState>,
    Query(q): Query<IdQuery>,
) -> Result<Json<Value>, ApiError> {
    let id = required_id(q)?;
    tracing::Span::current().record("route", id.as_str());
    current(&s, &id).await.map(|(v, _)| Json(v))
}

#[tracing::instrument(skip_all, fields(route))]
async fn stream(
    State(s): State<AppState>,
    Query(q): Query<IdQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let id = required_id(q)?;
    tracing::Span::current().record("route", id.as_str());
    let first = current(&s, &id).await?;
    let events = futures::stream::unfold(Some((s, id, first, true)), |st| async move {
        let (s, id, (mut v, mut done), first) = st?;
        if !first {
            loop {
                tokio::time::sleep(STREAM_POLL).await;
                let Ok(next) = current(&s, &id).await else {
                    return None;
                };
                if next.0 != v || next.1 {
                    (v, done) = next;
                    break;
                }
            }
        }
        let name = if done { "done" } else { "status" };
        let ev = Event::default().event(name).data(v.to_string());
        Some((
            Ok(ev),
            (!done).then(|| (s, id.clone(), (v.clone(), done), false)),
        ))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
