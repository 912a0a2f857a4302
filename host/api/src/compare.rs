//! `GET` and `POST /api/route/compare` (spec §2.9, §4.3, §8.2): the same
//! ranked best-of-N as the quote, read-only and unsigned, with every
//! applicable rail assessed (`effectiveFeePct`, `qualityScore`), a `guard`
//! and a 12 s cache per lane and amount (`cached`). GET takes the
//! RouteRequest in the query string; POST in the body. Unlike the quote, a
//! lane where no rail answers is still a 200 with every rail `ok:false` and
//! `best: null`; an unroutable lane is 404 `UNROUTABLE_LANE`.

use axum::{
    extract::{DefaultBodyLimit, State},
    routing::get,
    Json, Router,
};
use serde_json::{json, Value};

use super::{
    edge::{self, JsonObject, QueryFields},
    quote::{rail_entry, Quoting},
    ApiError, AppState,
};
use relay_engine::{
    compare::{self, cache_key},
    quote::QuoteOutcome,
    route::RouteAsk,
};

pub(super) fn routes(q: Quoting) -> Router<AppState> {
    Router::new()
        .route("/api/route/compare", get(compare_get).post(compare_post))
        .layer(DefaultBodyLimit::max(edge::BODY_LIMIT))
        .with_state(q)
}

#[tracing::instrument(skip_all, fields(lane, cached))]
async fn compare_get(
    State(q): State<Quoting>,
    query: QueryFields,
) -> Result<Json<Value>, ApiError> {
    respond(&q, edge::params(None, query)?).await
}

#[tracing::instrument(skip_all, fields(lane, cached))]
async fn compare_post(
    State(q): State<Quoting>,
    query: QueryFields,
    body: JsonObject,
) -> Result<Json<Value>, ApiError> {
    respond(&q, edge::params(Some(body), query)?).await
}

async fn respond(q: &Quoting, fields: Value) -> Result<Json<Value>, ApiError> {
    let ask = q.parse(&fields)?;
    let span = tracing::Span::current();
    span.record("lane", format!("{}->{}", ask.from_chain, ask.to_chain));
    let key = cache_key(&ask);
    let (result, cached) = match q.compare_cache.get(&key) {
        Some(hit) => (hit, true),
        None => {
            let outcome = q.run(&ask).await?;
            (
                q.compare_cache.put(key, compare_body(q, &ask, &outcome)),
                false,
            )
        }
    };
    span.record("cached", cached);
    let mut body = (*result).clone();
    body["cached"] = json!(cached);
    Ok(Json(body))
}

fn compare_body(q: &Quoting, ask: &RouteAsk, o: &QuoteOutcome) -> Value {
    let cfg = &q.app.config.quote;
    let threshold_ppm = u64::from(cfg.guard_threshold_pct) * 10_000;
    let best = o.best();
    let best_net = best.map(|(_, p)| p.net.estimated).unwrap_or_default();
    let quotes: Vec<Value> = o
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut v = rail_entry(o, r, i);
            let (fee, score) = match &r.outcome {
                Ok(p) => {
                    let fee = compare::effective_fee_ppm(cfg, ask, p.net.estimated);
                    let score = compare::quality_score(
                        p.net.estimated,
                        best_net,
                        fee,
                        threshold_ppm,
                        p.quote.duration_sec,
                    );
                    (fee, score)
                }
                Err(_) => (None, 0),
            };
            v["effectiveFeePct"] = json!(fee.map(compare::ppm_to_pct));
            v["qualityScore"] = json!(score);
            v
        })
        .collect();
    let best_fee = best.and_then(|(_, p)| compare::effective_fee_ppm(cfg, ask, p.net.estimated));
    let guard = compare::guard(
        ask.amount,
        best_fee,
        o.tier.route_fee_bps,
        cfg.guard_threshold_pct,
    );
    json!({
        "lane": {
            "fromChain": ask.from_chain,
            "toChain": ask.to_chain,
            "fromToken": ask.from_token.symbol,
            "toToken": ask.to_token.symbol,
            "amount": ask.amount,
            "applicableRails": o.results.iter().map(|r| r.rail.as_str()).collect::<Vec<_>>(),
            "estOutUnit": ask.to_token.symbol,
            "estOutDecimals": ask.to_token.decimals,
        },
        "quotes": quotes,
        "best": best.map(|(r, _)| r.rail.clone()),
        "comparedRails": o.answered(),
        "railsAttempted": o.results.len(),
        "guard": {
            "ok": guard.ok,
            "effectiveFeePct": guard.effective_fee_ppm.map(compare::ppm_to_pct),
            "thresholdPct": guard.threshold_pct,
            "recommendedMinInput": guard.recommended_min_input,
        },
        "member": o.membership.member,
    })
}
