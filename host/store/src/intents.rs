//! Prepared router intents (`POST /api/route/intent`, a quote's
//! `signRequest`): the route record whose intent a client signs, kept
//! until it expires so execute runs exactly the plan that was signed.

use super::{routes::corrupt, Store, StoreError};
use relay_types::RouteRecord;
use sqlx::Row;

impl Store {
    /// Keeps a prepared route until `expires_ms`, and forgets the expired.
    pub async fn put_intent(&self, r: &RouteRecord, expires_ms: u64) -> Result<(), StoreError> {
        let now = self.now_ms() as i64;
        sqlx::query("DELETE FROM intents WHERE expires_ms < $1")
            .bind(now)
            .execute(self.pool())
            .await?;
        sqlx::query(
            "INSERT INTO intents (id, body, expires_ms, created_ms) VALUES ($1, $2, $3, $4)",
        )
        .bind(&r.id)
        .bind(serde_json::to_string(r).map_err(corrupt)?)
        .bind(expires_ms as i64)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The prepared route `id` and when it expires, epoch ms.
    pub async fn get_intent(&self, id: &str) -> Result<Option<(RouteRecord, u64)>, StoreError> {
        let row = sqlx::query("SELECT body, expires_ms FROM intents WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let body: String = row.try_get("body")?;
        let expires: i64 = row.try_get("expires_ms")?;
        Ok(Some((
            serde_json::from_str(&body).map_err(corrupt)?,
            expires as u64,
        )))
    }
}
