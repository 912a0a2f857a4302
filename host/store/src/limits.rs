//! Shared rate-limit cells (migration 0022): the generic cell rate
//! algorithm (GCRA) in one statement, so replicas on one database count a
//! client once. A cell keeps its theoretical arrival time `tat`; a request
//! at `now` is admitted when `max(tat, now) + period - now <= window` (at
//! most `window / period` requests at once, one more every `period`), and
//! then `tat` becomes `max(tat, now) + period` — the check and the update
//! are one atomic upsert, whichever replica runs it.

use sqlx::Row;

use crate::{Backend, Store, StoreError};

/// What one request did to its cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Admitted; the cell's new arrival time, ms.
    Admitted(u64),
    /// Refused; the cell's arrival time, unchanged, ms.
    Refused(u64),
}

impl Store {
    /// Counts one request in cell `key` at `now_ms`, `period_ms` apart
    /// and at most `window_ms` ahead (module docs).
    pub async fn gcra(
        &self,
        key: &str,
        now_ms: u64,
        (period_ms, window_ms): (u64, u64),
    ) -> Result<Cell, StoreError> {
        let max = match self.backend() {
            Backend::Postgres => "GREATEST",
            Backend::Sqlite => "MAX",
        };
        let sql = format!(
            "INSERT INTO rate_limit_cells (k, tat_ms) VALUES ($1, $2 + $3) \
             ON CONFLICT (k) DO UPDATE SET tat_ms = {max}(rate_limit_cells.tat_ms, $2) + $3 \
             WHERE {max}(rate_limit_cells.tat_ms, $2) + $3 - $2 <= $4 \
             RETURNING tat_ms"
        );
        let admitted = sqlx::query(&sql)
            .bind(key)
            .bind(now_ms as i64)
            .bind(period_ms as i64)
            .bind(window_ms as i64)
            .fetch_optional(self.pool())
            .await?;
        if let Some(row) = admitted {
            return Ok(Cell::Admitted(row.try_get::<i64, _>("tat_ms")? as u64));
        }
        let tat: i64 = sqlx::query("SELECT tat_ms FROM rate_limit_cells WHERE k = $1")
            .bind(key)
            .fetch_one(self.pool())
            .await?
            .try_get("tat_ms")?;
        Ok(Cell::Refused(tat as u64))
    }

    /// Drops the cells that are full again at `now_ms` (their arrival
    /// time has passed): a fresh client's. Returns how many.
    pub async fn prune_rate_limits(&self, now_ms: u64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM rate_limit_cells WHERE tat_ms < $1")
            .bind(now_ms as i64)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three at once, the fourth refused until one period passes; cells
    /// are per key; a full cell is pruned.
    async fn three_a_minute(store: Store) {
        let key = format!("quote|ip:{}", rand_suffix());
        let (period, window) = (20_000, 60_000);
        for i in 0..3u64 {
            let c = store.gcra(&key, 1_000, (period, window)).await.unwrap();
            assert_eq!(c, Cell::Admitted(1_000 + period * (i + 1)));
        }
        let refused = store.gcra(&key, 1_000, (period, window)).await.unwrap();
        assert_eq!(refused, Cell::Refused(61_000));
        let other = store
            .gcra(&format!("{key}-b"), 1_000, (period, window))
            .await
            .unwrap();
        assert!(matches!(other, Cell::Admitted(_)));
        let later = store.gcra(&key, 21_000, (period, window)).await.unwrap();
        assert_eq!(later, Cell::Admitted(81_000));
        assert!(store.prune_rate_limits(81_001).await.unwrap() >= 2);
        let fresh = store.gcra(&key, 81_001, (period, window)).await.unwrap();
        assert_eq!(fresh, Cell::Admitted(101_001));
    }

    fn rand_suffix() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    }

    #[tokio::test]
    async fn gcra_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("l.db").display());
        three_a_minute(Store::connect(&url).await.unwrap()).await;
    }

    #[tokio::test]
    async fn gcra_on_postgres() {
        let url = relay_fixtures::postgres_database();
        three_a_minute(Store::connect(&url).await.unwrap()).await;
    }
}
