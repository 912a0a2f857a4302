//! Policy-gated agent sessions (spec §2.13, §4.5): the [`SessionStore`]
//! trait and its sqlx implementation.
//!
//! The one operation that must be atomic is [`SessionStore::reserve_spend`]:
//! the cap check and the spend record happen in one transaction that
//! **first writes the session row** (`spend_seq + 1`, only while the session
//! is active and unexpired) — Postgres then holds the row lock and SQLite
//! the database write lock until commit — and only then sums the spends in
//! the window (as U256, in Rust), compares with the cap and inserts. Two
//! reservations of one session therefore never interleave, on one replica
//! or many: concurrent calls can never overspend. A revoke writes the same
//! row, so it is ordered against every reservation too.

use super::{durable::Lease, Store, StoreError};
use async_trait::async_trait;
use relay_plugin_api::U256;
use sqlx::{any::AnyRow, Row};

/// A session sweep's lease: until `sweep_until_ms`, on sessions not yet
/// swept.
const SWEEP: Lease<'static> = Lease::new("sessions", "sweep_until_ms").when("swept_ms IS NULL");

/// One session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    /// `ses_…`.
    pub id: String,
    /// Hex SHA-256 of the bearer (the bearer itself is never stored).
    pub bearer_hash: String,
    /// The owner's label.
    pub label: Option<String>,
    /// The policy (JSON, as the service writes it).
    pub policy: String,
    /// The session's own address, where its funds are held.
    pub fund_address: String,
    /// Where unspent funds are returned.
    pub refund_to: String,
    /// `active` or `revoked` (expiry is read from `expires_ms`).
    pub status: String,
    /// Epoch ms.
    pub expires_ms: u64,
    /// Epoch ms.
    pub created_ms: u64,
    /// Epoch ms.
    pub revoked_ms: Option<u64>,
    /// When the last sweep left nothing behind (epoch ms).
    pub swept_ms: Option<u64>,
}

/// One reserved spend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpendRow {
    /// The reservation's id.
    pub id: String,
    /// The session.
    pub session_id: String,
    /// Source smallest units.
    pub amount: U256,
    /// The route it became (the prepared intent's id, which is the route's).
    pub route_id: Option<String>,
    /// `reserved` (an execute is under way) or `routed` (the route exists).
    pub state: String,
    /// Epoch ms.
    pub created_ms: u64,
}

/// A reservation to make ([`SessionStore::reserve_spend`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpendAsk {
    /// The session.
    pub session_id: String,
    /// The reservation's id.
    pub spend_id: String,
    /// Source smallest units.
    pub amount: U256,
    /// The cap the window's spends plus this one may not exceed.
    pub cap: U256,
    /// Spends created after this count (epoch ms; now − 24 h).
    pub since_ms: u64,
    /// Epoch ms.
    pub now_ms: u64,
}

/// What a reservation did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reservation {
    /// Recorded; the window's spends, this one included.
    Reserved {
        /// Spent in the window, this spend included.
        spent: U256,
    },
    /// Refused: it would take the window's spends above the cap.
    OverCap {
        /// Spent in the window already.
        spent: U256,
        /// The window's spends (amount, epoch ms), oldest first.
        window: Vec<(U256, u64)>,
    },
    /// Refused: the session is revoked, expired or unknown (read it).
    Inactive,
}

/// How far a session's route got, for the sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteProgress {
    /// The route is DONE, FAILED or otherwise final.
    pub terminal: bool,
    /// Its source transaction mined (the session's tokens left).
    pub source_sent: bool,
}

/// Session persistence (module docs).
#[async_trait]
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// Records a new session.
    async fn put_session(&self, s: &SessionRow) -> Result<(), StoreError>;
    /// A session by id.
    async fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError>;
    /// A session by the hex SHA-256 of its bearer.
    async fn session_by_bearer(&self, hash: &str) -> Result<Option<SessionRow>, StoreError>;
    /// Every session, newest first (at most `limit`).
    async fn sessions(&self, limit: u32) -> Result<Vec<SessionRow>, StoreError>;
    /// Revokes a session (an active one becomes `revoked` at `now_ms`) and
    /// re-arms its sweep; the row after, `None` when there is none.
    async fn revoke_session(&self, id: &str, now_ms: u64)
        -> Result<Option<SessionRow>, StoreError>;
    /// The atomic cap check and spend record (module docs).
    async fn reserve_spend(&self, ask: &SpendAsk) -> Result<Reservation, StoreError>;
    /// Ties a reservation to its route and sets its state.
    async fn tag_spend(
        &self,
        spend_id: &str,
        route_id: &str,
        state: &str,
    ) -> Result<(), StoreError>;
    /// Drops a reservation whose execute was refused before anything was
    /// broadcast; whether it was there.
    async fn release_spend(&self, spend_id: &str) -> Result<bool, StoreError>;
    /// A session's spends created after `since_ms`, oldest first.
    async fn spends(&self, session_id: &str, since_ms: u64) -> Result<Vec<SpendRow>, StoreError>;
    /// Revoked or expired sessions whose sweep is due and not leased.
    async fn sweeps_due(&self, now_ms: u64, limit: u32) -> Result<Vec<SessionRow>, StoreError>;
    /// Leases a session's sweep until `until_ms`; whether this caller got it.
    async fn lease_sweep(&self, id: &str, now_ms: u64, until_ms: u64) -> Result<bool, StoreError>;
    /// Ends a sweep: `done_ms` when nothing is left behind (the session is
    /// not swept again until re-armed), `None` to retry after the lease.
    async fn end_sweep(&self, id: &str, done_ms: Option<u64>) -> Result<(), StoreError>;
    /// How far route `id` got (`None`: no such route).
    async fn route_progress(&self, id: &str) -> Result<Option<RouteProgress>, StoreError>;
}

const COLUMNS: &str = "id, bearer_hash, label, policy, fund_address, refund_to, status, expires_ms, created_ms, revoked_ms, swept_ms";

fn ms(r: &AnyRow, col: &str) -> Result<u64, StoreError> {
    Ok(r.try_get::<i64, _>(col)? as u64)
}

fn opt_ms(r: &AnyRow, col: &str) -> Result<Option<u64>, StoreError> {
    Ok(r.try_get::<Option<i64>, _>(col)?.map(|v| v as u64))
}

fn session_of(r: &AnyRow) -> Result<SessionRow, StoreError> {
    Ok(SessionRow {
        id: r.try_get("id")?,
        bearer_hash: r.try_get("bearer_hash")?,
        label: r.try_get("label")?,
        policy: r.try_get("policy")?,
        fund_address: r.try_get("fund_address")?,
        refund_to: r.try_get("refund_to")?,
        status: r.try_get("status")?,
        expires_ms: ms(r, "expires_ms")?,
        created_ms: ms(r, "created_ms")?,
        revoked_ms: opt_ms(r, "revoked_ms")?,
        swept_ms: opt_ms(r, "swept_ms")?,
    })
}

fn amount(text: &str) -> Result<U256, StoreError> {
    text.parse()
        .map_err(|_| StoreError::Corrupt(format!("spend amount {text:?}")))
}

fn spend_of(r: &AnyRow) -> Result<SpendRow, StoreError> {
    Ok(SpendRow {
        id: r.try_get("id")?,
        session_id: r.try_get("session_id")?,
        amount: amount(&r.try_get::<String, _>("amount")?)?,
        route_id: r.try_get("route_id")?,
        state: r.try_get("state")?,
        created_ms: ms(r, "created_ms")?,
    })
}

impl Store {
    async fn session_where(
        &self,
        column: &str,
        value: &str,
    ) -> Result<Option<SessionRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM sessions WHERE {column} = $1");
        let row = sqlx::query(&sql)
            .bind(value)
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(session_of).transpose()
    }
}

#[async_trait]
impl SessionStore for Store {
    async fn put_session(&self, s: &SessionRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO sessions (id, bearer_hash, label, policy, fund_address, refund_to, status, expires_ms, created_ms, revoked_ms, spend_seq, swept_ms, sweep_until_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, 0, NULL, 0)",
        )
        .bind(&s.id)
        .bind(&s.bearer_hash)
        .bind(&s.label)
        .bind(&s.policy)
        .bind(&s.fund_address)
        .bind(&s.refund_to)
        .bind(&s.status)
        .bind(s.expires_ms as i64)
        .bind(s.created_ms as i64)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    async fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        self.session_where("id", id).await
    }

    async fn session_by_bearer(&self, hash: &str) -> Result<Option<SessionRow>, StoreError> {
        self.session_where("bearer_hash", hash).await
    }

    async fn sessions(&self, limit: u32) -> Result<Vec<SessionRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM sessions ORDER BY created_ms DESC, id LIMIT $1");
        let rows = sqlx::query(&sql)
            .bind(i64::from(limit))
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(session_of).collect()
    }

    async fn revoke_session(
        &self,
        id: &str,
        now_ms: u64,
    ) -> Result<Option<SessionRow>, StoreError> {
        sqlx::query(
            "UPDATE sessions SET revoked_ms = (CASE WHEN status = 'active' THEN $1 ELSE revoked_ms END), \
             status = 'revoked', swept_ms = NULL, spend_seq = spend_seq + 1 WHERE id = $2",
        )
        .bind(now_ms as i64)
        .bind(id)
        .execute(self.pool())
        .await?;
        self.session(id).await
    }

    async fn reserve_spend(&self, ask: &SpendAsk) -> Result<Reservation, StoreError> {
        let mut tx = self.pool().begin().await?;
        // The write comes first: it takes the lock (module docs).
        let locked = sqlx::query(
            "UPDATE sessions SET spend_seq = spend_seq + 1 WHERE id = $1 AND status = 'active' AND expires_ms > $2",
        )
        .bind(&ask.session_id)
        .bind(ask.now_ms as i64)
        .execute(&mut *tx)
        .await?;
        if locked.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(Reservation::Inactive);
        }
        let rows = sqlx::query(
            "SELECT amount, created_ms FROM session_spends WHERE session_id = $1 AND created_ms > $2 ORDER BY created_ms",
        )
        .bind(&ask.session_id)
        .bind(ask.since_ms as i64)
        .fetch_all(&mut *tx)
        .await?;
        let window = rows
            .iter()
            .map(|r| {
                Ok((
                    amount(&r.try_get::<String, _>("amount")?)?,
                    ms(r, "created_ms")?,
                ))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let spent = window
            .iter()
            .fold(U256::ZERO, |s, (a, _)| s.saturating_add(*a));
        let after = spent.saturating_add(ask.amount);
        if after > ask.cap {
            tx.rollback().await?;
            return Ok(Reservation::OverCap { spent, window });
        }
        sqlx::query(
            "INSERT INTO session_spends (id, session_id, amount, route_id, state, created_ms) VALUES ($1, $2, $3, NULL, 'reserved', $4)",
        )
        .bind(&ask.spend_id)
        .bind(&ask.session_id)
        .bind(ask.amount.to_string())
        .bind(ask.now_ms as i64)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Reservation::Reserved { spent: after })
    }

    async fn tag_spend(
        &self,
        spend_id: &str,
        route_id: &str,
        state: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE session_spends SET route_id = $1, state = $2 WHERE id = $3")
            .bind(route_id)
            .bind(state)
            .bind(spend_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    async fn release_spend(&self, spend_id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM session_spends WHERE id = $1 AND state = 'reserved'")
            .bind(spend_id)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn spends(&self, session_id: &str, since_ms: u64) -> Result<Vec<SpendRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, session_id, amount, route_id, state, created_ms FROM session_spends \
             WHERE session_id = $1 AND created_ms > $2 ORDER BY created_ms, id",
        )
        .bind(session_id)
        .bind(since_ms as i64)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(spend_of).collect()
    }

    async fn sweeps_due(&self, now_ms: u64, limit: u32) -> Result<Vec<SessionRow>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM sessions WHERE swept_ms IS NULL AND {} \
             AND (status = 'revoked' OR expires_ms <= $1) ORDER BY created_ms LIMIT $2",
            SWEEP.lapsed("$1")
        );
        let rows = sqlx::query(&sql)
            .bind(now_ms as i64)
            .bind(i64::from(limit))
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(session_of).collect()
    }

    async fn lease_sweep(&self, id: &str, now_ms: u64, until_ms: u64) -> Result<bool, StoreError> {
        SWEEP.claim(self, id, None, (now_ms, until_ms)).await
    }

    async fn end_sweep(&self, id: &str, done_ms: Option<u64>) -> Result<(), StoreError> {
        let sql = match done_ms {
            Some(_) => "UPDATE sessions SET swept_ms = $1, sweep_until_ms = 0 WHERE id = $2",
            None => "UPDATE sessions SET swept_ms = $1 WHERE id = $2",
        };
        sqlx::query(sql)
            .bind(done_ms.map(|v| v as i64))
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    async fn route_progress(&self, id: &str) -> Result<Option<RouteProgress>, StoreError> {
        Ok(self.get_route(id).await?.map(|(r, _)| RouteProgress {
            terminal: r.status.is_terminal(),
            source_sent: r.src_tx.is_some(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn session(id: &str) -> SessionRow {
        SessionRow {
            id: id.into(),
            bearer_hash: format!("hash-of-{id}"),
            label: None,
            policy: "{}".into(),
            fund_address: "0x0000000000000000000000000000000000000001".into(),
            refund_to: "0x0000000000000000000000000000000000000002".into(),
            status: "active".into(),
            expires_ms: u64::MAX / 4,
            created_ms: 1,
            revoked_ms: None,
            swept_ms: None,
        }
    }

    /// 300 tasks at once reserve 1–3 units each against a cap of 100:
    /// whatever the interleaving, what is recorded never exceeds the cap,
    /// every refusal says the cap would be exceeded, and the cap is filled
    /// to within the largest ask.
    async fn concurrent_reservations_never_exceed_the_cap(store: Store) {
        let store: Arc<dyn SessionStore> = Arc::new(store);
        store.put_session(&session("ses_race")).await.unwrap();
        let cap = U256::from(100u64);
        let tasks: Vec<_> = (0..300u64)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let ask = SpendAsk {
                        session_id: "ses_race".into(),
                        spend_id: format!("sp_{i}"),
                        amount: U256::from(1 + i % 3),
                        cap,
                        since_ms: 0,
                        now_ms: 1_000 + i,
                    };
                    (ask.amount, store.reserve_spend(&ask).await.unwrap())
                })
            })
            .collect();
        let mut granted = U256::ZERO;
        for t in tasks {
            match t.await.unwrap() {
                (amount, Reservation::Reserved { spent }) => {
                    assert!(spent <= cap, "{spent}");
                    granted += amount;
                }
                (amount, Reservation::OverCap { spent, .. }) => {
                    assert!(spent + amount > cap, "{spent} + {amount} fits under {cap}");
                }
                (_, Reservation::Inactive) => panic!("the session is active"),
            }
        }
        let recorded = store.spends("ses_race", 0).await.unwrap();
        let total = recorded.iter().fold(U256::ZERO, |s, r| s + r.amount);
        assert_eq!(total, granted);
        assert!(total <= cap, "{total} recorded against a cap of {cap}");
        assert!(total + U256::from(3u64) > cap, "only {total} granted");
    }

    async fn sqlite() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/t.db?mode=rwc", dir.path().display());
        (Store::connect(&url).await.unwrap(), dir)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_reservations_never_exceed_the_cap_on_sqlite() {
        let (store, _dir) = sqlite().await;
        concurrent_reservations_never_exceed_the_cap(store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_reservations_never_exceed_the_cap_on_postgres() {
        let url = relay_fixtures::postgres_database();
        let store = Store::connect(&url).await.unwrap();
        concurrent_reservations_never_exceed_the_cap(store).await;
    }

    #[tokio::test]
    async fn revoked_expired_and_released_reservations() {
        let (store, _dir) = sqlite().await;
        let mut s = session("ses_a");
        s.expires_ms = 5_000;
        store.put_session(&s).await.unwrap();
        let ask = |id: &str, now_ms| SpendAsk {
            session_id: "ses_a".into(),
            spend_id: id.into(),
            amount: U256::from(2u64),
            cap: U256::from(3u64),
            since_ms: 0,
            now_ms,
        };
        let r = store.reserve_spend(&ask("sp_1", 1_000)).await.unwrap();
        assert_eq!(
            r,
            Reservation::Reserved {
                spent: U256::from(2u64)
            }
        );
        let over = store.reserve_spend(&ask("sp_2", 1_001)).await.unwrap();
        assert!(matches!(over, Reservation::OverCap { .. }), "{over:?}");
        assert!(
            store.release_spend("sp_1").await.unwrap(),
            "a refused execute"
        );
        let again = store.reserve_spend(&ask("sp_3", 1_002)).await.unwrap();
        assert_eq!(
            again,
            Reservation::Reserved {
                spent: U256::from(2u64)
            }
        );
        store.tag_spend("sp_3", "rt_x", "routed").await.unwrap();
        assert!(
            !store.release_spend("sp_3").await.unwrap(),
            "a route exists"
        );
        let expired = store.reserve_spend(&ask("sp_4", 5_000)).await.unwrap();
        assert_eq!(expired, Reservation::Inactive);
        let revoked = store.revoke_session("ses_a", 1_003).await.unwrap().unwrap();
        assert_eq!(
            (revoked.status.as_str(), revoked.revoked_ms),
            ("revoked", Some(1_003))
        );
        let refused = store.reserve_spend(&ask("sp_5", 1_004)).await.unwrap();
        assert_eq!(refused, Reservation::Inactive);
        let due = store.sweeps_due(1_005, 10).await.unwrap();
        assert_eq!(due.len(), 1);
        assert!(store.lease_sweep("ses_a", 1_005, 2_000).await.unwrap());
        assert!(
            !store.lease_sweep("ses_a", 1_006, 2_000).await.unwrap(),
            "leased"
        );
        store.end_sweep("ses_a", Some(1_007)).await.unwrap();
        assert!(store.sweeps_due(9_000, 10).await.unwrap().is_empty());
        store.revoke_session("ses_a", 9_001).await.unwrap();
        assert_eq!(
            store.sweeps_due(9_002, 10).await.unwrap().len(),
            1,
            "re-armed"
        );
    }
}
