//! Schema migrations, embedded in the binary and applied in order at
//! connect. On Postgres an advisory lock makes concurrent replicas apply
//! them once.

use super::{Backend, Store, StoreError};

/// `(version, sql)` in order.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../migrations/0001_operator_state.sql")),
    (2, include_str!("../migrations/0002_routes.sql")),
    (3, include_str!("../migrations/0003_nonces.sql")),
    (4, include_str!("../migrations/0004_idempotency_route.sql")),
    (5, include_str!("../migrations/0005_intents.sql")),
    (6, include_str!("../migrations/0006_keys.sql")),
    (7, include_str!("../migrations/0007_sessions.sql")),
    (8, include_str!("../migrations/0008_hooks.sql")),
    (9, include_str!("../migrations/0009_dest_watch.sql")),
    (10, include_str!("../migrations/0010_primitives.sql")),
    (11, include_str!("../migrations/0011_operator_audit.sql")),
    (12, include_str!("../migrations/0012_sponsorships.sql")),
    (13, include_str!("../migrations/0013_route_decisions.sql")),
    (14, include_str!("../migrations/0014_uptime_samples.sql")),
    (15, include_str!("../migrations/0015_ledger.sql")),
    (16, include_str!("../migrations/0016_ncaccount_spends.sql")),
    (
        17,
        include_str!("../migrations/0017_erasure_and_proofs.sql"),
    ),
    (
        18,
        include_str!("../migrations/0018_ncaccount_spend_routes.sql"),
    ),
];

/// Applies every migration not yet recorded.
pub async fn run(store: &Store) -> Result<(), StoreError> {
    let mut tx = store.pool().begin().await?;
    if store.backend() == Backend::Postgres {
        sqlx::query("SELECT pg_advisory_xact_lock(7265)")
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query("CREATE TABLE IF NOT EXISTS relay_migrations (version BIGINT PRIMARY KEY, applied_ms BIGINT NOT NULL)")
        .execute(&mut *tx)
        .await?;
    for (version, sql) in MIGRATIONS {
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
