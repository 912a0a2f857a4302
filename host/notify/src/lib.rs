//! relay-notify: outbound notifications (spec §4.5, §6) — completion
//! webhooks and event subscriptions, signed, SSRF-guarded and delivered
//! at least once — the whole feature in one home: registration
//! ([`hooks`]), delivery ([`dispatch`], [`send`], [`sign`], [`ssrf`],
//! [`backoff`]), the subscription watcher ([`subscribe`], [`observe`]),
//! the HTTP adapter with its rate-limit buckets and errorCodes
//! ([`http::feature`]) and its two jobs (`webhooks`, `subscriptions`,
//! started by the feature's start). The host registers it with one line.
//!
//! The outbox rows live in the core store: a route's transition writes
//! its completion event in the same database transaction
//! ([`relay_store::HookStore`]), so no completion is lost between the two.

pub mod backoff;
pub mod dispatch;
pub mod errors;
pub mod hooks;
pub mod http;
pub mod observe;
pub mod send;
pub mod sign;
pub mod ssrf;
pub mod subscribe;

use std::{sync::Arc, time::Duration};

use relay_feature::{Handles, Parts, ServiceError, StartError};
use relay_jobs::Jobs;
use relay_store::HookStore;

/// What this replica knows of its sandbox and dry-run routes, as the host
/// leaves it in the handles for the feature's start.
pub type Sandboxed = Arc<dyn dispatch::SandboxRoutes>;

/// Notify's [`relay_feature::Start`]: builds the service over the store,
/// starts delivery (`webhooks`, every `notify.poll_interval_ms`) and the
/// subscription watcher (`subscriptions`, every
/// `notify.watch_interval_ms`), and leaves the [`http::Notify`] handle.
/// Replicas coordinate through the store (delivery leases, compare-and-set
/// watch state), so every replica runs both.
fn start<'a>(
    parts: &'a Parts,
    jobs: &'a mut Jobs,
    handles: &'a mut Handles,
) -> futures::future::BoxFuture<'a, Result<(), StartError>> {
    Box::pin(async move {
        let sandbox = handles.get::<Sandboxed>().ok_or_else(|| {
            StartError::new(
                "notify",
                ServiceError::MissingHandle("sandbox routes (the execution's sandbox)"),
            )
        })?;
        let hooks = start_jobs(parts, jobs, &sandbox);
        handles.insert(http::Notify {
            hooks,
            sandbox,
            parts: parts.clone(),
        });
        Ok(())
    })
}

/// The two jobs, and the service the routes register hooks with.
fn start_jobs(parts: &Parts, jobs: &mut Jobs, sandbox: &Sandboxed) -> Arc<hooks::HookService> {
    let n = &parts.config.notify;
    let store: Arc<dyn HookStore> = Arc::new(parts.store.clone());
    let clock = parts.clock.clone();
    let replica = format!("r{}-{}", std::process::id(), clock.now_ms());
    let dispatcher = Arc::new(dispatch::Dispatcher::new(
        store.clone(),
        sandbox.clone(),
        n,
        replica,
        clock.clone(),
    ));
    jobs.repeat(
        "webhooks",
        Duration::from_millis(n.poll_interval_ms.max(50)),
        move || {
            let d = dispatcher.clone();
            async move {
                if let Err(e) = d.tick().await {
                    tracing::warn!(error = %e, "webhook dispatch tick failed");
                }
            }
        },
    );
    let observe = Arc::new(observe::HostObserve {
        prices: parts.prices.clone(),
        reader: parts.reader.clone(),
    });
    let watcher = Arc::new(subscribe::Watcher::new(
        store.clone(),
        observe,
        clock.clone(),
    ));
    jobs.repeat(
        "subscriptions",
        Duration::from_millis(n.watch_interval_ms.max(100)),
        move || {
            let w = watcher.clone();
            async move {
                if let Err(e) = w.tick().await {
                    tracing::warn!(error = %e, "subscription watch tick failed");
                }
            }
        },
    );
    Arc::new(hooks::HookService::new(store, n, clock))
}
