//! Idempotency keys (`x-idempotency-key`, spec §5.5): one guard for every
//! request that moves funds — execute, the yield-account spend, a session's
//! execute, a route primitive's run. The first request with a key claims
//! it through the table's unique key (so concurrent duplicates, on one
//! replica or several, run once) with the SHA-256 of its raw bytes; a
//! repeat replays the first answer byte for byte, and the same key with
//! other bytes is refused.

use crate::{Store, StoreError};
use sha2::{Digest, Sha256};
use sqlx::Row;
use std::future::Future;

/// The fingerprint of a request: the SHA-256 of its raw bytes, hex.
pub fn fingerprint(request: &[u8]) -> String {
    hex::encode(Sha256::digest(request))
}

/// An idempotency key in its scope: (scope, caller, key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdemKey(String);

impl IdemKey {
    /// A key of the route scope — execute and what runs through it (a
    /// yield-account spend, a primitive's run): the client's key as sent,
    /// the caller being whoever signed the route (stored unprefixed, as
    /// keys always were).
    pub fn route(key: &str) -> Self {
        IdemKey(key.to_string())
    }

    /// `key` of `caller` in `scope` (e.g. `("session", session id)`):
    /// never the same as another caller's or another scope's.
    pub fn scoped(scope: &str, caller: &str, key: &str) -> Self {
        IdemKey(format!("{scope}:{caller}:{key}"))
    }

    /// The key as stored (and as the route it creates records it).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a request carrying an idempotency key should do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotencyBegin {
    /// First time: run it, then [`Idempotency::complete`].
    Fresh,
    /// Seen and finished: replay this response byte for byte.
    Replay {
        /// HTTP status.
        status: u16,
        /// Body.
        body: String,
    },
    /// Seen and still running; `route` is the route it created, if it got
    /// that far. `stale` when the first request is older than the stale
    /// limit and never answered (its process died).
    InFlight {
        /// The route the first request created.
        route: Option<String>,
        /// Whether the first request is presumed dead.
        stale: bool,
    },
    /// Seen with other request bytes.
    Mismatch,
}

/// What [`Idempotency::once`] did.
#[derive(Debug)]
pub enum Once<T, E> {
    /// The key was fresh and the request ran: its answer (stored when
    /// `Ok`; when `Err` the key was given back so the client may retry).
    Ran(Result<T, E>),
    /// The key was seen: what to answer instead (never
    /// [`IdempotencyBegin::Fresh`]).
    Seen(IdempotencyBegin),
}

/// The idempotency guard over the store's `idempotency` table, on the
/// store's injected clock.
#[derive(Clone, Debug)]
pub struct Idempotency {
    store: Store,
    stale_ms: u64,
}

impl Idempotency {
    /// The guard; a first request unanswered after `stale_ms` is presumed
    /// dead (`execution.idempotency_stale_ms`).
    pub fn new(store: Store, stale_ms: u64) -> Self {
        Idempotency { store, stale_ms }
    }

    /// Runs `run` once under `key` for the raw bytes `request`: a fresh key
    /// runs it and stores the `(status, body)` it answers with its value;
    /// a seen key answers what its state says instead.
    pub async fn once<T, E, F, Fut>(
        &self,
        key: &IdemKey,
        request: &[u8],
        run: F,
    ) -> Result<Once<T, E>, StoreError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(u16, String, T), E>>,
    {
        match self.begin(key, request).await? {
            IdempotencyBegin::Fresh => {}
            seen => return Ok(Once::Seen(seen)),
        }
        match run().await {
            Ok((status, body, value)) => {
                if let Err(e) = self.complete(key, status, &body).await {
                    tracing::error!(error = %e, "idempotency response not stored");
                }
                Ok(Once::Ran(Ok(value)))
            }
            Err(e) => {
                // Nothing was persisted: the client may retry with the key.
                if let Err(err) = self.abandon(key).await {
                    tracing::warn!(error = %err, "idempotency key not given back");
                }
                Ok(Once::Ran(Err(e)))
            }
        }
    }

    /// Claims `key` for the raw bytes `request`, or says what to do.
    pub async fn begin(
        &self,
        key: &IdemKey,
        request: &[u8],
    ) -> Result<IdempotencyBegin, StoreError> {
        let fingerprint = fingerprint(request);
        let now = self.store.clock().now_ms();
        let inserted = sqlx::query(
            "INSERT INTO idempotency (key, fingerprint, status_code, response, created_ms) VALUES ($1, $2, NULL, NULL, $3) \
             ON CONFLICT (key) DO NOTHING",
        )
        .bind(key.as_str())
        .bind(&fingerprint)
        .bind(ms(now))
        .execute(self.store.pool())
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(IdempotencyBegin::Fresh);
        }
        self.seen(key, &fingerprint, now).await
    }

    /// What a key claimed before answers at `now`.
    async fn seen(
        &self,
        key: &IdemKey,
        fingerprint: &str,
        now: u64,
    ) -> Result<IdempotencyBegin, StoreError> {
        let row = sqlx::query(
            "SELECT fingerprint, status_code, response, route_id, created_ms FROM idempotency WHERE key = $1",
        )
        .bind(key.as_str())
        .fetch_one(self.store.pool())
        .await?;
        let stored: String = row.try_get("fingerprint")?;
        if stored != fingerprint {
            return Ok(IdempotencyBegin::Mismatch);
        }
        let status: Option<i64> = row.try_get("status_code")?;
        let body: Option<String> = row.try_get("response")?;
        if let (Some(s), Some(body)) = (status, body) {
            return Ok(IdempotencyBegin::Replay {
                status: u16::try_from(s).unwrap_or(200),
                body,
            });
        }
        let route: Option<String> = row.try_get("route_id")?;
        let created: i64 = row.try_get("created_ms")?;
        let stale = now.saturating_sub(u64::try_from(created).unwrap_or(0)) >= self.stale_ms;
        if stale && route.is_none() && self.take_over(key, created, now).await? {
            return Ok(IdempotencyBegin::Fresh);
        }
        Ok(IdempotencyBegin::InFlight { route, stale })
    }

    /// Takes over a key whose dead first request (claimed at `created`)
    /// persisted nothing; whether this request won it.
    async fn take_over(&self, key: &IdemKey, created: i64, now: u64) -> Result<bool, StoreError> {
        let took = sqlx::query(
            "UPDATE idempotency SET created_ms = $1 WHERE key = $2 AND created_ms = $3 AND route_id IS NULL AND response IS NULL",
        )
        .bind(ms(now))
        .bind(key.as_str())
        .bind(created)
        .execute(self.store.pool())
        .await?;
        Ok(took.rows_affected() == 1)
    }

    /// Stores the first response for `key`.
    pub async fn complete(&self, key: &IdemKey, status: u16, body: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE idempotency SET status_code = $1, response = $2 WHERE key = $3 AND response IS NULL")
            .bind(i64::from(status))
            .bind(body)
            .bind(key.as_str())
            .execute(self.store.pool())
            .await?;
        Ok(())
    }

    /// Forgets a key whose request failed before anything happened, so the
    /// client may retry it.
    pub async fn abandon(&self, key: &IdemKey) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM idempotency WHERE key = $1 AND response IS NULL")
            .bind(key.as_str())
            .execute(self.store.pool())
            .await?;
        Ok(())
    }
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
