//! A replica's background jobs, one file each, all stopped by one
//! [`CancellationToken`] on shutdown:
//!
//! - [`resume`]: picks up open routes nobody holds (at start, and whenever
//!   a replica's lease lapses) and runs them;
//! - [`nonce_gaps`]: fills the relayer's nonce gaps (every key's);
//! - [`key_pool`]: enrols the relayer key pool on its chains;
//! - [`health_probe`]: samples health for `/api/uptime`;
//! - [`reload`]: rescans the plugins directory and swaps in changed plugins;
//! - [`pricefeeds`]: reads the on-chain price feeds into the price book.
//!
//! A feature's own jobs (webhook delivery, session sweeps, the primitives'
//! watcher, retention, settlement proofs, …) start with the feature, in its
//! home, through [`Jobs::repeat`] and [`Jobs::drive`].
//!
//! Coordination between replicas is through the database (route leases,
//! the nonce table), so any number of replicas may run these. A job never
//! holds logic of its own beyond *when*: *what* is the service it calls.

pub mod health_probe;
pub mod key_pool;
pub mod nonce_gaps;
pub mod pricefeeds;
pub mod reload;
pub mod resume;

use tokio::task::JoinHandle;
pub use tokio_util::sync::CancellationToken;

/// The running jobs of a replica.
#[derive(Debug, Default)]
pub struct Jobs {
    cancel: CancellationToken,
    handles: Vec<(&'static str, JoinHandle<()>)>,
}

impl Jobs {
    /// No jobs yet; `cancel` stops every job spawned later.
    pub fn new(cancel: CancellationToken) -> Self {
        Jobs {
            cancel,
            handles: Vec::new(),
        }
    }

    /// The token every job watches.
    pub fn token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Adds a running job under `name`.
    pub fn add(&mut self, name: &'static str, handle: JoinHandle<()>) {
        tracing::debug!(job = name, "job started");
        self.handles.push((name, handle));
    }

    /// Starts `tick` every `period` under `name` (the first tick at once),
    /// until the jobs shut down ([`every`]).
    pub fn repeat<F, Fut>(&mut self, name: &'static str, period: std::time::Duration, tick: F)
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let job = every(self.token(), period, true, tick);
        self.add(name, tokio::spawn(job));
    }

    /// Starts `tick(service)` every `period` under `name` (the first at
    /// once): a job finishing what dead holders left, `tick` answering how
    /// many it finished (logged when any).
    pub fn drive<S, F, Fut>(
        &mut self,
        name: &'static str,
        period: std::time::Duration,
        service: std::sync::Arc<S>,
        tick: F,
    ) where
        S: Send + Sync + 'static,
        F: Fn(std::sync::Arc<S>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = usize> + Send + 'static,
    {
        self.repeat(name, period, move || {
            let finished = tick(service.clone());
            async move {
                let n = finished.await;
                if n > 0 {
                    tracing::info!(job = name, n, "finished what dead holders left");
                }
            }
        });
    }

    /// Names of the jobs running.
    pub fn names(&self) -> Vec<&'static str> {
        self.handles.iter().map(|(n, _)| *n).collect()
    }

    /// Cancels every job and waits for each to stop.
    pub async fn shutdown(self) {
        self.cancel.cancel();
        for (name, h) in self.handles {
            if let Err(e) = h.await {
                tracing::warn!(job = name, error = %e, "job ended abnormally");
            }
        }
    }
}

/// Runs `tick` every `every` until `cancel` fires; the first tick runs at
/// once when `immediately`, otherwise after one period.
pub async fn every<F, Fut>(
    cancel: CancellationToken,
    every: std::time::Duration,
    immediately: bool,
    mut tick: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    if !immediately {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick() => {}
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{
        sync::{
            atomic::{AtomicU32, Ordering},
            Arc,
        },
        time::Duration,
    };

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_job_ticks_on_its_period_and_stops_when_cancelled() {
        let ticks = Arc::new(AtomicU32::new(0));
        let mut jobs = Jobs::new(CancellationToken::new());
        let t = ticks.clone();
        let cancel = jobs.token();
        jobs.add(
            "count",
            tokio::spawn(every(cancel, Duration::from_secs(10), true, move || {
                let t = t.clone();
                async move {
                    t.fetch_add(1, Ordering::SeqCst);
                }
            })),
        );
        tokio::time::sleep(Duration::from_secs(25)).await;
        assert_eq!(ticks.load(Ordering::SeqCst), 3, "ticks at 0, 10 and 20 s");
        jobs.shutdown().await;
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(ticks.load(Ordering::SeqCst), 3, "no tick after shutdown");
    }
}
