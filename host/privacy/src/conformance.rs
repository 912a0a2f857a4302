//! `GET /api/privacy/conformance` (spec §4.11): the lane's promises,
//! each checked live by the host when asked. An invariant the host cannot
//! check (the store unreachable, a probe that did not answer) counts as
//! failed; the report is `ok` only when every one holds.

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use serde::Serialize;
use tracing::instrument::WithSubscriber as _;
use tracing_subscriber::layer::SubscriberExt as _;

use crate::{gateway::SEEN_KIND, http, PrivacyService, PRUNE_EVERY};

/// One invariant's result.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct Invariant {
    /// Its id.
    pub id: &'static str,
    /// What it promises.
    pub description: &'static str,
    /// Whether it held (false: broken, or it could not be checked).
    pub ok: bool,
    /// What was seen.
    pub detail: String,
}

/// The report.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Whether every invariant held.
    pub ok: bool,
    /// When it was checked, epoch ms.
    pub checked_at: u64,
    /// Each invariant.
    pub invariants: Vec<Invariant>,
}

fn held(id: &'static str, description: &'static str, r: Result<String, String>) -> Invariant {
    let (ok, detail) = match r {
        Ok(d) => (true, d),
        Err(d) => (false, d),
    };
    Invariant {
        id,
        description,
        ok,
        detail,
    }
}

/// Checks every invariant now.
pub async fn check(svc: &PrivacyService) -> Report {
    let now = svc.clock.now_ms();
    let invariants = vec![
        held("keys-witnessed", "every key configuration the gateway serves is in the witness log exactly as served", keys(svc).await),
        held("responses-fixed-size", "every answer the gateway sealed was padded to a multiple of 8192 bytes", sizes(svc)),
        held("no-outer-address-stored", "the store holds no rate-limit record of the gateway's or the no-op's callers, and both buckets are counted in memory only", outer(svc).await),
        held("noop-unlogged", "a no-op, sent through the host's own stack now, leaves no log line and no span", noop(svc).await),
        held("replay-window-pruned", "the replay window's marks are dropped on time: none kept past its window by more than two prune periods", pruned(svc, now).await),
        held("policy-log-verifies", "the policy log verifies from its first entry (chain and signatures), and the lane runs at least as tight as the promises in force", policy(svc, now).await),
    ];
    Report {
        ok: invariants.iter().all(|i| i.ok),
        checked_at: now,
        invariants,
    }
}

async fn keys(svc: &PrivacyService) -> Result<String, String> {
    // what the gateway serves now is logged before it is served (a fresh
    // epoch's keys on this first use), then read back from the log
    svc.keys()
        .await
        .map_err(|e| format!("could not be checked: {e}"))?;
    match svc.keys_witnessed().await {
        true => Ok("both configurations of the current epoch are logged".into()),
        false => Err("a served configuration is not in the witness log (or there is none: sealed messaging off)".into()),
    }
}

fn sizes(svc: &PrivacyService) -> Result<String, String> {
    let s = &svc.gateway.stats;
    let (sealed, off) = (
        s.sealed.load(Ordering::Relaxed),
        s.off_size.load(Ordering::Relaxed),
    );
    let detail = format!("{sealed} answers sealed since start, {off} off size");
    match off {
        0 => Ok(detail),
        _ => Err(detail),
    }
}

async fn outer(svc: &PrivacyService) -> Result<String, String> {
    let buckets = ["ohttp-gateway", "privacy-noop"];
    let flagged = http::LIMITS
        .iter()
        .filter(|l| buckets.contains(&l.bucket))
        .all(|l| l.unrecorded);
    if !flagged {
        return Err("a bucket of the gateway or the no-op is recorded".into());
    }
    match svc.store.cells_of(&buckets).await {
        Ok(0) => Ok("no stored cell for either bucket".into()),
        Ok(n) => Err(format!(
            "{n} stored rate-limit cells name a gateway or no-op caller"
        )),
        Err(e) => Err(format!("could not be checked: {e}")),
    }
}

/// Counts every span and event it sees.
struct Count(Arc<AtomicU64>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Count {
    fn on_event(&self, _: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn on_new_span(
        &self,
        _: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

async fn noop(svc: &PrivacyService) -> Result<String, String> {
    let seen = Arc::new(AtomicU64::new(0));
    let sub = tracing_subscriber::registry().with(Count(seen.clone()));
    let req = ::http::Request::get(http::NOOP_PATH)
        .body(axum::body::Body::empty())
        .map_err(|e| e.to_string())?;
    let resp = svc.gateway.inner().call(req).with_subscriber(sub).await;
    let (status, n) = (resp.status(), seen.load(Ordering::Relaxed));
    match (status.as_u16(), n) {
        (200, 0) => Ok("answered 200 with no span and no event at any level".into()),
        (200, n) => Err(format!("answered with {n} spans or events")),
        (s, _) => Err(format!("could not be checked: the probe answered {s}")),
    }
}

async fn pruned(svc: &PrivacyService, now: u64) -> Result<String, String> {
    let period = PRUNE_EVERY.as_millis() as u64;
    let last = svc.last_prune.load(Ordering::Relaxed).max(svc.started_ms);
    if now.saturating_sub(last) > 2 * period {
        return Err(format!("the prune last ran {} s ago", (now - last) / 1_000));
    }
    match svc
        .store
        .lapsed_marks(SEEN_KIND, now.saturating_sub(2 * period))
        .await
    {
        Ok(0) => Ok(format!(
            "ran {} s ago; nothing kept past its window",
            now.saturating_sub(last) / 1_000
        )),
        Ok(n) => Err(format!("{n} marks kept past their window")),
        Err(e) => Err(format!("could not be checked: {e}")),
    }
}

async fn policy(svc: &PrivacyService, now: u64) -> Result<String, String> {
    let rows = svc
        .store
        .policy()
        .await
        .map_err(|e| format!("could not be checked: {e}"))?;
    let bodies =
        crate::policy::verify(&rows, &svc.policy_key.verifying_key()).map_err(|e| e.to_string())?;
    let in_force = crate::policy::effective(&bodies, now);
    for p in crate::policy::PROMISES {
        let (Some(promised), Some(running)) = (in_force.get(p.id), svc.running.get(p.id)) else {
            return Err(format!("{} is not in the log", p.id));
        };
        let tight = match p.tighter {
            crate::policy::Tighter::Lower => running <= promised,
            crate::policy::Tighter::Higher => running >= promised,
        };
        if !tight {
            return Err(format!(
                "{} runs at {running}, looser than the {promised} in force",
                p.id
            ));
        }
    }
    Ok(format!(
        "{} entries verify; the lane runs at least as tight as every promise in force",
        bodies.len()
    ))
}
