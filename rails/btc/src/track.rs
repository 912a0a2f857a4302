//! Chainflip's swap states as route states and the spec's stages:
//!
//! | Chainflip | route | stage |
//! |---|---|---|
//! | WAITING (channel open, nothing witnessed) | PENDING | — |
//! | WAITING, channel expired | FAILED | — |
//! | RECEIVING (deposit seen, confirming) | BRIDGING | RECEIVING |
//! | SWAPPING | BRIDGING | SWAPPING |
//! | SENDING, SENT (egress broadcast) | BRIDGING | SENDING |
//! | COMPLETED | DONE | COMPLETED |
//! | FAILED with a refund egress | REFUNDED | — |
//! | FAILED | FAILED | — |

use relay_plugin_api::{Host, RailError, TrackRequest, TrackState, TrackStatus};
use relay_rail_sdk::track::track_status;

use crate::chainflip::{self, SwapStatus, CHAINFLIP};

/// Reads the swap: an EVM source's vault swap by its transaction hash, a
/// bitcoin source's deposit channel by the id in `req.reference`.
pub fn track(host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
    let (field, id) = if req.from_chain.is_evm() {
        ("srcTx", req.src_tx.as_deref())
    } else {
        ("reference", req.reference.as_deref())
    };
    let Some(id) = id else {
        return Ok(track_status(
            TrackState::Pending,
            None,
            None,
            "nothing sent to Chainflip yet",
        ));
    };
    let http = chainflip::status_request(host, id)
        .ok_or_else(|| RailError::invalid(field, format!("{id:?} is not a Chainflip swap id")))?;
    let resp = CHAINFLIP.send(host, http)?;
    match resp.status {
        200 => Ok(map(&chainflip::parse_status(&resp.body)?)),
        404 => Ok(track_status(
            TrackState::Pending,
            None,
            None,
            "Chainflip has not indexed the channel yet",
        )),
        _ => Err(CHAINFLIP.status_error(&relay_rail_sdk::upstream::error_report(&resp))),
    }
}

/// The route state of a swap status.
pub fn map(s: &SwapStatus) -> TrackStatus {
    let (state, stage, message) = match s.state.as_str() {
        "WAITING" if s.expired => (
            TrackState::Failed,
            None,
            "deposit channel expired before a deposit".into(),
        ),
        "WAITING" => (
            TrackState::Pending,
            None,
            "waiting for the deposit".to_string(),
        ),
        "RECEIVING" => (
            TrackState::Bridging,
            Some("RECEIVING"),
            "deposit seen; confirming".into(),
        ),
        "SWAPPING" => (TrackState::Bridging, Some("SWAPPING"), "swapping".into()),
        "SENDING" | "SENT" => (
            TrackState::Bridging,
            Some("SENDING"),
            "egress broadcast".into(),
        ),
        "COMPLETED" => (TrackState::Done, Some("COMPLETED"), "delivered".into()),
        "FAILED" if s.refunded => (TrackState::Refunded, None, reason("refunded", s)),
        "FAILED" => (TrackState::Failed, None, reason("failed", s)),
        other => (
            TrackState::Bridging,
            None,
            format!("Chainflip state {other}"),
        ),
    };
    let dest_tx = (state == TrackState::Done)
        .then(|| s.egress_tx.clone())
        .flatten();
    track_status(state, stage, dest_tx, message)
}

fn reason(what: &str, s: &SwapStatus) -> String {
    match &s.failure {
        Some(r) => format!("Chainflip {what}: {r}"),
        None => format!("Chainflip {what}"),
    }
}
