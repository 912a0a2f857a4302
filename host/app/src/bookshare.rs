//! The quote book shared through the host's store (`[limits] backend =
//! "store"`; [`relay_engine::quotebook::BookShare`]): the deployment's
//! upstream budget per rail and the refresh leases are places in
//! `caller_places` (a rail's requests of the last minute; one lease per
//! lane and rail), the answers rows of `book_answers`.

use std::sync::atomic::{AtomicU64, Ordering};

use relay_engine::quotebook::{BookShare, Published, ShareDown};
use relay_store::Store;

/// The window a rail's budget counts, ms.
const MINUTE_MS: u64 = 60_000;
/// Answers older than this many staleness bounds are pruned.
const KEEP_BOUNDS: u64 = 10;
/// Stored answers are pruned once per this many publishes.
const PRUNE_EVERY: u64 = 1024;

/// The share in `store`.
#[derive(Debug)]
pub struct StoreShare {
    store: Store,
    /// The book's staleness bound, ms.
    stale_ms: u64,
    published: AtomicU64,
}

impl StoreShare {
    /// Shares through `store`; answers older than ten times `stale_ms` are
    /// pruned.
    pub fn new(store: Store, stale_ms: u64) -> Self {
        StoreShare {
            store,
            stale_ms,
            published: AtomicU64::new(0),
        }
    }
}

fn down(e: impl std::fmt::Display) -> ShareDown {
    ShareDown(e.to_string())
}

#[async_trait::async_trait]
impl BookShare for StoreShare {
    async fn take(&self, rail: &str, cap: Option<u32>, now_ms: u64) -> Result<bool, ShareDown> {
        let id = format!("upstream|{}", uuid::Uuid::new_v4());
        let cap = cap.unwrap_or(u32::MAX) as usize;
        let window = (now_ms, now_ms + MINUTE_MS);
        let taken = self.store.take_place(("upstream", rail, &id), window, cap);
        Ok(taken.await.map_err(down)?.is_ok())
    }

    async fn claim(
        &self,
        lane: &str,
        rail: &str,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<bool, ShareDown> {
        let id = format!("lease|{}", uuid::Uuid::new_v4());
        let who = format!("{lane}|{rail}");
        let claimed = self
            .store
            .take_place(("book-lease", &who, &id), (now_ms, until_ms), 1);
        Ok(claimed.await.map_err(down)?.is_ok())
    }

    async fn publish(&self, p: &Published) -> Result<(), ShareDown> {
        let answer = serde_json::to_string(&p.answer).map_err(down)?;
        let row = (p.lane.clone(), p.rail.clone(), p.quoted_at_ms, answer);
        self.store.publish_answer(&row).await.map_err(down)?;
        if self.published.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            let before = p.quoted_at_ms.saturating_sub(self.stale_ms * KEEP_BOUNDS);
            self.store.prune_answers(before).await.map_err(down)?;
            // the refresh leases of lanes nobody refreshes any more
            self.store
                .prune_places(p.quoted_at_ms)
                .await
                .map_err(down)?;
        }
        Ok(())
    }

    async fn since(&self, after_ms: u64) -> Result<Vec<Published>, ShareDown> {
        let rows = self.store.answers_since(after_ms).await.map_err(down)?;
        Ok(decoded(rows))
    }

    async fn lane(&self, lane: &str) -> Result<Vec<Published>, ShareDown> {
        let rows = self.store.lane_answers(lane).await.map_err(down)?;
        Ok(decoded(rows))
    }
}

/// The stored rows as answers (a row that does not decode is left out).
fn decoded(rows: Vec<relay_store::BookRow>) -> Vec<Published> {
    rows.into_iter()
        .filter_map(|(lane, rail, quoted_at_ms, answer)| {
            let answer = serde_json::from_str(&answer).ok()?;
            Some(Published {
                lane,
                rail,
                quoted_at_ms,
                answer,
            })
        })
        .collect()
}
