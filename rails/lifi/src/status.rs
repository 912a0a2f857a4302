//! `GET /v1/status`: LI.FI's view of a submitted transfer, mapped to the
//! spec's route states and stages.
//!
//! LI.FI's vocabulary is its OpenAPI `StatusResponse` (`status`:
//! `NOT_FOUND|INVALID|PENDING|DONE|FAILED`, `substatus` optional) and the
//! `StatusMessage` / `SubstatusPending` / `SubstatusDone` / `SubstatusFailed`
//! enums of `@lifi/types`, as explained by docs.li.fi "Transaction status
//! tracking". Every value maps as follows:
//!
//! | LI.FI `status` / `substatus` | state | stage |
//! |---|---|---|
//! | HTTP 404, `NOT_FOUND` (not mined or not indexed yet) | `PENDING` | — |
//! | `INVALID` (hash not tied to the tool, or a third party down) | `PENDING`, message says so | — |
//! | `PENDING` / `WAIT_SOURCE_CONFIRMATIONS`, `INTENT_AWAITING_FUNDS` | `BRIDGING` | `RECEIVING` |
//! | `PENDING` / `WAIT_DESTINATION_TRANSACTION`, `INTENT_READY`, `INTENT_EXECUTING`, `INTENT_FAILED_RETRYABLE`, `INTENT_SIMULATION_FAILURE` | `BRIDGING` | `SENDING` |
//! | `PENDING` / `BRIDGE_NOT_AVAILABLE`, `CHAIN_NOT_AVAILABLE`, `UNKNOWN_ERROR` (LI.FI cannot tell yet) | `BRIDGING`, message names it | — |
//! | `PENDING` / `REFUND_IN_PROGRESS` | `BRIDGING`, message: a refund is under way | — |
//! | `PENDING` / `NOT_PROCESSABLE_REFUND_NEEDED` (removed from `@lifi/types` 12) | `BRIDGING`, message: a refund is needed | — |
//! | `PENDING` / none or another value | `BRIDGING`, message names it | — |
//! | `DONE` / `COMPLETED`, or no substatus | `DONE` (`destTx` = `receiving.txHash`) | `COMPLETED` |
//! | `DONE` / `PARTIAL` | `DONE`, message: delivered **in a different token** than asked | `COMPLETED` |
//! | `DONE` / `REFUNDED` | `REFUNDED` (never delivered; `destTx` = the refund) | — |
//! | `DONE` / another value | `PENDING`, message names it (not read as a delivery) | — |
//! | `FAILED` / `REFUNDED` (listed under `FAILED` by the docs) | `REFUNDED` | — |
//! | `FAILED` / `NOT_PROCESSABLE_REFUND_NEEDED` | `FAILED`, message: not refunded by LI.FI | — |
//! | `FAILED` / any other (`INSUFFICIENT_ALLOWANCE`, `INSUFFICIENT_BALANCE`, `OUT_OF_GAS`, `EXPIRED`, `SLIPPAGE_EXCEEDED`, `UNKNOWN_FAILED_ERROR`, `UNKNOWN_ERROR`, none) | `FAILED` | — |
//! | another `status` value | `PENDING`, message names it | — |
//! | HTTP 400 (`InvalidStatusRequest`) | `INVALID_INPUT` error | — |
//! | HTTP 429, 5xx | `UPSTREAM` error, retryable | — |
//! | a 200 body without `status` | `UPSTREAM_MALFORMED` error | — |
//!
//! `PARTIAL` means the recipient got the full value in another token (a
//! bridge such as Across paid out an alternative token): delivered, with
//! the message saying so. `INVALID` is kept pending rather than failed: it
//! is a lookup problem upstream, not evidence that funds are lost.

use relay_plugin_api::{Host, HttpRequest, RailError, TrackRequest, TrackState, TrackStatus};
use relay_rail_sdk::{
    health::PROBE_TX,
    track::{read_track_ref, track_status, track_via},
};
use serde::Deserialize;

use crate::{quote::TrackRef, UPSTREAM};

/// The fields of LI.FI's `StatusResponse` the rail reads (`status` is the
/// only one LI.FI always sends).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusAnswer {
    status: String,
    substatus: Option<String>,
    substatus_message: Option<String>,
    receiving: Option<Receiving>,
}

/// `receiving`: `{chainId}` while pending, the destination (or refund)
/// transaction once done.
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

/// What one (status, substatus) pair means: state, stage, whether
/// `receiving.txHash` is worth reporting, and a note for the message.
struct Reading {
    state: TrackState,
    stage: Option<&'static str>,
    dest_tx: bool,
    note: Option<&'static str>,
}

impl Reading {
    fn new(state: TrackState, stage: Option<&'static str>) -> Self {
        Reading {
            state,
            stage,
            dest_tx: false,
            note: None,
        }
    }

    fn with_dest_tx(self) -> Self {
        Reading {
            dest_tx: true,
            ..self
        }
    }

    fn noted(self, note: &'static str) -> Self {
        Reading {
            note: Some(note),
            ..self
        }
    }
}

fn map(a: StatusAnswer) -> Result<TrackStatus, RailError> {
    let sub = a.substatus.as_deref().unwrap_or("");
    let r = read(&a.status, sub);
    let mut message = format!("LI.FI {} {}", trunc(&a.status), trunc(sub))
        .trim_end()
        .to_string();
    if let Some(m) = a.substatus_message.as_deref().filter(|m| !m.is_empty()) {
        message = format!("{message}: {m}");
    }
    if let Some(note) = r.note {
        message = format!("{message} ({note})");
    }
    let dest_tx = a.receiving.and_then(|r| r.tx_hash).filter(|_| r.dest_tx);
    Ok(track_status(r.state, r.stage, dest_tx, message))
}

/// The table of the module documentation.
fn read(status: &str, sub: &str) -> Reading {
    use TrackState::{Done, Failed, Pending, Refunded};
    match status {
        "NOT_FOUND" => Reading::new(Pending, None).noted("not mined or not indexed yet"),
        "INVALID" => Reading::new(Pending, None)
            .noted("LI.FI cannot tie the hash to the bridge yet; not evidence of a loss"),
        "PENDING" => read_pending(sub),
        "DONE" => match sub {
            "COMPLETED" | "" => Reading::new(Done, Some("COMPLETED")).with_dest_tx(),
            "PARTIAL" => Reading::new(Done, Some("COMPLETED"))
                .with_dest_tx()
                .noted("delivered in a different token than the one asked for"),
            "REFUNDED" => Reading::new(Refunded, None)
                .with_dest_tx()
                .noted("refunded by the bridge, not delivered"),
            _ => Reading::new(Pending, None)
                .noted("unknown DONE substatus: not read as a delivery, asking again"),
        },
        "FAILED" => match sub {
            "REFUNDED" => Reading::new(Refunded, None)
                .with_dest_tx()
                .noted("refunded by the bridge, not delivered"),
            "NOT_PROCESSABLE_REFUND_NEEDED" => Reading::new(Failed, None)
                .noted("the transfer cannot complete and LI.FI has not refunded it"),
            _ => Reading::new(Failed, None),
        },
        _ => Reading::new(Pending, None).noted("unknown LI.FI status, asking again"),
    }
}

fn read_pending(sub: &str) -> Reading {
    use TrackState::Bridging;
    match sub {
        "WAIT_SOURCE_CONFIRMATIONS" | "INTENT_AWAITING_FUNDS" => {
            Reading::new(Bridging, Some("RECEIVING"))
        }
        "WAIT_DESTINATION_TRANSACTION" | "INTENT_READY" | "INTENT_EXECUTING" => {
            Reading::new(Bridging, Some("SENDING"))
        }
        "INTENT_FAILED_RETRYABLE" | "INTENT_SIMULATION_FAILURE" => {
            Reading::new(Bridging, Some("SENDING")).noted("the solver is retrying")
        }
        "BRIDGE_NOT_AVAILABLE" | "CHAIN_NOT_AVAILABLE" | "UNKNOWN_ERROR" => {
            Reading::new(Bridging, None).noted("LI.FI cannot tell the progress right now")
        }
        "REFUND_IN_PROGRESS" => Reading::new(Bridging, None).noted("a refund is under way"),
        "NOT_PROCESSABLE_REFUND_NEEDED" => {
            Reading::new(Bridging, None).noted("the transfer cannot complete; a refund is needed")
        }
        _ => Reading::new(Bridging, None),
    }
}

fn trunc(s: &str) -> String {
    s.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(status: &str, sub: &str) -> TrackState {
        read(status, sub).state
    }

    #[test]
    fn a_refund_is_never_a_delivery() {
        assert_eq!(state("DONE", "REFUNDED"), TrackState::Refunded);
        assert_eq!(state("FAILED", "REFUNDED"), TrackState::Refunded);
        assert_eq!(state("DONE", "SOMETHING_NEW"), TrackState::Pending);
        assert_eq!(state("PENDING", "REFUND_IN_PROGRESS"), TrackState::Bridging);
    }

    #[test]
    fn a_partial_delivery_is_done_and_says_another_token_arrived() {
        let s = map(StatusAnswer {
            status: "DONE".into(),
            substatus: Some("PARTIAL".into()),
            substatus_message: None,
            receiving: Some(Receiving {
                tx_hash: Some("0xabc".into()),
            }),
        })
        .unwrap();
        assert_eq!(
            (s.state, s.dest_tx.as_deref()),
            (TrackState::Done, Some("0xabc"))
        );
        assert!(s.message.unwrap().contains("different token"));
        assert_eq!(
            state("FAILED", "NOT_PROCESSABLE_REFUND_NEEDED"),
            TrackState::Failed
        );
        assert_eq!(state("INVALID", ""), TrackState::Pending);
    }

    #[test]
    fn unknown_values_are_pending_and_named() {
        let s = map(StatusAnswer {
            status: "EXPLODED".into(),
            substatus: None,
            substatus_message: None,
            receiving: None,
        })
        .unwrap();
        assert_eq!(s.state, TrackState::Pending);
        assert!(s.message.unwrap().contains("EXPLODED"));
    }
}
