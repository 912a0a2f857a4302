//! `GET /api/route/status` and `GET /api/route/stream` (spec §4.2, §6.2):
//! a route's receipt, and its changes as server-sent events — one event at
//! once, `event: status` on every change (of anything but `elapsedSec`),
//! `event: done` on a terminal state, then the stream closes. A status read
//! of a live route re-checks its upstream through the rail; the stream
//! follows the stored state the route's runner writes, pushed: it re-reads
//! the route only when the store announces a change to it (on Postgres,
//! from any replica; [`relay_store::events`]) or a sandbox route reaches
//! its next stage, so an idle stream costs no store reads. A dry run's `rt_`
//! id answers `DRY` (its receipt, `broadcast:false` and `wouldSend`) for
//! as long as sandbox routes are kept (an hour, in memory).

use std::convert::Infallible;

use super::{ApiError, AppState, ErrorCode};
use axum::{
    extract::{Query, State},
    response::sse::{Event, KeepAlive, Sse},
    Json,
};
use futures::Stream;
use relay_execution::receipt::{dry_receipt, receipt, RouteReceipt, UpstreamView};
use relay_store::events::RouteChange;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::broadcast::{error::RecvError, Receiver};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(stream))
}

/// One server-sent event of `/api/route/stream` (documentation of the
/// `text/event-stream` body; the events are written by [`stream`]).
#[derive(ToSchema)]
#[allow(dead_code)]
struct StreamEvent {
    /// `status` on each change, `done` on a terminal state.
    #[schema(pattern = "^(status|done)$")]
    event: String,
    /// The RouteReceipt, as JSON.
    data: String,
}

/// `?id=<route id>`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct IdQuery {
    /// The route id (`rt_…` or `sbx_…`).
    id: Option<String>,
}

/// The receipt of a route and whether it is terminal. With `recheck`, a
/// live route waiting on its upstream is re-checked through its rail's
/// `track` ([`Executor::recheck`](relay_execution::executor::Executor::recheck)):
/// the answer is shown as `upstream {state, stage, destTx, message}`, and
/// a delivery the upstream reports moves the receipt to `DONE` with its
/// `destTx` at once (spec §3.1 "BRIDGING (live) → DONE, moved by status
/// read"); the route's runner records the same on its next poll. A rail
/// whose upstream has no status API shows the host's own watch of the
/// destination chain: `upstream {state: "WATCHING_DESTINATION", message,
/// watch {chain, token, recipient, minOut, fromBlock, scannedTo}}` (see
/// [`UpstreamView`]); the runner finishes such a route when it finds the
/// payout.
async fn current(s: &AppState, id: &str, recheck: bool) -> Result<(RouteReceipt, bool), ApiError> {
    if id.starts_with("sbx_") {
        if let Some((r, elapsed)) = s.sandbox.get(id) {
            return Ok((receipt(&r, true, elapsed), r.status.is_terminal()));
        }
    } else if id.starts_with("rt_") {
        if let Some((r, elapsed)) = s.sandbox.get(id) {
            let v = match r.status {
                relay_types::RouteStatus::Dry => dry_receipt(&r, elapsed),
                _ => receipt(&r, false, elapsed),
            };
            return Ok((v, r.status.is_terminal()));
        }
        let found = s
            .store
            .get_route(id)
            .await
            .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
        if let Some((r, _)) = found {
            let elapsed = s.clock.now_ms().saturating_sub(r.created_ms) as f64 / 1000.0;
            let mut v = receipt(&r, false, elapsed);
            let mut done = r.status.is_terminal();
            let upstream = match (&s.executor, recheck) {
                (Some(ex), true) => ex.recheck(&r).await,
                _ => None,
            };
            if let Some(up) = upstream {
                done |= show_upstream(&mut v, up);
            }
            return Ok((v, done));
        }
    }
    Err(ApiError::new(ErrorCode::UnknownRoute, "unknown route id"))
}

/// Adds the upstream's view to a receipt; a delivery moves it to `DONE`.
/// Returns whether the receipt is now terminal.
fn show_upstream(v: &mut RouteReceipt, up: UpstreamView) -> bool {
    let delivered = up.delivered();
    if delivered {
        v.status = "DONE".into();
        v.stage = Some("COMPLETED".into());
        if let Some(tx) = &up.dest_tx {
            v.dest_tx = Some(tx.clone());
        }
    }
    v.upstream = Some(up);
    delivered
}

fn required_id(q: IdQuery) -> Result<String, ApiError> {
    q.id.filter(|i| !i.is_empty())
        .ok_or_else(|| ApiError::new(ErrorCode::MissingField, "id: query parameter is required"))
}

#[utoipa::path(get, path = "/api/route/status", tag = "routing", summary = "A route's receipt; live routes are re-checked through their rail", params(IdQuery), responses((status = 200, description = "OK", body = RouteReceipt), (status = "default", description = "A typed error (404 `unknown route id` for an unknown id)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(route))]
pub(crate) async fn status(
    State(s): State<AppState>,
    Query(q): Query<IdQuery>,
) -> Result<Json<RouteReceipt>, ApiError> {
    let id = required_id(q)?;
    tracing::Span::current().record("route", id.as_str());
    current(&s, &id, true).await.map(|(v, _)| Json(v))
}

/// Whether a receipt changed in anything but the clock (`elapsedSec`).
fn changed(before: &RouteReceipt, after: &RouteReceipt) -> bool {
    let to_value = |r: &RouteReceipt| serde_json::to_value(r).unwrap_or_default();
    changed_value(&to_value(before), &to_value(after))
}

fn changed_value(before: &Value, after: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("elapsedSec");
        }
        v
    };
    strip(before) != strip(after)
}

#[utoipa::path(get, path = "/api/route/stream", tag = "routing", summary = "Server-sent events: the receipt at once, `event: status` on each change, `event: done` at the end", params(IdQuery), responses((status = 200, description = "text/event-stream: each event's data is a RouteReceipt as JSON", content_type = "text/event-stream", body = StreamEvent), (status = "default", description = "A typed error (404 `unknown route id` for an unknown id)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(route))]
async fn stream(
    State(s): State<AppState>,
    Query(q): Query<IdQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let id = required_id(q)?;
    tracing::Span::current().record("route", id.as_str());
    // Subscribe before the first read: a change between the two is seen.
    let rx = s.store.route_events().subscribe();
    let first = current(&s, &id, false).await?;
    let events = futures::stream::unfold(Some((s, id, first, true, rx)), |st| async move {
        let (s, id, (mut v, mut done), first, mut rx) = st?;
        if !first {
            loop {
                if !next_change(&s, &id, &mut rx).await {
                    return None;
                }
                // Boxed: the read runs once per change, while the stream
                // spends its life waiting above; inline, the read's future
                // (store query, rail re-check) would size every idle
                // stream's state at ~7 KiB instead of a few hundred bytes.
                let Ok(next) = Box::pin(current(&s, &id, false)).await else {
                    return None;
                };
                if changed(&v, &next.0) || next.1 {
                    (v, done) = next;
                    break;
                }
            }
        }
        let name = if done { "done" } else { "status" };
        let ev = Event::default()
            .event(name)
            .data(serde_json::to_string(&v).unwrap_or_default());
        Some((
            Ok(ev),
            (!done).then(|| (s, id.clone(), (v.clone(), done), false, rx)),
        ))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

/// Waits until route `id` may have changed: the store announces it (or
/// asks everyone to resync), or a sandbox route reaches its next stage.
/// Reads nothing meanwhile. `false`: it never will.
async fn next_change(s: &AppState, id: &str, rx: &mut Receiver<RouteChange>) -> bool {
    if let Some(after) = s.sandbox.next_change(id) {
        tokio::time::sleep(after).await;
        return true;
    }
    if s.sandbox.get(id).is_some() {
        return false;
    }
    loop {
        match rx.recv().await {
            Ok(RouteChange::Route(r)) if &*r == id => return true,
            Ok(RouteChange::Route(_)) => {}
            Ok(RouteChange::Resync) | Err(RecvError::Lagged(_)) => return true,
            Err(RecvError::Closed) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::changed_value;

    #[test]
    fn the_clock_alone_is_not_a_change_of_a_route() {
        let a = json!({"status": "BRIDGING", "stage": "RECEIVING", "elapsedSec": 1.0});
        let later = json!({"status": "BRIDGING", "stage": "RECEIVING", "elapsedSec": 1.5});
        let moved = json!({"status": "BRIDGING", "stage": "SENDING", "elapsedSec": 1.5});
        assert!(!changed_value(&a, &later));
        assert!(changed_value(&a, &moved));
    }
}
