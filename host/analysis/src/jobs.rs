//! The analysis feature's start and jobs:
//!
//! - `retention` (spec §8.2), when the tag key is in the environment:
//!   every `retention.interval_ms` the counterparty addresses of routes
//!   settled more than `retention.after_days` ago become keyed tags
//!   ([`crate::retention::sweep`]), and due erasure requests are carried
//!   out ([`crate::erasure::tick`]);
//! - `settlement-proofs`: every [`PROOFS_EVERY`] the nodes whose settlement
//!   is not proven yet are looked at ([`crate::proofs::sweep`]).
//!
//! Replicas coordinate through the store, so every replica runs both.

use std::{sync::Arc, time::Duration};

use relay_feature::{Handles, Parts, StartError};
use relay_jobs::{CancellationToken, Jobs};
use relay_store::Store;
use relay_types::SharedClock;

use crate::{http::Analysis, retention::Tagger};

/// How often unproven nodes are looked at.
pub const PROOFS_EVERY: Duration = Duration::from_secs(60);

/// The feature's [`relay_feature::Start`]: the two jobs, and the
/// [`Analysis`] handle over the host's parts, the relayer's signer and
/// executor the host left (none without a relayer key: statements are
/// unsigned, upstream rechecks skipped).
pub(crate) fn start<'a>(
    parts: &'a Parts,
    jobs: &'a mut Jobs,
    handles: &'a mut Handles,
) -> futures::future::BoxFuture<'a, Result<(), StartError>> {
    Box::pin(async move {
        retention(parts, jobs);
        proofs(parts, jobs);
        handles.insert(Analysis {
            parts: parts.clone(),
            signer: handles
                .get::<Option<relay_chain::signer::RelayerSigner>>()
                .flatten(),
            executor: handles
                .get::<Option<Arc<relay_execution::executor::Executor>>>()
                .flatten(),
            netting: handles
                .get::<Option<Arc<relay_netting::NettingService>>>()
                .flatten()
                .is_some(),
        });
        Ok(())
    })
}

/// The retention job, when the tag key is in the environment.
fn retention(parts: &Parts, jobs: &mut Jobs) {
    let r = &parts.config.retention;
    let Some(secret) = r.secret() else {
        tracing::warn!(env = %r.secret_env, "no retention key: counterparty addresses of settled routes are kept until one is set");
        return;
    };
    let job = spawn_retention(
        jobs.token(),
        parts.store.clone(),
        Tagger::new(secret.as_bytes()),
        parts.clock.clone(),
        (
            Duration::from_millis(r.interval_ms),
            Duration::from_secs(u64::from(r.after_days) * 86_400),
        ),
    );
    jobs.add("retention", job);
}

/// Spawns the retention job: every `every`, at `clock`'s time, routes
/// settled more than `after` ago lose their counterparty addresses to
/// `tagger`'s tags and due erasure requests are carried out.
pub fn spawn_retention(
    cancel: CancellationToken,
    store: Store,
    tagger: Tagger,
    clock: SharedClock,
    (every, after): (Duration, Duration),
) -> tokio::task::JoinHandle<()> {
    let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
    tokio::spawn(relay_jobs::every(cancel, every, true, move || {
        let (store, tagger, clock) = (store.clone(), tagger.clone(), clock.clone());
        async move {
            let now = clock.now_ms();
            match crate::retention::sweep(&store, &tagger, now, after_ms).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(routes = n, "counterparty addresses turned into tags"),
                Err(e) => tracing::warn!(error = %e, "retention tick failed"),
            }
            match crate::erasure::tick(&store, &tagger, now).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(routes = n, "routes erased on request"),
                Err(e) => tracing::warn!(error = %e, "erasure tick failed"),
            }
        }
    }))
}

/// The settlement-proofs job.
fn proofs(parts: &Parts, jobs: &mut Jobs) {
    let p = parts.clone();
    jobs.repeat("settlement-proofs", PROOFS_EVERY, move || {
        let p = p.clone();
        async move {
            let now = p.clock.now_ms();
            match crate::proofs::sweep(&p.store, &p.reader, &p.config, now).await {
                Ok(n) if n.is_empty() => {}
                Ok(nodes) => tracing::info!(?nodes, "settlement verified on chain"),
                Err(e) => tracing::warn!(error = %e, "settlement proofs tick failed"),
            }
        }
    });
}
