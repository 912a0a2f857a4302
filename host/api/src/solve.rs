//! `GET` and `POST /api/intent/solve` (spec §2.10, §4.3, §8.2): which of
//! up to ten sources best reaches `toChain`/`toToken` for the caller's
//! `goal`? Every source is quoted concurrently (each its own best-of-N);
//! nothing is signed or executed.
//!
//! POST takes the IntentRequest as a JSON body; GET takes the same fields in
//! the query string, `from` as url-encoded JSON text. `toChain`, `toToken`
//! and `from` are required; 0 or more than 10 sources is a 400 naming
//! `from`; a bad `goal`, `toChain` or `toToken` is a 400 naming it. A source
//! that cannot be quoted (bad field, unroutable lane, no rail answering, a
//! quote-only lane) is listed in `skipped[] {source, reason, errorCode}`.
//!
//! Response: `{goal, to {chain, token}, plan, alternatives[], skipped[],
//! sourcesConsidered, note}`; `plan` is `null` when nothing quoted. `plan`
//! and each alternative: `{from {chain, token, amount}, rail, lane, estOut,
//! minOut, durationSec, effectiveFeePct, qualityScore, execute, sign}` —
//! `execute` is a ready-to-POST `/api/route/execute` body and `sign` the
//! Permit2 request that completes it, or `null`; see
//! [`relay_engine::submit`] for the fields left to fill.

use axum::{extract::State, Json};
use serde_json::{Map, Value};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::{self, JsonObject, QueryFields},
    quote::Quoting,
    ApiError, AppState, ErrorCode,
};
use relay_engine::{
    compare, plan,
    quote::QuoteOutcome,
    route::RequestError,
    solve::{self, Candidate, Goal, Skipped, SolveAnswer, SolveOption, SolveTo, SourceRef},
    submit, tokens,
};

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(solve_get, solve_post))
        .with_state(q)
}

#[utoipa::path(get, path = "/api/intent/solve", tag = "best-execution", summary = "Best source among 1-10 for a goal (never executes)", params(("toChain" = String, Query, description = "destination node", example = "42161"), ("toToken" = String, Query, description = "destination token", example = "USDC"), ("from" = String, Query, description = "url-encoded JSON array of {chain, token, amount}", example = "[{\"chain\":8453,\"token\":\"USDC\",\"amount\":\"5000000\"}]"), ("goal" = Option<String>, Query, description = "max-output (default), cheapest, fastest"), ("amount" = Option<String>, Query, description = "shared amount"), ("toAddress" = Option<String>, Query, description = "recipient")), responses((status = 200, description = "OK", body = SolveAnswer), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(sources, goal))]
async fn solve_get(
    State(q): State<Quoting>,
    query: QueryFields,
) -> Result<Json<SolveAnswer>, ApiError> {
    respond(&q, edge::params(None, query)?).await
}

#[utoipa::path(post, path = "/api/intent/solve", tag = "best-execution", summary = "Best source among 1-10 for a goal (never executes)", request_body = relay_wire::SolveRequest, responses((status = 200, description = "OK", body = SolveAnswer), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(sources, goal))]
pub(crate) async fn solve_post(
    State(q): State<Quoting>,
    query: QueryFields,
    body: JsonObject,
) -> Result<Json<SolveAnswer>, ApiError> {
    respond(&q, edge::params(Some(body), query)?).await
}

/// The relayer's address: the Permit2 spender clients sign for.
pub(super) fn spender(q: &Quoting) -> String {
    let s = &q.app;
    s.relayer
        .as_ref()
        .map(|r| r.address().to_string())
        .or_else(|| s.config.relayer.clone())
        .unwrap_or_default()
}

/// Checks the destination up front, so a bad one is a 400, not ten skips.
fn destination(q: &Quoting, req: &Map<String, Value>) -> Result<(), ApiError> {
    let text = |f: &'static str| match req.get(f) {
        None | Some(Value::Null) => Err(ApiError::from(RequestError::Missing { field: f.into() })),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => {
            Err(ApiError::new(ErrorCode::InvalidField, format!("{f}: must be a string")).field(f))
        }
    };
    let (chain, token) = (text("toChain")?, text("toToken")?);
    let config = &q.app.config;
    let lookup =
        |f: &'static str| move |e: tokens::LookupError| ApiError::from(RequestError::from((f, e)));
    let chain = tokens::parse_chain(&chain)
        .and_then(|c| tokens::served(config, c))
        .map_err(lookup("toChain"))?;
    tokens::resolve(config, chain, Some(&token)).map_err(lookup("toToken"))?;
    Ok(())
}

fn sources(req: &Map<String, Value>) -> Result<Vec<Map<String, Value>>, ApiError> {
    relay_wire::solve::sources(req.get("from")).map_err(|why| {
        let code = if req.get("from").is_none_or(Value::is_null) {
            ErrorCode::MissingField
        } else {
            ErrorCode::InvalidField
        };
        ApiError::new(code, format!("from: {why}")).field("from")
    })
}

fn skipped(source: &Map<String, Value>, e: &ApiError) -> Skipped {
    Skipped {
        source: source.clone(),
        reason: e.message.clone(),
        error_code: e.code.as_str().into(),
    }
}

async fn respond(q: &Quoting, fields: Value) -> Result<Json<SolveAnswer>, ApiError> {
    let req = fields.as_object().cloned().unwrap_or_default();
    let goal = Goal::parse(req.get("goal").and_then(Value::as_str)).map_err(|why| {
        ApiError::new(ErrorCode::InvalidField, format!("goal: {why}")).field("goal")
    })?;
    destination(q, &req)?;
    let sources = sources(&req)?;
    let span = tracing::Span::current();
    span.record("sources", sources.len());
    span.record("goal", goal.as_str());
    let quotes = sources.iter().map(|s| async {
        let ask = q.parse(&relay_wire::solve::route_fields(&req, s))?;
        let o = q.run(&ask).await?;
        plan::executable(&o, None).map_err(ApiError::from)?;
        Ok::<_, ApiError>(o)
    });
    let answers = futures::future::join_all(quotes).await;
    let (mut outcomes, mut skips) = (Vec::new(), Vec::new());
    for (i, a) in answers.into_iter().enumerate() {
        match a {
            Ok(o) => outcomes.push((i, o)),
            Err(e) if e.code == ErrorCode::StoreUnavailable => return Err(e),
            Err(e) => skips.push(skipped(&sources[i], &e)),
        }
    }
    let mut cands = candidates(q, &outcomes);
    solve::rank(goal, &mut cands);
    let shown: Vec<SolveOption> = cands
        .iter()
        .filter_map(|c| render(q, &outcomes, &cands, c))
        .collect();
    let mut shown = shown.into_iter();
    let best = shown.next();
    let note = format!(
        "goal {}: {} candidate(s) from {} of {} source(s); nothing executed — POST plan.execute to /api/route/execute (fill {} first when mode is permit2)",
        goal.as_str(), cands.len(), outcomes.len(), sources.len(), submit::PERMIT2_FILL.join(", ")
    );
    Ok(Json(SolveAnswer {
        goal: goal.as_str().into(),
        to: SolveTo {
            chain: req.get("toChain").cloned(),
            token: req.get("toToken").cloned(),
        },
        plan: best,
        alternatives: shown.collect(),
        skipped: skips,
        sources_considered: sources.len(),
        note,
    }))
}

/// Every executable answer of every quoted source.
fn candidates(q: &Quoting, outcomes: &[(usize, QuoteOutcome)]) -> Vec<Candidate> {
    let cfg = &q.app.config.quote;
    outcomes
        .iter()
        .flat_map(|(k, o)| {
            o.results.iter().enumerate().filter_map(move |(j, r)| {
                let p = r.outcome.as_ref().ok().filter(|_| r.quote_only.is_none())?;
                Some(Candidate {
                    source: *k,
                    result: j,
                    est_out: p.net.estimated,
                    fee_ppm: compare::effective_fee_ppm(cfg, &o.ask, p.net.estimated),
                    duration_sec: p.quote.duration_sec,
                })
            })
        })
        .collect()
}

/// One candidate as answered.
fn render(
    q: &Quoting,
    outcomes: &[(usize, QuoteOutcome)],
    all: &[Candidate],
    c: &Candidate,
) -> Option<SolveOption> {
    let (_, o) = outcomes.iter().find(|(i, _)| *i == c.source)?;
    let r = o.results.get(c.result)?;
    let best = all.iter().map(|x| x.est_out).max().unwrap_or_default();
    let threshold = u64::from(q.app.config.quote.guard_threshold_pct) * 10_000;
    let score = compare::quality_score(c.est_out, best, c.fee_ppm, threshold, c.duration_sec);
    let min = r.outcome.as_ref().map(|p| p.net.min).ok();
    let ask = &o.ask;
    Some(SolveOption {
        from: SourceRef {
            chain: ask.from_chain,
            token: ask.from_token.symbol.clone(),
            amount: ask.amount,
        },
        rail: r.rail.clone(),
        lane: r.lane.clone(),
        est_out: c.est_out,
        min_out: min,
        duration_sec: c.duration_sec,
        effective_fee_pct: c.fee_ppm.map(compare::ppm_to_pct),
        quality_score: score,
        execute: submit::execute_body(ask, Some(&r.rail)),
        sign: submit::sign_request(ask, Some(&r.rail), &spender(q), &q.app.config.permit2),
    })
}
