//! The routes of a period (spend statements, spec §4.3
//! `/api/statement/spend`): read in creation order; the caller filters by
//! address (addresses live in the route body, or their retention tags).

use super::{Store, StoreError};
use relay_types::route::RouteRecord;

impl Store {
    /// Up to `limit` routes created in `[from_ms, to_ms]`, oldest first. A
    /// row that does not decode is skipped (and logged).
    pub async fn routes_created_between(
        &self,
        (from_ms, to_ms): (u64, u64),
        limit: u32,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let rows = sqlx::query(
            "SELECT id, body FROM routes WHERE created_ms >= $1 AND created_ms <= $2 \
             ORDER BY created_ms, id LIMIT $3",
        )
        .bind(clamp(from_ms))
        .bind(clamp(to_ms))
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        super::recent::decodable(rows, "a statement")
    }
}
