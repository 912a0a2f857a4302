//! Containment around every plugin call: deadline, quarantine with
//! exponential back-off, tracing. A crash, trap, hang or broken reply
//! degrades that rail's lanes; the host keeps serving.
//!
//! Every call is also counted (`relay_rail_calls_total`) and timed
//! (`relay_rail_call_duration_seconds`) by `rail`, `method` and `outcome`:
//! `ok`, `rail_error` (a typed error the rail answered), `fault` (crash,
//! trap, broken reply), `hung` (past its deadline) or `quarantined`
//! (refused without calling; counted, not timed).

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use super::{BackendError, Packaging, PluginBackend, RailCall, RailReply};
use relay_capabilities::{CapabilityBroker, RailPolicy};
use relay_plugin_api::{
    ExecutionPlan, HealthStatus, PrepareRequest, QuoteRequest, RailError, RailErrorKind,
    RailHealth, RailManifest, RailQuote, TrackRequest, TrackStatus,
};
use tracing::Instrument;

/// Timeouts and back-off for plugin calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallLimits {
    /// Deadline of one call.
    pub timeout: Duration,
    /// Extra time the supervisor waits past the deadline before it calls the
    /// call hung (the backend is expected to stop itself by the deadline).
    pub grace: Duration,
    /// First quarantine after a fault.
    pub backoff_base: Duration,
    /// Longest quarantine.
    pub backoff_max: Duration,
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            timeout: Duration::from_secs(10),
            grace: Duration::from_millis(500),
            backoff_base: Duration::from_secs(2),
            backoff_max: Duration::from_secs(300),
        }
    }
}

/// Why a supervised call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The rail answered with a typed error.
    #[error(transparent)]
    Rail(#[from] RailError),
    /// The rail is quarantined after a fault.
    #[error("rail {rail} is quarantined for {remaining_ms} ms after: {last_fault}")]
    Quarantined {
        /// Rail id.
        rail: String,
        /// Time left.
        remaining_ms: u64,
        /// The fault that caused it.
        last_fault: String,
    },
    /// The plugin faulted (crash, trap, hang, limit, contract breach).
    #[error("rail {rail} faulted: {fault}")]
    Fault {
        /// Rail id.
        rail: String,
        /// What happened.
        fault: String,
    },
}

impl CallError {
    /// The error as the engine and API report it.
    pub fn to_rail_error(&self) -> RailError {
        match self {
            CallError::Rail(e) => e.clone(),
            CallError::Quarantined { .. } => {
                RailError::new(RailErrorKind::Upstream, self.to_string())
            }
            CallError::Fault { .. } => RailError::new(RailErrorKind::Internal, self.to_string()),
        }
    }
}

#[derive(Debug, Default)]
struct Containment {
    faults: u32,
    until: Option<Instant>,
    last_fault: String,
}

/// A rail loaded from a plugin, behind deadlines and quarantine.
pub struct LoadedRail {
    manifest: RailManifest,
    /// The rail's id as a metrics label: a shared string, so labelling a
    /// call's metrics copies no text.
    rail_label: metrics::SharedString,
    backend: Arc<dyn PluginBackend>,
    policy: Arc<RailPolicy>,
    broker: Arc<CapabilityBroker>,
    limits: CallLimits,
    containment: Mutex<Containment>,
}

impl std::fmt::Debug for LoadedRail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedRail")
            .field("id", &self.manifest.id)
            .field("packaging", &self.backend.packaging())
            .finish()
    }
}

impl LoadedRail {
    /// Wraps a backend. `manifest` is what the rail reported at load.
    pub fn new(
        manifest: RailManifest,
        backend: Arc<dyn PluginBackend>,
        policy: Arc<RailPolicy>,
        broker: Arc<CapabilityBroker>,
        limits: CallLimits,
    ) -> Self {
        LoadedRail {
            rail_label: metrics::SharedString::from_shared(Arc::from(manifest.id.as_str())),
            manifest,
            backend,
            policy,
            broker,
            limits,
            containment: Mutex::new(Containment::default()),
        }
    }

    /// Asks a backend for its manifest under `limits` (used at load, before a
    /// policy exists: no capabilities are granted).
    pub async fn fetch_manifest(
        backend: &Arc<dyn PluginBackend>,
        broker: &Arc<CapabilityBroker>,
        limits: CallLimits,
    ) -> Result<RailManifest, BackendError> {
        let caps = Arc::new(broker.lend(Arc::new(RailPolicy::default()), limits.timeout));
        let fut = backend.call(RailCall::Manifest, caps);
        match tokio::time::timeout(limits.timeout + limits.grace, fut).await {
            Ok(Ok(RailReply::Manifest(m))) => Ok(m),
            Ok(Ok(other)) => Err(BackendError::Contract(format!(
                "manifest() returned {other:?}"
            ))),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(BackendError::DeadlineExceeded),
        }
    }

    /// The same plugin instance under another policy (fresh containment).
    pub fn rebind(&self, policy: RailPolicy) -> LoadedRail {
        LoadedRail::new(
            self.manifest.clone(),
            self.backend.clone(),
            Arc::new(policy),
            self.broker.clone(),
            self.limits,
        )
    }

    /// The manifest.
    pub fn manifest(&self) -> &RailManifest {
        &self.manifest
    }

    /// Rail id.
    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    /// Packaging.
    pub fn packaging(&self) -> Packaging {
        self.backend.packaging()
    }

    /// The policy its calls run under.
    pub fn policy(&self) -> &RailPolicy {
        &self.policy
    }

    /// Whether the rail is quarantined now, and why.
    pub fn quarantined(&self) -> Option<String> {
        let c = self.containment.lock().expect("containment lock");
        c.until
            .filter(|u| *u > Instant::now())
            .map(|_| c.last_fault.clone())
    }

    /// `quote(req)`.
    pub async fn quote(&self, req: QuoteRequest) -> Result<RailQuote, CallError> {
        match self.call(RailCall::Quote(req)).await? {
            RailReply::Quote(q) => Ok(q),
            other => Err(self.contract_breach("quote", &other)),
        }
    }

    /// `prepare(req)`.
    pub async fn prepare(&self, req: PrepareRequest) -> Result<ExecutionPlan, CallError> {
        match self.call(RailCall::Prepare(req)).await? {
            RailReply::Plan(p) => Ok(p),
            other => Err(self.contract_breach("prepare", &other)),
        }
    }

    /// `track(req)`.
    pub async fn track(&self, req: TrackRequest) -> Result<TrackStatus, CallError> {
        match self.call(RailCall::Track(req)).await? {
            RailReply::Track(t) => Ok(t),
            other => Err(self.contract_breach("track", &other)),
        }
    }

    /// `health()`; a faulting or quarantined rail reports `down`.
    pub async fn health(&self) -> RailHealth {
        match self.call(RailCall::Health).await {
            Ok(RailReply::Health(h)) => h,
            Ok(other) => down(self.contract_breach("health", &other).to_string()),
            Err(e) => down(e.to_string()),
        }
    }

    fn contract_breach(&self, method: &str, got: &RailReply) -> CallError {
        let fault = format!("{method}() answered with the wrong reply kind: {got:?}");
        self.record_fault(&fault);
        CallError::Fault {
            rail: self.manifest.id.clone(),
            fault,
        }
    }

    /// Runs one call under the deadline and containment policy.
    pub async fn call(&self, call: RailCall) -> Result<RailReply, CallError> {
        let method = call.method();
        if let Some(err) = self.check_quarantine() {
            self.observe(method, "quarantined", None);
            return Err(err);
        }
        let span = tracing::info_span!(
            "rail_call",
            rail = %self.manifest.id,
            method,
            packaging = self.backend.packaging().as_str(),
            elapsed_ms = tracing::field::Empty,
        );
        let started = Instant::now();
        let caps = Arc::new(self.broker.lend(self.policy.clone(), self.limits.timeout));
        let fut = self.backend.call(call, caps);
        let outcome = tokio::time::timeout(self.limits.timeout + self.limits.grace, fut)
            .instrument(span.clone())
            .await;
        let elapsed = started.elapsed();
        span.record("elapsed_ms", elapsed.as_millis() as u64);
        let (kind, fault) = match outcome {
            Ok(Ok(reply)) => {
                self.observe(method, "ok", Some(elapsed));
                self.record_success();
                return Ok(reply);
            }
            Ok(Err(BackendError::Rail(e))) => {
                self.observe(method, "rail_error", Some(elapsed));
                self.record_success();
                return Err(CallError::Rail(e));
            }
            Ok(Err(e)) => ("fault", e.to_string()),
            Err(_) => ("hung", "call hung past its deadline".to_string()),
        };
        self.observe(method, kind, Some(elapsed));
        tracing::warn!(parent: &span, %fault, "rail faulted; quarantining");
        self.record_fault(&fault);
        Err(CallError::Fault {
            rail: self.manifest.id.clone(),
            fault,
        })
    }

    /// Counts one call (and times it, when it ran) by rail, method and outcome.
    fn observe(&self, method: &'static str, outcome: &'static str, elapsed: Option<Duration>) {
        let rail = self.rail_label.clone();
        metrics::counter!("relay_rail_calls_total", "rail" => rail.clone(), "method" => method, "outcome" => outcome)
            .increment(1);
        if let Some(elapsed) = elapsed {
            metrics::histogram!("relay_rail_call_duration_seconds", "rail" => rail, "method" => method, "outcome" => outcome)
                .record(elapsed);
        }
    }

    fn check_quarantine(&self) -> Option<CallError> {
        let c = self.containment.lock().expect("containment lock");
        let until = c.until?;
        let now = Instant::now();
        (until > now).then(|| CallError::Quarantined {
            rail: self.manifest.id.clone(),
            remaining_ms: (until - now).as_millis() as u64,
            last_fault: c.last_fault.clone(),
        })
    }

    fn record_success(&self) {
        let mut c = self.containment.lock().expect("containment lock");
        c.faults = 0;
        c.until = None;
    }

    fn record_fault(&self, fault: &str) {
        let mut c = self.containment.lock().expect("containment lock");
        c.faults = c.faults.saturating_add(1);
        let spacing = relay_types::Backoff::of(self.limits.backoff_base, self.limits.backoff_max);
        c.until = Some(Instant::now() + spacing.delay(c.faults));
        c.last_fault = fault.to_string();
    }
}

fn down(detail: String) -> RailHealth {
    RailHealth {
        status: HealthStatus::Down,
        detail: Some(detail),
        lanes: vec![],
    }
}
