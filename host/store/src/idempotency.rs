//! Idempotency keys (`x-idempotency-key`): the request fingerprint and the
//! first response, coordinated through a unique key in the database so
//! concurrent duplicates — on one replica or several — execute once.

use super::{Store, StoreError};
use relay_types::now_ms;
use sqlx::Row;

/// What a request carrying an idempotency key should do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotencyBegin {
    /// First time: execute, then [`Store::idempotency_complete`].
    Fresh,
    /// Seen and finished: replay this response byte for byte.
    Replay {
        /// HTTP status.
        status: u16,
        /// Body.
        body: String,
    },
    /// Seen and still executing; `route` is the route it created, if it
    /// got that far. `stale` when the first request is older than the
    /// stale limit and never answered (its process died).
    InFlight {
        /// The route the first request created.
        route: Option<String>,
        /// Whether the first request is presumed dead.
        stale: bool,
    },
    /// Seen with a different request body.
    Mismatch,
}

impl Store {
    /// Claims `key` for a request with `fingerprint`, or says what to do.
    /// A first request unanswered after `stale_ms` is presumed dead.
    pub async fn idempotency_begin(
        &self,
        key: &str,
        fingerprint: &str,
        stale_ms: u64,
    ) -> Result<IdempotencyBegin, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO idempotency (key, fingerprint, status_code, response, created_ms) VALUES ($1, $2, NULL, NULL, $3) \
             ON CONFLICT (key) DO NOTHING",
        )
        .bind(key)
        .bind(fingerprint)
        .bind(now_ms() as i64)
        .execute(self.pool())
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(IdempotencyBegin::Fresh);
        }
        let row = sqlx::query(
            "SELECT fingerprint, status_code, response, route_id, created_ms FROM idempotency WHERE key = $1",
        )
        .bind(key)
        .fetch_one(self.pool())
        .await?;
        let stored: String = row.try_get("fingerprint")?;
        if stored != fingerprint {
            return Ok(IdempotencyBegin::Mismatch);
        }
        let status: Option<i64> = row.try_get("status_code")?;
        let body: Option<String> = row.try_get("response")?;
        if let (Some(s), Some(body)) = (status, body) {
            return Ok(IdempotencyBegin::Replay {
                status: s as u16,
                body,
            });
        }
        let route: Option<String> = row.try_get("route_id")?;
        let created: i64 = row.try_get("created_ms")?;
        let stale = now_ms().saturating_sub(created as u64) >= stale_ms;
        if stale && route.is_none() {
            // Nothing was persisted under the dead request: take the key over.
            let took = sqlx::query(
                "UPDATE idempotency SET created_ms = $1 WHERE key = $2 AND created_ms = $3 AND route_id IS NULL AND response IS NULL",
            )
            .bind(now_ms() as i64)
            .bind(key)
            .bind(created)
            .execute(self.pool())
            .await?;
            if took.rows_affected() == 1 {
                return Ok(IdempotencyBegin::Fresh);
            }
        }
        Ok(IdempotencyBegin::InFlight { route, stale })
    }

    /// Stores the first response for `key`.
    pub async fn idempotency_complete(
        &self,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE idempotency SET status_code = $1, response = $2 WHERE key = $3 AND response IS NULL")
            .bind(status as i64)
            .bind(body)
            .bind(key)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Forgets a key whose request failed before anything happened, so the
    /// client may retry it.
    pub async fn idempotency_abandon(&self, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM idempotency WHERE key = $1 AND response IS NULL")
            .bind(key)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
