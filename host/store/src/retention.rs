//! Retention (spec §8.2): finding settled routes whose counterparty
//! addresses are due to become tags, and rewriting one route and
//! everything stored about it in one transaction.

use super::{routes::corrupt, Store, StoreError};
use relay_types::route::RouteRecord;
use sqlx::Row;

impl Store {
    /// Up to `limit` terminal routes last updated before `before_ms` whose
    /// sender is not a tag yet, with their versions.
    pub async fn routes_to_tag(
        &self,
        before_ms: u64,
        limit: u32,
    ) -> Result<Vec<(RouteRecord, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT body, version FROM routes WHERE terminal = 1 AND updated_ms < $1 \
             AND body NOT LIKE '%\"sender\":\"tag_%' ORDER BY updated_ms LIMIT $2",
        )
        .bind(i64::try_from(before_ms).unwrap_or(i64::MAX))
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let body: String = r.try_get("body")?;
                let version: i64 = r.try_get("version")?;
                Ok((serde_json::from_str(&body).map_err(corrupt)?, version))
            })
            .collect()
    }

    /// Writes the scrubbed `r` over version `version` (its `updated_ms`
    /// kept), and in the same transaction blanks what else names its
    /// counterparties: journal payloads (signed transactions carry
    /// calldata), outbox payloads, the idempotent response that created
    /// it, its prepared intent; its destination watch's recipient becomes
    /// `r.recipient`. `false` when the route moved on since it was read.
    pub async fn scrub_route(&self, r: &RouteRecord, version: i64) -> Result<bool, StoreError> {
        let body = serde_json::to_string(r).map_err(corrupt)?;
        let mut tx = self.pool().begin().await?;
        let done = sqlx::query("UPDATE routes SET body = $1 WHERE id = $2 AND version = $3")
            .bind(&body)
            .bind(&r.id)
            .bind(version)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        for sql in [
            "UPDATE tx_journal SET payload = '' WHERE route_id = $1",
            "UPDATE outbox SET payload = '{}' WHERE route_id = $1",
            "DELETE FROM idempotency WHERE route_id = $1",
            "DELETE FROM intents WHERE id = $1",
        ] {
            sqlx::query(sql).bind(&r.id).execute(&mut *tx).await?;
        }
        sqlx::query("UPDATE dest_watches SET recipient = $1 WHERE route_id = $2")
            .bind(&r.recipient)
            .bind(&r.id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }
}
