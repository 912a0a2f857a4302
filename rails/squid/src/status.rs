//! `GET /v2/status`: Squid's view of a submitted route, mapped to the spec's
//! route states and stages.
//!
//! Every value of Squid's own `SquidTransactionStatus` enum
//! (`0xsquid/squid-types` `src/status/index.ts`), the `refund` spelling of
//! its docs ("Track status", "Get Route Status"), and what each means for the
//! money:
//!
//! | `squidTransactionStatus` | what happened to the funds (Squid's docs) | state | stage |
//! |---|---|---|---|
//! | `not_found`, or HTTP 404 | not indexed yet (usually 5–10 s after execution) | `PENDING` | — |
//! | `ongoing` | in flight, nothing to do | `BRIDGING` | `SENDING` |
//! | `needs_gas` | Axelar: destination gas spiked; execution paused until gas is added (Axelarscan); the funds are in transit | `BRIDGING` | `SENDING` |
//! | `success` | delivered to `toAddress` on every chain | `DONE` (`destTx` = `toChain.transactionId`) | `COMPLETED` |
//! | `partial_success` | the destination call reverted; the bridged token (e.g. axlUSDC) was delivered to `toAddress` instead | `DONE` (`destTx`; the message says partial) | `COMPLETED` |
//! | `failed_on_destination` | the destination execution failed: nothing delivered and nothing refunded (recovery is manual, through Axelarscan or Squid's support) | `FAILED` | — |
//! | `refunded` (types, "Integrating Coral"), `refund` (docs) | a Coral/Intents route failed; the source token went back to the route's `fromAddress` on the source chain | `REFUNDED` | — |
//! | absent (optional in Squid's `StatusResponse`) | no verdict yet | `PENDING` (the message names Axelar's `status`) | — |
//! | any other value | not Squid's documented vocabulary | `PENDING` (the message names the value) | — |
//!
//! Error answers ("Error Codes": `{message, type}`): 404 is "not indexed
//! yet" (`PENDING`); 400 `BAD_REQUEST` (missing parameters) is
//! `INVALID_INPUT`, 401 `UNAUTHORIZED` is `CAPABILITY`, 429 `RATE_LIMITED`
//! and 5xx `INTERNAL_ERROR` are `UPSTREAM` (retryable); a 200 body that is
//! not a status object is `UPSTREAM_MALFORMED`.

use relay_plugin_api::{Host, HttpRequest, RailError, TrackRequest, TrackState, TrackStatus};
use relay_rail_sdk::{
    health::chain_pair_probe,
    track::{read_track_ref, track_status, track_via},
};
use serde::Deserialize;

use crate::{route::TrackRef, UPSTREAM};

/// Squid's `StatusResponse`: every field the rail reads is optional there.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusAnswer {
    squid_transaction_status: Option<String>,
    /// Axelar's own status, named when Squid gives no verdict.
    status: Option<String>,
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

/// At most 40 characters of an upstream value, for a message.
fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

fn map(a: StatusAnswer) -> Result<TrackStatus, RailError> {
    let Some(raw) = a.squid_transaction_status else {
        let axelar = a.status.as_deref().map(clip).unwrap_or_default();
        return Ok(track_status(
            TrackState::Pending,
            None,
            None,
            format!("Squid gave no squidTransactionStatus yet (status {axelar:?})"),
        ));
    };
    let delivered = a.to_chain.and_then(|c| c.transaction_id);
    let status = raw.to_ascii_lowercase();
    let (state, stage, dest_tx, note) = match status.as_str() {
        "not_found" => (TrackState::Pending, None, None, "not indexed yet"),
        "ongoing" => (TrackState::Bridging, Some("SENDING"), None, "in flight"),
        "needs_gas" => (
            TrackState::Bridging,
            Some("SENDING"),
            None,
            "paused: destination gas must be topped up on Axelarscan",
        ),
        "success" => (TrackState::Done, Some("COMPLETED"), delivered, "delivered"),
        "partial_success" => (
            TrackState::Done,
            Some("COMPLETED"),
            delivered,
            "partial: the destination call reverted and the bridged token was delivered instead",
        ),
        "failed_on_destination" => (
            TrackState::Failed,
            None,
            None,
            "the destination execution failed: nothing delivered, nothing refunded (recover via Axelarscan or Squid support)",
        ),
        "refunded" | "refund" => (
            TrackState::Refunded,
            None,
            None,
            "refunded to the sender on the source chain",
        ),
        _ => (
            TrackState::Pending,
            None,
            None,
            "not a status Squid documents; still waiting",
        ),
    };
    Ok(track_status(
        state,
        stage,
        dest_tx,
        format!("Squid {}: {note}", clip(&status)),
    ))
}
