//! The capability broker: everything a rail may ask of the host, each
//! capability in its own module enforcing its own policy.
//!
//! A rail gets a [`CallCapabilities`] for the length of one call: the broker
//! (shared clients and configuration), the rail's [`RailPolicy`] (what its
//! manifest and the operator allow) and the call's deadline. Keys never pass
//! through here; credentials are injected into outbound requests by
//! reference and their values never reach the rail.

mod http;
mod rpc;

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

pub use self::http::HttpCapability;
pub use self::rpc::RpcCapability;
pub use relay_config::{CapabilityConfig, CredentialConfig};
use relay_plugin_api::{ChainRef, HostError, HttpRequest, HttpResponse, LogLevel};
/// The clocks [`CapabilityBroker::with_clock`] takes.
pub use relay_types::clock::{ManualClock, SharedClock};

/// What one rail may do, from its manifest plus operator configuration.
#[derive(Clone, Debug, Default)]
pub struct RailPolicy {
    /// Rail id (for logs).
    pub rail_id: String,
    /// Hosts it may reach: the manifest's `egress` plus operator additions.
    pub egress: Vec<String>,
    /// Chains it may read.
    pub rpc_chains: Vec<ChainRef>,
    /// Operator configuration values for the rail.
    pub config: BTreeMap<String, String>,
    /// Credential names the operator granted it.
    pub credentials: Vec<String>,
}

/// A capability call that policy refused: kept for operators and for the
/// conformance kit's "no undeclared egress" clause.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Denial {
    /// Rail id.
    pub rail: String,
    /// `http` or `rpc`.
    pub capability: &'static str,
    /// Why.
    pub reason: String,
}

/// How many denials are remembered.
const DENIALS_KEPT: usize = 256;

/// Shared, process-wide capability implementations.
#[derive(Debug)]
pub struct CapabilityBroker {
    http: HttpCapability,
    rpc: RpcCapability,
    /// Where a rail's clock reads from: the host's, or a frozen
    /// [`ManualClock`](relay_types::ManualClock) (quotes that must be
    /// deterministic).
    clock: SharedClock,
    denials: std::sync::Mutex<std::collections::VecDeque<Denial>>,
}

impl CapabilityBroker {
    /// Builds the broker from configuration, on the system clock until
    /// [`CapabilityBroker::with_clock`] hands it the host's.
    pub fn new(config: &CapabilityConfig) -> Self {
        CapabilityBroker {
            http: HttpCapability::new(config),
            rpc: RpcCapability::new(config),
            clock: relay_types::clock::system(),
            denials: Default::default(),
        }
    }

    /// The same broker reading time from `clock`.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// The most recent refused capability calls, oldest first.
    pub fn denials(&self) -> Vec<Denial> {
        self.denials
            .lock()
            .expect("denials lock")
            .iter()
            .cloned()
            .collect()
    }

    fn record_denial(&self, rail: &str, capability: &'static str, err: &HostError) {
        tracing::warn!(rail, capability, reason = %err.message, "capability denied");
        let mut d = self.denials.lock().expect("denials lock");
        if d.len() == DENIALS_KEPT {
            d.pop_front();
        }
        d.push_back(Denial {
            rail: rail.to_string(),
            capability,
            reason: err.message.clone(),
        });
    }

    fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Lends capabilities to one call of `policy`'s rail, due by `timeout`.
    pub fn lend(self: &Arc<Self>, policy: Arc<RailPolicy>, timeout: Duration) -> CallCapabilities {
        let now = Duration::from_millis(self.now_ms());
        CallCapabilities {
            broker: self.clone(),
            policy,
            deadline: Instant::now() + timeout,
            deadline_ms: (now + timeout).as_millis() as u64,
        }
    }
}

/// Characters of a rail's log line kept; the rest is cut.
const LOG_MESSAGE_CHARS: usize = 2_000;

/// The first `max` characters of `s`, borrowed (a rail logs on every call;
/// a line within the limit is not copied).
fn truncate_chars(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    match s.char_indices().nth(max) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// The capabilities lent to one call.
#[derive(Debug)]
pub struct CallCapabilities {
    broker: Arc<CapabilityBroker>,
    policy: Arc<RailPolicy>,
    deadline: Instant,
    deadline_ms: u64,
}

impl CallCapabilities {
    /// HTTP to a declared host, within the deadline and size cap.
    pub async fn http(&self, req: HttpRequest) -> Result<HttpResponse, HostError> {
        let res = self
            .broker
            .http
            .send(&self.policy, req, self.deadline)
            .await;
        self.audit("http", res)
    }

    /// Read-only JSON-RPC on a declared chain.
    pub async fn rpc(
        &self,
        chain: ChainRef,
        method: &str,
        params: &str,
    ) -> Result<String, HostError> {
        let res = self
            .broker
            .rpc
            .call(&self.policy, chain, method, params, self.deadline)
            .await;
        self.audit("rpc", res)
    }

    fn audit<T>(
        &self,
        capability: &'static str,
        res: Result<T, HostError>,
    ) -> Result<T, HostError> {
        if let Err(e) = &res {
            if e.kind == relay_plugin_api::HostErrorKind::Denied {
                self.broker
                    .record_denial(&self.policy.rail_id, capability, e);
            }
        }
        res
    }

    /// Epoch milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.broker.now_ms()
    }

    /// The call's deadline, epoch milliseconds.
    pub fn deadline_ms(&self) -> u64 {
        self.deadline_ms
    }

    /// The call's deadline as an instant.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// A log line from the rail, tagged with its id.
    pub fn log(&self, level: LogLevel, message: &str) {
        let rail = self.policy.rail_id.as_str();
        let message = truncate_chars(message, LOG_MESSAGE_CHARS);
        match level {
            LogLevel::Debug => tracing::debug!(rail, "{message}"),
            LogLevel::Info => tracing::info!(rail, "{message}"),
            LogLevel::Warn => tracing::warn!(rail, "{message}"),
            LogLevel::Error => tracing::error!(rail, "{message}"),
        }
    }

    /// Operator configuration for the rail.
    pub fn config(&self, key: &str) -> Option<String> {
        self.policy.config.get(key).cloned()
    }

    /// The rail this call belongs to.
    pub fn rail_id(&self) -> &str {
        &self.policy.rail_id
    }
}

#[cfg(test)]
mod tests {
    use super::truncate_chars;

    #[test]
    fn log_lines_are_cut_by_characters_not_bytes() {
        assert_eq!(truncate_chars("short", 2_000), "short");
        let long = "é".repeat(2_500);
        let cut = truncate_chars(&long, 2_000);
        assert_eq!(cut.chars().count(), 2_000);
        assert_eq!(cut.len(), 4_000);
        // Within the limit in characters but not in bytes: kept whole.
        let wide = "é".repeat(1_500);
        assert_eq!(truncate_chars(&wide, 2_000), wide);
    }
}
