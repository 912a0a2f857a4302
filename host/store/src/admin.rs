//! What the operator's dashboard reads and writes: the audit log of
//! operator changes (`operator_audit`), the routes still in flight, and
//! the webhook delivery backlog.

use super::{routes::corrupt, Store, StoreError};
use relay_types::route::{RouteRecord, RouteStatus};
use sqlx::Row;

/// One change of operator state, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRow {
    /// Unique id.
    pub id: String,
    /// When, epoch ms.
    pub at_ms: u64,
    /// Who: `owner-token` (the dashboard) or `cli:<user>`.
    pub actor: String,
    /// What: `rail.enabled` or `lane.executeReady`.
    pub action: String,
    /// The rail.
    pub rail: String,
    /// The lane (`None` for a rail switch).
    pub lane: Option<String>,
    /// The effective value before.
    pub before: bool,
    /// The value after.
    pub after: bool,
}

/// Webhook deliveries not yet delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliveryBacklog {
    /// Deliveries waiting for their next attempt.
    pub pending: u64,
    /// Of those, how many have failed at least once.
    pub retrying: u64,
    /// When the oldest pending one was created, epoch ms.
    pub oldest_pending_ms: Option<u64>,
    /// Deliveries that gave up.
    pub failed: u64,
}

fn ms(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl Store {
    /// Records one operator change.
    pub async fn record_audit(&self, a: &AuditRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO operator_audit (id, at_ms, actor, action, rail_id, lane, before_on, after_on) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&a.id)
        .bind(i64::try_from(a.at_ms).unwrap_or(i64::MAX))
        .bind(&a.actor)
        .bind(&a.action)
        .bind(&a.rail)
        .bind(a.lane.as_deref())
        .bind(i64::from(a.before))
        .bind(i64::from(a.after))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The `limit` newest operator changes, newest first.
    pub async fn audit_log(&self, limit: u32) -> Result<Vec<AuditRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, at_ms, actor, action, rail_id, lane, before_on, after_on FROM operator_audit \
             ORDER BY at_ms DESC, id DESC LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(AuditRow {
                    id: r.try_get("id")?,
                    at_ms: ms(r.try_get("at_ms")?),
                    actor: r.try_get("actor")?,
                    action: r.try_get("action")?,
                    rail: r.try_get("rail_id")?,
                    lane: r.try_get("lane")?,
                    before: r.try_get::<i64, _>("before_on")? != 0,
                    after: r.try_get::<i64, _>("after_on")? != 0,
                })
            })
            .collect()
    }

    /// The `limit` newest routes that are not terminal, newest first.
    pub async fn routes_in_flight(&self, limit: u32) -> Result<Vec<RouteRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT body FROM routes WHERE terminal = 0 ORDER BY created_ms DESC, id DESC LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        bodies(&rows)
    }

    /// The newest `limit` routes that ended `FAILED`, newest first.
    pub async fn recent_failed_routes(&self, limit: u32) -> Result<Vec<RouteRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT body FROM routes WHERE status = $1 ORDER BY created_ms DESC, id DESC LIMIT $2",
        )
        .bind(RouteStatus::Failed.as_str())
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        bodies(&rows)
    }

    /// The webhook delivery backlog.
    pub async fn delivery_backlog(&self) -> Result<DeliveryBacklog, StoreError> {
        let row = sqlx::query(
            "SELECT \
             COALESCE(SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END), 0) AS pending, \
             COALESCE(SUM(CASE WHEN status = 'pending' AND attempts > 0 THEN 1 ELSE 0 END), 0) AS retrying, \
             MIN(CASE WHEN status = 'pending' THEN created_ms END) AS oldest, \
             COALESCE(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), 0) AS failed \
             FROM deliveries",
        )
        .fetch_one(self.pool())
        .await?;
        Ok(DeliveryBacklog {
            pending: ms(row.try_get("pending")?),
            retrying: ms(row.try_get("retrying")?),
            oldest_pending_ms: row.try_get::<Option<i64>, _>("oldest")?.map(ms),
            failed: ms(row.try_get("failed")?),
        })
    }
}

/// Route records from rows of their `body` column.
fn bodies(rows: &[sqlx::any::AnyRow]) -> Result<Vec<RouteRecord>, StoreError> {
    rows.iter()
        .map(|r| serde_json::from_str(&r.try_get::<String, _>("body")?).map_err(corrupt))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("r.db").display());
        (dir, Store::connect(&url).await.unwrap())
    }

    #[tokio::test]
    async fn audit_entries_come_back_newest_first() {
        let (_dir, s) = store().await;
        for (i, after) in [false, true].into_iter().enumerate() {
            s.record_audit(&AuditRow {
                id: format!("a{i}"),
                at_ms: 1_000 + i as u64,
                actor: "cli:ops".into(),
                action: "lane.executeReady".into(),
                rail: "lifi".into(),
                lane: Some("evm->evm".into()),
                before: !after,
                after,
            })
            .await
            .unwrap();
        }
        let log = s.audit_log(10).await.unwrap();
        assert_eq!(log.len(), 2);
        assert_eq!((log[0].id.as_str(), log[0].after), ("a1", true));
        assert_eq!(log[1].lane.as_deref(), Some("evm->evm"));
        assert_eq!(s.audit_log(1).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn an_empty_store_has_no_backlog_and_nothing_in_flight() {
        let (_dir, s) = store().await;
        assert_eq!(
            s.delivery_backlog().await.unwrap(),
            DeliveryBacklog::default()
        );
        assert!(s.routes_in_flight(10).await.unwrap().is_empty());
    }
}
