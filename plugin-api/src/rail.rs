//! The one trait every rail implements.

use crate::{
    ExecutionPlan, Host, PrepareRequest, QuoteRequest, RailError, RailHealth, RailManifest,
    RailQuote, TrackRequest, TrackStatus,
};

/// A rail: pricing, planning and tracking knowledge for some lanes.
///
/// Implementations are plain synchronous code: capability calls through
/// `host` block from the rail's point of view while the host runs them
/// asynchronously. A rail keeps no mutable global state between calls (the
/// wasm packaging gives every call a fresh instance); anything it needs to
/// remember belongs in the plan's `track_ref` or the quote's `detail`.
pub trait Rail: Send + Sync {
    /// Identity, coverage, egress and contracts. Must not use the host.
    fn manifest(&self) -> RailManifest;

    /// Prices `req`. Deterministic for fixed inputs and upstream answers.
    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError>;

    /// Turns an accepted quote into declarative execution steps.
    fn prepare(&self, host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError>;

    /// Reads the progress of a submitted route from the upstream.
    fn track(&self, host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError>;

    /// Reports health (the upstream's, the float's).
    fn health(&self, host: &dyn Host) -> RailHealth;
}
