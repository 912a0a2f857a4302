//! Route decisions: the ranking a live execute chose from, as JSON the
//! engine wrote (`relay_engine::answer::CompareResult`), one per route.

use super::{Store, StoreError};
use sqlx::Row;

impl Store {
    /// Keeps `body` as the decision of route `route_id` (the first one
    /// kept stays).
    pub async fn put_decision(&self, route_id: &str, body: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO route_decisions (route_id, body, created_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (route_id) DO NOTHING",
        )
        .bind(route_id)
        .bind(body)
        .bind(self.now_ms() as i64)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The decision of route `route_id` and when it was kept (epoch ms).
    pub async fn decision(&self, route_id: &str) -> Result<Option<(String, u64)>, StoreError> {
        let row = sqlx::query("SELECT body, created_ms FROM route_decisions WHERE route_id = $1")
            .bind(route_id)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| {
            let body: String = r.try_get("body")?;
            let at: i64 = r.try_get("created_ms")?;
            Ok((body, u64::try_from(at).unwrap_or_default()))
        })
        .transpose()
    }
}
