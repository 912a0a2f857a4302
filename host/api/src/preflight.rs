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
//! Checked as execute checks it, with the very same functions of the
//! execute service: a self-mode route without the owner token is the
//! `OPERATOR_AUTH_REQUIRED` blocker (`Authorization: Bearer <owner token>`
//! is read as execute reads it; sandbox and dry runs need none); a signed
//! permit is verified and, for a route that would broadcast, its Permit2
//! pull simulated at the pending block — a revert is the blocker naming
//! its cause (`PERMIT2_ALLOWANCE_MISSING`, `INSUFFICIENT_BALANCE`,
//! `PERMIT2_NONCE_USED`, `RAIL_CALL_REVERTS`).
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
//! `POST /api/preflight/full` (spec §4.3) is the same check with `deep`
//! always on, plus `rails`: every applicable rail's answer and why it would
//! or would not be chosen ([`relay_analysis::why`]: the rail execute would
//! try first, what each other rail delivers less, the rails that did not
//! answer).
//!
//! Rate limit (spec §8.1 does not list it): its own bucket, 40 a minute,
//! like the quote it runs.

use alloy::primitives::Address;
use axum::{extract::State, http::HeaderMap, Json};
use relay_plugin_api::{RailRole, SourceMode, Token};
use serde_json::Value;
use std::sync::Arc;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::{self, JsonObject, QueryFields},
    quote::Quoting,
    ApiError, AppState, ErrorCode,
};
use relay_analysis::why::{self, WhyAnswer};
use relay_chain::reader::ChainReader;
use relay_engine::{
    answer::CompareResult,
    plan,
    preflight::{self, Blocker, BlockerCode, DeepAsk, ExpectedOutcome, PreflightAnswer, Warning},
    quote::QuoteOutcome,
    request::ExecuteAsk,
};
use relay_execution::{
    execute::{ExecuteError, ExecuteService},
    simulate::WouldRevert,
};

#[derive(Clone)]
pub(crate) struct Preflight {
    q: Quoting,
    reader: Arc<ChainReader>,
    service: Arc<ExecuteService>,
}

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(preflight))
        .routes(routes!(preflight_full))
        .with_state(state(q))
}

/// The preflight handlers' state over `q`.
pub(crate) fn state(q: Quoting) -> Preflight {
    let reader = q.app.reader.clone();
    let service = q.service.clone();
    Preflight { q, reader, service }
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
/// What the quote part of a preflight found: the answer execute would
/// try first, blockers and warnings, and the ranking itself (none for an
/// unroutable lane).
type Quoted = (
    Option<Expected>,
    Vec<Blocker>,
    Vec<Warning>,
    Option<QuoteOutcome>,
);

async fn quoted(p: &Preflight, ask: &ExecuteAsk) -> Result<Quoted, ApiError> {
    let outcome = match p.q.run(&ask.route).await {
        Ok(o) => o,
        Err(e) if e.code == ErrorCode::UnroutableLane => {
            let blockers = vec![preflight::unroutable(&e.message)];
            return Ok((None, blockers, Vec::new(), None));
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
    Ok((exp, blockers, warnings, Some(outcome)))
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

/// What stops the relayer from signing what this execute needs: a route
/// spending the operator's funds needs the owner token (`operator`); a
/// live route or a Permit2 pull needs the relayer key; a given permit must
/// verify, and its pull must not revert when the route would broadcast.
async fn signing(
    p: &Preflight,
    ask: &ExecuteAsk,
    exp: Option<&Expected>,
    operator: bool,
) -> Vec<Blocker> {
    let s = &p.q.app;
    let dry = exp.map_or(ask.dry_run || ask.live == Some(false), |e| {
        ask.is_dry(e.role)
    });
    // Only a route known to broadcast needs the authority: with no rail to
    // run it, `live` omitted leaves that open.
    let live = exp.map_or(!ask.dry_run && ask.live == Some(true), |_| !dry);
    let mut out = Vec::new();
    if live && !operator && ask.spends_operator_funds(None) {
        out.push(preflight::operator_auth_required());
    }
    let needs_key = ask.permit.is_some() || !dry;
    if needs_key && (s.relayer.is_none() || s.executor.is_none()) {
        out.push(preflight::relayer_unavailable(
            "this host has no relayer key (RELAY_RELAYER_KEY)",
        ));
        return out;
    }
    if ask.permit.is_none() {
        return out;
    }
    let checked = match p.service.verify_permit(ask).await {
        Ok(()) if dry => Ok(()),
        Ok(()) => p.service.simulate_pull(ask).await,
        Err(e) => Err(e),
    };
    out.extend(checked.err().map(refused));
    out
}

/// The blocker of a refused permit or pull.
fn refused(e: ExecuteError) -> Blocker {
    if let ExecuteError::WouldRevert(w) = &e {
        let code = match w {
            WouldRevert::AllowanceMissing { .. } => BlockerCode::Permit2AllowanceMissing,
            WouldRevert::InsufficientBalance { .. } => BlockerCode::InsufficientBalance,
            WouldRevert::NonceUsed(_) => BlockerCode::Permit2NonceUsed,
            WouldRevert::CallReverts { .. } => BlockerCode::RailCallReverts,
        };
        return preflight::reverts(code, &w.to_string());
    }
    let e = ApiError::from(e);
    match e.code {
        ErrorCode::Permit2Invalid => preflight::permit_invalid(&e.message),
        _ => preflight::relayer_unavailable(&e.message),
    }
}

/// Parses the execute body. A `mode: permit2` body without its `permit2`
/// is still checked (a wallet preflights before asking for the signature):
/// parsed as the `fromAddress`'s route, flagged unsigned, and the missing
/// signature becomes the `PERMIT2_SIGNATURE_MISSING` blocker.
fn parse_unsigned(
    body: serde_json::Map<String, Value>,
    config: &relay_config::HostConfig,
) -> Result<(ExecuteAsk, bool), ApiError> {
    // Which of the two it is, and the unsigned body's `fromAddress`, are
    // read before the body is decoded (a missing `fromAddress` is named
    // before any other field).
    let unsigned = body.get("mode").and_then(Value::as_str) == Some("permit2")
        && body.get("permit2").is_none_or(Value::is_null);
    if unsigned && body.get("fromAddress").is_none_or(Value::is_null) {
        return Err(ApiError::new(
            ErrorCode::MissingField,
            "fromAddress: required to preflight mode permit2 before it is signed (or send permit2)",
        )
        .field("fromAddress"));
    }
    let mut request = relay_wire::ExecuteRequest::decode(&Value::Object(body))?;
    if unsigned {
        request.execute.mode = Some("self".into());
    }
    let mut ask = ExecuteAsk::from_request(&request, config)?;
    if unsigned {
        ask.mode = SourceMode::Permit2;
    }
    Ok((ask, unsigned))
}

#[utoipa::path(post, path = "/api/route/preflight", tag = "routing", summary = "GO/NO_GO with blockers and warnings for an execute body; deep=1 reads chain state; signs and moves nothing", request_body = relay_wire::ExecuteRequest, params(("deep" = Option<String>, Query, description = "1: also read the relayer's balance and the owner's balance and Permit2 allowance"), ("authorization" = Option<String>, Header, description = "Bearer <owner token>: mode self is checked as the operator")), responses((status = 200, description = "OK", body = PreflightAnswer), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(lane, decision))]
pub(crate) async fn preflight(
    State(p): State<Preflight>,
    query: QueryFields,
    headers: HeaderMap,
    body: JsonObject,
) -> Result<Json<PreflightAnswer>, ApiError> {
    let deep = deep_flag(query)?;
    Ok(Json(check(&p, deep, &headers, body).await?.0))
}

/// `POST /api/preflight/full`: the deep preflight and every rail's answer
/// with why it would or would not be chosen.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct FullPreflight {
    /// The deep preflight (`deep` always true).
    #[serde(flatten)]
    preflight: PreflightAnswer,
    /// Every applicable rail: the one execute would try first (`winner`),
    /// the others with what they deliver less (`beaten`), and the rails
    /// that did not answer (`notAnswering`); absent for an unroutable lane.
    rails: Option<WhyAnswer>,
}

#[utoipa::path(post, path = "/api/preflight/full", tag = "analysis", summary = "The deep preflight (GO/NO_GO, blockers, warnings, chain reads) plus every rail's answer and why each would or would not be chosen; signs and moves nothing", request_body = relay_wire::ExecuteRequest, params(("authorization" = Option<String>, Header, description = "Bearer <owner token>: mode self is checked as the operator")), responses((status = 200, description = "OK", body = FullPreflight), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(lane, decision))]
async fn preflight_full(
    State(p): State<Preflight>,
    headers: HeaderMap,
    body: JsonObject,
) -> Result<Json<FullPreflight>, ApiError> {
    let (preflight, ask, outcome) = check(&p, true, &headers, body).await?;
    let rails = outcome.map(|o| {
        let cmp = CompareResult::of(&p.q.app.config.quote, &ask.route, &o);
        let first = preflight.expected.as_ref().map(|e| e.rail.as_str());
        why::explain(&cmp, first, &[], ("now", p.q.app.clock.now_ms()))
    });
    Ok(Json(FullPreflight { preflight, rails }))
}

/// The preflight of `body` (deep reads when `deep`), with the parsed ask
/// and the ranking it quoted.
async fn check(
    p: &Preflight,
    deep: bool,
    headers: &HeaderMap,
    body: JsonObject,
) -> Result<(PreflightAnswer, ExecuteAsk, Option<QuoteOutcome>), ApiError> {
    let (ask, unsigned) = parse_unsigned(body.0, &p.q.app.config)?;
    let span = tracing::Span::current();
    span.record("lane", format!("{}->{}", ask.from_chain, ask.to_chain));
    let s = &p.q.app;
    let (exp, mut blockers, mut warnings, outcome) = quoted(p, &ask).await?;
    blockers.extend(unsigned.then(preflight::permit_missing));
    let sandbox = headers.get("x-relay-sandbox").and_then(|v| v.to_str().ok()) == Some("1");
    let operator = sandbox || crate::auth::is_operator(s.owner_token.as_ref(), headers);
    blockers.extend(signing(p, &ask, exp.as_ref(), operator).await);
    if deep {
        let (b, w) = preflight::deep(&p.reader, &deep_ask(p, &ask, exp.as_ref())).await;
        // The simulated pull and the deep reads may name the same cause.
        let fresh: Vec<Blocker> = b
            .into_iter()
            .filter(|b| !blockers.iter().any(|x| x.code == b.code))
            .collect();
        blockers.extend(fresh);
        warnings.extend(w);
    }
    let expected = exp.map(|e| ExpectedOutcome {
        rail: e.rail,
        delivered_units: e.delivered,
        token: ask.to_token.symbol.clone(),
        duration_sec: e.duration_sec,
    });
    let answer = PreflightAnswer::new(blockers, warnings, expected, deep);
    span.record("decision", answer.decision.as_str());
    Ok((answer, ask, outcome))
}
