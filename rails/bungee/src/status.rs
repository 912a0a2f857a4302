//! `GET /v3/swap/status?quoteId=`: Socket's view of a route, mapped to the
//! spec's route states and stages.
//!
//! The mapping of every Socket value is the crate documentation's
//! "Status and error mapping" table.

use relay_plugin_api::{Host, HttpRequest, RailError, TrackRequest, TrackState, TrackStatus};
use relay_rail_sdk::{
    health::PROBE_TX,
    track::{read_track_ref, track_status, track_via},
};
use serde::Deserialize;

use crate::{
    quote::{with_affiliate, Envelope, TrackRef},
    UPSTREAM,
};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SwapStatus {
    status: Option<String>,
    status_code: Option<String>,
    origin: Option<Leg>,
    destination: Option<Leg>,
    refund: Option<Refund>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Leg {
    status: Option<String>,
    tx_hash: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Refund {
    tx_hash: Option<String>,
}

/// The status request of the route with `quote_id`.
pub fn request(host: &dyn Host, quote_id: &str) -> HttpRequest {
    let req = UPSTREAM.get(
        host,
        "/v3/swap/status",
        &[("quoteId", quote_id.to_string())],
    );
    with_affiliate(host, req)
}

/// The health probe: the status of a quote id Socket never issued.
pub fn probe_request(host: &dyn Host) -> HttpRequest {
    request(host, PROBE_TX)
}

/// Asks Socket where the route stands, by the `quoteId` the quote recorded.
pub fn track(host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
    let track: TrackRef = read_track_ref(req);
    let quote_id = track.quote_id.filter(|q| !q.is_empty());
    if req.src_tx.is_some() && quote_id.is_none() {
        // A route sent before this rail moved to Swap V3 (its reference is
        // the v2 rail's `{"bridgeName":…}`): Socket cannot be asked about
        // it by quoteId, so the host watches the destination for the
        // payout itself — the route is never failed (and the sender never
        // refunded) while the bridge may still deliver.
        return Err(RailError::no_status_api());
    }
    let quote_id = quote_id.unwrap_or_default();
    track_via(
        &UPSTREAM,
        host,
        req.src_tx.as_deref(),
        |_| request(host, &quote_id),
        |answer: Envelope<SwapStatus>| match answer {
            Envelope {
                success: true,
                result: Some(s),
                ..
            } => map(s),
            Envelope { success: true, .. } => {
                Err(UPSTREAM.malformed("status: success without a result"))
            }
            _ => Err(RailError::upstream(
                "Socket swap status answered success: false",
            )),
        },
    )
}

fn map(s: SwapStatus) -> Result<TrackStatus, RailError> {
    let status = s
        .status
        .clone()
        .or_else(|| s.status_code.clone())
        .ok_or_else(|| UPSTREAM.malformed("status: neither status nor statusCode"))?
        .to_ascii_uppercase();
    let leg = |l: &Option<Leg>| {
        l.as_ref()
            .and_then(|l| l.status.clone())
            .unwrap_or_else(|| "-".into())
    };
    let message = format!(
        "Socket {status} (origin {}, destination {})",
        leg(&s.origin),
        leg(&s.destination)
    );
    let dest_tx = s.destination.as_ref().and_then(|d| d.tx_hash.clone());
    let refund_tx = s.refund.as_ref().and_then(|r| r.tx_hash.clone());
    if refund_tx.as_deref().is_some_and(|t| !t.is_empty()) {
        let m = format!("{message}; refunded in {}", refund_tx.unwrap_or_default());
        return Ok(track_status(TrackState::Refunded, None, None, m));
    }
    let (state, stage, dest_tx, message) = match status.as_str() {
        "COMPLETED" => (TrackState::Done, Some("COMPLETED"), dest_tx, message),
        "REFUNDED" => (TrackState::Refunded, None, None, message),
        "FAILED" => (TrackState::Failed, None, None, message),
        "EXPIRED" => (
            TrackState::Failed,
            None,
            None,
            format!("{message}: the route expired"),
        ),
        "IN_PROGRESS" => {
            let origin_done = leg(&s.origin).eq_ignore_ascii_case("COMPLETED");
            let stage = if origin_done { "RECEIVING" } else { "SENDING" };
            (TrackState::Bridging, Some(stage), None, message)
        }
        "PENDING" => (TrackState::Pending, None, None, message),
        other => {
            let v: String = other.chars().take(40).collect();
            let m = format!("{message}: status {v:?} is not one Socket documents; still pending");
            (TrackState::Pending, None, None, m)
        }
    };
    Ok(track_status(state, stage, dest_tx, message))
}
