//! Route primitives (spec §2.12, §4.4): the [`PrimitiveStore`] trait and
//! its sqlx implementation.
//!
//! One row per batch, schedule or conditional; its runs in their own
//! table, keyed by `<id>:<seq>` so a run is recorded once. Replicas
//! coordinate through a lease on the record's row:
//! [`PrimitiveStore::claim_primitive`] is one conditional `UPDATE` (due,
//! not leased), so exactly one replica holds a record for a run, and
//! [`PrimitiveStore::finish_run`] releases it only for the holder.

use super::{durable::Lease, Store, StoreError};
use async_trait::async_trait;
use sqlx::{any::AnyRow, Row};

/// One primitive record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrimitiveRow {
    /// `batch_…`, `sched_…` or `cond_…`.
    pub id: String,
    /// `batch`, `schedule` or `conditional`.
    pub kind: String,
    /// The record's state (`planned`, `active`, `armed`, …).
    pub status: String,
    /// The record's JSON, as the primitives crate writes it.
    pub body: String,
    /// When the watcher next looks at it (epoch ms; `None`: never).
    pub next_ms: Option<u64>,
    /// Runs finished.
    pub seq: u64,
    /// Epoch ms.
    pub created_ms: u64,
}

/// One run of a schedule or conditional.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRow {
    /// The record.
    pub primitive_id: String,
    /// 1, 2, …
    pub seq: u64,
    /// The run's idempotency key (`<id>:<seq>`).
    pub run_key: String,
    /// The run's JSON.
    pub body: String,
    /// Epoch ms.
    pub created_ms: u64,
}

/// Where a run leaves its record ([`PrimitiveStore::finish_run`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunEnd {
    /// Runs finished, this one included.
    pub seq: u64,
    /// The record's state after it (a cancel meanwhile wins).
    pub status: String,
    /// When the watcher looks next (`None`: never).
    pub next_ms: Option<u64>,
    /// Epoch ms.
    pub now_ms: u64,
}

/// Persistence of primitives.
#[async_trait]
pub trait PrimitiveStore: Send + Sync {
    /// Inserts a new record.
    async fn insert_primitive(&self, row: &PrimitiveRow) -> Result<(), StoreError>;
    /// The record `id`, if any.
    async fn primitive(&self, id: &str) -> Result<Option<PrimitiveRow>, StoreError>;
    /// The record's runs, in order.
    async fn primitive_runs(&self, id: &str) -> Result<Vec<RunRow>, StoreError>;
    /// Ids of records due at `now_ms` and not leased (at most `limit`).
    async fn primitives_due(&self, now_ms: u64, limit: u32) -> Result<Vec<String>, StoreError>;
    /// Claims a due, unleased record for `owner` until `until_ms`; the
    /// record as claimed, or `None` when another replica holds it or it is
    /// not due.
    async fn claim_primitive(
        &self,
        id: &str,
        owner: &str,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Option<PrimitiveRow>, StoreError>;
    /// Sets the status of a record `owner` holds (e.g. `triggered`).
    async fn mark_primitive(&self, id: &str, owner: &str, status: &str)
        -> Result<bool, StoreError>;
    /// Records a run; `false` when a run with its key was recorded before
    /// (the stored one stands).
    async fn record_run(&self, run: &RunRow) -> Result<bool, StoreError>;
    /// The run recorded under `run_key`, if any.
    async fn run_by_key(&self, run_key: &str) -> Result<Option<RunRow>, StoreError>;
    /// Moves a record `owner` holds past a run and releases it; `false`
    /// when `owner` no longer holds it. A record cancelled meanwhile stays
    /// cancelled.
    async fn finish_run(&self, id: &str, owner: &str, end: &RunEnd) -> Result<bool, StoreError>;
    /// Records `run` (unless a run with its key was recorded before) and
    /// moves the record past it as [`PrimitiveStore::finish_run`] does, in
    /// one transaction: a reader sees the run and the record's next run
    /// together, never one without the other. The run is kept even when
    /// `owner` no longer holds the record (it happened); `false` then.
    async fn record_and_finish(
        &self,
        run: &RunRow,
        owner: &str,
        end: &RunEnd,
    ) -> Result<bool, StoreError>;
    /// Releases a record `owner` holds without a run (not yet due, or to
    /// retry), next looked at `next_ms`.
    async fn release_primitive(
        &self,
        id: &str,
        owner: &str,
        next_ms: Option<u64>,
    ) -> Result<(), StoreError>;
    /// Frees a record `owner` holds as it stands (its next run unchanged),
    /// so the next tick of any replica retries it at once — what a lapsed
    /// lease would allow later; `true` when `owner` held it.
    async fn free_primitive(&self, id: &str, owner: &str) -> Result<bool, StoreError>;
    /// Cancels a record of `kind` whose status is one of `from`; `true`
    /// when this call cancelled it.
    async fn cancel_primitive(
        &self,
        id: &str,
        kind: &str,
        from: &[&str],
        now_ms: u64,
    ) -> Result<bool, StoreError>;
    /// Moves record `id` from status `from` to `to` (one conditional
    /// `UPDATE`, so one caller wins); `true` when this call moved it.
    async fn move_primitive(
        &self,
        id: &str,
        from: &str,
        to: &str,
        now_ms: u64,
    ) -> Result<bool, StoreError>;
}

const COLUMNS: &str = "id, kind, status, body, next_ms, seq, created_ms";

/// A record's lease: held by `lease_owner` until `lease_until_ms`, on
/// records whose next run is due.
const LEASE: Lease<'static> = Lease::new("primitives", "lease_until_ms")
    .held_in("lease_owner")
    .when("next_ms IS NOT NULL AND next_ms <= {now}");

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn uint(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn row_of(r: &AnyRow) -> Result<PrimitiveRow, StoreError> {
    let next: Option<i64> = r.try_get("next_ms")?;
    Ok(PrimitiveRow {
        id: r.try_get("id")?,
        kind: r.try_get("kind")?,
        status: r.try_get("status")?,
        body: r.try_get("body")?,
        next_ms: next.map(uint),
        seq: uint(r.try_get("seq")?),
        created_ms: uint(r.try_get("created_ms")?),
    })
}

fn run_of(r: &AnyRow) -> Result<RunRow, StoreError> {
    Ok(RunRow {
        primitive_id: r.try_get("primitive_id")?,
        seq: uint(r.try_get("seq")?),
        run_key: r.try_get("run_key")?,
        body: r.try_get("body")?,
        created_ms: uint(r.try_get("created_ms")?),
    })
}

#[async_trait]
impl PrimitiveStore for Store {
    async fn insert_primitive(&self, p: &PrimitiveRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO primitives (id, kind, status, body, next_ms, seq, lease_until_ms, lease_owner, created_ms, updated_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, NULL, $7, $7)",
        )
        .bind(&p.id)
        .bind(&p.kind)
        .bind(&p.status)
        .bind(&p.body)
        .bind(p.next_ms.map(int))
        .bind(int(p.seq))
        .bind(int(p.created_ms))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    async fn primitive(&self, id: &str) -> Result<Option<PrimitiveRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM primitives WHERE id = $1");
        let row = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(row_of).transpose()
    }

    async fn primitive_runs(&self, id: &str) -> Result<Vec<RunRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT primitive_id, seq, run_key, body, created_ms FROM primitive_runs \
             WHERE primitive_id = $1 ORDER BY seq",
        )
        .bind(id)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(run_of).collect()
    }

    async fn primitives_due(&self, now_ms: u64, limit: u32) -> Result<Vec<String>, StoreError> {
        LEASE.lapsed_ids(self, now_ms, "next_ms", limit).await
    }

    async fn claim_primitive(
        &self,
        id: &str,
        owner: &str,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Option<PrimitiveRow>, StoreError> {
        if !LEASE
            .claim(self, id, Some(owner), (now_ms, until_ms))
            .await?
        {
            return Ok(None);
        }
        self.primitive(id).await
    }

    async fn mark_primitive(
        &self,
        id: &str,
        owner: &str,
        status: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE primitives SET status = $1 WHERE id = $2 AND lease_owner = $3 AND status <> 'cancelled'",
        )
        .bind(status)
        .bind(id)
        .bind(owner)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn record_run(&self, run: &RunRow) -> Result<bool, StoreError> {
        insert_run(self.pool(), run).await
    }

    async fn run_by_key(&self, run_key: &str) -> Result<Option<RunRow>, StoreError> {
        let row = sqlx::query(
            "SELECT primitive_id, seq, run_key, body, created_ms FROM primitive_runs WHERE run_key = $1",
        )
        .bind(run_key)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(run_of).transpose()
    }

    async fn finish_run(&self, id: &str, owner: &str, end: &RunEnd) -> Result<bool, StoreError> {
        move_past(self.pool(), id, owner, end).await
    }

    async fn record_and_finish(
        &self,
        run: &RunRow,
        owner: &str,
        end: &RunEnd,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        insert_run(&mut *tx, run).await?;
        let moved = move_past(&mut *tx, &run.primitive_id, owner, end).await?;
        tx.commit().await?;
        Ok(moved)
    }

    async fn release_primitive(
        &self,
        id: &str,
        owner: &str,
        next_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE primitives SET \
             next_ms = CASE WHEN status = 'cancelled' THEN NULL ELSE CAST($1 AS BIGINT) END, \
             lease_until_ms = 0, lease_owner = NULL WHERE id = $2 AND lease_owner = $3",
        )
        .bind(next_ms.map(int))
        .bind(id)
        .bind(owner)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    async fn free_primitive(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        LEASE.release(self, id, Some(owner)).await
    }

    async fn cancel_primitive(
        &self,
        id: &str,
        kind: &str,
        from: &[&str],
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut cancelled = false;
        for status in from {
            let done = sqlx::query(
                "UPDATE primitives SET status = 'cancelled', next_ms = NULL, updated_ms = $1 \
                 WHERE id = $2 AND kind = $3 AND status = $4",
            )
            .bind(int(now_ms))
            .bind(id)
            .bind(kind)
            .bind(*status)
            .execute(self.pool())
            .await?;
            cancelled |= done.rows_affected() == 1;
        }
        Ok(cancelled)
    }

    async fn move_primitive(
        &self,
        id: &str,
        from: &str,
        to: &str,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        self.move_status("primitives", id, from, to, now_ms).await
    }
}

/// Inserts `run` unless its key was recorded before; `true` when inserted.
async fn insert_run<'c, E>(e: E, run: &RunRow) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let done = sqlx::query(
        "INSERT INTO primitive_runs (primitive_id, seq, run_key, body, created_ms) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
    )
    .bind(&run.primitive_id)
    .bind(int(run.seq))
    .bind(&run.run_key)
    .bind(&run.body)
    .bind(int(run.created_ms))
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Moves the record `id` that `owner` holds past a run and releases it (a
/// record cancelled meanwhile stays cancelled); `false` when `owner` no
/// longer holds it.
async fn move_past<'c, E>(e: E, id: &str, owner: &str, end: &RunEnd) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let done = sqlx::query(
        "UPDATE primitives SET seq = $1, \
         status = CASE WHEN status = 'cancelled' THEN status ELSE $2 END, \
         next_ms = CASE WHEN status = 'cancelled' THEN NULL ELSE CAST($3 AS BIGINT) END, \
         lease_until_ms = 0, lease_owner = NULL, updated_ms = $4 \
         WHERE id = $5 AND lease_owner = $6",
    )
    .bind(int(end.seq))
    .bind(&end.status)
    .bind(end.next_ms.map(int))
    .bind(int(end.now_ms))
    .bind(id)
    .bind(owner)
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/p.db?mode=rwc", dir.path().display());
        (dir, Store::connect(&url).await.unwrap())
    }

    fn row(id: &str, next: u64) -> PrimitiveRow {
        PrimitiveRow {
            id: id.into(),
            kind: "schedule".into(),
            status: "active".into(),
            body: "{}".into(),
            next_ms: Some(next),
            seq: 0,
            created_ms: 1,
        }
    }

    #[tokio::test]
    async fn a_run_and_the_records_move_past_it_are_one_write() {
        let (_d, s) = store().await;
        s.insert_primitive(&row("sched_b", 100)).await.unwrap();
        s.claim_primitive("sched_b", "r1", 100, 200).await.unwrap();
        let run = |seq: u64| RunRow {
            primitive_id: "sched_b".into(),
            seq,
            run_key: format!("sched_b:{seq}"),
            body: "{}".into(),
            created_ms: 100,
        };
        let end = |seq: u64, next: u64| RunEnd {
            seq,
            status: "active".into(),
            next_ms: Some(next),
            now_ms: 120,
        };
        assert!(s
            .record_and_finish(&run(1), "r1", &end(1, 300))
            .await
            .unwrap());
        let p = s.primitive("sched_b").await.unwrap().unwrap();
        assert_eq!((p.seq, p.next_ms), (1, Some(300)));
        assert!(s.run_by_key("sched_b:1").await.unwrap().is_some());
        // Run 2 happened, but the lease lapsed to r2 meanwhile: the run is
        // kept (never run again), the record is not moved by r1.
        s.claim_primitive("sched_b", "r2", 300, 400).await.unwrap();
        assert!(!s
            .record_and_finish(&run(2), "r1", &end(2, 500))
            .await
            .unwrap());
        assert!(s.run_by_key("sched_b:2").await.unwrap().is_some());
        let p = s.primitive("sched_b").await.unwrap().unwrap();
        assert_eq!((p.seq, p.next_ms), (1, Some(300)));
    }

    #[tokio::test]
    async fn one_claim_per_lease_and_runs_recorded_once() {
        let (_d, s) = store().await;
        s.insert_primitive(&row("sched_a", 100)).await.unwrap();
        assert!(s.primitives_due(99, 10).await.unwrap().is_empty());
        assert_eq!(s.primitives_due(100, 10).await.unwrap(), ["sched_a"]);
        assert!(s
            .claim_primitive("sched_a", "r1", 100, 200)
            .await
            .unwrap()
            .is_some());
        assert!(s
            .claim_primitive("sched_a", "r2", 150, 250)
            .await
            .unwrap()
            .is_none());
        let run = RunRow {
            primitive_id: "sched_a".into(),
            seq: 1,
            run_key: "sched_a:1".into(),
            body: "{}".into(),
            created_ms: 100,
        };
        assert!(s.record_run(&run).await.unwrap());
        assert!(!s.record_run(&run).await.unwrap(), "recorded once");
        let end = RunEnd {
            seq: 1,
            status: "active".into(),
            next_ms: Some(300),
            now_ms: 120,
        };
        assert!(!s.finish_run("sched_a", "r2", &end).await.unwrap());
        assert!(s.finish_run("sched_a", "r1", &end).await.unwrap());
        let p = s.primitive("sched_a").await.unwrap().unwrap();
        assert_eq!((p.seq, p.next_ms), (1, Some(300)));
        // a lapsed lease is claimed again
        assert!(s
            .claim_primitive("sched_a", "r2", 300, 400)
            .await
            .unwrap()
            .is_some());
        assert!(s
            .claim_primitive("sched_a", "r1", 401, 500)
            .await
            .unwrap()
            .is_some());
        assert!(s
            .cancel_primitive("sched_a", "schedule", &["active"], 402)
            .await
            .unwrap());
        let end = RunEnd {
            seq: 2,
            status: "active".into(),
            next_ms: Some(600),
            now_ms: 403,
        };
        assert!(s.finish_run("sched_a", "r1", &end).await.unwrap());
        let p = s.primitive("sched_a").await.unwrap().unwrap();
        assert_eq!(
            (p.status.as_str(), p.next_ms),
            ("cancelled", None),
            "a cancel wins"
        );
    }
}
