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

use axum::{
    extract::{DefaultBodyLimit, State},
    routing::post,
    Json, Router,
};
use relay_plugin_api::{RailRole, Token};
use serde_json::{json, Value};

use super::{
    edge::{self, JsonObject, QueryFields},
    ApiError, AppState, ErrorCode,
};
use relay_engine::{
    attest::{self, QuoteTerms},
    compare::TtlCache,
    quote::{NoRoute, Priced, QuoteOutcome, Quoter, RailResult},
    route::{parse_route, RouteAsk},
};
use relay_types::now_ms;

/// What the quote and compare handlers share.
#[derive(Clone)]
pub(super) struct Quoting {
    /// The host's state.
    pub app: AppState,
    /// The engine.
    pub quoter: Arc<Quoter>,
    /// Compare answers (spec §8.2: 12 s).
    pub compare_cache: Arc<TtlCache<Value>>,
}

impl Quoting {
    pub(super) fn new(app: AppState) -> Self {
        let ttl = std::time::Duration::from_millis(app.config.quote.compare_cache_ms);
        Quoting {
            quoter: Arc::new(Quoter::new(app.config.clone())),
            compare_cache: Arc::new(TtlCache::new(ttl)),
            app,
        }
    }

    /// Parses a RouteRequest from the request's fields.
    pub(super) fn parse(&self, fields: &Value) -> Result<RouteAsk, ApiError> {
        Ok(parse_route(fields, &self.app.config)?)
    }

    /// Quotes `ask` on every applicable rail (404 when there is none).
    pub(super) async fn run(&self, ask: &RouteAsk) -> Result<QuoteOutcome, ApiError> {
        let candidates =
            super::with_mesh(&self.app, |i| relay_engine::quote::candidates(i, ask)).await?;
        if candidates.is_empty() {
            return Err(ApiError::new(
                ErrorCode::UnroutableLane,
                format!(
                    "no enabled, healthy rail routes {} from {} to {} {}",
                    ask.from_token.symbol, ask.from_chain, ask.to_chain, ask.to_token.symbol
                ),
            )
            .suggest("see GET /api/route/chains for the lanes this host serves"));
        }
        Ok(self.quoter.quote(candidates, ask).await)
    }
}

pub(super) fn routes(q: Quoting) -> Router<AppState> {
    Router::new()
        .route("/api/route/quote", post(quote))
        .layer(DefaultBodyLimit::max(edge::BODY_LIMIT))
        .with_state(q)
}

#[tracing::instrument(skip_all, fields(lane, rail, best_of))]
async fn quote(
    State(q): State<Quoting>,
    query: QueryFields,
    body: JsonObject,
) -> Result<Json<Value>, ApiError> {
    let ask = q.parse(&edge::params(Some(body), query)?)?;
    let span = tracing::Span::current();
    span.record("lane", format!("{}->{}", ask.from_chain, ask.to_chain));
    let outcome = q.run(&ask).await?;
    let Some((winner, priced)) = outcome.best() else {
        return Err(no_route(outcome.no_route()));
    };
    span.record("rail", winner.rail.as_str());
    span.record("best_of", outcome.answered());
    let signer = q.app.relayer.as_ref().map(|r| r.signer());
    let terms = terms(&outcome, winner, priced, q.app.config.quote.validity_ms);
    let attestation = attest::sign(signer, terms)
        .map_err(|e| ApiError::new(ErrorCode::RelayerUnavailable, e.to_string()))?;
    Ok(Json(quote_body(
        &outcome,
        winner,
        priced,
        json!(attestation),
    )))
}

pub(super) fn no_route(why: Option<NoRoute>) -> ApiError {
    match why {
        Some(e @ NoRoute::AmountOutOfRange(_)) => {
            ApiError::new(ErrorCode::AmountOutOfRange, e.to_string())
                .field("amount")
                .suggest("try a larger amount (fees) or a smaller one (capacity)")
        }
        Some(e) => ApiError::new(ErrorCode::RailsUnavailable, e.to_string()),
        None => ApiError::new(ErrorCode::RailsUnavailable, "no rail could quote"),
    }
}

fn token_ref(t: &Token) -> String {
    t.address.clone().unwrap_or_else(|| t.symbol.clone())
}

fn terms(o: &QuoteOutcome, winner: &RailResult, p: &Priced, validity_ms: u64) -> QuoteTerms {
    let expires_at = (now_ms() + validity_ms).min(p.quote.expires_at_ms.max(now_ms()));
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

/// The itemised fees of one netted answer.
pub(super) fn fees_json(o: &QuoteOutcome, p: &Priced) -> Value {
    let gas: Vec<Value> = p
        .gas
        .chains
        .iter()
        .map(|(chain, (units, price))| json!({"chain": chain, "units": units, "gasPriceWei": price.to_string()}))
        .collect();
    json!({
        "route": {"bps": o.tier.route_fee_bps, "amount": p.route_fee, "token": o.ask.from_token.symbol, "deducted": p.deductions.route_fee},
        "gas": {"amount": p.gas.fee, "token": o.ask.to_token.symbol, "markupBps": p.gas.markup_bps, "spent": gas},
        "rail": p.quote.fees,
        "railNotIncluded": p.deductions.rail_fees,
        "total": p.deductions.total(),
    })
}

/// One rail's entry in `compared[]` (quote) and `quotes[]` (compare).
pub(super) fn rail_entry(o: &QuoteOutcome, r: &RailResult, rank: usize) -> Value {
    let best = rank == 0 && r.outcome.is_ok();
    let mut v = match &r.outcome {
        Ok(p) => json!({
            "rail": r.rail, "ok": true, "lane": r.lane, "rank": rank + 1, "best": best,
            "amountOut": p.quote.amount_out, "estOut": p.net.estimated, "minOut": p.net.min,
            "durationSec": p.quote.duration_sec, "etaSeconds": p.quote.duration_sec,
            "fees": fees_json(o, p),
        }),
        Err(e) => json!({
            "rail": r.rail, "ok": false, "lane": r.lane, "best": false, "estOut": null,
            "error": e.to_string(), "errorKind": e.code(), "answered": false,
        }),
    };
    if let Some(reason) = &r.quote_only {
        v["quoteOnly"] = json!(true);
        v["quoteOnlyReason"] = json!(reason);
    }
    v
}

fn side(chain: relay_plugin_api::ChainRef, t: &Token) -> Value {
    json!({"chain": chain, "token": t.symbol, "tokenAddress": t.address, "decimals": t.decimals})
}

fn quote_body(o: &QuoteOutcome, winner: &RailResult, p: &Priced, attestation: Value) -> Value {
    let ask = &o.ask;
    let mut from = side(ask.from_chain, &ask.from_token);
    from["amount"] = json!(ask.amount);
    let mut to = side(ask.to_chain, &ask.to_token);
    to["estimated"] = json!(p.net.estimated);
    to["min"] = json!(p.net.min);
    to["recipient"] = json!(ask.recipient);
    let mut via = vec![json!(winner.rail)];
    via.extend(winner.upstream.iter().map(|u| json!(u)));
    let compared: Vec<Value> = o
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| rail_entry(o, r, i))
        .collect();
    let silent = o.results.len() - o.answered();
    let mut body = json!({
        "gasless": ask.from_chain.is_evm(),
        "from": from,
        "to": to,
        "bridge": winner.rail,
        "lane": winner.lane,
        "via": via,
        "bestOf": o.answered(),
        "compared": compared,
        "durationSec": p.quote.duration_sec,
        "relayRouteFeeBps": o.tier.route_fee_bps,
        "relayRouteFee": p.route_fee,
        "fees": fees_json(o, p),
        "member": o.membership.member,
        "note": note(o, silent),
        "attestation": attestation,
        "expiresAt": attestation_expiry(&attestation),
    });
    if let Some(reason) = &winner.quote_only {
        body["quoteOnly"] = json!(true);
        body["quoteOnlyReason"] = json!(reason);
    }
    let float = o.results.iter().find(|r| r.role == RailRole::FloatLane);
    if let Some(Ok(fp)) = float.map(|r| &r.outcome) {
        body["floatlane"] = fp.quote.detail.clone();
    }
    if !(ask.from_chain.is_evm() && ask.to_chain.is_evm()) {
        let mut rail = p.quote.detail.clone();
        if !rail.is_object() {
            rail = json!({});
        }
        rail["id"] = json!(winner.rail);
        rail["lane"] = json!(winner.lane);
        body["rail"] = rail;
    }
    body
}

fn attestation_expiry(a: &Value) -> Value {
    a.get("expiresAt").cloned().unwrap_or(Value::Null)
}

fn note(o: &QuoteOutcome, silent: usize) -> String {
    let tier = if o.membership.member {
        "member tier"
    } else {
        "standard tier"
    };
    let mut n = format!(
        "best of {} answering rail(s) by net output after every fee ({tier}: route fee {} bps, gas at cost +{} %)",
        o.answered(),
        o.tier.route_fee_bps,
        o.tier.gas_markup_bps / 100
    );
    if silent > 0 {
        n.push_str(&format!(
            "; {silent} rail(s) did not answer and are listed with ok:false"
        ));
    }
    if !o.membership.unread.is_empty() {
        n.push_str("; some membership collections could not be read");
    }
    n
}
