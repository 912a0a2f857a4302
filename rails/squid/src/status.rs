//! `GET /v2/status`: Squid's view of a submitted route, mapped to the spec's
//! route states and stages.
//!
//! | `squidTransactionStatus` | state | stage |
//! |---|---|---|
//! | `not_found`, HTTP 404 (not indexed yet) | `PENDING` | — |
//! | `ongoing` | `BRIDGING` | `SENDING` |
//! | `needs_gas` (Axelar: destination gas spiked) | `BRIDGING` | `SENDING` |
//! | `success` | `DONE` (`destTx` = `toChain.transactionId`) | `COMPLETED` |
//! | `partial_success` (destination call reverted; the bridged token was delivered) | `DONE` | `COMPLETED` |
//! | `refunded` | `REFUNDED` | — |
//! | `failed` / `error` | `FAILED` | — |

use relay_plugin_api::{Host, HttpRequest, RailError, TrackRequest, TrackState, TrackStatus};
use relay_rail_sdk::{
    health::chain_pair_probe,
    track::{read_track_ref, track_status, track_via},
};
use serde::Deserialize;

use crate::{route::TrackRef, UPSTREAM};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusAnswer {
    squid_transaction_status: String,
    to_chain: Option<ChainLeg>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChainLeg {
    transaction_id: Option<String>,
}

/// The status request, parameters in Squid's documented order.
pub fn request(host: &dyn Host, req: &TrackRequest, src_tx: &str) -> HttpRequest {
    let track: TrackRef = read_track_ref(req);
    let mut q = vec![("transactionId", src_tx.to_string())];
    if let Some(r) = track.request_id {
        q.push(("requestId", r));
    }
    q.push(("fromChainId", req.from_chain.to_string()));
    q.push(("toChainId", req.to_chain.to_string()));
    if let Some(id) = track.quote_id {
        q.push(("quoteId", id));
    }
    UPSTREAM.get(host, "/v2/status", &q)
}

/// The health probe: the status of a transaction no chain has.
pub fn probe_request(host: &dyn Host) -> HttpRequest {
    chain_pair_probe(&UPSTREAM, host, "/v2/status", "transactionId")
}

/// Asks Squid where the route stands.
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
    let dest_tx = a.to_chain.and_then(|c| c.transaction_id);
    let status = a.squid_transaction_status.to_ascii_lowercase();
    let (state, stage, dest_tx, note) = match status.as_str() {
        "not_found" => (TrackState::Pending, None, None, "not indexed yet"),
        "ongoing" => (TrackState::Bridging, Some("SENDING"), None, "in flight"),
        "needs_gas" => (
            TrackState::Bridging,
            Some("SENDING"),
            None,
            "paused: destination gas must be topped up on Axelar",
        ),
        "success" => (TrackState::Done, Some("COMPLETED"), dest_tx, "delivered"),
        "partial_success" => (
            TrackState::Done,
            Some("COMPLETED"),
            dest_tx,
            "partial: the destination call reverted and the bridged token was delivered instead",
        ),
        "refunded" | "refund" => (
            TrackState::Refunded,
            None,
            dest_tx,
            "refunded to the sender",
        ),
        "failed" | "error" => (TrackState::Failed, None, None, "failed"),
        other => {
            let other: String = other.chars().take(40).collect();
            return Err(UPSTREAM.malformed(format!("unknown squidTransactionStatus {other:?}")));
        }
    };
    Ok(track_status(
        state,
        stage,
        dest_tx,
        format!("Squid {status}: {note}"),
    ))
}
