//! What the privacy lane keeps (migration 0026, applied by the feature's
//! start): the policy log's entries. It reads, never writes, what other
//! homes keep: the routes the cover proof is built over, and the
//! rate-limit cells and caller places its conformance checks look into.

use relay_store::StoreError;
use sqlx::Row as _;

/// This feature's migrations.
pub const MIGRATIONS: &[relay_store::Migration] = &[relay_store::Migration {
    version: 26,
    sql: include_str!("../migrations/0026_privacy_policy.sql"),
}];

relay_store::store_view! {
    /// The store as the privacy lane uses it.
    pub Privacy
}

/// One stored entry of the policy log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRow {
    /// Its number, from 1.
    pub seq: u64,
    /// The JSON its hash covers.
    pub body: String,
    /// SHA-256 of the previous hash and the body, hex.
    pub hash: String,
    /// The policy key's signature of the hash, hex.
    pub sig: String,
}

impl Privacy {
    /// Every entry of the policy log, in order.
    pub async fn policy(&self) -> Result<Vec<PolicyRow>, StoreError> {
        let rows = sqlx::query("SELECT seq, body, hash, sig FROM privacy_policy ORDER BY seq")
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(PolicyRow {
                    seq: r.try_get::<i64, _>("seq")? as u64,
                    body: r.try_get("body")?,
                    hash: r.try_get("hash")?,
                    sig: r.try_get("sig")?,
                })
            })
            .collect()
    }

    /// Appends `row` unless its number is taken (another replica appended
    /// first); whether it was appended.
    pub async fn append_policy(&self, row: &PolicyRow) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO privacy_policy (seq, body, hash, sig) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (seq) DO NOTHING",
        )
        .bind(row.seq as i64)
        .bind(&row.body)
        .bind(&row.hash)
        .bind(&row.sig)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Rate-limit cells kept in the store for any of `buckets` (the
    /// unrecorded ones must have none).
    pub async fn cells_of(&self, buckets: &[&str]) -> Result<u64, StoreError> {
        let mut n = 0;
        for b in buckets {
            let r = sqlx::query("SELECT COUNT(*) AS n FROM rate_limit_cells WHERE k LIKE $1")
                .bind(format!("{b}|%"))
                .fetch_one(self.pool())
                .await?;
            n += r.try_get::<i64, _>("n")? as u64;
        }
        Ok(n)
    }

    /// Marks of `kind` that lapsed before `before_ms` and are still kept.
    pub async fn lapsed_marks(&self, kind: &str, before_ms: u64) -> Result<u64, StoreError> {
        let r = sqlx::query(
            "SELECT COUNT(*) AS n FROM caller_places WHERE kind = $1 AND until_ms < $2",
        )
        .bind(kind)
        .bind(before_ms as i64)
        .fetch_one(self.pool())
        .await?;
        Ok(r.try_get::<i64, _>("n")? as u64)
    }

    /// The ids and bodies of routes that ended `DONE` since `since_ms`,
    /// oldest first, at most `limit`.
    pub async fn done_since(
        &self,
        since_ms: u64,
        limit: u32,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, body FROM routes WHERE status = 'DONE' AND updated_ms >= $1 \
             ORDER BY updated_ms, id LIMIT $2",
        )
        .bind(since_ms as i64)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("body")?)))
            .collect()
    }
}
