//! The `store` backend of the rate limits (`[limits] backend = "store"`):
//! every bucket's GCRA cell lives in the host's database
//! ([`relay_store::limits`]), so replicas on one database count a client
//! once — behind a balancer N replicas give a client the limit, not N
//! times it. Same semantics and headers as the in-process limiter; one
//! upsert per bucket a request counts in. While the database cannot be
//! reached a request is served uncounted (`on_backend_failure = "open"`,
//! the default) or refused with 503 `RATE_LIMITS_UNAVAILABLE` (`closed`).
//! Cells that are full again, and lapsed caller places (intents,
//! subscriptions, MCP sessions, the quote book's leases), are pruned every
//! 4096 requests.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use relay_config::FailMode;
use relay_store::{limits::Cell, Store, StoreError};

use super::{Bucket, Client, Decision};

/// Cells are pruned once per this many counts.
const PRUNE_EVERY: u64 = 4096;

/// The shared counts.
#[derive(Debug)]
pub struct Shared {
    store: Store,
    /// What a request meets while the store cannot be reached.
    pub fail: FailMode,
    counts: AtomicU64,
}

impl Shared {
    /// Counts in `store`.
    pub fn new(store: Store, fail: FailMode) -> Self {
        Shared {
            store,
            fail,
            counts: AtomicU64::new(0),
        }
    }

    /// Counts one request of `client` in `bucket` at `now_ms`.
    pub async fn hit(
        &self,
        bucket: &Bucket,
        client: &Client,
        now_ms: u64,
    ) -> Result<Decision, StoreError> {
        let (limit, window) = (bucket.limit, bucket.window.duration());
        if limit == 0 {
            return Ok(Decision {
                allowed: false,
                limit,
                remaining: 0,
                reset: window,
                retry_after: window,
            });
        }
        let window_ms = window.as_millis() as u64;
        let period = (window_ms / u64::from(limit)).max(1);
        let key = format!("{}|{client}", bucket.name);
        let cell = self.store.gcra(&key, now_ms, (period, window_ms)).await;
        if self.counts.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            if let Err(e) = self.store.prune_rate_limits(now_ms).await {
                tracing::warn!(error = %e, "rate-limit cells not pruned");
            }
            if let Err(e) = self.store.prune_places(now_ms).await {
                tracing::warn!(error = %e, "lapsed caller places not pruned");
            }
        }
        Ok(decision(cell?, now_ms, limit, (period, window_ms)))
    }
}

/// The decision a cell's new (or unchanged) arrival time means.
fn decision(cell: Cell, now: u64, limit: u32, (period, window): (u64, u64)) -> Decision {
    let ms = Duration::from_millis;
    match cell {
        Cell::Admitted(tat) => {
            let ahead = tat.saturating_sub(now);
            let remaining = (window.saturating_sub(ahead) / period).min(u64::from(limit)) as u32;
            Decision {
                allowed: true,
                limit,
                remaining,
                reset: ms(ahead),
                retry_after: Duration::ZERO,
            }
        }
        Cell::Refused(tat) => {
            let wait = (tat.max(now) + period).saturating_sub(now + window);
            Decision {
                allowed: false,
                limit,
                remaining: 0,
                reset: ms(tat.saturating_sub(now)),
                retry_after: ms(wait.max(1)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_reads_as_the_in_process_limiter_answers() {
        // 40 a minute: 1500 ms apart
        let first = decision(Cell::Admitted(1_500), 0, 40, (1_500, 60_000));
        assert_eq!((first.allowed, first.remaining), (true, 39));
        let last = decision(Cell::Admitted(60_000), 0, 40, (1_500, 60_000));
        assert_eq!((last.remaining, last.reset), (0, Duration::from_secs(60)));
        let refused = decision(Cell::Refused(60_000), 0, 40, (1_500, 60_000));
        assert_eq!(
            (refused.allowed, refused.retry_after, refused.reset),
            (false, Duration::from_millis(1_500), Duration::from_secs(60))
        );
    }
}
