//! Route rows, the side-effect journal, and route claims.
//!
//! Every state change writes the route row and its outbox event in one
//! transaction, guarded by the row's version (optimistic concurrency), so two
//! replicas can never both advance the same route from the same state.
//! Claims are leases with expiry: a replica that dies releases its routes
//! when the lease runs out.

use super::{durable::Lease, Backend, Store, StoreError};
use relay_types::route::{RouteRecord, RouteStatus};
use sqlx::{Any, Row, Transaction};

/// A route's claim: held by `claim_owner` until `claim_until_ms`, on
/// routes not yet terminal.
const CLAIM: Lease<'static> = Lease::new("routes", "claim_until_ms")
    .held_in("claim_owner")
    .when("terminal = 0");

/// A side effect's journal state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxState {
    /// Signed with a nonce, not yet known to be broadcast.
    Planned,
    /// Broadcast; hash known.
    Sent,
    /// Mined successfully.
    Mined,
    /// Mined and reverted, or dropped.
    Failed,
}

impl TxState {
    /// As the journal stores it (`planned`, `sent`, `mined`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            TxState::Planned => "planned",
            TxState::Sent => "sent",
            TxState::Mined => "mined",
            TxState::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "sent" => TxState::Sent,
            "mined" => TxState::Mined,
            "failed" => TxState::Failed,
            _ => TxState::Planned,
        }
    }
}

/// One journaled side effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalEntry {
    /// Route.
    pub route_id: String,
    /// Plan step index.
    pub step: i64,
    /// Attempt (replacements bump it).
    pub attempt: i64,
    /// Chain.
    pub chain: String,
    /// Nonce, once allocated.
    pub nonce: Option<i64>,
    /// What was (to be) sent: signed raw tx or call description.
    pub payload: String,
    /// Transaction hash, once known.
    pub tx_hash: Option<String>,
    /// State.
    pub state: TxState,
    /// The relayer key that signed it (lower-case address; `None` in
    /// entries journaled before the key pool: the relayer key's).
    pub signer: Option<String>,
}

pub(crate) fn corrupt(e: serde_json::Error) -> StoreError {
    StoreError::Corrupt(e.to_string())
}

/// Routes read by id in this process, by any store (see [`route_reads`]).
static ROUTE_READS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many routes this process has read by id ([`Store::get_route`]) so
/// far: what a route stream costs the store (the `stream_fanout` bench
/// checks that idle streams read nothing).
pub fn route_reads() -> u64 {
    ROUTE_READS.load(std::sync::atomic::Ordering::Relaxed)
}

impl Store {
    /// Inserts a new route with its `created` event.
    pub async fn insert_route(&self, r: &RouteRecord) -> Result<(), StoreError> {
        self.insert_route_for_key(r, None).await
    }

    /// Inserts a new route and, in the same transaction, records it as the
    /// route of idempotency key `key`.
    pub async fn insert_route_for_key(
        &self,
        r: &RouteRecord,
        key: Option<&str>,
    ) -> Result<(), StoreError> {
        if self.insert(r, key, None).await? {
            Ok(())
        } else {
            Err(StoreError::Conflict(format!("route {} exists", r.id)))
        }
    }

    /// Claims route id `r.id` atomically: inserts the route (recording it
    /// as idempotency key `key`'s) and answers `true`, or — when a route
    /// with that id exists already (a concurrent copy of the same signed
    /// request won the claim) — inserts nothing, points `key` at the
    /// existing route, and answers `false`. Never a unique-key error.
    pub async fn insert_route_once(
        &self,
        r: &RouteRecord,
        key: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.insert(r, key, None).await
    }

    /// Inserts a new route already leased to `owner` for `lease_ms`: no
    /// other replica's resume tick can take it between the insert and a
    /// claim.
    pub async fn insert_claimed_route(
        &self,
        r: &RouteRecord,
        owner: &str,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        if self.insert(r, None, Some((owner, lease_ms))).await? {
            Ok(())
        } else {
            Err(StoreError::Conflict(format!("route {} exists", r.id)))
        }
    }

    /// Inserts `r` unless its id exists; whether it did.
    async fn insert(
        &self,
        r: &RouteRecord,
        key: Option<&str>,
        claim: Option<(&str, u64)>,
    ) -> Result<bool, StoreError> {
        let body = serde_json::to_string(r).map_err(corrupt)?;
        let now = self.now_ms() as i64;
        let (owner, until) = match claim {
            Some((owner, lease_ms)) => (Some(owner), now + lease_ms as i64),
            None => (None, 0),
        };
        let mut tx = self.pool().begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO routes (id, status, version, body, terminal, claim_owner, claim_until_ms, created_ms, updated_ms) \
             VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $7) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&r.id)
        .bind(r.status.as_str())
        .bind(&body)
        .bind(r.status.is_terminal() as i64)
        .bind(owner)
        .bind(until)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if inserted {
            super::outbox::append(&mut tx, (r, 1), "created", now as u64).await?;
        }
        if let Some(key) = key {
            sqlx::query("UPDATE idempotency SET route_id = $1 WHERE key = $2")
                .bind(&r.id)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        if !inserted {
            tx.commit().await?;
            return Ok(false);
        }
        self.announce(&mut tx, &r.id).await?;
        tx.commit().await?;
        // Its id is about to be answered (see [`super::durability`]).
        self.durability.flush().await?;
        self.events.publish(&r.id);
        Ok(true)
    }

    /// On Postgres, tells the other replicas at commit that `route`
    /// changed ([`super::events`]).
    async fn announce(&self, tx: &mut Transaction<'_, Any>, route: &str) -> Result<(), StoreError> {
        if self.backend == Backend::Postgres {
            // (a void column would not decode through the Any driver)
            sqlx::query("SELECT count(*) FROM (SELECT pg_notify($1, $2)) AS n")
                .bind(super::events::CHANNEL)
                .bind(self.events.payload(route))
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }

    /// Writes `r` if the stored version is still `version`; returns the new
    /// version, or `None` when someone else advanced the route first. The
    /// state change and its outbox event commit together.
    pub async fn update_route(
        &self,
        r: &RouteRecord,
        version: i64,
        event: &str,
    ) -> Result<Option<i64>, StoreError> {
        let body = serde_json::to_string(r).map_err(corrupt)?;
        let now = self.now_ms();
        let mut tx = self.pool().begin().await?;
        let done = sqlx::query(
            "UPDATE routes SET status = $1, body = $2, terminal = $3, version = version + 1, updated_ms = $4 \
             WHERE id = $5 AND version = $6",
        )
        .bind(r.status.as_str())
        .bind(&body)
        .bind(r.status.is_terminal() as i64)
        .bind(now as i64)
        .bind(&r.id)
        .bind(version)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        super::outbox::append(&mut tx, (r, version + 1), event, now).await?;
        self.announce(&mut tx, &r.id).await?;
        tx.commit().await?;
        self.events.publish(&r.id);
        Ok(Some(version + 1))
    }

    /// A route and its version (counted in [`route_reads`]).
    pub async fn get_route(&self, id: &str) -> Result<Option<(RouteRecord, i64)>, StoreError> {
        ROUTE_READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let row = sqlx::query("SELECT body, version FROM routes WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| {
            let body: String = r.try_get("body")?;
            let version: i64 = r.try_get("version")?;
            Ok((serde_json::from_str(&body).map_err(corrupt)?, version))
        })
        .transpose()
    }

    /// Ids of routes that are not terminal and not claimed by a live lease.
    pub async fn open_routes(&self) -> Result<Vec<String>, StoreError> {
        CLAIM
            .lapsed_ids(self, self.now_ms(), "created_ms", u32::MAX)
            .await
    }

    /// Takes (or renews) the lease on a route for `owner`; `false` when
    /// another live owner holds it. Atomic on both backends: one UPDATE.
    pub async fn claim_route(
        &self,
        id: &str,
        owner: &str,
        lease_ms: u64,
    ) -> Result<bool, StoreError> {
        let now = self.now_ms();
        CLAIM
            .acquire(self, id, owner, (now, now.saturating_add(lease_ms)))
            .await
    }

    /// Releases a lease held by `owner`.
    pub async fn release_route(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        CLAIM.release(self, id, Some(owner)).await?;
        Ok(())
    }

    /// Journals a side effect before it happens (or updates it after); a
    /// planned one is on the disk when this returns.
    ///
    /// A journal slot (route, step, attempt) holds one transaction: an
    /// entry for a slot that already names another transaction is refused
    /// ([`StoreError::Conflict`]) — two executors that both planned a step
    /// (one lost its lease while it ran) never both record, so only the
    /// one journaled is ever broadcast.
    pub async fn journal(&self, e: &JournalEntry) -> Result<(), StoreError> {
        let written = sqlx::query(
            "INSERT INTO tx_journal (route_id, step, attempt, chain, nonce, payload, tx_hash, state, updated_ms, signer) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (route_id, step, attempt) DO UPDATE SET nonce = excluded.nonce, payload = excluded.payload, \
             tx_hash = excluded.tx_hash, state = excluded.state, updated_ms = excluded.updated_ms, signer = excluded.signer \
             WHERE tx_journal.tx_hash IS NULL OR tx_journal.tx_hash = excluded.tx_hash",
        )
        .bind(&e.route_id)
        .bind(e.step)
        .bind(e.attempt)
        .bind(&e.chain)
        .bind(e.nonce)
        .bind(&e.payload)
        .bind(&e.tx_hash)
        .bind(e.state.as_str())
        .bind(self.now_ms() as i64)
        .bind(e.signer.as_deref().map(str::to_ascii_lowercase))
        .execute(self.pool())
        .await?;
        if written.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!(
                "journal slot {} step {} attempt {} holds another transaction",
                e.route_id, e.step, e.attempt
            )));
        }
        if e.state == TxState::Planned {
            // About to be broadcast (see [`super::durability`]).
            self.durability.flush().await?;
        }
        Ok(())
    }

    /// Whether `tx_hash` (`0x…`, any case) is a transaction the relayer
    /// itself journaled (a pull, a settlement, a refund, a router call …):
    /// evidence a caller brings is never one of these.
    pub async fn journaled_tx(&self, tx_hash: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT 1 AS one FROM tx_journal WHERE lower(tx_hash) = $1 LIMIT 1")
            .bind(tx_hash.to_ascii_lowercase())
            .fetch_optional(self.pool())
            .await?;
        Ok(row.is_some())
    }

    /// The journal of a route, in step and attempt order.
    pub async fn journal_of(&self, route_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT route_id, step, attempt, chain, nonce, payload, tx_hash, state, signer FROM tx_journal \
             WHERE route_id = $1 ORDER BY step, attempt",
        )
        .bind(route_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(JournalEntry {
                    route_id: r.try_get("route_id")?,
                    step: r.try_get("step")?,
                    attempt: r.try_get("attempt")?,
                    chain: r.try_get("chain")?,
                    nonce: r.try_get("nonce")?,
                    payload: r.try_get("payload")?,
                    tx_hash: r.try_get("tx_hash")?,
                    state: TxState::parse(&r.try_get::<String, _>("state")?),
                    signer: r.try_get("signer")?,
                })
            })
            .collect()
    }

    /// Counts routes by status (for operators and tests).
    pub async fn count_routes(&self, status: RouteStatus) -> Result<i64, StoreError> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM routes WHERE status = $1")
            .bind(status.as_str())
            .fetch_one(self.pool())
            .await?;
        Ok(row.try_get("n")?)
    }
}
