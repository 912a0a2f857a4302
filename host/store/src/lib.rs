//! Persistence. One schema for SQLite (the embedded default, a file in the
//! data directory) and Postgres (the scale-out backend), reached through
//! sqlx's `Any` driver so every query is written once.
//!
//! Each domain has its own module: `operator` (operator state for the
//! registry), `routes` (route rows, the side-effect journal, claims),
//! `outbox` (webhook-ready events), `dest_watch` (destination watches of routes whose upstream
//! has no status API, and the payouts they claimed). The policies every
//! domain shares — leases and idempotency keys — live once in [`durable`].
//! Time comes from the store's injected [`relay_types::Clock`] ([`Store::with_clock`]),
//! never from the system directly.

mod admin;
mod book;
mod decisions;
mod delivery;
mod dest_watch;
mod durability;
pub mod durable;
mod erasure;
pub mod events;
mod hooks;
mod intents;
mod keys;
pub mod limits;
mod migrate;
mod nonces;
mod operator;
mod outbox;
mod primitives;
mod recent;
mod retention;
mod routes;
mod sessions;
mod statement;
mod uptime;

pub use admin::{AuditRow, DeliveryBacklog};
pub use book::BookRow;
pub use dest_watch::{DestClaim, DestWatch};
pub use durable::IdempotencyBegin;
pub use erasure::ErasureRow;
pub use hooks::{AttemptOutcome, AttemptRow, Delivery, HookRow, HookStore, NewDelivery};
pub use keys::{
    KeyRow, KeyStore, KeyUsageRecord, PathCount, UsageWindow, MINUTE_MS as KEY_USAGE_MINUTE_MS,
};
pub use migrate::Migration;

/// A feature's view of the store: `$name` wraps a [`Store`], derefs to it
/// (every core method: the transaction journal, leases, idempotency) and
/// is made from one, so the feature adds its own records' methods in an
/// `impl $name` beside its migrations.
#[macro_export]
macro_rules! store_view {
    ($(#[$doc:meta])* $vis:vis $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        $vis struct $name($crate::Store);

        impl From<$crate::Store> for $name {
            fn from(store: $crate::Store) -> Self {
                $name(store)
            }
        }

        impl std::ops::Deref for $name {
            type Target = $crate::Store;

            fn deref(&self) -> &$crate::Store {
                &self.0
            }
        }
    };
}
pub use outbox::{route_event, OutboxEvent};
pub use primitives::{PrimitiveRow, PrimitiveStore, RunEnd, RunRow};
use relay_types::clock::SharedClock;
pub use routes::route_reads;
pub use routes::{JournalEntry, TxState};
pub use sessions::{Reservation, RouteProgress, SessionRow, SessionStore, SpendAsk, SpendRow};
use sqlx::{any::AnyPoolOptions, AnyPool};
pub use uptime::UptimeSample;

/// Which database is behind the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// SQLite file.
    Sqlite,
    /// Postgres server.
    Postgres,
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL names no supported database.
    #[error("unsupported database url (use sqlite://… or postgres://…)")]
    UnsupportedUrl,
    /// A database error.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// Creating the data directory failed.
    #[error("data directory: {0}")]
    Io(#[from] std::io::Error),
    /// A stored row does not decode.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// A record with this unique id exists already.
    #[error("conflict: {0}")]
    Conflict(String),
}

/// The store handle (cheap to clone).
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    events: events::RouteEvents,
    operator: std::sync::Arc<operator::OperatorCache>,
    durability: durability::Durability,
    clock: SharedClock,
}

impl Store {
    /// Connects to `url` on the system clock and applies pending
    /// migrations.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with_clock(url, relay_types::clock::system()).await
    }

    /// Connects to `url`, reading time from `clock`, and applies pending
    /// migrations.
    pub async fn connect_with_clock(url: &str, clock: SharedClock) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            create_sqlite_parent(url)?;
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(StoreError::UnsupportedUrl);
        };
        let max = if backend == Backend::Sqlite { 4 } else { 16 };
        let sqlite = backend == Backend::Sqlite;
        let pool = AnyPoolOptions::new()
            .max_connections(max)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    // Commits reach the log, not the disk; the store forces
                    // the log where it must ([`durability`]).
                    if sqlite {
                        sqlx::query("PRAGMA synchronous=NORMAL")
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        let listen = (backend == Backend::Postgres).then(|| url.to_string());
        let sqlite_file = (backend == Backend::Sqlite)
            .then(|| sqlite_path(url).map(std::path::Path::to_path_buf))
            .flatten();
        let store = Store {
            pool,
            backend,
            events: events::RouteEvents::new(listen),
            durability: durability::Durability::new(sqlite_file.as_deref()),
            operator: std::sync::Arc::new(operator::OperatorCache::new(sqlite_file)),
            clock,
        };
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode=WAL")
                .execute(&store.pool)
                .await?;
            sqlx::query("PRAGMA busy_timeout=5000")
                .execute(&store.pool)
                .await?;
        }
        migrate::run(&store).await?;
        Ok(store)
    }

    /// Applies a feature's own `migrations` not yet recorded (each
    /// feature's home holds its schema; versions share one number line
    /// with the core's).
    pub async fn migrate(&self, migrations: &[Migration]) -> Result<(), StoreError> {
        migrate::apply(self, migrations).await
    }

    /// The pool.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The backend.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The same store reading time from `clock` (tests advance a
    /// [`relay_types::ManualClock`]).
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// The clock the store reads time from.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// Epoch milliseconds on the store's clock.
    pub(crate) fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Moves row `id` of `table` (a record with `status` and `updated_ms`
    /// columns) from status `from` to `to`; `false` when it was not in
    /// `from` (someone else moved it first).
    pub(crate) async fn move_status(
        &self,
        table: &'static str,
        id: &str,
        from: &str,
        to: &str,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(&format!(
            "UPDATE {table} SET status = $1, updated_ms = $2 WHERE id = $3 AND status = $4"
        ))
        .bind(to)
        .bind(i64::try_from(now_ms).unwrap_or(i64::MAX))
        .bind(id)
        .bind(from)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Claims a row of `table` (with `id`, `state`, `lease_until_ms` and
    /// `created_ms` columns) in one of the `open` states whose lease lapsed
    /// at `now_ms`, holding it until `until_ms`: its id, or `None` when
    /// there is none (another replica won every candidate). A
    /// [`durable::Lease`].
    pub async fn claim_lapsed(
        &self,
        table: &'static str,
        open: &[&str],
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Option<String>, StoreError> {
        let states = open
            .iter()
            .map(|s| format!("'{}'", s.replace('\'', "")))
            .collect::<Vec<_>>()
            .join(", ");
        let open = format!("state IN ({states})");
        durable::Lease::new(table, "lease_until_ms")
            .when(&open)
            .claim_next(self, None, (now_ms, until_ms), "created_ms")
            .await
    }

    /// Holds row `id` of `table` (one with a `lease_until_ms` column) until
    /// `until_ms`; 0 lets any replica claim it.
    pub async fn set_lease(
        &self,
        table: &'static str,
        id: &str,
        until_ms: u64,
    ) -> Result<(), StoreError> {
        durable::Lease::new(table, "lease_until_ms")
            .renew(self, id, None, until_ms)
            .await?;
        Ok(())
    }

    /// Route change notifications ([`events`]).
    pub fn route_events(&self) -> &events::RouteEvents {
        &self.events
    }
}

/// The database file of a SQLite URL (none in memory, whether `:memory:`
/// or a shared `mode=memory` database).
fn sqlite_path(url: &str) -> Option<&std::path::Path> {
    if url.contains("mode=memory") {
        return None;
    }
    let path = url
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:")
        .split('?')
        .next()
        .unwrap_or_default();
    (!path.is_empty() && !path.starts_with(":memory:")).then(|| std::path::Path::new(path))
}

fn create_sqlite_parent(url: &str) -> std::io::Result<()> {
    let Some(path) = sqlite_path(url) else {
        return Ok(());
    };
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => std::fs::create_dir_all(p),
        _ => Ok(()),
    }
}
