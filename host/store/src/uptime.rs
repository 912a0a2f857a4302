//! Uptime samples (spec §4.1 `/api/uptime`): one verdict per probe slot,
//! shared by every replica, counted per UTC day.

use super::{Store, StoreError};
use sqlx::Row;

/// One probe's sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UptimeSample<'a> {
    /// The probe slot (`ts_ms / probe period`): one sample per slot.
    pub slot: i64,
    /// When taken, epoch ms.
    pub ts_ms: u64,
    /// Its UTC day, `YYYY-MM-DD`.
    pub day: &'a str,
    /// `operational`, `degraded` or `down`.
    pub verdict: &'a str,
}

impl Store {
    /// Whether the store answers a trivial query (`/api/status` endpoints).
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(self.pool()).await.is_ok()
    }

    /// Records `s` unless its slot has a sample (another replica's);
    /// forgets samples of slots before `keep_from_slot`. `true` when this
    /// sample was kept.
    pub async fn record_uptime(
        &self,
        s: &UptimeSample<'_>,
        keep_from_slot: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO uptime_samples (slot, ts_ms, day, verdict) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (slot) DO NOTHING",
        )
        .bind(s.slot)
        .bind(i64::try_from(s.ts_ms).unwrap_or(i64::MAX))
        .bind(s.day)
        .bind(s.verdict)
        .execute(self.pool())
        .await?;
        sqlx::query("DELETE FROM uptime_samples WHERE slot < $1")
            .bind(keep_from_slot)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Sample counts by day and verdict, and the first sample's time.
    pub async fn uptime_counts(
        &self,
    ) -> Result<(Vec<(String, String, i64)>, Option<u64>), StoreError> {
        let rows = sqlx::query(
            "SELECT day, verdict, COUNT(*) AS n FROM uptime_samples GROUP BY day, verdict",
        )
        .fetch_all(self.pool())
        .await?;
        let counts = rows
            .into_iter()
            .map(|r| Ok((r.try_get("day")?, r.try_get("verdict")?, r.try_get("n")?)))
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        let since: Option<i64> = sqlx::query("SELECT MIN(ts_ms) AS m FROM uptime_samples")
            .fetch_one(self.pool())
            .await?
            .try_get("m")?;
        Ok((counts, since.and_then(|m| u64::try_from(m).ok())))
    }
}
