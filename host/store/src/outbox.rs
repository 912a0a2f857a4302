//! The outbox: webhook-ready events, written in the same transaction as the
//! route change they describe, so a dispatcher delivers exactly what
//! happened — no event without its change, no change without its event.

use super::{Store, StoreError};
use relay_types::route::RouteRecord;
use serde::Serialize;
use sqlx::{Any, Row, Transaction};

/// One outbox event (spec §6.1 payload shape).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEvent {
    /// Event id.
    pub id: String,
    /// Route.
    pub route_id: String,
    /// `created`, `status`, `done`, `failed`…
    pub event: String,
    /// `{event, routeId, status, destTx, srcTx, ts}`.
    pub payload: serde_json::Value,
}

/// The event a route change is told as (spec §6.1): `{event, routeId,
/// status, destTx, srcTx, ts, sandbox}` — the outbox row's payload and the
/// completion webhook's body.
pub fn route_event(r: &RouteRecord, event: &str, ts: u64, sandbox: bool) -> serde_json::Value {
    serde_json::json!({
        "event": event,
        "routeId": r.id,
        "status": r.status.public(),
        "destTx": r.dest_tx,
        "srcTx": r.src_tx,
        "ts": ts,
        "sandbox": sandbox,
    })
}

/// Appends the event for `r` inside `tx`, stamped `ts` (epoch ms).
pub(super) async fn append(
    tx: &mut Transaction<'_, Any>,
    (r, version): (&RouteRecord, i64),
    event: &str,
    ts: u64,
) -> Result<(), StoreError> {
    let payload = route_event(r, event, ts, false);
    // One event per route version: unique, and ordered with the changes.
    let id = format!("ev_{}_{version:08}", r.id);
    sqlx::query("INSERT INTO outbox (id, route_id, event, payload, created_ms, delivered_ms) VALUES ($1, $2, $3, $4, $5, NULL)")
        .bind(&id)
        .bind(&r.id)
        .bind(event)
        .bind(payload.to_string())
        .bind(ts as i64)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

impl Store {
    /// Events of a route, oldest first.
    pub async fn outbox_of(&self, route_id: &str) -> Result<Vec<OutboxEvent>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, route_id, event, payload FROM outbox WHERE route_id = $1 ORDER BY id",
        )
        .bind(route_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let payload: String = r.try_get("payload")?;
                Ok(OutboxEvent {
                    id: r.try_get("id")?,
                    route_id: r.try_get("route_id")?,
                    event: r.try_get("event")?,
                    payload: serde_json::from_str(&payload)
                        .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                })
            })
            .collect()
    }
}
