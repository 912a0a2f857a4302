//! Schema migrations, embedded in the binary and applied in order at
//! connect. On Postgres an advisory lock makes concurrent replicas apply
//! them once.

use super::{Backend, Store, StoreError};

/// One schema change: its version (one number line across the core and
/// every feature) and its SQL.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    /// Its version; applied once, in order.
    pub version: i64,
    /// Its statements, `;`-separated.
    pub sql: &'static str,
}

/// The core's migrations, in order (a feature brings its own:
/// [`Store::migrate`]).
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: include_str!("../migrations/0001_operator_state.sql"),
    },
    Migration {
        version: 2,
        sql: include_str!("../migrations/0002_routes.sql"),
    },
    Migration {
        version: 3,
        sql: include_str!("../migrations/0003_nonces.sql"),
    },
    Migration {
        version: 4,
        sql: include_str!("../migrations/0004_idempotency_route.sql"),
    },
    Migration {
        version: 5,
        sql: include_str!("../migrations/0005_intents.sql"),
    },
    Migration {
        version: 6,
        sql: include_str!("../migrations/0006_keys.sql"),
    },
    Migration {
        version: 7,
        sql: include_str!("../migrations/0007_sessions.sql"),
    },
    Migration {
        version: 8,
        sql: include_str!("../migrations/0008_hooks.sql"),
    },
    Migration {
        version: 9,
        sql: include_str!("../migrations/0009_dest_watch.sql"),
    },
    Migration {
        version: 10,
        sql: include_str!("../migrations/0010_primitives.sql"),
    },
    Migration {
        version: 11,
        sql: include_str!("../migrations/0011_operator_audit.sql"),
    },
    Migration {
        version: 13,
        sql: include_str!("../migrations/0013_route_decisions.sql"),
    },
    Migration {
        version: 14,
        sql: include_str!("../migrations/0014_uptime_samples.sql"),
    },
    Migration {
        version: 17,
        sql: include_str!("../migrations/0017_erasure_and_proofs.sql"),
    },
    Migration {
        version: 22,
        sql: include_str!("../migrations/0022_rate_limits.sql"),
    },
    Migration {
        version: 23,
        sql: include_str!("../migrations/0023_caller_places.sql"),
    },
    Migration {
        version: 24,
        sql: include_str!("../migrations/0024_book_answers.sql"),
    },
    Migration {
        version: 25,
        sql: include_str!("../migrations/0025_journal_hash.sql"),
    },
    Migration {
        version: 28,
        sql: include_str!("../migrations/0028_journal_signer.sql"),
    },
];

/// Applies every core migration not yet recorded.
pub async fn run(store: &Store) -> Result<(), StoreError> {
    apply(store, MIGRATIONS).await
}

/// Applies every one of `migrations` not yet recorded, in one transaction
/// (on Postgres under an advisory lock, so concurrent replicas apply them
/// once).
pub async fn apply(store: &Store, migrations: &[Migration]) -> Result<(), StoreError> {
    const TABLE: &str = "CREATE TABLE IF NOT EXISTS relay_migrations (version BIGINT PRIMARY KEY, applied_ms BIGINT NOT NULL)";
    let sqlite = store.backend() == Backend::Sqlite;
    if sqlite {
        sqlx::query(TABLE).execute(store.pool()).await?;
    }
    let mut tx = store.pool().begin().await?;
    if sqlite {
        // Take the write lock first, waiting on the busy timeout: a
        // deferred transaction that reads first and writes later fails at
        // once ("database is locked") when another connection wrote in
        // between, as a host's jobs do while its features migrate at start.
        sqlx::query("DELETE FROM relay_migrations WHERE version < 0")
            .execute(&mut *tx)
            .await?;
    } else {
        sqlx::query("SELECT pg_advisory_xact_lock(7265)")
            .execute(&mut *tx)
            .await?;
        sqlx::query(TABLE).execute(&mut *tx).await?;
    }
    for Migration { version, sql } in migrations {
        let done: Option<(i64,)> =
            sqlx::query_as("SELECT version FROM relay_migrations WHERE version = $1")
                .bind(*version)
                .fetch_optional(&mut *tx)
                .await?;
        if done.is_some() {
            continue;
        }
        let sql = without_comments(sql);
        for stmt in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            sqlx::query(stmt).execute(&mut *tx).await?;
        }
        sqlx::query("INSERT INTO relay_migrations (version, applied_ms) VALUES ($1, $2)")
            .bind(*version)
            .bind(store.now_ms() as i64)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// `sql` without its `--` line comments, so a `;` in a comment never
/// splits a statement (the migrations hold no `--` inside string literals).
fn without_comments(sql: &str) -> String {
    sql.lines()
        .map(|l| l.split_once("--").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A feature migrating at start while the host's jobs write: every
    /// apply waits for the write lock instead of failing "database is
    /// locked", and the migration runs once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn migrations_beside_a_busy_writer_apply_once_without_a_lock_error() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("m.db").display());
        let store = Store::connect(&url).await.unwrap();
        sqlx::query("CREATE TABLE busy (n BIGINT)")
            .execute(store.pool())
            .await
            .unwrap();
        let writer = {
            let store = store.clone();
            tokio::spawn(async move {
                for n in 0..300i64 {
                    sqlx::query("INSERT INTO busy (n) VALUES ($1)")
                        .bind(n)
                        .execute(store.pool())
                        .await
                        .unwrap();
                }
            })
        };
        const FEATURE: &[Migration] = &[Migration {
            version: 9_001,
            sql: "CREATE TABLE feature_rows (id BIGINT PRIMARY KEY)",
        }];
        let applies: Vec<_> = (0..20)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { store.migrate(FEATURE).await })
            })
            .collect();
        for a in applies {
            a.await.unwrap().expect("no lock error");
        }
        writer.await.unwrap();
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM relay_migrations WHERE version = 9001")
                .fetch_one(store.pool())
                .await
                .unwrap();
        assert_eq!(n, 1);
    }
}
