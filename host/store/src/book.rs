//! The quote book's answers shared by replicas (migration 0024): the
//! newest answer of each rail on each lane, kept only when newer than the
//! one stored, so replicas racing to publish leave the latest.

use sqlx::Row;

use crate::{Store, StoreError};

/// One stored answer: lane, rail, when quoted (epoch ms), the answer's
/// JSON.
pub type BookRow = (String, String, u64, String);

impl Store {
    /// Stores `(lane, rail, quoted_at_ms, answer)` unless a newer answer
    /// of the rail on the lane is stored.
    pub async fn publish_answer(&self, row: &BookRow) -> Result<(), StoreError> {
        let (lane, rail, at, answer) = row;
        sqlx::query(
            "INSERT INTO book_answers (lane, rail, quoted_at_ms, answer) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (lane, rail) DO UPDATE SET quoted_at_ms = excluded.quoted_at_ms, \
             answer = excluded.answer WHERE book_answers.quoted_at_ms < excluded.quoted_at_ms",
        )
        .bind(lane)
        .bind(rail)
        .bind(*at as i64)
        .bind(answer)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The answers quoted after `after_ms`, oldest first.
    pub async fn answers_since(&self, after_ms: u64) -> Result<Vec<BookRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT lane, rail, quoted_at_ms, answer FROM book_answers \
             WHERE quoted_at_ms > $1 ORDER BY quoted_at_ms",
        )
        .bind(after_ms as i64)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row).collect()
    }

    /// The answers of `lane`.
    pub async fn lane_answers(&self, lane: &str) -> Result<Vec<BookRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT lane, rail, quoted_at_ms, answer FROM book_answers WHERE lane = $1",
        )
        .bind(lane)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row).collect()
    }

    /// Drops the answers quoted before `before_ms`. Returns how many.
    pub async fn prune_answers(&self, before_ms: u64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM book_answers WHERE quoted_at_ms < $1")
            .bind(before_ms as i64)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }
}

fn row(r: &sqlx::any::AnyRow) -> Result<BookRow, StoreError> {
    Ok((
        r.try_get("lane")?,
        r.try_get("rail")?,
        r.try_get::<i64, _>("quoted_at_ms")? as u64,
        r.try_get("answer")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newer answer wins whichever arrives last; a pull sees what was
    /// quoted after its mark; pruning drops the old.
    async fn newest_wins(store: Store) {
        let row = |at: u64, a: &str| ("l1".to_string(), "lifi".to_string(), at, a.to_string());
        store.publish_answer(&row(200, "b")).await.unwrap();
        store.publish_answer(&row(100, "a")).await.unwrap();
        let other = ("l2".to_string(), "squid".to_string(), 150, "c".to_string());
        store.publish_answer(&other).await.unwrap();
        let all = store.answers_since(0).await.unwrap();
        assert_eq!(all, vec![other.clone(), row(200, "b")]);
        assert_eq!(store.answers_since(150).await.unwrap(), vec![row(200, "b")]);
        assert_eq!(store.lane_answers("l2").await.unwrap(), vec![other.clone()]);
        assert_eq!(store.prune_answers(160).await.unwrap(), 1);
        assert_eq!(store.answers_since(0).await.unwrap(), vec![row(200, "b")]);
    }

    #[tokio::test]
    async fn answers_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("b.db").display());
        newest_wins(Store::connect(&url).await.unwrap()).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn answers_on_postgres() {
        let url = relay_fixtures::postgres_database();
        newest_wins(Store::connect(&url).await.unwrap()).await;
    }
}
