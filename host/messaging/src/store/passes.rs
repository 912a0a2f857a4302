//! The Plus passes' tables (migration 0020): the spent set and the
//! bounded counts (the daily claims, the free send meter) — each decided
//! by one statement, so every replica on the database counts as one.

use relay_sealed::message::Row;
use relay_store::StoreError;
use sqlx::Row as _;

use super::Messages;

/// What storing a row that spends a pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserted {
    /// Stored, and the pass spent.
    Stored,
    /// A row with its ephemeral key exists: nothing stored, nothing spent.
    Replayed,
    /// The pass was spent before: nothing stored.
    PassSpent,
}

/// A count over its ceiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Over;

/// A bounded count: one caller's `(n, m)` in one window of a counter.
#[derive(Clone, Copy, Debug)]
pub struct Count<'a> {
    /// `claims` or `sends`.
    pub counter: &'a str,
    /// The caller's tag.
    pub caller: &'a str,
    /// The window (a day or minute number).
    pub window: u64,
}

impl Messages {
    /// Stores `row` for `release_ms` and spends the pass `nonce` (hex) of
    /// key `epoch`, in one transaction: both or neither.
    pub async fn insert_row_spending(
        &self,
        row: &Row,
        release_ms: u64,
        (nonce, epoch): (&str, u64),
    ) -> Result<Inserted, StoreError> {
        let mut tx = self.pool().begin().await?;
        if !super::insert_row_on(&mut *tx, row, release_ms).await? {
            tx.rollback().await?;
            return Ok(Inserted::Replayed);
        }
        let spent = sqlx::query(
            "INSERT INTO message_passes_spent (nonce, epoch) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        )
        .bind(nonce)
        .bind(epoch as i64)
        .execute(&mut *tx)
        .await?;
        if spent.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(Inserted::PassSpent);
        }
        tx.commit().await?;
        Ok(Inserted::Stored)
    }

    /// Adds `add` to `c`'s `(n, m)` unless either would pass its `max`
    /// (one statement decides, whichever replica asks); the counts after.
    pub async fn count(
        &self,
        c: Count<'_>,
        add: (u32, u32),
        max: (u32, u32),
    ) -> Result<Result<(u32, u32), Over>, StoreError> {
        sqlx::query(
            "INSERT INTO message_counts (counter, caller, win, n, m) VALUES ($1, $2, $3, 0, 0) \
             ON CONFLICT DO NOTHING",
        )
        .bind(c.counter)
        .bind(c.caller)
        .bind(c.window as i64)
        .execute(self.pool())
        .await?;
        let taken = sqlx::query(
            "UPDATE message_counts SET n = n + $4, m = m + $5 \
             WHERE counter = $1 AND caller = $2 AND win = $3 AND n + $4 <= $6 AND m + $5 <= $7",
        )
        .bind(c.counter)
        .bind(c.caller)
        .bind(c.window as i64)
        .bind(i64::from(add.0))
        .bind(i64::from(add.1))
        .bind(i64::from(max.0))
        .bind(i64::from(max.1))
        .execute(self.pool())
        .await?;
        if taken.rows_affected() == 0 {
            return Ok(Err(Over));
        }
        let r = sqlx::query(
            "SELECT n, m FROM message_counts WHERE counter = $1 AND caller = $2 AND win = $3",
        )
        .bind(c.counter)
        .bind(c.caller)
        .bind(c.window as i64)
        .fetch_one(self.pool())
        .await?;
        let (n, m): (i64, i64) = (r.try_get("n")?, r.try_get("m")?);
        Ok(Ok((n as u32, m as u32)))
    }

    /// Drops what the passes no longer need: spent nonces of keys before
    /// `epoch` (they can no longer redeem), claim counts of days before
    /// `day`, send counts of minutes before `minute`.
    pub async fn prune_passes(&self, epoch: u64, day: u64, minute: u64) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM message_passes_spent WHERE epoch < $1")
            .bind(epoch as i64)
            .execute(self.pool())
            .await?;
        for (counter, before) in [("claims", day), ("sends", minute)] {
            sqlx::query("DELETE FROM message_counts WHERE counter = $1 AND win < $2")
                .bind(counter)
                .bind(before as i64)
                .execute(self.pool())
                .await?;
        }
        Ok(())
    }
}
