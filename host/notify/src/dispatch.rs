//! Delivering webhooks (spec §6.1): at least once, from the store.
//!
//! Each tick a replica:
//! 1. **arms** completion hooks whose route reached DONE or FAILED — one
//!    delivery per hook, ever, its id (`msg_…`, the `webhook-id`) derived
//!    from the hook, so two replicas arming at once make one delivery;
//!    sandbox routes live in one replica's memory and are armed by it
//!    ([`SandboxRoutes`]), their payload marked `sandbox: true`;
//! 2. **claims** due deliveries one by one (a conditional UPDATE: exactly
//!    one replica holds an attempt's lease, for `notify.lease_ms`), and
//! 3. **sends** each: the URL re-checked and pinned to the address DNS
//!    gave ([`crate::ssrf`]), the stored body signed afresh (the timestamp
//!    is the attempt's), no redirects, a bounded read and a timeout. A 2xx
//!    ends it `delivered`; anything else schedules the next attempt with
//!    exponential back-off and jitter ([`Backoff`]), and after the last
//!    (about a day) the delivery — and a completion hook — is `failed`.
//!
//! A replica killed mid-attempt leaves its lease to lapse; the next
//! holder sends the same `webhook-id` and body, so receivers deduplicate
//! on `webhook-id`.

use std::{sync::Arc, time::Duration};

use futures::StreamExt;
use relay_config::NotifyConfig;
use relay_store::{AttemptOutcome, Delivery, HookRow, HookStore, NewDelivery, StoreError};
use relay_types::clock::SharedClock;
use serde_json::Value;

use crate::{
    backoff::Backoff,
    send::Sender,
    sign,
    ssrf::{check_url, OutboundPolicy},
};

/// Deliveries claimed per tick.
const BATCH: u32 = 64;
/// Attempts in flight at once per replica.
const CONCURRENCY: usize = 16;

/// The sandbox and dry-run routes this replica holds (they live in its
/// memory, not in the store).
pub trait SandboxRoutes: Send + Sync + std::fmt::Debug {
    /// `{event, routeId, status, destTx, srcTx, ts, sandbox: true}` once
    /// the route is DONE or FAILED; `None` before, or when unknown here.
    fn completion(&self, route_id: &str) -> Option<Value>;

    /// What the route is ([`RouteKnown::Sandbox`] or [`RouteKnown::Dry`])
    /// and its sender, when this replica holds it.
    fn known(&self, route_id: &str) -> Option<(crate::hooks::RouteKnown, String)>;
}

/// Sends what is due (module docs).
#[derive(Debug)]
pub struct Dispatcher {
    store: Arc<dyn HookStore>,
    sandbox: Arc<dyn SandboxRoutes>,
    sender: Sender,
    policy: OutboundPolicy,
    backoff: Backoff,
    lease: Duration,
    replica: String,
    clock: SharedClock,
}

impl Dispatcher {
    /// A dispatcher for the replica named `replica`.
    pub fn new(
        store: Arc<dyn HookStore>,
        sandbox: Arc<dyn SandboxRoutes>,
        config: &NotifyConfig,
        replica: String,
        clock: SharedClock,
    ) -> Self {
        Dispatcher {
            store,
            sandbox,
            sender: Sender::new(config),
            policy: OutboundPolicy::from_config(config),
            backoff: Backoff::from_config(config),
            lease: Duration::from_millis(config.lease_ms),
            replica,
            clock,
        }
    }

    /// One tick (module docs); how many attempts were made.
    #[tracing::instrument(skip_all, fields(replica = %self.replica))]
    pub async fn tick(&self) -> Result<usize, StoreError> {
        let now = self.clock.now_ms();
        self.store.arm_route_hooks(now).await?;
        self.arm_sandbox(now).await?;
        let due = self.store.due_deliveries(now, BATCH).await?;
        let made = futures::stream::iter(due)
            .map(|id| self.attempt(id))
            .buffer_unordered(CONCURRENCY)
            .filter(|r| futures::future::ready(matches!(r, Ok(true))))
            .count()
            .await;
        Ok(made)
    }

    async fn arm_sandbox(&self, now: u64) -> Result<(), StoreError> {
        for hook in self.store.unarmed_sandbox_hooks().await? {
            let Some(route) = hook.route_id.as_deref() else {
                continue;
            };
            let Some(payload) = self.sandbox.completion(route) else {
                continue;
            };
            let event = payload["event"].as_str().unwrap_or("done").to_string();
            let d = NewDelivery {
                id: format!("msg_{}", hook.id.trim_start_matches("wh_")),
                hook_id: hook.id.clone(),
                event,
                payload: payload.to_string(),
                now_ms: now,
            };
            self.store.add_delivery(&d).await?;
        }
        Ok(())
    }

    /// Claims and sends one delivery; whether an attempt was made.
    async fn attempt(&self, id: String) -> Result<bool, StoreError> {
        let now = self.clock.now_ms();
        let until = now + self.lease.as_millis() as u64;
        let lease_ends = tokio::time::Instant::now() + self.lease;
        let Some((d, hook)) = self
            .store
            .claim_delivery(&id, &self.replica, now, until)
            .await?
        else {
            return Ok(false);
        };
        let outcome = self.send(&d, &hook).await;
        if !self.record(&id, &outcome, lease_ends).await? {
            tracing::warn!(delivery = %id, "lease lost before the attempt was recorded");
        }
        Ok(true)
    }

    /// Records an attempt's outcome, trying again while the store is away
    /// (a database restart) for as long as the delivery's lease lasts: an
    /// outcome dropped after the receiver answered 200 would send the
    /// message a second time.
    async fn record(
        &self,
        id: &str,
        outcome: &AttemptOutcome,
        lease_ends: tokio::time::Instant,
    ) -> Result<bool, StoreError> {
        until_ok(lease_ends, || {
            self.store.finish_attempt(id, &self.replica, outcome)
        })
        .await
    }

    #[tracing::instrument(skip_all, fields(delivery = %d.id, hook = %hook.id, attempt = d.attempts + 1))]
    async fn send(&self, d: &Delivery, hook: &HookRow) -> AttemptOutcome {
        let at_ms = self.clock.now_ms();
        let body = d.payload.as_bytes();
        let headers = sign::headers(&d.id, at_ms / 1000, body, hook.secret.as_deref());
        let attempt = match check_url(&hook.url, &self.policy) {
            Ok(target) => self.sender.post(&target, body.to_vec(), headers).await,
            Err(e) => crate::send::Attempt::refused(e.to_string()),
        };
        let retry_at_ms = match attempt.ok {
            true => None,
            false => self
                .backoff
                .after(d.attempts + 1, rand::random::<f64>())
                .map(|wait| self.clock.now_ms() + wait.as_millis() as u64),
        };
        tracing::info!(
            ok = attempt.ok,
            status = ?attempt.status,
            error = ?attempt.error,
            retry_at_ms = ?retry_at_ms,
            "webhook attempt"
        );
        AttemptOutcome {
            ok: attempt.ok,
            status: attempt.status,
            error: attempt.error,
            at_ms,
            duration_ms: attempt.duration_ms,
            retry_at_ms,
        }
    }
}

/// Calls `f` until it answers `Ok`, while another try would start before
/// `deadline`, waiting 100 ms between tries (doubling, at most 2 s);
/// otherwise the last error.
async fn until_ok<T, E, Fut>(
    deadline: tokio::time::Instant,
    mut f: impl FnMut() -> Fut,
) -> Result<T, E>
where
    E: std::fmt::Display,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut wait = Duration::from_millis(100);
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) if tokio::time::Instant::now() + wait < deadline => {
                tracing::warn!(error = %e, "not recorded yet; trying again");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod until_ok_tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test(start_paused = true)]
    async fn a_write_that_fails_once_is_recorded_on_the_next_try() {
        let calls = AtomicU32::new(0);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let out: Result<bool, String> = until_ok(deadline, || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0 => Err("the database restarted".to_string()),
                _ => Ok(true),
            }
        })
        .await;
        assert_eq!(out, Ok(true));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_away_past_the_lease_answers_its_error() {
        let calls = AtomicU32::new(0);
        let start = tokio::time::Instant::now();
        let deadline = start + Duration::from_secs(1);
        let out: Result<bool, String> = until_ok(deadline, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err("still away".to_string())
        })
        .await;
        assert_eq!(out, Err("still away".to_string()));
        // tries at 0, 0.1, 0.3 and 0.7 s; the next (at 1.5 s) is past it
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert!(tokio::time::Instant::now() < deadline);
    }
}
