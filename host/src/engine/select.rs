//! Choosing the rail for an execute: every applicable rail (coverage ∩
//! operator state ∩ health) quotes concurrently under one deadline; the
//! highest delivered amount wins. (The full fee model and ranking for
//! quote/compare build on this.)

use std::{sync::Arc, time::Duration};

use relay_plugin_api::{QuoteRequest, RailQuote};
use relay_registry::OperatorStateStore;

use super::request::ExecuteAsk;
use crate::{
    api::{ApiError, AppState, ErrorCode},
    runtime::LoadedRail,
};

/// The deadline of a quote fan-out.
pub const QUOTE_DEADLINE: Duration = Duration::from_secs(8);

/// Quotes every applicable rail and returns the best answer and its rail.
pub async fn best_quote(
    s: &AppState,
    ask: &ExecuteAsk,
) -> Result<(RailQuote, Arc<LoadedRail>), ApiError> {
    let state = s
        .store
        .load_operator_state()
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    let snap = s.rails.snapshot();
    let asset = ask.from_token.symbol.as_str();
    let applicable: Vec<Arc<LoadedRail>> = snap
        .active()
        .filter(|r| ask.rail.as_deref().is_none_or(|want| want == r.id()))
        .filter(|r| state.rail_enabled(r.id()) && r.quarantined().is_none())
        .filter(|r| {
            r.manifest()
                .lane_for(&ask.from_chain, &ask.to_chain, asset)
                .is_some_and(|l| state.lane_execute_ready(r.id(), &l.lane, l.executable))
        })
        .cloned()
        .collect();
    if applicable.is_empty() {
        return Err(ApiError::new(
            ErrorCode::UnroutableLane,
            format!(
                "no rail executes {asset} from {} to {}",
                ask.from_chain, ask.to_chain
            ),
        ));
    }
    let req = QuoteRequest {
        from_chain: ask.from_chain,
        to_chain: ask.to_chain,
        from_token: ask.from_token.clone(),
        to_token: ask.to_token.clone(),
        amount: ask.amount,
        from_address: Some(ask.sender.clone()),
        to_address: Some(ask.recipient.clone()),
        slippage_bps: 50,
        member: false,
    };
    let calls = applicable.iter().map(|r| {
        let (r, req) = (r.clone(), req.clone());
        async move {
            (
                r.clone(),
                tokio::time::timeout(QUOTE_DEADLINE, r.quote(req)).await,
            )
        }
    });
    let mut best: Option<(RailQuote, Arc<LoadedRail>)> = None;
    let mut reasons = Vec::new();
    for (rail, outcome) in futures::future::join_all(calls).await {
        match outcome {
            Ok(Ok(q))
                if best
                    .as_ref()
                    .is_none_or(|(b, _)| q.amount_out > b.amount_out) =>
            {
                best = Some((q, rail))
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => reasons.push(format!("{}: {e}", rail.id())),
            Err(_) => reasons.push(format!("{}: did not answer in time", rail.id())),
        }
    }
    best.ok_or_else(|| {
        ApiError::new(
            ErrorCode::RailsUnavailable,
            format!("no rail could quote: {}", reasons.join("; ")),
        )
    })
}
