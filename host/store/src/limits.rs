//! Shared rate-limit cells (migration 0022): the generic cell rate
//! algorithm (GCRA) in one statement, so replicas on one database count a
//! client once. A cell keeps its theoretical arrival time `tat`; a request
//! at `now` is admitted when `max(tat, now) + period - now <= window` (at
//! most `window / period` requests at once, one more every `period`), and
//! then `tat` becomes `max(tat, now) + period` — the check and the update
//! are one atomic upsert, whichever replica runs it.
//!
//! And caps on live things per caller (migration 0023,
//! [`Store::take_place`]): a caller holds at most `cap` places of a kind
//! at once, each until it lapses — counted and taken under one lock per
//! caller on Postgres (one statement on SQLite), so replicas never hand a
//! caller more than its cap between them.

use sqlx::Row;

use crate::{Backend, Store, StoreError};

/// What one request did to its cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Admitted; the cell's new arrival time, ms.
    Admitted(u64),
    /// Refused; the cell's arrival time, unchanged, ms.
    Refused(u64),
}

impl Store {
    /// Counts one request in cell `key` at `now_ms`, `period_ms` apart
    /// and at most `window_ms` ahead (module docs).
    pub async fn gcra(
        &self,
        key: &str,
        now_ms: u64,
        (period_ms, window_ms): (u64, u64),
    ) -> Result<Cell, StoreError> {
        let max = match self.backend() {
            Backend::Postgres => "GREATEST",
            Backend::Sqlite => "MAX",
        };
        let sql = format!(
            "INSERT INTO rate_limit_cells (k, tat_ms) VALUES ($1, $2 + $3) \
             ON CONFLICT (k) DO UPDATE SET tat_ms = {max}(rate_limit_cells.tat_ms, $2) + $3 \
             WHERE {max}(rate_limit_cells.tat_ms, $2) + $3 - $2 <= $4 \
             RETURNING tat_ms"
        );
        let admitted = sqlx::query(&sql)
            .bind(key)
            .bind(now_ms as i64)
            .bind(period_ms as i64)
            .bind(window_ms as i64)
            .fetch_optional(self.pool())
            .await?;
        if let Some(row) = admitted {
            return Ok(Cell::Admitted(row.try_get::<i64, _>("tat_ms")? as u64));
        }
        let tat: i64 = sqlx::query("SELECT tat_ms FROM rate_limit_cells WHERE k = $1")
            .bind(key)
            .fetch_one(self.pool())
            .await?
            .try_get("tat_ms")?;
        Ok(Cell::Refused(tat as u64))
    }

    /// Drops the cells that are full again at `now_ms` (their arrival
    /// time has passed): a fresh client's. Returns how many.
    pub async fn prune_rate_limits(&self, now_ms: u64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM rate_limit_cells WHERE tat_ms < $1")
            .bind(now_ms as i64)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }
}

/// A caller holds its cap: when its first place lapses, epoch ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full {
    /// When the caller's oldest place lapses.
    pub frees_at: u64,
}

impl Store {
    /// Takes place `id` of `kind` for `caller` until `until_ms`, unless
    /// the caller holds `cap` live places at `now_ms`.
    pub async fn take_place(
        &self,
        (kind, caller, id): (&str, &str, &str),
        (now_ms, until_ms): (u64, u64),
        cap: usize,
    ) -> Result<Result<(), Full>, StoreError> {
        let mut tx = self.pool().begin().await?;
        if self.backend() == Backend::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))::TEXT")
                .bind(format!("{kind}|{caller}"))
                .fetch_one(&mut *tx)
                .await?;
        }
        let taken = sqlx::query(
            "INSERT INTO caller_places (id, kind, caller, until_ms) SELECT $1, $2, $3, $4 \
             WHERE (SELECT COUNT(*) FROM caller_places WHERE kind = $2 AND caller = $3 AND until_ms > $5) < $6",
        )
        .bind(id)
        .bind(kind)
        .bind(caller)
        .bind(until_ms as i64)
        .bind(now_ms as i64)
        .bind(cap as i64)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        let oldest: Option<i64> = match taken {
            true => None,
            false => sqlx::query(
                "SELECT MIN(until_ms) AS m FROM caller_places WHERE kind = $1 AND caller = $2 AND until_ms > $3",
            )
            .bind(kind)
            .bind(caller)
            .bind(now_ms as i64)
            .fetch_one(&mut *tx)
            .await?
            .try_get("m")?,
        };
        sqlx::query("DELETE FROM caller_places WHERE kind = $1 AND caller = $2 AND until_ms <= $3")
            .bind(kind)
            .bind(caller)
            .bind(now_ms as i64)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(match oldest {
            None if taken => Ok(()),
            o => Err(Full {
                frees_at: o.map_or(now_ms, |o| o as u64),
            }),
        })
    }

    /// Keeps place `id` until `until_ms` (the thing it holds is still in
    /// use); a place given back stays gone.
    pub async fn renew_place(&self, id: &str, until_ms: u64) -> Result<(), StoreError> {
        sqlx::query("UPDATE caller_places SET until_ms = $2 WHERE id = $1")
            .bind(id)
            .bind(until_ms as i64)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Drops every place that lapsed by `now_ms`, of every kind and caller
    /// (a caller that never comes back leaves its lapsed places; counts
    /// ignore them, this keeps the table small). Rows another transaction
    /// holds are left for the next prune (never waited for). Returns how
    /// many.
    pub async fn prune_places(&self, now_ms: u64) -> Result<u64, StoreError> {
        let sql = match self.backend() {
            Backend::Postgres => {
                "DELETE FROM caller_places WHERE id IN \
                 (SELECT id FROM caller_places WHERE until_ms <= $1 FOR UPDATE SKIP LOCKED)"
            }
            Backend::Sqlite => "DELETE FROM caller_places WHERE until_ms <= $1",
        };
        let done = sqlx::query(sql)
            .bind(now_ms as i64)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// Marks `id` of `kind` seen until `until_ms`: whether it is the first
    /// sighting (no live mark of it at `now_ms`) — one atomic statement,
    /// so of replicas racing on one id exactly one sees it first. A lapsed
    /// mark counts as unseen. What a replay window keeps (the oblivious
    /// gateway's encapsulated keys); pruned with the places.
    pub async fn first_sight(
        &self,
        (kind, id): (&str, &str),
        (now_ms, until_ms): (u64, u64),
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO caller_places (id, kind, caller, until_ms) VALUES ($1, $2, '', $3) \
             ON CONFLICT (id) DO UPDATE SET until_ms = excluded.until_ms \
             WHERE caller_places.until_ms <= $4",
        )
        .bind(format!("{kind}:{id}"))
        .bind(kind)
        .bind(until_ms as i64)
        .bind(now_ms as i64)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives place `id` back (the thing it held was never made).
    pub async fn drop_place(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM caller_places WHERE id = $1")
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two places, the third refused until the first lapses; a place
    /// given back frees at once; callers and kinds apart.
    async fn two_places(store: Store) {
        let who = ("intent", "10.0.0.1");
        let take = |id: &'static str, now: u64| {
            let store = store.clone();
            async move {
                store
                    .take_place((who.0, who.1, id), (now, now + 1_000), 2)
                    .await
                    .unwrap()
            }
        };
        assert_eq!(take("a", 0).await, Ok(()));
        assert_eq!(take("b", 10).await, Ok(()));
        assert_eq!(take("c", 20).await, Err(Full { frees_at: 1_000 }));
        let other = store
            .take_place(("intent", "10.0.0.2", "d"), (20, 1_020), 2)
            .await
            .unwrap();
        assert_eq!(other, Ok(()));
        store.drop_place("b").await.unwrap();
        assert_eq!(take("e", 30).await, Ok(()));
        assert_eq!(take("f", 1_000).await, Ok(()), "a lapsed at 1000");
        let gone = store.prune_places(1_020).await.unwrap();
        assert!(gone >= 1, "10.0.0.2's lapsed place pruned");
        let many: Vec<_> = (0..10)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .take_place(("intent", "10.0.0.9", &format!("m{i}")), (0, 5_000), 3)
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut ok = 0;
        for m in many {
            ok += usize::from(m.await.unwrap().is_ok());
        }
        assert_eq!(ok, 3, "ten at once: the cap");
    }

    /// Twenty sightings of one id at once: one is first; after it lapses
    /// it is first again; kinds apart.
    async fn seen_once(store: Store) {
        let id = format!("enc-{}", rand_suffix());
        let many: Vec<_> = (0..20)
            .map(|_| {
                let (store, id) = (store.clone(), id.clone());
                tokio::spawn(
                    async move { store.first_sight(("seen", &id), (0, 1_000)).await.unwrap() },
                )
            })
            .collect();
        let mut first = 0;
        for m in many {
            first += usize::from(m.await.unwrap());
        }
        assert_eq!(first, 1, "twenty at once: one first sighting");
        let again = |kind: &'static str, now: u64| {
            let (store, id) = (store.clone(), id.clone());
            async move {
                store
                    .first_sight((kind, &id), (now, now + 1_000))
                    .await
                    .unwrap()
            }
        };
        assert!(!again("seen", 999).await, "still live");
        assert!(again("other", 999).await, "another kind");
        assert!(again("seen", 1_000).await, "lapsed: seen afresh");
    }

    #[tokio::test]
    async fn places_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("p.db").display());
        let store = Store::connect(&url).await.unwrap();
        two_places(store.clone()).await;
        seen_once(store).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn places_on_postgres() {
        let url = relay_fixtures::postgres_database();
        let store = Store::connect(&url).await.unwrap();
        two_places(store.clone()).await;
        seen_once(store).await;
    }

    /// Three at once, the fourth refused until one period passes; cells
    /// are per key; a full cell is pruned.
    async fn three_a_minute(store: Store) {
        let key = format!("quote|ip:{}", rand_suffix());
        let (period, window) = (20_000, 60_000);
        for i in 0..3u64 {
            let c = store.gcra(&key, 1_000, (period, window)).await.unwrap();
            assert_eq!(c, Cell::Admitted(1_000 + period * (i + 1)));
        }
        let refused = store.gcra(&key, 1_000, (period, window)).await.unwrap();
        assert_eq!(refused, Cell::Refused(61_000));
        let other = store
            .gcra(&format!("{key}-b"), 1_000, (period, window))
            .await
            .unwrap();
        assert!(matches!(other, Cell::Admitted(_)));
        let later = store.gcra(&key, 21_000, (period, window)).await.unwrap();
        assert_eq!(later, Cell::Admitted(81_000));
        assert!(store.prune_rate_limits(81_001).await.unwrap() >= 2);
        let fresh = store.gcra(&key, 81_001, (period, window)).await.unwrap();
        assert_eq!(fresh, Cell::Admitted(101_001));
    }

    fn rand_suffix() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    }

    #[tokio::test]
    async fn gcra_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("l.db").display());
        three_a_minute(Store::connect(&url).await.unwrap()).await;
    }

    #[tokio::test]
    async fn gcra_on_postgres() {
        let url = relay_fixtures::postgres_database();
        three_a_minute(Store::connect(&url).await.unwrap()).await;
    }
}
