//! Withdrawals (spec §4.11): one live record per nullifier hash (a
//! failed one does not count: its note was not spent), found by its
//! ticket, and its schema (migration 0027, applied by the feature's
//! start). The record's transaction lives in the route journal under the
//! ticket; the record holds the state, its history, the hash and a lease
//! ([`relay_store::durable::Lease`]), so one replica at a time sends it
//! and a restarted host finishes it once the lease lapses.

use relay_store::{durable::Lease, StoreError};
use serde::{Deserialize, Serialize};
use sqlx::{any::AnyRow, Row};

/// This feature's migration: the withdrawals table.
pub const MIGRATIONS: &[relay_store::Migration] = &[relay_store::Migration {
    version: 27,
    sql: include_str!("../migrations/0027_pool_withdrawals.sql"),
}];

/// Waiting for its time.
pub const HELD: &str = "HELD";
/// Being sent (journaled, broadcast or waiting for its receipt).
pub const SENDING: &str = "SENDING";
/// Mined: the recipient is paid.
pub const SENT: &str = "SENT";
/// Not sent (no longer valid when its time came) or reverted.
pub const FAILED: &str = "FAILED";

/// A record's lease: one replica at a time sends a withdrawal; a held one
/// is claimable once it is due.
const LEASE: Lease<'static> = Lease::new("pool_withdrawals", "lease_until_ms")
    .when("state = 'SENDING' OR (state = 'HELD' AND send_after_ms <= {now})");

relay_store::store_view! {
    /// The store as the pool uses it: every method of [`Store`](relay_store::Store) (the
    /// transaction journal), plus the withdrawals' own.
    pub Withdrawals
}

/// One step of a record's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolStep {
    /// `HELD`, `SENDING`, `SENT` or `FAILED`.
    pub state: String,
    /// When it entered the state, epoch ms.
    pub at_ms: u64,
}

/// One withdrawal record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WithdrawalRow {
    /// The ticket, `pt_…` (a bearer secret: it is the only way to read it).
    pub id: String,
    /// The nullifier hash, `0x…`: one record per note.
    pub nullifier: String,
    /// One of [`HELD`], [`SENDING`], [`SENT`], [`FAILED`].
    pub state: String,
    /// The withdrawal as checked (JSON, [`crate::withdraw::Checked`]).
    pub body: String,
    /// When it may be sent, epoch ms.
    pub send_after_ms: u64,
    /// The withdrawal transaction.
    pub tx_hash: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Its history.
    pub states: Vec<PoolStep>,
    /// Epoch ms.
    pub created_ms: u64,
}

const COLUMNS: &str =
    "id, nullifier, state, body, send_after_ms, tx_hash, error, states, created_ms";

fn row_of(r: &AnyRow) -> Result<WithdrawalRow, StoreError> {
    let states: String = r.try_get("states")?;
    Ok(WithdrawalRow {
        id: r.try_get("id")?,
        nullifier: r.try_get("nullifier")?,
        state: r.try_get("state")?,
        body: r.try_get("body")?,
        send_after_ms: r.try_get::<i64, _>("send_after_ms")? as u64,
        tx_hash: r.try_get("tx_hash")?,
        error: r.try_get("error")?,
        states: serde_json::from_str(&states)
            .map_err(|e| StoreError::Corrupt(format!("withdrawal history: {e}")))?,
        created_ms: r.try_get::<i64, _>("created_ms")? as u64,
    })
}

impl Withdrawals {
    /// Inserts `row` held by its inserter until `lease_until_ms`, unless a
    /// live record (not [`FAILED`]) for its nullifier exists; whether it
    /// was inserted.
    pub async fn begin(
        &self,
        row: &WithdrawalRow,
        lease_until_ms: u64,
    ) -> Result<bool, StoreError> {
        let states = serde_json::to_string(&row.states).expect("steps serialize");
        let done = sqlx::query(
            "INSERT INTO pool_withdrawals (id, nullifier, state, body, send_after_ms, states, lease_until_ms, created_ms, updated_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT DO NOTHING",
        )
        .bind(&row.id)
        .bind(&row.nullifier)
        .bind(&row.state)
        .bind(&row.body)
        .bind(row.send_after_ms as i64)
        .bind(states)
        .bind(lease_until_ms as i64)
        .bind(row.created_ms as i64)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The record with ticket `id`.
    pub async fn withdrawal(&self, id: &str) -> Result<Option<WithdrawalRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM pool_withdrawals WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(row_of).transpose()
    }

    /// Whether a live record (held, being sent or sent) spends `nullifier`;
    /// a [`FAILED`] one did not, and leaves the note to be withdrawn again.
    pub async fn has_nullifier(&self, nullifier: &str) -> Result<bool, StoreError> {
        let r = sqlx::query(
            "SELECT id FROM pool_withdrawals WHERE nullifier = $1 AND state <> 'FAILED'",
        )
        .bind(nullifier)
        .fetch_optional(self.pool())
        .await?;
        Ok(r.is_some())
    }

    /// How many records are held or being sent.
    pub async fn open_count(&self) -> Result<u64, StoreError> {
        let r = sqlx::query(
            "SELECT COUNT(*) AS n FROM pool_withdrawals WHERE state IN ('HELD', 'SENDING')",
        )
        .fetch_one(self.pool())
        .await?;
        Ok(r.try_get::<i64, _>("n")? as u64)
    }

    /// Moves `row` to `state` at `now_ms` (hash and error set when given),
    /// appending the step to its history.
    pub async fn advance(
        &self,
        row: &WithdrawalRow,
        state: &str,
        (tx_hash, error): (Option<&str>, Option<&str>),
        now_ms: u64,
    ) -> Result<WithdrawalRow, StoreError> {
        let mut next = row.clone();
        next.state = state.into();
        next.states.push(PoolStep {
            state: state.into(),
            at_ms: now_ms,
        });
        next.tx_hash = tx_hash.map(String::from).or(next.tx_hash);
        next.error = error.map(String::from).or(next.error);
        let states = serde_json::to_string(&next.states).expect("steps serialize");
        sqlx::query(
            "UPDATE pool_withdrawals SET state = $1, tx_hash = $2, error = $3, states = $4, updated_ms = $5 WHERE id = $6",
        )
        .bind(&next.state)
        .bind(&next.tx_hash)
        .bind(&next.error)
        .bind(states)
        .bind(now_ms as i64)
        .bind(&row.id)
        .execute(self.pool())
        .await?;
        Ok(next)
    }

    /// Claims a withdrawal that is due (held and its time came) or whose
    /// sender died, holding it until `until_ms`; `None` when there is none.
    pub async fn claim_due(
        &self,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Option<WithdrawalRow>, StoreError> {
        match LEASE
            .claim_next(self, None, (now_ms, until_ms), "send_after_ms")
            .await?
        {
            Some(id) => self.withdrawal(&id).await,
            None => Ok(None),
        }
    }

    /// Extends (or drops, with `until_ms` 0) the holder's lease of `id`.
    pub async fn lease(&self, id: &str, until_ms: u64) -> Result<(), StoreError> {
        LEASE.renew(self, id, None, until_ms).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_store::Store;

    fn row(id: &str, nullifier: &str, send_after_ms: u64) -> WithdrawalRow {
        WithdrawalRow {
            id: id.into(),
            nullifier: nullifier.into(),
            state: HELD.into(),
            body: "{}".into(),
            send_after_ms,
            tx_hash: None,
            error: None,
            states: vec![PoolStep {
                state: HELD.into(),
                at_ms: 1,
            }],
            created_ms: 1,
        }
    }

    /// One live record per nullifier; a held one is claimed once, when due;
    /// a failed one frees its note.
    async fn one_record_per_nullifier_claimed_when_due(s: Store) {
        let s = Withdrawals::from(s);
        s.migrate(MIGRATIONS).await.unwrap();
        assert!(s.begin(&row("pt_a", "0x01", 500), 0).await.unwrap());
        assert!(!s.begin(&row("pt_b", "0x01", 500), 0).await.unwrap());
        assert!(s.has_nullifier("0x01").await.unwrap());
        assert_eq!(s.withdrawal("pt_b").await.unwrap(), None);
        assert_eq!(s.open_count().await.unwrap(), 1);
        assert_eq!(s.claim_due(499, 1_000).await.unwrap(), None, "not due");
        let due = s.claim_due(500, 1_000).await.unwrap().unwrap();
        assert_eq!(due.id, "pt_a");
        assert_eq!(s.claim_due(600, 1_000).await.unwrap(), None, "held");
        let sending = s.advance(&due, SENDING, (None, None), 600).await.unwrap();
        let sent = s
            .advance(&sending, SENT, (Some("0xab"), None), 700)
            .await
            .unwrap();
        let read = s.withdrawal("pt_a").await.unwrap().unwrap();
        assert_eq!(read, sent);
        let history: Vec<&str> = read.states.iter().map(|s| s.state.as_str()).collect();
        assert_eq!(history, [HELD, SENDING, SENT]);
        assert_eq!(s.claim_due(5_000, 9_000).await.unwrap(), None, "finished");
        assert_eq!(s.open_count().await.unwrap(), 0);
        assert!(
            !s.begin(&row("pt_c", "0x01", 500), 0).await.unwrap(),
            "sent"
        );

        // a withdrawal that failed leaves its note to be withdrawn again, once
        assert!(s.begin(&row("pt_d", "0x02", 500), 0).await.unwrap());
        let d = s.withdrawal("pt_d").await.unwrap().unwrap();
        s.advance(&d, FAILED, (None, Some("no longer valid")), 600)
            .await
            .unwrap();
        assert!(!s.has_nullifier("0x02").await.unwrap());
        assert!(s.begin(&row("pt_e", "0x02", 500), 0).await.unwrap());
        assert!(!s.begin(&row("pt_f", "0x02", 500), 0).await.unwrap());
        assert!(s.has_nullifier("0x02").await.unwrap());
    }

    #[tokio::test]
    async fn withdrawals_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("r.db").display());
        one_record_per_nullifier_claimed_when_due(Store::connect(&url).await.unwrap()).await;
    }

    #[tokio::test]
    async fn withdrawals_on_postgres() {
        let url = relay_fixtures::postgres_database();
        one_record_per_nullifier_claimed_when_due(Store::connect(&url).await.unwrap()).await;
    }
}
