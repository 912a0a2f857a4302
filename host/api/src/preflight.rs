//! `POST /api/route/preflight` (spec §2.14, §4.2, §7): the execute body,
//! checked as execute would check it — but nothing is signed, broadcast or
//! moved. A malformed body is the same typed 4xx execute gives (it is
//! parsed by execute's own parser); every problem with a well-formed
//! request is a 200 with `decision: NO_GO` and `blockers[].code` to branch
//! on ([`relay_engine::preflight::BlockerCode`], served at `/api/errors`).
//! One exception to "execute's parser": `mode: permit2` with no `permit2`
//! yet (a wallet checks before it asks for the signature) is checked with
//! the `fromAddress` as owner and answers the `PERMIT2_SIGNATURE_MISSING`
//! blocker beside whatever else is in the way.
//!
//! Query `deep=1` (or `true`) adds on-chain reads: the relayer's
//! destination balance against the payout when the winner pays out of
//! inventory, the owner's Permit2 allowance (`mode: permit2`) and the
//! owner's balance against the amount. `deep=0`/`false` or no `deep` skips
//! them; any other value is a 400 naming `deep`.
//!
//! Response: `{decision: "GO"|"NO_GO", blockers: [{code, fix}], warnings:
//! [{code, what}], expected: {rail, deliveredUnits, token, durationSec} |
//! null, deep, note}`. `expected` is the answer execute would try first:
//! its rail and what the recipient gets, destination smallest units, after
//! every fee. A `minOut` above it is the `PRICE_MOVED` blocker; an
//! `attestation` is parsed (a malformed one is execute's 400) but its
//! signature and terms are left to execute. The relayer key is required
//! (`RELAYER_UNAVAILABLE` otherwise) only where execute needs it: a
//! `permit2` to verify and pull, or a live (not dry) route.
//!
//! Rate limit (spec §8.1 does not list it): its own bucket, 40 a minute,
//! like the quote it runs.

use alloy::primitives::Address;
use axum::{
    extract::{DefaultBodyLimit, State},
    routing::post,
    Json, Router,
};
use relay_plugin_api::{RailRole, SourceMode, Token};
use serde_json::{json, Value};
use std::sync::Arc;

use super::{
    edge::{self, JsonObject, QueryFields},
    quote::Quoting,
    ApiError, AppState, ErrorCode,
};
use relay_chain::reader::ChainReader;
use relay_engine::{
    plan,
    preflight::{self, Blocker, DeepAsk, Warning},
    quote::QuoteOutcome,
    request::{parse_execute, ExecuteAsk},
};

#[derive(Clone)]
struct Preflight {
    q: Quoting,
    reader: Arc<ChainReader>,
}

pub(super) fn routes(q: Quoting) -> Router<AppState> {
    let reader = q.app.reader.clone();
    Router::new()
        .route("/api/route/preflight", post(preflight))
        .layer(DefaultBodyLimit::max(edge::BODY_LIMIT))
        .with_state(Preflight { q, reader })
}

fn deep_flag(query: QueryFields) -> Result<bool, ApiError> {
    let fields = edge::params(None, query)?;
    match fields.get("deep").and_then(Value::as_str) {
        None | Some("0" | "false") => Ok(false),
        Some("1" | "true") => Ok(true),
        Some(other) => Err(ApiError::new(
            ErrorCode::InvalidField,
            format!(
                "deep: {:?} is not 1 or 0",
                relay_engine::tokens::clip(other)
            ),
        )
        .field("deep")),
    }
}

/// The answer execute would try first.
struct Expected {
    rail: String,
    role: RailRole,
    delivered: relay_plugin_api::Amount,
    duration_sec: u32,
}

fn expected(o: &QuoteOutcome, i: usize) -> Option<Expected> {
    let r = o.results.get(i)?;
    let p = r.outcome.as_ref().ok()?;
    Some(Expected {
        rail: r.rail.clone(),
        role: r.role,
        delivered: p.net.estimated,
        duration_sec: p.quote.duration_sec,
    })
}

/// The quote's verdict: what execute would use, blockers, warnings.
async fn quoted(
    p: &Preflight,
    ask: &ExecuteAsk,
) -> Result<(Option<Expected>, Vec<Blocker>, Vec<Warning>), ApiError> {
    let outcome = match p.q.run(&ask.route).await {
        Ok(o) => o,
        Err(e) if e.code == ErrorCode::UnroutableLane => {
            return Ok((None, vec![preflight::unroutable(&e.message)], Vec::new()))
        }
        Err(e) => return Err(e),
    };
    let winner = plan::executable(&outcome, ask.rail.as_deref());
    let warnings = preflight::warnings(
        &outcome,
        winner.as_ref().ok().copied(),
        &p.q.app.config.quote,
    );
    let mut blockers = Vec::new();
    let exp = match winner {
        Ok(i) => expected(&outcome, i),
        Err(u) => {
            blockers.push(preflight::unusable(&u));
            None
        }
    };
    if let (Some(e), Some(min)) = (&exp, ask.min_out) {
        if e.delivered < min {
            blockers.push(preflight::price_moved(e.delivered, min));
        }
    }
    Ok((exp, blockers, warnings))
}

fn address(t: &Token) -> Option<Address> {
    t.address.as_deref()?.parse().ok()
}

fn deep_ask(p: &Preflight, ask: &ExecuteAsk, exp: Option<&Expected>) -> DeepAsk {
    let s = &p.q.app;
    let relayer = s.relayer.as_ref().map(|r| r.address());
    let relayer = relayer.or_else(|| s.config.relayer.as_deref()?.parse().ok());
    let payout = exp.filter(|e| e.role == RailRole::FloatLane).and_then(|e| {
        Some((
            ask.to_chain.evm_id()?,
            address(&ask.to_token)?,
            relayer?,
            e.delivered.0,
        ))
    });
    DeepAsk {
        from_chain: ask.from_chain.evm_id(),
        from_token: address(&ask.from_token),
        amount: ask.amount.0,
        owner: ask.sender.parse().ok(),
        permit2: (ask.mode == SourceMode::Permit2)
            .then(|| s.config.permit2.parse().ok())
            .flatten(),
        payout,
    }
}

/// What stops the relayer from signing what this execute needs: a live
/// route or a Permit2 pull needs the relayer key; a given permit must
/// verify.
async fn signing(s: &AppState, ask: &ExecuteAsk, exp: Option<&Expected>) -> Option<Blocker> {
    let dry = exp.map_or(ask.dry_run || ask.live == Some(false), |e| {
        ask.is_dry(e.role)
    });
    let needs_key = ask.permit.is_some() || !dry;
    if needs_key && (s.relayer.is_none() || s.executor.is_none()) {
        return Some(preflight::relayer_unavailable(
            "this host has no relayer key (RELAY_RELAYER_KEY)",
        ));
    }
    let e = match ask.permit {
        Some(_) => crate::verify_permit(s, ask).await.err()?,
        None => return None,
    };
    Some(match e.code {
        ErrorCode::Permit2Invalid => preflight::permit_invalid(&e.message),
        _ => preflight::relayer_unavailable(&e.message),
    })
}

/// Parses the execute body. A `mode: permit2` body without its `permit2`
/// is still checked (a wallet preflights before asking for the signature):
/// parsed as the `fromAddress`'s route, flagged unsigned, and the missing
/// signature becomes the `PERMIT2_SIGNATURE_MISSING` blocker.
fn parse_unsigned(
    mut body: serde_json::Map<String, Value>,
    config: &relay_config::HostConfig,
) -> Result<(ExecuteAsk, bool), ApiError> {
    let unsigned = body.get("mode").and_then(Value::as_str) == Some("permit2")
        && body.get("permit2").is_none_or(Value::is_null);
    if !unsigned {
        return Ok((parse_execute(&Value::Object(body), config)?, false));
    }
    if body.get("fromAddress").is_none_or(Value::is_null) {
        return Err(ApiError::new(
            ErrorCode::MissingField,
            "fromAddress: required to preflight mode permit2 before it is signed (or send permit2)",
        )
        .field("fromAddress"));
    }
    body.insert("mode".into(), json!("self"));
    let mut ask = parse_execute(&Value::Object(body), config)?;
    ask.mode = SourceMode::Permit2;
    Ok((ask, true))
}

#[tracing::instrument(skip_all, fields(lane, decision))]
async fn preflight(
    State(p): State<Preflight>,
    query: QueryFields,
    body: JsonObject,
) -> Result<Json<Value>, ApiError> {
    let deep = deep_flag(query)?;
    let (ask, unsigned) = parse_unsigned(body.0, &p.q.app.config)?;
    let span = tracing::Span::current();
    span.record("lane", format!("{}->{}", ask.from_chain, ask.to_chain));
    let s = &p.q.app;
    let (exp, mut blockers, mut warnings) = quoted(&p, &ask).await?;
    blockers.extend(unsigned.then(preflight::permit_missing));
    blockers.extend(signing(s, &ask, exp.as_ref()).await);
    if deep {
        let (b, w) = preflight::deep(&p.reader, &deep_ask(&p, &ask, exp.as_ref())).await;
        blockers.extend(b);
        warnings.extend(w);
    }
    let decision = if blockers.is_empty() { "GO" } else { "NO_GO" };
    span.record("decision", decision);
    let expected = exp.map(|e| {
        json!({"rail": e.rail, "deliveredUnits": e.delivered, "token": ask.to_token.symbol, "durationSec": e.duration_sec})
    });
    Ok(Json(json!({
        "decision": decision,
        "blockers": blockers,
        "warnings": warnings,
        "expected": expected,
        "deep": deep,
        "note": "preflight signs, broadcasts and moves nothing; branch on blockers[].code",
    })))
}
