//! `GET /v2/bridge-status`: Socket's view of a bridging transaction, mapped
//! to the spec's route states and stages.
//!
//! | `sourceTxStatus` / `destinationTxStatus` | state | stage |
//! |---|---|---|
//! | HTTP 404 | `PENDING` | — |
//! | any / `COMPLETED` | `DONE` (`destTx` = `destinationTransactionHash`) | `COMPLETED` |
//! | any / `REFUNDED` | `REFUNDED` | — |
//! | `FAILED` / any, any / `FAILED` | `FAILED` | — |
//! | `PENDING` / `PENDING` | `BRIDGING` | `RECEIVING` |
//! | `COMPLETED` / `PENDING` | `BRIDGING` | `SENDING` |

use relay_plugin_api::{Host, HttpRequest, RailError, TrackRequest, TrackState, TrackStatus};
use relay_rail_sdk::{
    health::chain_pair_probe,
    track::{read_track_ref, track_status, track_via},
};
use serde::Deserialize;

use crate::{
    quote::{Envelope, TrackRef},
    UPSTREAM,
};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BridgeStatus {
    source_tx_status: String,
    destination_tx_status: String,
    destination_transaction_hash: Option<String>,
}

/// The bridge-status request.
pub fn request(host: &dyn Host, req: &TrackRequest, src_tx: &str) -> HttpRequest {
    let track: TrackRef = read_track_ref(req);
    let mut q = vec![
        ("transactionHash", src_tx.to_string()),
        ("fromChainId", req.from_chain.to_string()),
        ("toChainId", req.to_chain.to_string()),
    ];
    if let Some(b) = track.bridge_name {
        q.push(("bridgeName", b));
    }
    UPSTREAM.get(host, "/v2/bridge-status", &q)
}

/// The health probe: the status of a transaction no chain has.
pub fn probe_request(host: &dyn Host) -> HttpRequest {
    chain_pair_probe(&UPSTREAM, host, "/v2/bridge-status", "transactionHash")
}

/// Asks Socket where the bridging transaction stands.
pub fn track(host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
    track_via(
        &UPSTREAM,
        host,
        req.src_tx.as_deref(),
        |tx| request(host, req, tx),
        |answer: Envelope<BridgeStatus>| match answer {
            Envelope {
                success: true,
                result: Some(s),
            } => map(s),
            Envelope { success: true, .. } => {
                Err(UPSTREAM.malformed("bridge-status: success without a result"))
            }
            _ => Err(RailError::upstream(
                "Bungee bridge-status answered success: false",
            )),
        },
    )
}

fn map(s: BridgeStatus) -> Result<TrackStatus, RailError> {
    let (src, dst) = (
        s.source_tx_status.to_ascii_uppercase(),
        s.destination_tx_status.to_ascii_uppercase(),
    );
    let message = format!("Bungee source {src}, destination {dst}");
    let dest_tx = s.destination_transaction_hash;
    let (state, stage, dest_tx) = match (src.as_str(), dst.as_str()) {
        (_, "COMPLETED") => (TrackState::Done, Some("COMPLETED"), dest_tx),
        (_, "REFUNDED") => (TrackState::Refunded, None, dest_tx),
        ("FAILED", _) | (_, "FAILED") => (TrackState::Failed, None, None),
        ("PENDING", "PENDING") => (TrackState::Bridging, Some("RECEIVING"), None),
        ("COMPLETED", "PENDING") => (TrackState::Bridging, Some("SENDING"), None),
        _ => {
            let m: String = message.chars().take(80).collect();
            return Err(UPSTREAM.malformed(format!("unknown status: {m}")));
        }
    };
    Ok(track_status(state, stage, dest_tx, message))
}
