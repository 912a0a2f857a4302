//! `POST /api/route/quote` (spec §2.5, §2.6, §4.2): parse the RouteRequest
//! at the edge, ask the engine for a ranked best-of-N quote, sign the
//! winner's terms, shape the Quote.
//!
//! Response fields beyond the spec's list: `from`/`to` carry `tokenAddress`
//! and `decimals`; `fees` itemises route fee, relayer gas (units and gas
//! price per chain, markup) and rail fees; `member` and `expiresAt`;
//! `compared[]` entries carry `amountOut` (the rail's own output), `estOut`
//! and `minOut` (after every fee), `fees`, `durationSec`, `rank`, `best`, or
//! `ok:false` with `error` and `errorKind`. `bestOf` is the number of rails
//! that answered with a viable price. `floatlane` is the float-lane rail's
//! own block (keyed by its manifest role, never its name) whenever that rail
//! answered for the pair; `rail` is the winner's own detail object on
//! non-EVM legs. Wrong method → 404; unroutable lane → 404
//! `UNROUTABLE_LANE`; no rail answering → 502 `RAILS_UNAVAILABLE`; every
//! rail refusing the amount → 422 `AMOUNT_OUT_OF_RANGE`.

use std::sync::Arc;
use utoipa_axum::{router::OpenApiRouter, routes};

use axum::extract::State;
use relay_plugin_api::Token;
use serde_json::Value;

use super::{
    edge::{self, JsonObject, LargeJson, QueryFields},
    ApiError, AppState, ErrorCode,
};
use relay_engine::{
    answer::{CompareResult, Quote},
    attest::{self, QuoteTerms},
    compare::TtlCache,
    quote::{Priced, QuoteOutcome, RailResult},
    request::ExecuteAsk,
    route::{RequestError, RouteAsk},
};
use relay_wire::{ExecuteRequest, RouteRequest};

/// What the quote and compare handlers share.
#[derive(Clone)]
pub(super) struct Quoting {
    /// The host's state.
    pub app: AppState,
    /// Compare answers (spec §8.2: 12 s).
    pub compare_cache: Arc<TtlCache<CompareResult>>,
    /// The one execute service (execute, preflight, intents, a quote's
    /// intent): its route ids and nonce reservations are shared.
    pub service: Arc<relay_execution::execute::ExecuteService>,
}

impl Quoting {
    /// The handlers' view of `app`'s one routing service (nothing is
    /// built here: [`relay_app::Routing`] is built once by the binary).
    pub(super) fn of(app: &AppState) -> Self {
        Quoting {
            compare_cache: app.routing.compare_cache().clone(),
            service: app.routing.execute().clone(),
            app: app.clone(),
        }
    }

    /// Decodes the request's fields as a RouteRequest and checks it.
    pub(super) fn parse(&self, fields: &Value) -> Result<RouteAsk, ApiError> {
        let request: RouteRequest = relay_wire::decode(fields)?;
        Ok(RouteAsk::from_request(&request, &self.app.config)?)
    }

    /// Decodes an execute body as an ExecuteRequest and checks it.
    pub(super) fn parse_execute(&self, body: &Value) -> Result<ExecuteAsk, ApiError> {
        let request = ExecuteRequest::decode(body)?;
        Ok(ExecuteAsk::from_request(&request, &self.app.config)?)
    }

    /// Quotes `ask` on every applicable rail (404 when there is none).
    pub(super) async fn run(&self, ask: &RouteAsk) -> Result<QuoteOutcome, ApiError> {
        self.app
            .routing
            .quote(ask)
            .await
            .map_err(super::routing_error)
    }
}

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(quote))
        .with_state(state(q))
}

/// The quote handler's state over `q`.
pub(crate) fn state(q: Quoting) -> QuoteState {
    let service = q.service.clone();
    let key = q.app.relayer.as_ref().map(|r| r.signer().clone());
    let attest = Arc::new(attest::QuoteSigner::new(key));
    QuoteState { q, service, attest }
}

/// What the quote handler reads.
#[derive(Clone)]
pub(crate) struct QuoteState {
    q: Quoting,
    service: std::sync::Arc<relay_execution::execute::ExecuteService>,
    /// Signs attestations, batching quotes answered together.
    attest: Arc<attest::QuoteSigner>,
}

/// The router intent a quote serves beside its price when the sender is
/// known (`POST /api/route/intent`'s answer for the same route), or why
/// there is none.
async fn intent_for(
    s: &QuoteState,
    params: &serde_json::Value,
    outcome: &QuoteOutcome,
    who: &str,
) -> (Option<serde_json::Value>, Option<String>) {
    if params.get("fromAddress").is_none_or(|a| a.is_null()) {
        return (
            None,
            Some("send fromAddress to get the typed data to sign (intent)".into()),
        );
    }
    let ask = ExecuteRequest::decode(params)
        .map_err(RequestError::from)
        .and_then(|r| ExecuteAsk::from_request(&r, &s.q.app.config));
    let ask = match ask {
        Ok(a) => a,
        Err(e) => return (None, Some(e.to_string())),
    };
    let place = match s.service.admit_intent(who).await {
        Ok(p) => p,
        Err(e) => return (None, Some(e.to_string())),
    };
    let prepared = s.service.prepare_from(outcome, ask).await;
    s.service.intent_settled(who, place, prepared.is_ok()).await;
    match prepared {
        Ok(i) => (serde_json::to_value(i).ok(), None),
        Err(e) => (None, Some(e.to_string())),
    }
}

#[utoipa::path(post, path = "/api/route/quote", tag = "routing", summary = "Best-of-N quote: every applicable rail compared by net output after every fee", request_body = relay_wire::RouteRequest, responses((status = 200, description = "OK", body = Quote), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(lane, rail, best_of))]
pub(crate) async fn quote(
    State(s): State<QuoteState>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    headers: axum::http::HeaderMap,
    query: QueryFields,
    body: JsonObject,
) -> Result<LargeJson<Quote>, ApiError> {
    let q = &s.q;
    let params = edge::params(Some(body), query)?;
    let ask = q.parse(&params)?;
    let span = tracing::Span::current();
    span.record("lane", format!("{}->{}", ask.from_chain, ask.to_chain));
    let outcome = q.run(&ask).await?;
    let Some((winner, priced)) = outcome.best() else {
        return Err(relay_errors::no_route(outcome.no_route()));
    };
    span.record("rail", winner.rail.as_str());
    span.record("best_of", outcome.answered());
    let validity = (q.app.config.quote.validity_ms, q.app.clock.now_ms());
    let terms = terms(&outcome, winner, priced, validity);
    let attestation = s
        .attest
        .sign(terms)
        .await
        .map_err(|e| ApiError::new(ErrorCode::RelayerUnavailable, e.to_string()))?;
    let mut answer = Quote::of(&outcome, winner, priced, attestation);
    answer.with_usd(&q.app.prices, &outcome.ask);
    let who = super::intent::requester(&q.app, &headers, peer);
    (answer.intent, answer.intent_note) = intent_for(&s, &params, &outcome, &who).await;
    Ok(LargeJson(answer))
}

fn token_ref(t: &Token) -> String {
    t.address.clone().unwrap_or_else(|| t.symbol.clone())
}

fn terms(
    o: &QuoteOutcome,
    winner: &RailResult,
    p: &Priced,
    (validity_ms, now): (u64, u64),
) -> QuoteTerms {
    let expires_at = (now + validity_ms).min(p.quote.expires_at_ms.max(now));
    QuoteTerms {
        from_chain: o.ask.from_chain,
        to_chain: o.ask.to_chain,
        from_token: token_ref(&o.ask.from_token),
        to_token: token_ref(&o.ask.to_token),
        amount: o.ask.amount,
        rail: winner.rail.clone(),
        lane: winner.lane.clone(),
        estimated: p.net.estimated,
        min_out: p.net.min,
        recipient: o.ask.recipient.clone(),
        member: o.membership.member,
        expires_at,
    }
}
