//! Developer keys and their usage (spec §2.13, §4.5, §5.2): the
//! [`KeyStore`] trait and its sqlx implementation.
//!
//! A key is stored only as the hex SHA-256 of its text — never the key —
//! with a short display prefix and a label. Usage is counted per key,
//! minute and matched route template (`key_usage_minutes`: the number of
//! rows is bounded by keys × minutes × routes, however busy a key is),
//! plus the latest few requests of each key (`key_usage_recent`). Every
//! replica writes its batches here and every read sums them, so usage is
//! the same whichever replica answers.

use std::collections::{BTreeMap, HashMap};

use super::{Store, StoreError};
use async_trait::async_trait;
use sqlx::{any::AnyRow, Row};

/// Usage is counted per minute.
pub const MINUTE_MS: u64 = 60_000;

/// One issued key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRow {
    /// Hex SHA-256 of the key's text.
    pub key_hash: String,
    /// The key's first characters, for display (`ak_1f2e`).
    pub prefix: String,
    /// The label given at creation.
    pub label: Option<String>,
    /// Epoch ms.
    pub created_ms: u64,
    /// When it was revoked (epoch ms); `None` while live.
    pub revoked_ms: Option<u64>,
}

/// One request made with a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyUsageRecord {
    /// Hex SHA-256 of the key.
    pub key_hash: String,
    /// When the request arrived (epoch ms).
    pub ts_ms: u64,
    /// Orders records of one millisecond (increasing per replica).
    pub seq: u64,
    /// HTTP method.
    pub method: String,
    /// The matched route template (`/api/route/status`), or
    /// `(unknown path)`.
    pub path: String,
    /// The response's HTTP status.
    pub status: u16,
}

/// Requests to one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathCount {
    /// The route template.
    pub path: String,
    /// How many requests.
    pub count: u64,
}

/// Usage over one window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsageWindow {
    /// Requests.
    pub total: u64,
    /// Of which answered with a status ≥ 400.
    pub errors: u64,
    /// The busiest paths, busiest first (ties by path).
    pub top_paths: Vec<PathCount>,
}

/// Key persistence (module docs).
#[async_trait]
pub trait KeyStore: Send + Sync + std::fmt::Debug {
    /// Records a new key.
    async fn insert_key(&self, k: &KeyRow) -> Result<(), StoreError>;
    /// A key by its hash, live or revoked.
    async fn key(&self, key_hash: &str) -> Result<Option<KeyRow>, StoreError>;
    /// Revokes a live key; whether it was live.
    async fn revoke_key(&self, key_hash: &str, now_ms: u64) -> Result<bool, StoreError>;
    /// The hashes of every live key.
    async fn live_key_hashes(&self) -> Result<Vec<String>, StoreError>;
    /// Keys created or revoked at or after `since_ms`: hash and whether
    /// it is live.
    async fn keys_changed_since(&self, since_ms: u64) -> Result<Vec<(String, bool)>, StoreError>;
    /// Adds a batch of requests to the per-minute counts and keeps the
    /// newest `keep_recent` requests of each key the batch touches.
    async fn record_usage(
        &self,
        records: &[KeyUsageRecord],
        keep_recent: u32,
    ) -> Result<(), StoreError>;
    /// A key's usage in the minutes starting at or after `since_ms`, with
    /// its `top` busiest paths.
    async fn usage_window(
        &self,
        key_hash: &str,
        since_ms: u64,
        top: u32,
    ) -> Result<UsageWindow, StoreError>;
    /// A key's latest `limit` requests, newest first.
    async fn recent_usage(
        &self,
        key_hash: &str,
        limit: u32,
    ) -> Result<Vec<KeyUsageRecord>, StoreError>;
    /// Forgets usage older than `before_ms`; how many rows went.
    async fn prune_usage(&self, before_ms: u64) -> Result<u64, StoreError>;
}

const KEY_COLS: &str = "key_hash, prefix, label, created_ms, revoked_ms";

fn key_row(r: &AnyRow) -> Result<KeyRow, StoreError> {
    Ok(KeyRow {
        key_hash: r.try_get("key_hash")?,
        prefix: r.try_get("prefix")?,
        label: r.try_get("label")?,
        created_ms: r.try_get::<i64, _>("created_ms")? as u64,
        revoked_ms: r.try_get::<Option<i64>, _>("revoked_ms")?.map(|v| v as u64),
    })
}

/// Counts per (key, minute, path): (total, errors), in a fixed order so
/// concurrent batches lock rows in the same order.
type MinuteCounts<'a> = BTreeMap<(&'a str, i64, &'a str), (i64, i64)>;

fn per_minute(records: &[KeyUsageRecord]) -> MinuteCounts<'_> {
    let mut counts = MinuteCounts::new();
    for r in records {
        let minute = (r.ts_ms - r.ts_ms % MINUTE_MS) as i64;
        let c = counts
            .entry((r.key_hash.as_str(), minute, r.path.as_str()))
            .or_default();
        c.0 += 1;
        c.1 += i64::from(r.status >= 400);
    }
    counts
}

/// The newest `keep` records of each key in the batch.
fn newest_per_key(records: &[KeyUsageRecord], keep: u32) -> Vec<&KeyUsageRecord> {
    let mut by_key: HashMap<&str, Vec<&KeyUsageRecord>> = HashMap::new();
    for r in records {
        by_key.entry(r.key_hash.as_str()).or_default().push(r);
    }
    let mut out = Vec::new();
    for (_, mut rs) in by_key {
        rs.sort_by_key(|r| std::cmp::Reverse((r.ts_ms, r.seq)));
        out.extend(rs.into_iter().take(keep as usize));
    }
    out
}

#[async_trait]
impl KeyStore for Store {
    async fn insert_key(&self, k: &KeyRow) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO api_keys ({KEY_COLS}, changed_ms) VALUES ($1, $2, $3, $4, $5, $4)"
        ))
        .bind(&k.key_hash)
        .bind(&k.prefix)
        .bind(&k.label)
        .bind(k.created_ms as i64)
        .bind(k.revoked_ms.map(|v| v as i64))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    async fn key(&self, key_hash: &str) -> Result<Option<KeyRow>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {KEY_COLS} FROM api_keys WHERE key_hash = $1"
        ))
        .bind(key_hash)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(key_row).transpose()
    }

    async fn revoke_key(&self, key_hash: &str, now_ms: u64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE api_keys SET revoked_ms = $1, changed_ms = $1 WHERE key_hash = $2 AND revoked_ms IS NULL",
        )
        .bind(now_ms as i64)
        .bind(key_hash)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn live_key_hashes(&self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT key_hash FROM api_keys WHERE revoked_ms IS NULL")
                .fetch_all(self.pool())
                .await?;
        Ok(rows.into_iter().map(|(h,)| h).collect())
    }

    async fn keys_changed_since(&self, since_ms: u64) -> Result<Vec<(String, bool)>, StoreError> {
        let rows = sqlx::query("SELECT key_hash, revoked_ms FROM api_keys WHERE changed_ms >= $1")
            .bind(since_ms as i64)
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|r| {
                let revoked: Option<i64> = r.try_get("revoked_ms")?;
                Ok((r.try_get("key_hash")?, revoked.is_none()))
            })
            .collect()
    }

    async fn record_usage(
        &self,
        records: &[KeyUsageRecord],
        keep_recent: u32,
    ) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool().begin().await?;
        for ((key, minute, path), (total, errors)) in per_minute(records) {
            sqlx::query(
                "INSERT INTO key_usage_minutes (key_hash, minute_ms, path, total, errors) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (key_hash, minute_ms, path) DO UPDATE SET \
                 total = key_usage_minutes.total + excluded.total, errors = key_usage_minutes.errors + excluded.errors",
            )
            .bind(key)
            .bind(minute)
            .bind(path)
            .bind(total)
            .bind(errors)
            .execute(&mut *tx)
            .await?;
        }
        let newest = newest_per_key(records, keep_recent);
        for r in &newest {
            sqlx::query(
                "INSERT INTO key_usage_recent (key_hash, ts_ms, seq, method, path, status) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(&r.key_hash)
            .bind(r.ts_ms as i64)
            .bind(r.seq as i64)
            .bind(&r.method)
            .bind(&r.path)
            .bind(i64::from(r.status))
            .execute(&mut *tx)
            .await?;
        }
        let mut touched: Vec<&str> = newest.iter().map(|r| r.key_hash.as_str()).collect();
        touched.sort_unstable();
        touched.dedup();
        for key in touched {
            sqlx::query(
                "DELETE FROM key_usage_recent WHERE key_hash = $1 AND ts_ms < \
                 (SELECT MIN(ts_ms) FROM (SELECT ts_ms FROM key_usage_recent WHERE key_hash = $1 \
                 ORDER BY ts_ms DESC, seq DESC LIMIT $2) newest)",
            )
            .bind(key)
            .bind(i64::from(keep_recent))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn usage_window(
        &self,
        key_hash: &str,
        since_ms: u64,
        top: u32,
    ) -> Result<UsageWindow, StoreError> {
        let (total, errors): (i64, i64) = sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(total), 0) AS BIGINT), CAST(COALESCE(SUM(errors), 0) AS BIGINT) \
             FROM key_usage_minutes WHERE key_hash = $1 AND minute_ms >= $2",
        )
        .bind(key_hash)
        .bind(since_ms as i64)
        .fetch_one(self.pool())
        .await?;
        let paths: Vec<(String, i64)> = sqlx::query_as(
            "SELECT path, CAST(SUM(total) AS BIGINT) AS n FROM key_usage_minutes \
             WHERE key_hash = $1 AND minute_ms >= $2 GROUP BY path ORDER BY n DESC, path LIMIT $3",
        )
        .bind(key_hash)
        .bind(since_ms as i64)
        .bind(i64::from(top))
        .fetch_all(self.pool())
        .await?;
        Ok(UsageWindow {
            total: total as u64,
            errors: errors as u64,
            top_paths: paths
                .into_iter()
                .map(|(path, n)| PathCount {
                    path,
                    count: n as u64,
                })
                .collect(),
        })
    }

    async fn recent_usage(
        &self,
        key_hash: &str,
        limit: u32,
    ) -> Result<Vec<KeyUsageRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT ts_ms, seq, method, path, status FROM key_usage_recent WHERE key_hash = $1 \
             ORDER BY ts_ms DESC, seq DESC LIMIT $2",
        )
        .bind(key_hash)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(KeyUsageRecord {
                    key_hash: key_hash.to_string(),
                    ts_ms: r.try_get::<i64, _>("ts_ms")? as u64,
                    seq: r.try_get::<i64, _>("seq")? as u64,
                    method: r.try_get("method")?,
                    path: r.try_get("path")?,
                    status: r.try_get::<i64, _>("status")? as u16,
                })
            })
            .collect()
    }

    async fn prune_usage(&self, before_ms: u64) -> Result<u64, StoreError> {
        let minutes = sqlx::query("DELETE FROM key_usage_minutes WHERE minute_ms < $1")
            .bind(before_ms as i64)
            .execute(self.pool())
            .await?;
        let recent = sqlx::query("DELETE FROM key_usage_recent WHERE ts_ms < $1")
            .bind(before_ms as i64)
            .execute(self.pool())
            .await?;
        Ok(minutes.rows_affected() + recent.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: &str, ts_ms: u64, seq: u64, path: &str, status: u16) -> KeyUsageRecord {
        KeyUsageRecord {
            key_hash: key.into(),
            ts_ms,
            seq,
            method: "GET".into(),
            path: path.into(),
            status,
        }
    }

    #[test]
    fn a_batch_is_counted_per_key_minute_and_path() {
        let rs = [
            rec("a", 60_000, 1, "/x", 200),
            rec("a", 119_999, 2, "/x", 404),
            rec("a", 120_000, 3, "/x", 200),
            rec("b", 60_001, 4, "/x", 500),
        ];
        let c = per_minute(&rs);
        assert_eq!(c[&("a", 60_000, "/x")], (2, 1));
        assert_eq!(c[&("a", 120_000, "/x")], (1, 0));
        assert_eq!(c[&("b", 60_000, "/x")], (1, 1));
    }

    #[test]
    fn only_the_newest_records_of_each_key_are_kept() {
        let rs: Vec<_> = (0..5).map(|i| rec("a", 10, i, "/x", 200)).collect();
        let kept: Vec<u64> = newest_per_key(&rs, 2).iter().map(|r| r.seq).collect();
        assert_eq!(kept, [4, 3]);
    }
}
