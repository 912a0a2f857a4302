//! Webhooks and their deliveries (spec §4.5, §6): the [`HookStore`] trait
//! and its sqlx implementation.
//!
//! A hook is a completion hook on one route or an event subscription. Each
//! event a hook must hear becomes one **delivery** row whose id is the
//! logical delivery id (`webhook-id`): created at most once (the id is
//! derived from what it reports, and inserts ignore a duplicate), sent in
//! attempts, each attempt by the one replica holding the row's lease.

use super::{durable::Lease, routes::corrupt, Store, StoreError};
use async_trait::async_trait;
use relay_types::{RouteRecord, RouteStatus};
use sqlx::{any::AnyRow, Row};

/// A delivery attempt's claim: held by `claim_owner` until
/// `claim_until_ms`, on pending deliveries that are due.
const CLAIM: Lease<'static> = Lease::new("deliveries", "claim_until_ms")
    .held_in("claim_owner")
    .when("status = 'pending' AND next_ms <= {now}");

/// One hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookRow {
    /// `wh_…`.
    pub id: String,
    /// `route`, `price` or `balance`.
    pub kind: String,
    /// The route of a completion hook.
    pub route_id: Option<String>,
    /// Where deliveries go.
    pub url: String,
    /// The shared secret deliveries are signed with.
    pub secret: Option<String>,
    /// A subscription's parameters (JSON).
    pub spec: Option<String>,
    /// A subscription watcher's last observation.
    pub watch_state: Option<String>,
    /// Completion hooks: `pending`, `delivered`, `failed`; subscriptions:
    /// `active`, `cancelled`.
    pub status: String,
    /// Epoch ms.
    pub created_ms: u64,
    /// Epoch ms.
    pub updated_ms: u64,
}

/// A delivery to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewDelivery {
    /// The logical delivery id (`webhook-id`).
    pub id: String,
    /// The hook.
    pub hook_id: String,
    /// The event name.
    pub event: String,
    /// The exact body every attempt sends.
    pub payload: String,
    /// Epoch ms.
    pub now_ms: u64,
}

/// One delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The logical delivery id.
    pub id: String,
    /// The hook.
    pub hook_id: String,
    /// The event name.
    pub event: String,
    /// The body.
    pub payload: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    /// Attempts made.
    pub attempts: u32,
    /// When the next attempt is due (epoch ms).
    pub next_ms: u64,
    /// The last attempt's HTTP status.
    pub last_status: Option<u16>,
    /// The last attempt's error.
    pub last_error: Option<String>,
    /// When the last attempt was made.
    pub last_ms: Option<u64>,
    /// Created (epoch ms).
    pub created_ms: u64,
    /// Delivered or given up (epoch ms).
    pub done_ms: Option<u64>,
}

/// One attempt, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRow {
    /// 1-based.
    pub attempt: u32,
    /// Epoch ms.
    pub at_ms: u64,
    /// The receiver's HTTP status.
    pub status_code: Option<u16>,
    /// Why it failed.
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: u64,
    /// Which replica sent it.
    pub replica: String,
}

/// What became of an attempt, and what comes next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptOutcome {
    /// The receiver answered 2xx.
    pub ok: bool,
    /// Its HTTP status.
    pub status: Option<u16>,
    /// Why it failed.
    pub error: Option<String>,
    /// When it was made (epoch ms).
    pub at_ms: u64,
    /// How long it took.
    pub duration_ms: u64,
    /// When to try again; `None` after a failure: give up (`failed`).
    pub retry_at_ms: Option<u64>,
}

/// Hook persistence (module docs).
#[async_trait]
pub trait HookStore: Send + Sync + std::fmt::Debug {
    /// Records a new hook.
    async fn put_hook(&self, h: &HookRow) -> Result<(), StoreError>;
    /// A hook by id.
    async fn hook(&self, id: &str) -> Result<Option<HookRow>, StoreError>;
    /// How many hooks a route has.
    async fn hooks_on_route(&self, route_id: &str) -> Result<u64, StoreError>;
    /// Takes place `id` of `kind` for `caller` until `until_ms`, unless it
    /// holds `cap` live places ([`Store::take_place`]).
    async fn take_place(
        &self,
        who: (&str, &str, &str),
        window: (u64, u64),
        cap: usize,
    ) -> Result<Result<(), crate::limits::Full>, StoreError>;
    /// Gives place `id` back ([`Store::drop_place`]).
    async fn drop_place(&self, id: &str) -> Result<(), StoreError>;
    /// Sets a hook's status if it is `from`; whether it was.
    async fn move_hook(
        &self,
        id: &str,
        from: &str,
        to: &str,
        now_ms: u64,
    ) -> Result<bool, StoreError>;
    /// A hook's deliveries, newest first (at most `limit`).
    async fn deliveries_of(&self, hook_id: &str, limit: u32) -> Result<Vec<Delivery>, StoreError>;
    /// A delivery's attempts, oldest first.
    async fn attempts_of(&self, delivery_id: &str) -> Result<Vec<AttemptRow>, StoreError>;
    /// Creates the delivery of every pending completion hook whose live
    /// route reached DONE or FAILED (one per hook, ever); how many.
    async fn arm_route_hooks(&self, now_ms: u64) -> Result<u64, StoreError>;
    /// Pending completion hooks on sandbox routes with no delivery yet.
    async fn unarmed_sandbox_hooks(&self) -> Result<Vec<HookRow>, StoreError>;
    /// Creates a delivery unless one with its id exists; whether created.
    async fn add_delivery(&self, d: &NewDelivery) -> Result<bool, StoreError>;
    /// Active subscriptions of `kind`.
    async fn active_subscriptions(&self, kind: &str) -> Result<Vec<HookRow>, StoreError>;
    /// Moves a subscription's watch state from `old` to `new` and, in the
    /// same transaction, creates `delivery`; `false` (nothing written) when
    /// another replica moved it first.
    async fn watch_transition(
        &self,
        hook_id: &str,
        old: Option<&str>,
        new: &str,
        delivery: Option<&NewDelivery>,
    ) -> Result<bool, StoreError>;
    /// Ids of pending deliveries due by `now_ms` and not leased.
    async fn due_deliveries(&self, now_ms: u64, limit: u32) -> Result<Vec<String>, StoreError>;
    /// Takes the lease on a due delivery for `owner` until `until_ms`;
    /// the delivery and its hook, or `None` when another replica has it or
    /// it is no longer due.
    async fn claim_delivery(
        &self,
        id: &str,
        owner: &str,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Option<(Delivery, HookRow)>, StoreError>;
    /// Records an attempt made under `owner`'s lease and releases it;
    /// `false` (nothing written) when the lease was lost.
    async fn finish_attempt(
        &self,
        id: &str,
        owner: &str,
        outcome: &AttemptOutcome,
    ) -> Result<bool, StoreError>;
}

const HOOK_COLS: &str =
    "id, kind, route_id, url, secret, spec, watch_state, status, created_ms, updated_ms";
const DELIVERY_COLS: &str = "id, hook_id, event, payload, status, attempts, next_ms, last_status, last_error, last_ms, created_ms, done_ms";

fn hook_row(r: &AnyRow) -> Result<HookRow, StoreError> {
    Ok(HookRow {
        id: r.try_get("id")?,
        kind: r.try_get("kind")?,
        route_id: r.try_get("route_id")?,
        url: r.try_get("url")?,
        secret: r.try_get("secret")?,
        spec: r.try_get("spec")?,
        watch_state: r.try_get("watch_state")?,
        status: r.try_get("status")?,
        created_ms: r.try_get::<i64, _>("created_ms")? as u64,
        updated_ms: r.try_get::<i64, _>("updated_ms")? as u64,
    })
}

fn delivery_row(r: &AnyRow) -> Result<Delivery, StoreError> {
    Ok(Delivery {
        id: r.try_get("id")?,
        hook_id: r.try_get("hook_id")?,
        event: r.try_get("event")?,
        payload: r.try_get("payload")?,
        status: r.try_get("status")?,
        attempts: r.try_get::<i64, _>("attempts")? as u32,
        next_ms: r.try_get::<i64, _>("next_ms")? as u64,
        last_status: r
            .try_get::<Option<i64>, _>("last_status")?
            .map(|s| s as u16),
        last_error: r.try_get("last_error")?,
        last_ms: r.try_get::<Option<i64>, _>("last_ms")?.map(|s| s as u64),
        created_ms: r.try_get::<i64, _>("created_ms")? as u64,
        done_ms: r.try_get::<Option<i64>, _>("done_ms")?.map(|s| s as u64),
    })
}

/// The completion payload of a terminal live route (spec §6.1).
fn completion(hook_id: &str, r: &RouteRecord, ts: u64, now_ms: u64) -> NewDelivery {
    let event = if r.status == RouteStatus::Done {
        "done"
    } else {
        "failed"
    };
    let payload = super::outbox::route_event(r, event, ts, false);
    NewDelivery {
        id: format!("msg_{}", hook_id.trim_start_matches("wh_")),
        hook_id: hook_id.to_string(),
        event: event.into(),
        payload: payload.to_string(),
        now_ms,
    }
}

async fn insert_delivery<'c, E>(e: E, d: &NewDelivery) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let done = sqlx::query(
        "INSERT INTO deliveries (id, hook_id, event, payload, status, attempts, next_ms, claim_until_ms, created_ms) \
         VALUES ($1, $2, $3, $4, 'pending', 0, $5, 0, $5) ON CONFLICT (id) DO NOTHING",
    )
    .bind(&d.id)
    .bind(&d.hook_id)
    .bind(&d.event)
    .bind(&d.payload)
    .bind(d.now_ms as i64)
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

#[async_trait]
impl HookStore for Store {
    async fn put_hook(&self, h: &HookRow) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO hooks ({HOOK_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ))
        .bind(&h.id)
        .bind(&h.kind)
        .bind(&h.route_id)
        .bind(&h.url)
        .bind(&h.secret)
        .bind(&h.spec)
        .bind(&h.watch_state)
        .bind(&h.status)
        .bind(h.created_ms as i64)
        .bind(h.updated_ms as i64)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    async fn hook(&self, id: &str) -> Result<Option<HookRow>, StoreError> {
        let row = sqlx::query(&format!("SELECT {HOOK_COLS} FROM hooks WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(hook_row).transpose()
    }

    async fn take_place(
        &self,
        who: (&str, &str, &str),
        window: (u64, u64),
        cap: usize,
    ) -> Result<Result<(), crate::limits::Full>, StoreError> {
        Store::take_place(self, who, window, cap).await
    }

    async fn drop_place(&self, id: &str) -> Result<(), StoreError> {
        Store::drop_place(self, id).await
    }

    async fn hooks_on_route(&self, route_id: &str) -> Result<u64, StoreError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM hooks WHERE route_id = $1")
            .bind(route_id)
            .fetch_one(self.pool())
            .await?;
        Ok(n as u64)
    }

    async fn move_hook(
        &self,
        id: &str,
        from: &str,
        to: &str,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        self.move_status("hooks", id, from, to, now_ms).await
    }

    async fn deliveries_of(&self, hook_id: &str, limit: u32) -> Result<Vec<Delivery>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {DELIVERY_COLS} FROM deliveries WHERE hook_id = $1 ORDER BY created_ms DESC, id DESC LIMIT $2"
        ))
        .bind(hook_id)
        .bind(limit as i64)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(delivery_row).collect()
    }

    async fn attempts_of(&self, delivery_id: &str) -> Result<Vec<AttemptRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT attempt, at_ms, status_code, error, duration_ms, replica FROM delivery_attempts \
             WHERE delivery_id = $1 ORDER BY attempt",
        )
        .bind(delivery_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(AttemptRow {
                    attempt: r.try_get::<i64, _>("attempt")? as u32,
                    at_ms: r.try_get::<i64, _>("at_ms")? as u64,
                    status_code: r
                        .try_get::<Option<i64>, _>("status_code")?
                        .map(|s| s as u16),
                    error: r.try_get("error")?,
                    duration_ms: r.try_get::<i64, _>("duration_ms")? as u64,
                    replica: r.try_get("replica")?,
                })
            })
            .collect()
    }

    async fn arm_route_hooks(&self, now_ms: u64) -> Result<u64, StoreError> {
        let rows = sqlx::query(
            "SELECT h.id AS hook_id, r.body AS body, r.updated_ms AS ts FROM hooks h \
             JOIN routes r ON r.id = h.route_id \
             WHERE h.kind = 'route' AND h.status = 'pending' AND r.terminal = 1 \
             AND r.status IN ('DONE', 'FAILED') \
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.hook_id = h.id) LIMIT 500",
        )
        .fetch_all(self.pool())
        .await?;
        let mut armed = 0;
        for row in rows {
            let hook: String = row.try_get("hook_id")?;
            let body: String = row.try_get("body")?;
            let ts: i64 = row.try_get("ts")?;
            let route: RouteRecord = serde_json::from_str(&body).map_err(corrupt)?;
            let d = completion(&hook, &route, ts as u64, now_ms);
            armed += insert_delivery(self.pool(), &d).await? as u64;
        }
        Ok(armed)
    }

    async fn unarmed_sandbox_hooks(&self) -> Result<Vec<HookRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {HOOK_COLS} FROM hooks h WHERE kind = 'route' AND status = 'pending' \
             AND route_id LIKE 'sbx_%' AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.hook_id = h.id) LIMIT 500"
        ))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(hook_row).collect()
    }

    async fn add_delivery(&self, d: &NewDelivery) -> Result<bool, StoreError> {
        insert_delivery(self.pool(), d).await
    }

    async fn active_subscriptions(&self, kind: &str) -> Result<Vec<HookRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {HOOK_COLS} FROM hooks WHERE kind = $1 AND status = 'active' ORDER BY created_ms"
        ))
        .bind(kind)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(hook_row).collect()
    }

    async fn watch_transition(
        &self,
        hook_id: &str,
        old: Option<&str>,
        new: &str,
        delivery: Option<&NewDelivery>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let moved = match old {
            Some(old) => sqlx::query(
                "UPDATE hooks SET watch_state = $1 WHERE id = $2 AND status = 'active' AND watch_state = $3",
            )
            .bind(new)
            .bind(hook_id)
            .bind(old),
            None => sqlx::query(
                "UPDATE hooks SET watch_state = $1 WHERE id = $2 AND status = 'active' AND watch_state IS NULL",
            )
            .bind(new)
            .bind(hook_id),
        }
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() != 1 {
            return Ok(false);
        }
        if let Some(d) = delivery {
            insert_delivery(&mut *tx, d).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn due_deliveries(&self, now_ms: u64, limit: u32) -> Result<Vec<String>, StoreError> {
        CLAIM.lapsed_ids(self, now_ms, "next_ms", limit).await
    }

    async fn claim_delivery(
        &self,
        id: &str,
        owner: &str,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Option<(Delivery, HookRow)>, StoreError> {
        // One conditional UPDATE: on Postgres a concurrent claimer re-checks
        // the condition on the row it waited for, so only one wins.
        if !CLAIM
            .claim(self, id, Some(owner), (now_ms, until_ms))
            .await?
        {
            return Ok(None);
        }
        let row = sqlx::query(&format!(
            "SELECT {DELIVERY_COLS} FROM deliveries WHERE id = $1"
        ))
        .bind(id)
        .fetch_one(self.pool())
        .await?;
        let d = delivery_row(&row)?;
        let hook = self
            .hook(&d.hook_id)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("delivery {id} has no hook")))?;
        Ok(Some((d, hook)))
    }

    async fn finish_attempt(
        &self,
        id: &str,
        owner: &str,
        o: &AttemptOutcome,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let (status, next, done) = match (o.ok, o.retry_at_ms) {
            (true, _) => ("delivered", o.at_ms, Some(o.at_ms as i64)),
            (false, Some(at)) => ("pending", at, None),
            (false, None) => ("failed", o.at_ms, Some(o.at_ms as i64)),
        };
        let moved = sqlx::query(
            "UPDATE deliveries SET status = $1, attempts = attempts + 1, next_ms = $2, last_status = $3, \
             last_error = $4, last_ms = $5, done_ms = $6, claim_owner = NULL, claim_until_ms = 0 \
             WHERE id = $7 AND claim_owner = $8 AND status = 'pending'",
        )
        .bind(status)
        .bind(next as i64)
        .bind(o.status.map(i64::from))
        .bind(&o.error)
        .bind(o.at_ms as i64)
        .bind(done)
        .bind(id)
        .bind(owner)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() != 1 {
            return Ok(false);
        }
        let (attempt,): (i64,) = sqlx::query_as("SELECT attempts FROM deliveries WHERE id = $1")
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO delivery_attempts (delivery_id, attempt, at_ms, status_code, error, duration_ms, replica) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id)
        .bind(attempt)
        .bind(o.at_ms as i64)
        .bind(o.status.map(i64::from))
        .bind(&o.error)
        .bind(o.duration_ms as i64)
        .bind(owner)
        .execute(&mut *tx)
        .await?;
        if status != "pending" {
            // A completion hook ends with its one delivery.
            sqlx::query(
                "UPDATE hooks SET status = $1, updated_ms = $2 WHERE id = \
                 (SELECT hook_id FROM deliveries WHERE id = $3) AND kind = 'route' AND status = 'pending'",
            )
            .bind(status)
            .bind(o.at_ms as i64)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}
