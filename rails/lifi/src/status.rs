//! `GET /v1/status`: LI.FI's view of a submitted transfer, mapped to the
//! spec's route states and stages.
//!
//! | LI.FI `status` / `substatus` | state | stage |
//! |---|---|---|
//! | `NOT_FOUND`, `INVALID`, HTTP 404 | `PENDING` | — |
//! | `PENDING` / `WAIT_SOURCE_CONFIRMATIONS` | `BRIDGING` | `RECEIVING` |
//! | `PENDING` / anything else | `BRIDGING` | `SENDING` |
//! | `DONE` / `COMPLETED`, `PARTIAL` | `DONE` (`destTx` = `receiving.txHash`) | `COMPLETED` |
//! | `DONE` / `REFUNDED` | `REFUNDED` | — |
//! | `FAILED` | `FAILED` | — |
//!
//! `PARTIAL` means the recipient got a different token than asked (LI.FI
//! delivered, a destination swap did not happen): delivered, with the
//! message saying so. `INVALID` is kept pending rather than failed: it is a
//! lookup problem upstream, not evidence that funds are lost.

use relay_plugin_api::{Host, HttpRequest, RailError, TrackRequest, TrackState, TrackStatus};
use relay_rail_sdk::{
    health::PROBE_TX,
    track::{read_track_ref, track_status, track_via},
};
use serde::Deserialize;

use crate::{quote::TrackRef, UPSTREAM};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusAnswer {
    status: String,
    substatus: Option<String>,
    substatus_message: Option<String>,
    receiving: Option<Receiving>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Receiving {
    tx_hash: Option<String>,
}

/// The status request for `req` (needs the source transaction).
pub fn request(host: &dyn Host, req: &TrackRequest, src_tx: &str) -> HttpRequest {
    let track: TrackRef = read_track_ref(req);
    let mut q = vec![
        ("txHash", src_tx.to_string()),
        ("fromChain", req.from_chain.to_string()),
        ("toChain", req.to_chain.to_string()),
    ];
    if let Some(b) = track.bridge {
        q.push(("bridge", b));
    }
    UPSTREAM.get(host, "/v1/status", &q)
}

/// The health probe: the status of a transaction no chain has.
pub fn probe_request(host: &dyn Host) -> HttpRequest {
    UPSTREAM.get(host, "/v1/status", &[("txHash", PROBE_TX.to_string())])
}

/// Asks LI.FI where the transfer stands.
pub fn track(host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
    track_via(
        &UPSTREAM,
        host,
        req.src_tx.as_deref(),
        |tx| request(host, req, tx),
        map,
    )
}

fn map(a: StatusAnswer) -> Result<TrackStatus, RailError> {
    let sub = a.substatus.as_deref().unwrap_or("");
    let message = match &a.substatus_message {
        Some(m) => format!("LI.FI {} {sub}: {m}", a.status),
        None => format!("LI.FI {} {sub}", a.status).trim_end().to_string(),
    };
    let dest_tx = a.receiving.and_then(|r| r.tx_hash);
    let (state, stage, dest_tx) = match (a.status.as_str(), sub) {
        ("NOT_FOUND" | "INVALID", _) => (TrackState::Pending, None, None),
        ("PENDING", "WAIT_SOURCE_CONFIRMATIONS") => (TrackState::Bridging, Some("RECEIVING"), None),
        ("PENDING", _) => (TrackState::Bridging, Some("SENDING"), None),
        ("DONE", "REFUNDED") => (TrackState::Refunded, None, dest_tx),
        ("DONE", _) => (TrackState::Done, Some("COMPLETED"), dest_tx),
        ("FAILED", _) => (TrackState::Failed, None, None),
        (other, _) => {
            return Err(UPSTREAM.malformed(format!("unknown status {:?}", trunc(other))));
        }
    };
    Ok(track_status(state, stage, dest_tx, message))
}

fn trunc(s: &str) -> String {
    s.chars().take(40).collect()
}
