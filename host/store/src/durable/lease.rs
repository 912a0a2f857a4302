//! Leases: which replica works a row, and until when.
//!
//! A lease is two columns of a row — the epoch-ms instant it runs until
//! (0: free) and, where the table names one, its holder — and one rule: a
//! lease running until `t` is live while `now < t` and has lapsed from `t`
//! on. Every claim is one conditional `UPDATE`, so of any number of
//! concurrent claimers — on one replica or several, SQLite or Postgres —
//! exactly one wins. The caller passes its injected clock's reading; a
//! lease never reads the system clock.

use crate::{Store, StoreError};
use sqlx::Row;

/// Where `{now}` stands in a [`Lease`]'s claim condition.
const NOW: &str = "{now}";

/// The lease columns of one table and what else a row must satisfy to be
/// claimed (its state is still open, its next run is due …).
#[derive(Clone, Copy, Debug)]
pub struct Lease<'a> {
    table: &'a str,
    until: &'a str,
    owner: Option<&'a str>,
    open: &'a str,
}

impl<'a> Lease<'a> {
    /// The lease of `table` (keyed by an `id` column) running until its
    /// epoch-ms column `until`; every row is claimable once it lapsed.
    pub const fn new(table: &'a str, until: &'a str) -> Self {
        Lease {
            table,
            until,
            owner: None,
            open: "1 = 1",
        }
    }

    /// The same lease naming its holder in column `owner`: renewing and
    /// releasing then need the holder's name.
    pub const fn held_in(self, owner: &'a str) -> Self {
        Lease {
            owner: Some(owner),
            ..self
        }
    }

    /// The same lease claiming only rows that meet the SQL condition
    /// `open`, in which `{now}` stands for the claimer's clock reading.
    pub const fn when(self, open: &'a str) -> Self {
        Lease { open, ..self }
    }

    /// SQL: the row's lease has lapsed at the parameter `now` (e.g. `$1`).
    pub fn lapsed(&self, now: &str) -> String {
        format!("{} <= {now}", self.until)
    }

    /// SQL: the row is open (see [`Lease::when`]) at the parameter `now`.
    fn open_at(&self, now: &str) -> String {
        format!("({})", self.open.replace(NOW, now))
    }

    /// `SET` of the lease columns to run until `$1`, held by `$4`.
    fn set_held(&self) -> String {
        match self.owner {
            Some(o) => format!("{} = $1, {o} = $4", self.until),
            None => format!("{} = $1", self.until),
        }
    }

    /// Takes row `id` for `owner` until `until_ms` if its lease lapsed at
    /// `now_ms` and it is open; whether it did.
    pub async fn claim(
        &self,
        store: &Store,
        id: &str,
        owner: Option<&str>,
        (now_ms, until_ms): (u64, u64),
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE {} SET {} WHERE id = $2 AND {} AND {}",
            self.table,
            self.set_held(),
            self.lapsed("$3"),
            self.open_at("$3"),
        );
        self.take(store, &sql, id, owner, (now_ms, until_ms)).await
    }

    /// Takes row `id` for `owner` as [`Lease::claim`] does, or renews it
    /// when `owner` holds it already (lapsed or not, as long as nobody took
    /// it over); whether it did. Needs a holder column.
    pub async fn acquire(
        &self,
        store: &Store,
        id: &str,
        owner: &str,
        (now_ms, until_ms): (u64, u64),
    ) -> Result<bool, StoreError> {
        let held = self.owner.ok_or_else(|| no_holder(self.table))?;
        let sql = format!(
            "UPDATE {} SET {} WHERE id = $2 AND ({} OR {held} = $4) AND {}",
            self.table,
            self.set_held(),
            self.lapsed("$3"),
            self.open_at("$3"),
        );
        self.take(store, &sql, id, Some(owner), (now_ms, until_ms))
            .await
    }

    async fn take(
        &self,
        store: &Store,
        sql: &str,
        id: &str,
        owner: Option<&str>,
        (now_ms, until_ms): (u64, u64),
    ) -> Result<bool, StoreError> {
        let mut q = sqlx::query(sql)
            .bind(ms(until_ms))
            .bind(id)
            .bind(ms(now_ms));
        if self.owner.is_some() {
            q = q.bind(owner);
        }
        Ok(q.execute(store.pool()).await?.rows_affected() == 1)
    }

    /// Moves the end of the lease on row `id` to `until_ms` (0 frees it):
    /// with a holder column only while `owner` still holds it, else
    /// unconditionally (the caller is its holder). Whether it did.
    pub async fn renew(
        &self,
        store: &Store,
        id: &str,
        owner: Option<&str>,
        until_ms: u64,
    ) -> Result<bool, StoreError> {
        let done = match self.owner {
            Some(held) => {
                sqlx::query(&format!(
                    "UPDATE {} SET {} = $1 WHERE id = $2 AND {held} = $3",
                    self.table, self.until
                ))
                .bind(ms(until_ms))
                .bind(id)
                .bind(owner)
                .execute(store.pool())
                .await?
            }
            None => {
                sqlx::query(&format!(
                    "UPDATE {} SET {} = $1 WHERE id = $2",
                    self.table, self.until
                ))
                .bind(ms(until_ms))
                .bind(id)
                .execute(store.pool())
                .await?
            }
        };
        Ok(done.rows_affected() == 1)
    }

    /// Frees row `id` (held by `owner`, where the table names holders) so
    /// any replica may claim it at once; whether it was held.
    pub async fn release(
        &self,
        store: &Store,
        id: &str,
        owner: Option<&str>,
    ) -> Result<bool, StoreError> {
        let Some(held) = self.owner else {
            return self.renew(store, id, None, 0).await;
        };
        let done = sqlx::query(&format!(
            "UPDATE {} SET {} = 0, {held} = NULL WHERE id = $1 AND {held} = $2",
            self.table, self.until
        ))
        .bind(id)
        .bind(owner)
        .execute(store.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Ids of open rows whose lease lapsed at `now_ms`, at most `limit`,
    /// ordered by the SQL `order` (e.g. `created_ms`).
    pub async fn lapsed_ids(
        &self,
        store: &Store,
        now_ms: u64,
        order: &str,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT id FROM {} WHERE {} AND {} ORDER BY {order} LIMIT $2",
            self.table,
            self.lapsed("$1"),
            self.open_at("$1"),
        ))
        .bind(ms(now_ms))
        .bind(i64::from(limit))
        .fetch_all(store.pool())
        .await?;
        rows.iter()
            .map(|r| r.try_get("id").map_err(StoreError::from))
            .collect()
    }

    /// Claims the first open row (by `order`) whose lease lapsed at
    /// `now_ms` for `owner` until `until_ms`: its id, or `None` when there
    /// is none (another replica won every candidate).
    pub async fn claim_next(
        &self,
        store: &Store,
        owner: Option<&str>,
        (now_ms, until_ms): (u64, u64),
        order: &str,
    ) -> Result<Option<String>, StoreError> {
        for id in self.lapsed_ids(store, now_ms, order, 8).await? {
            if self.claim(store, &id, owner, (now_ms, until_ms)).await? {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }
}

/// An epoch-ms instant as the database stores it.
fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn no_holder(table: &str) -> StoreError {
    StoreError::Corrupt(format!("the lease of {table} names no holder"))
}

/// Runs `step` to its end while renewing a lease of length `lease` every
/// third of it with `renew` (which answers whether the lease is still
/// held); answers the step's output and whether the lease was lost
/// meanwhile. The step is never cut short — what it sent is journaled,
/// and whoever holds the lease finishes it — but a driver that lost the
/// lease must not act on its outcome. A renewal that finds another holder
/// loses the lease for good; one the store does not answer is tried again
/// at the next beat, and loses it once no renewal has succeeded for a
/// whole lease (another replica may hold it by then). The caller holds
/// the lease when it calls.
pub async fn renewing<T, R>(
    lease: std::time::Duration,
    mut renew: impl FnMut() -> R,
    step: impl std::future::Future<Output = T>,
) -> (T, bool)
where
    R: std::future::Future<Output = Result<bool, StoreError>>,
{
    let every = (lease / 3).max(std::time::Duration::from_millis(20));
    let mut step = std::pin::pin!(step);
    let mut lost = false;
    let mut held_at = tokio::time::Instant::now();
    loop {
        tokio::select! {
            out = &mut step => return (out, lost),
            _ = tokio::time::sleep(every) => {
                let asked = tokio::time::Instant::now();
                match renew().await {
                    Ok(true) => held_at = asked,
                    Ok(false) => lost = true,
                    Err(_) => lost |= asked.duration_since(held_at) >= lease,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const LEASE: Duration = Duration::from_millis(300);

    /// A step of `beats` thirds of the lease, renewed by `answers` in turn
    /// (the last repeated): whether the lease was lost meanwhile.
    async fn lost_over(beats: u32, answers: &[Result<bool, ()>]) -> bool {
        let mut asked = 0;
        let renew = || {
            let answer = answers[asked.min(answers.len() - 1)];
            asked += 1;
            async move { answer.map_err(|()| StoreError::Corrupt("down".into())) }
        };
        let step = tokio::time::sleep(LEASE / 3 * beats + LEASE / 6);
        renewing(LEASE, renew, step).await.1
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_renewed_throughout_is_held() {
        assert!(!lost_over(9, &[Ok(true)]).await);
    }

    #[tokio::test(start_paused = true)]
    async fn another_holder_loses_the_lease_for_good() {
        assert!(lost_over(4, &[Ok(true), Ok(false), Ok(true)]).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_away_for_less_than_the_lease_keeps_it() {
        assert!(!lost_over(6, &[Ok(true), Err(()), Err(()), Ok(true)]).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_away_for_a_whole_lease_loses_it() {
        assert!(lost_over(6, &[Ok(true), Err(()), Err(()), Err(()), Ok(true)]).await);
    }
}
