//! Progress of a submitted route as the rail's upstream reports it.
//!
//! The host asks while a route's plan waits at a
//! [`PlanAction::AwaitUpstream`] step; [`crate::Rail::track`] says when and
//! what happens after each answer.
//!
//! An upstream without a status API answers with
//! [`crate::RailError::no_status_api`] (contract 1.1) instead of a
//! [`TrackStatus`]: the host then watches the destination chain for the
//! payout itself (an ERC-20 `Transfer` of the destination token to the
//! recipient of at least the route's `minOut`) and finishes the step as a
//! [`TrackState::Done`] answer would — see [`crate::Rail::track`].

use serde::{Deserialize, Serialize};

use crate::{ChainRef, PlanAction};

/// Where a route stands upstream, and what the host does on each answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TrackState {
    /// Not yet seen upstream: the host keeps asking; a route waiting for
    /// the user's deposit stays `AWAITING_DEPOSIT`.
    Pending,
    /// In flight: the route is `BRIDGING` (with `stage`); the host keeps
    /// asking.
    Bridging,
    /// Delivered: the wait ends (`destTx` from [`TrackStatus::dest_tx`]) and
    /// the plan goes on, the route ending `DONE` after its last step. Answer
    /// it only on evidence of delivery.
    Done,
    /// Failed upstream: the route ends `FAILED` (`UPSTREAM_FAILED`) and, if
    /// the relayer pulled the sender's funds, the host refunds the sender
    /// from its inventory at once. Not for "not seen yet".
    Failed,
    /// The upstream returned the funds to whoever deposited them — the
    /// relayer, which sends every transaction of a plan. The route ends
    /// `FAILED` (`REFUNDED_BY_UPSTREAM`) and the host refunds the sender as
    /// for [`TrackState::Failed`].
    Refunded,
}

impl TrackState {
    /// Whether nothing will change any more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TrackState::Done | TrackState::Failed | TrackState::Refunded
        )
    }
}

/// What the host knows about a submitted route.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackRequest {
    /// Route id.
    pub route_id: String,
    /// The route's track reference: the plan's `track_ref`, replaced by the
    /// hash of a follow-up `ContractCall` once one ran; else the waiting
    /// `AwaitUpstream` step's `reference` (when not empty).
    pub reference: Option<String>,
    /// Source chain.
    pub from_chain: ChainRef,
    /// Destination chain.
    pub to_chain: ChainRef,
    /// The route's source transaction hash, once broadcast: the deposit
    /// `ContractCall`'s, else the Permit2 pull's (or the `RelayRouter`
    /// transaction's). Where to start looking for a delivery on chain.
    pub src_tx: Option<String>,
}

/// The rail's reading of upstream progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackStatus {
    /// State.
    pub state: TrackState,
    /// Finer stage, in the upstream's vocabulary mapped to the spec's
    /// (`RECEIVING`, `SWAPPING`, `SENDING`, `COMPLETED`).
    pub stage: Option<String>,
    /// Destination transaction, once delivered.
    pub dest_tx: Option<String>,
    /// Detail for operators and clients.
    pub message: Option<String>,
    /// Actions the host must take to continue (e.g. `receiveMessage` with an
    /// attestation once it is ready), with a `Pending` or `Bridging` state:
    /// the host inserts them after the waiting step, runs them under the
    /// same policy as the plan's own steps, then waits on `track` again.
    pub follow_up: Vec<PlanAction>,
}
