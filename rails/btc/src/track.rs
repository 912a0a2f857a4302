//! Chainflip's swap states as route states and the spec's stages.
//!
//! The vendor's word: the swap backend's `GET /v2/swaps/{id}`
//! (chainflip-sdk-monorepo `packages/swap/src/routes/v2/swap.ts`, its state
//! rules in `utils.ts` `getSwapState`, its tests and snapshots in
//! `routes/v2/__tests__/`; the type is the SDK's `SwapStatusResponseV2`).
//! Chainflip says `COMPLETED` once *an* egress succeeded — the swap's output
//! or the refund — so the state alone never proves delivery: the egresses
//! decide. Each row is a vendor case in `tests/fixtures/vendor/`.
//!
//! | Chainflip answer | route | stage | vendor case |
//! |---|---|---|---|
//! | 404 `{message: "resource not found"}` (not indexed yet) | PENDING | — | `status_not_found` |
//! | WAITING (channel open, nothing witnessed) | PENDING | — | `status_waiting` |
//! | WAITING, `depositChannel.isExpired` | FAILED (nothing taken) | — | `status_waiting_expired` |
//! | RECEIVING (deposit seen, confirming) | BRIDGING | RECEIVING | `status_receiving_*` |
//! | SWAPPING | BRIDGING | SWAPPING | `status_swapping*` |
//! | SENDING, SENT (egress scheduled / broadcast, not witnessed) | BRIDGING | SENDING | `status_sending`, `status_sent` |
//! | COMPLETED, `swapEgress`, no `refundEgress` | DONE, `destTx` = `swapEgress.txRef` | COMPLETED | `status_completed*` |
//! | COMPLETED, `refundEgress`, no `swapEgress` (the fill-or-kill refund: deposit sent back to the refund address) | REFUNDED | — | `status_completed_refund` |
//! | COMPLETED, `swapEgress` and `refundEgress` (part swapped, the rest refunded: DCA) | REFUNDED (message: partial) | — | — |
//! | COMPLETED, no egress, `swap.onChain.refundAmount` only (on-chain account swap refunded) | REFUNDED | — | `status_completed_onchain_refund` |
//! | COMPLETED, no egress, `swap.onChain.outputAmount` (credited on chain) | DONE (no `destTx`) | COMPLETED | `status_completed_onchain` |
//! | COMPLETED, no egress, no on-chain outcome | PENDING, reported | — | — |
//! | any, `refundEgress.failure` (refund ignored as dust, or its broadcast aborted) | FAILED, "the refund failed" | — | `status_failed_refund_*`, `status_failed_dca_refund_ignored` |
//! | any, `fallbackEgress` (the destination call failed; the output went to the CCM fallback address) | FAILED, names the fallback transfer | — | `status_failed_fallback` |
//! | FAILED, `refundEgress` witnessed, no failure (deposit rejected and sent back) | REFUNDED | — | `status_failed_deposit_refunded` |
//! | FAILED, `refundEgress` not witnessed yet | BRIDGING (refund under way) | SENDING | — |
//! | FAILED, `swapEgress.failure` (output below the dust limit, broadcast aborted) | FAILED | — | `status_failed_egress_ignored`, `status_failed_broadcast_aborted` |
//! | FAILED, `deposit.failure` (below minimum, rejected), no refund | FAILED | — | `status_failed_deposit_ignored` |
//! | any other state value | PENDING, reported (names the value) | — | `status_unknown_state` |
//!
//! Other answers: 5xx and 429 are `UPSTREAM` (retryable), a body that is
//! not a status is `UPSTREAM_MALFORMED`, an id that cannot be one is
//! `INVALID_INPUT` before asking.

use relay_plugin_api::{Host, RailError, TrackRequest, TrackState, TrackStatus};
use relay_rail_sdk::track::track_status;

use crate::chainflip::{self, Egress, SwapStatus, CHAINFLIP};

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
            "Chainflip has not indexed the swap yet",
        )),
        _ => Err(CHAINFLIP.status_error(&relay_rail_sdk::upstream::error_report(&resp))),
    }
}

/// The route state of a swap status (see the module's table).
pub fn map(s: &SwapStatus) -> TrackStatus {
    match s.state.as_str() {
        "WAITING" if s.expired => failed("the deposit channel expired before a deposit".into()),
        "WAITING" => status(TrackState::Pending, None, "waiting for the deposit"),
        "RECEIVING" => status(
            TrackState::Bridging,
            Some("RECEIVING"),
            "deposit seen; confirming",
        ),
        "SWAPPING" => status(TrackState::Bridging, Some("SWAPPING"), "swapping"),
        "SENDING" | "SENT" => sending(s),
        "COMPLETED" | "FAILED" => settled(s),
        other => status(
            TrackState::Pending,
            None,
            &format!("Chainflip reports state {other:?}, unknown to this rail; waiting"),
        ),
    }
}

fn status(state: TrackState, stage: Option<&str>, message: &str) -> TrackStatus {
    track_status(state, stage, None, message)
}

fn failed(message: String) -> TrackStatus {
    track_status(TrackState::Failed, None, None, message)
}

fn refunded(message: String) -> TrackStatus {
    track_status(TrackState::Refunded, None, None, message)
}

fn tx(e: &Egress) -> &str {
    e.tx_ref.as_deref().unwrap_or("no txRef")
}

fn sending(s: &SwapStatus) -> TrackStatus {
    let what = match (&s.swap_egress, &s.refund_egress) {
        (None, Some(_)) => "refund being sent back to the refund address",
        _ => "output being sent",
    };
    status(TrackState::Bridging, Some("SENDING"), what)
}

/// `COMPLETED` or `FAILED`: the egresses say what happened.
fn settled(s: &SwapStatus) -> TrackStatus {
    let completed = s.state == "COMPLETED";
    if let Some(why) = s.refund_egress.as_ref().and_then(|r| r.failure.as_deref()) {
        return failed(format!("Chainflip's refund failed: {why}"));
    }
    if let Some(f) = &s.fallback_egress {
        return failed(format!(
            "the destination call failed; Chainflip sent the output to the fallback address {} ({})",
            f.destination.as_deref().unwrap_or("(not named)"),
            tx(f)
        ));
    }
    if let Some(r) = &s.refund_egress {
        return refund(s, r, completed);
    }
    if let Some(why) = s.swap_egress.as_ref().and_then(|e| e.failure.as_deref()) {
        return failed(format!("Chainflip could not send the output: {why}"));
    }
    match (&s.swap_egress, completed) {
        (Some(e), true) => track_status(
            TrackState::Done,
            Some("COMPLETED"),
            e.tx_ref.clone(),
            "delivered",
        ),
        (None, true) => on_chain(s),
        (_, false) => failed(match &s.deposit_failure {
            Some(why) => format!("Chainflip failed the deposit: {why}"),
            None => "Chainflip failed the swap".into(),
        }),
    }
}

/// A refund egress without a failure: money back with the depositor once
/// sent (a `COMPLETED` refund is sent; a `FAILED` swap's once witnessed).
fn refund(s: &SwapStatus, r: &Egress, completed: bool) -> TrackStatus {
    if !completed && !r.witnessed {
        return status(
            TrackState::Bridging,
            Some("SENDING"),
            "Chainflip failed the swap; its refund is being sent",
        );
    }
    let why = match (&s.swap_egress, &s.deposit_failure) {
        (Some(e), _) if e.failure.is_none() => format!(
            "part swapped ({}), the rest refunded to the refund address ({}): not the quoted delivery",
            tx(e),
            tx(r)
        ),
        (_, Some(d)) => format!("deposit refused ({d}); refunded ({})", tx(r)),
        _ if completed => format!(
            "fill-or-kill: no swap at the minimum price in time; refunded to the refund address ({})",
            tx(r)
        ),
        _ => format!("Chainflip failed the swap; refunded ({})", tx(r)),
    };
    refunded(why)
}

/// `COMPLETED` with no egress: an on-chain (State Chain account) swap.
fn on_chain(s: &SwapStatus) -> TrackStatus {
    match s.on_chain {
        Some(o) if o.refund && !o.output => refunded("refunded to the State Chain account".into()),
        Some(o) if o.output => track_status(
            TrackState::Done,
            Some("COMPLETED"),
            None,
            "credited to the State Chain account",
        ),
        _ => status(
            TrackState::Pending,
            None,
            "Chainflip reports COMPLETED without an egress; waiting for evidence of delivery",
        ),
    }
}
