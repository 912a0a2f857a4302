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
    ///
    /// Asked with the user's whole amount when pricing and, at execution,
    /// with the amount the rail will carry; the host nets the answer itself
    /// (route fee, relayer gas, fees not included): see [`QuoteRequest`] and
    /// [`crate::GasEstimate`].
    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError>;

    /// Turns an accepted quote into declarative execution steps: see
    /// [`PrepareRequest::quote`] for the amounts, and [`ExecutionPlan`] and
    /// [`crate::PlanAction`] for what the host does with each step.
    fn prepare(&self, host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError>;

    /// Reads the progress of a submitted route from the upstream.
    ///
    /// Called while the route waits at a [`crate::PlanAction::AwaitUpstream`]
    /// step: every `execution.track_interval_ms` (2 s by default) by the
    /// route's runner, and on each `GET /api/route/status` read (an answer
    /// within 3 s is shown as the route's `upstream`, nothing recorded). An
    /// `Err`, or a rail that is not loaded, is not a failure: the host asks
    /// again at the next interval. [`crate::TrackState`] says what the host
    /// does with each answer.
    ///
    /// **An upstream without a status API.** The host learns of delivery
    /// only from this answer. If it never says `Done`, the route waits until
    /// `execution.track_timeout_ms` after it was created (21,600,000 ms,
    /// 6 hours, by default), then ends `FAILED` with `UPSTREAM_TIMEOUT` —
    /// and when the relayer pulled the sender's funds the host refunds them
    /// from its inventory, although the upstream may still deliver. So:
    ///
    /// - observe delivery yourself when the upstream cannot tell you:
    ///   declare the destination chain in `rpc_chains` and look for the
    ///   payout with [`Host::rpc`] (`eth_getLogs` for the token's `Transfer`
    ///   to the recipient, or the upstream's fill event, from
    ///   [`TrackRequest::src_tx`]'s time on), answering `Done` with its
    ///   transaction as `dest_tx`; until then answer `Bridging`;
    /// - if delivery cannot be observed at all, do not mark the lane
    ///   executable (`executable: false` with a `quote_only_reason`): every
    ///   route on it would time out and be refunded after the upstream kept
    ///   the deposit;
    /// - never answer `Done` without evidence (the route would be `DONE`
    ///   with nothing delivered), nor `Failed` for "not seen yet" (the
    ///   sender would be refunded at once).
    fn track(&self, host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError>;

    /// Reports health (the upstream's, the float's).
    fn health(&self, host: &dyn Host) -> RailHealth;
}
