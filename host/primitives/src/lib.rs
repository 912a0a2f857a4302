//! Route primitives (spec §2.12, §3.2, §4.4): batch payout plans,
//! schedules and conditionals — their records and validation
//! ([`record`]), times ([`time`]), prices ([`price`]) and the watcher that
//! runs them ([`watcher`]) — the whole feature in one home, with its HTTP
//! adapter, rate-limit buckets and errorCodes ([`http::feature`]) and the
//! watcher's job (`primitives`, started by the feature's start). The live
//! runner (the execute service) and the leg planner are the host's, handed
//! in as [`http::Live`]. The host registers it with one line.
//!
//! States: a batch is `planned`; run once (by the owner) it is `running`,
//! then `completed`, `partial` or `failed` by its legs' runs. A schedule is `active` until its last
//! run (then `completed`: `remaining` 0, `active:false`) or a DELETE
//! (`cancelled`). A conditional is `armed`; when its condition holds it is
//! `triggered` while its one run executes, then `executed` (or `failed`,
//! with the run's error); unfired at `expiresAt` it is `expired`; a DELETE
//! while armed makes it `cancelled`. Every move past `armed` appends a
//! `runs[]` entry.
//!
//! A schedule or conditional is cancelled only by the operator's owner
//! credential or by its own cancel token, answered once at creation
//! ([`cancel`]).

pub mod cancel;
pub mod errors;
pub mod http;
pub mod price;
pub mod record;
pub mod service;
pub mod time;
pub mod watcher;

/// A refused request field (the API answers it as a typed 400 naming
/// `field`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct Invalid {
    /// The request field at fault (`routes[3].toAddress`, `when.asset`, …).
    pub field: String,
    /// Why.
    pub why: String,
    /// Whether the field is missing (rather than invalid).
    pub missing: bool,
}

impl Invalid {
    /// `field` has a bad value.
    pub fn new(field: impl Into<String>, why: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            why: why.into(),
            missing: false,
        }
    }

    /// `field` is required and absent.
    pub fn missing(field: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            why: "required".into(),
            missing: true,
        }
    }
}

/// The execution gate: on when the configuration says so
/// (`primitives.live`) or the environment has `PRIMITIVES_LIVE=1`.
pub fn gate(configured: bool) -> bool {
    configured || std::env::var("PRIMITIVES_LIVE").is_ok_and(|v| v.trim() == "1")
}

/// A fresh record id: `prefix` and 20 random hex digits.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", hex::encode(rand::random::<[u8; 10]>()))
}

/// The primitives' [`relay_feature::Start`]: the records' service over the
/// store, the watcher over the live runner the host left and its price
/// book, started as the `primitives` job (every
/// `primitives.tick_interval_ms` it runs the due schedules and armed
/// conditionals at the host's clock; replicas coordinate through a lease
/// on each record's row, so each due run happens once), and the
/// [`http::Prim`] handle.
fn start<'a>(
    parts: &'a relay_feature::Parts,
    jobs: &'a mut relay_jobs::Jobs,
    handles: &'a mut relay_feature::Handles,
) -> futures::future::BoxFuture<'a, Result<(), relay_feature::StartError>> {
    Box::pin(async move {
        let live = handles.get::<http::Live>().ok_or_else(|| {
            relay_feature::StartError::new(
                "primitives",
                relay_feature::ServiceError::MissingHandle("the live runner and leg planner"),
            )
        })?;
        let store = std::sync::Arc::new(parts.store.clone());
        let p = &parts.config.primitives;
        let watcher = std::sync::Arc::new(watcher::Watcher::new(watcher::WatcherDeps {
            store: store.clone(),
            runner: live.runner.clone(),
            prices: std::sync::Arc::new(price::BookPrices(parts.prices.clone())),
            lease_ms: p.lease_ms,
            live_gate: gate(p.live),
        }));
        tracing::info!(
            live_gate = watcher.live_gate(),
            "primitives watcher started"
        );
        let clock = parts.clock.clone();
        let every = std::time::Duration::from_millis(p.tick_interval_ms.max(10));
        jobs.repeat("primitives", every, move || {
            let (w, now_ms) = (watcher.clone(), clock.now_ms());
            async move {
                match w.tick(now_ms).await {
                    Ok(0) => {}
                    Ok(n) => tracing::debug!(runs = n, "primitive runs"),
                    Err(e) => tracing::warn!(error = %e, "primitives tick failed"),
                }
            }
        });
        handles.insert(http::Prim {
            svc: service::Primitives::new(store, parts.clock.clone()),
            live,
            parts: parts.clone(),
        });
        Ok(())
    })
}
