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
    /// **An upstream without a status API** (contract 1.1). Answer
    /// `Err(`[`RailError::no_status_api`]`())` — any error of kind
    /// [`crate::RailErrorKind::UnsupportedLane`] from `track` means the same:
    /// "I cannot observe delivery; host, watch the destination". The host
    /// then watches the destination chain itself: from the destination's
    /// head when the watch began (less a small margin, recorded durably so
    /// a restarted host resumes from it), it looks for an ERC-20
    /// `Transfer(from, recipient, value)` of the route's destination token
    /// with `value` at least the route's guaranteed minimum (`minOut`) that
    /// no other route has claimed as its `destTx`. Found, the step finishes
    /// as a `Done` answer would (`destTx` is that log's transaction); until
    /// then the route stays `BRIDGING` and the status read shows
    /// `upstream {state: "WATCHING_DESTINATION", watch {…}}`. The host asks
    /// `track` again at every interval, so a rail that learns of delivery
    /// later may still answer.
    ///
    /// Only an ERC-20 payout on an EVM destination can be watched. For a
    /// native-asset or non-EVM destination the answer is an error like any
    /// other: with no terminal answer the route waits until
    /// `execution.track_timeout_ms` after it was created (21,600,000 ms, 6
    /// hours, by default), then ends `FAILED` with `UPSTREAM_TIMEOUT` — and
    /// when the relayer pulled the sender's funds the host refunds them
    /// from its inventory, although the upstream may still deliver. The
    /// watch is bounded by the same timeout. So:
    ///
    /// - for such a destination, observe delivery yourself if you can:
    ///   declare the destination chain in `rpc_chains` and look for the
    ///   payout with [`Host::rpc`] (or the upstream's fill event, from
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
