//! What messaging keeps (migrations 0019 and 0020, applied by the
//! feature's start): the rows of three fields, the released slots, the
//! witness log's entries, and the Plus passes' spent set and daily counts
//! ([`passes`]). Nothing here knows a sender, a recipient or an IP (the
//! counts know an HMAC of the IP, for a day at most).

use rand::seq::SliceRandom;
use relay_sealed::message::Row;
use relay_store::StoreError;
use sqlx::{any::AnyRow, Row as _};

/// This feature's migrations.
pub const MIGRATIONS: &[relay_store::Migration] = &[
    relay_store::Migration {
        version: 19,
        sql: include_str!("../migrations/0019_messages.sql"),
    },
    relay_store::Migration {
        version: 20,
        sql: include_str!("../migrations/0020_message_passes.sql"),
    },
];

relay_store::store_view! {
    /// The store as messaging uses it.
    pub Messages
}

/// A released row as the feed serves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedRow {
    /// Its place in the feed (from 1, in release order).
    pub seq: u64,
    /// The three stored fields.
    pub row: Row,
}

/// One entry of the witness log as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessRow {
    /// Its number, from 1.
    pub s: u64,
    /// `mailbox` (or, with names, `transfer`).
    pub kind: String,
    /// The binding itself (public).
    pub body: String,
    /// SHA-256 of `body`, hex.
    pub b: String,
    /// The chained root after it, hex.
    pub r: String,
    /// When it was appended, ms.
    pub t: u64,
}

fn feed_row(r: &AnyRow) -> Result<FeedRow, StoreError> {
    Ok(FeedRow {
        seq: r.try_get::<i64, _>("seq")? as u64,
        row: Row {
            ephemeral_pub_key: r.try_get("ephemeral_pub_key")?,
            view_tag: r.try_get("view_tag")?,
            ct: r.try_get("ct")?,
        },
    })
}

fn witness_row(r: &AnyRow) -> Result<WitnessRow, StoreError> {
    Ok(WitnessRow {
        s: r.try_get::<i64, _>("s")? as u64,
        kind: r.try_get("kind")?,
        body: r.try_get("body")?,
        b: r.try_get("b")?,
        r: r.try_get("r")?,
        t: r.try_get::<i64, _>("t")? as u64,
    })
}

/// [`Messages::insert_row`] on `on` (the pool, or a transaction).
async fn insert_row_on<'e, E>(on: E, row: &Row, release_ms: u64) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let done = sqlx::query(
        "INSERT INTO message_rows (ephemeral_pub_key, view_tag, ct, release_ms) \
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
    )
    .bind(&row.ephemeral_pub_key)
    .bind(&row.view_tag)
    .bind(&row.ct)
    .bind(release_ms as i64)
    .execute(on)
    .await?;
    Ok(done.rows_affected() == 1)
}

impl Messages {
    /// Stores `row` to be released at `release_ms`; false when a row with
    /// its ephemeral key exists (a replay: nothing is stored).
    pub async fn insert_row(&self, row: &Row, release_ms: u64) -> Result<bool, StoreError> {
        insert_row_on(self.pool(), row, release_ms).await
    }

    /// How many rows wait for slot `slot_ms` or an earlier one, and how
    /// many of them are in the large bucket (`large_ct` is a large row's
    /// base64 length).
    pub async fn pending(&self, slot_ms: u64, large_ct: usize) -> Result<(u64, u64), StoreError> {
        let r = sqlx::query(
            "SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN LENGTH(ct) = $2 THEN 1 ELSE 0 END), 0) AS large \
             FROM message_rows WHERE seq IS NULL AND release_ms <= $1",
        )
        .bind(slot_ms as i64)
        .bind(large_ct as i64)
        .fetch_one(self.pool())
        .await?;
        Ok((
            r.try_get::<i64, _>("n")? as u64,
            r.try_get::<i64, _>("large")? as u64,
        ))
    }

    /// Releases slot `slot_ms` once: adds `decoys` to it and numbers every
    /// row waiting for it (or an earlier slot) after the feed's last, in a
    /// random order, in one transaction. `None` when the slot was released
    /// already (by this replica or another).
    pub async fn release(&self, slot_ms: u64, decoys: &[Row]) -> Result<Option<u64>, StoreError> {
        let mut tx = self.pool().begin().await?;
        let claimed = sqlx::query(
            "INSERT INTO message_slots (slot_ms, released) VALUES ($1, 0) ON CONFLICT DO NOTHING",
        )
        .bind(slot_ms as i64)
        .execute(&mut *tx)
        .await?;
        if claimed.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(None);
        }
        for d in decoys {
            insert_row_on(&mut *tx, d, slot_ms).await?;
        }
        let mut keys: Vec<String> = sqlx::query(
            "SELECT ephemeral_pub_key FROM message_rows WHERE seq IS NULL AND release_ms <= $1",
        )
        .bind(slot_ms as i64)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| r.try_get("ephemeral_pub_key"))
        .collect::<Result<_, _>>()?;
        keys.shuffle(&mut rand::rng());
        let last: i64 = sqlx::query("SELECT COALESCE(MAX(seq), 0) AS m FROM message_rows")
            .fetch_one(&mut *tx)
            .await?
            .try_get("m")?;
        for (i, key) in keys.iter().enumerate() {
            sqlx::query("UPDATE message_rows SET seq = $1 WHERE ephemeral_pub_key = $2")
                .bind(last + 1 + i as i64)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("UPDATE message_slots SET released = $1 WHERE slot_ms = $2")
            .bind(keys.len() as i64)
            .bind(slot_ms as i64)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(keys.len() as u64))
    }

    /// The latest released slot, if any.
    pub async fn last_slot(&self) -> Result<Option<u64>, StoreError> {
        let r = sqlx::query("SELECT MAX(slot_ms) AS m FROM message_slots")
            .fetch_one(self.pool())
            .await?;
        Ok(r.try_get::<Option<i64>, _>("m")?.map(|m| m as u64))
    }

    /// Released rows after `since`, at most `limit`, in feed order.
    pub async fn feed(&self, since: u64, limit: u32) -> Result<Vec<FeedRow>, StoreError> {
        sqlx::query(
            "SELECT seq, ephemeral_pub_key, view_tag, ct FROM message_rows \
             WHERE seq IS NOT NULL AND seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(since.min(i64::MAX as u64) as i64)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?
        .iter()
        .map(feed_row)
        .collect()
    }

    /// The first and last feed numbers still kept (`None` when the feed is
    /// empty).
    pub async fn feed_bounds(&self) -> Result<Option<(u64, u64)>, StoreError> {
        let r = sqlx::query("SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM message_rows")
            .fetch_one(self.pool())
            .await?;
        let lo = r.try_get::<Option<i64>, _>("lo")?;
        let hi = r.try_get::<Option<i64>, _>("hi")?;
        Ok(lo.zip(hi).map(|(lo, hi)| (lo as u64, hi as u64)))
    }

    /// Drops released rows and slots older than `before_ms`; how many rows.
    pub async fn prune(&self, before_ms: u64) -> Result<u64, StoreError> {
        let done =
            sqlx::query("DELETE FROM message_rows WHERE seq IS NOT NULL AND release_ms < $1")
                .bind(before_ms as i64)
                .execute(self.pool())
                .await?;
        sqlx::query("DELETE FROM message_slots WHERE slot_ms < $1")
            .bind(before_ms as i64)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// Appends `entry` to the witness log; false when entry `s` exists (a
    /// concurrent append won: read the log again and retry).
    pub async fn append_witness(&self, entry: &WitnessRow) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO message_witness (s, kind, body, b, r, t) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT DO NOTHING",
        )
        .bind(entry.s as i64)
        .bind(&entry.kind)
        .bind(&entry.body)
        .bind(&entry.b)
        .bind(&entry.r)
        .bind(entry.t as i64)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Witness entries from `from`, at most `limit`, in order.
    pub async fn witness(&self, from: u64, limit: u32) -> Result<Vec<WitnessRow>, StoreError> {
        sqlx::query(
            "SELECT s, kind, body, b, r, t FROM message_witness WHERE s >= $1 ORDER BY s LIMIT $2",
        )
        .bind(from.min(i64::MAX as u64) as i64)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?
        .iter()
        .map(witness_row)
        .collect()
    }
}

mod passes;
#[cfg(test)]
mod tests;

pub use passes::{Count, Inserted, Over};
