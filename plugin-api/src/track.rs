//! Progress of a submitted route as the rail's upstream reports it.

use serde::{Deserialize, Serialize};

use crate::{ChainRef, PlanAction};

/// Where a route stands upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TrackState {
    /// Not yet seen upstream.
    Pending,
    /// In flight.
    Bridging,
    /// Delivered.
    Done,
    /// Failed upstream; funds may need a refund.
    Failed,
    /// The upstream refunded the sender itself.
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
    /// The plan's `track_ref`.
    pub reference: Option<String>,
    /// Source chain.
    pub from_chain: ChainRef,
    /// Destination chain.
    pub to_chain: ChainRef,
    /// Source transaction hash, once broadcast.
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
    /// attestation once it is ready).
    pub follow_up: Vec<PlanAction>,
}
