//! The reads behind delivery statistics (spec §4.1 `GET /api/delivery/stats`):
//! route counts by status and the created → DONE latency of delivered
//! routes, over a window of creation times. Only live routes are stored
//! (sandbox routes live in memory); `sbx_` ids are excluded all the same,
//! so a sandbox route can never be counted. Read-only.

use super::{Store, StoreError};
use relay_types::route::RouteStatus;
use sqlx::Row;

impl Store {
    /// Stored routes created at or after `since_ms`, counted by stored
    /// status (`PENDING` included as stored).
    pub async fn route_counts_since(
        &self,
        since_ms: u64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT status, COUNT(*) AS n FROM routes \
             WHERE created_ms >= $1 AND id NOT LIKE 'sbx%' GROUP BY status ORDER BY status",
        )
        .bind(since_ms as i64)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("status")?, r.try_get("n")?)))
            .collect()
    }

    /// For every DONE route created at or after `since_ms`: milliseconds from
    /// creation to its last state change (the move to DONE), ascending.
    pub async fn delivery_latencies_ms(&self, since_ms: u64) -> Result<Vec<i64>, StoreError> {
        let rows = sqlx::query(
            "SELECT updated_ms - created_ms AS ms FROM routes \
             WHERE status = $1 AND created_ms >= $2 AND id NOT LIKE 'sbx%' ORDER BY ms",
        )
        .bind(RouteStatus::Done.as_str())
        .bind(since_ms as i64)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| r.try_get("ms").map_err(Into::into))
            .collect()
    }
}
