//! `GET` and `POST /api/route/compare` (spec §2.9, §4.3, §8.2): the same
//! ranked best-of-N as the quote, read-only and unsigned, with every
//! applicable rail assessed (`effectiveFeePct`, `qualityScore`), a `guard`
//! and a 12 s cache per lane and amount (`cached`). GET takes the
//! RouteRequest in the query string; POST in the body. Unlike the quote, a
//! lane where no rail answers is still a 200 with every rail `ok:false` and
//! `best: null`; an unroutable lane is 404 `UNROUTABLE_LANE`.

use axum::extract::State;
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    edge::{self, JsonObject, LargeJson, QueryFields},
    quote::Quoting,
    ApiError, AppState,
};
use relay_engine::{answer::CompareResult, compare::cache_key};

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(compare_get, compare_post))
        .with_state(q)
}

#[utoipa::path(get, path = "/api/route/compare", tag = "best-execution", summary = "Every applicable rail ranked (12 s cache)", params(("fromChain" = String, Query, description = "source node", example = "8453"), ("toChain" = String, Query, description = "destination node", example = "42161"), ("amount" = String, Query, description = "source smallest units", example = "5000000"), ("fromToken" = Option<String>, Query, description = "symbol or address", example = "USDC"), ("toToken" = Option<String>, Query, description = "symbol or address", example = "USDC"), ("toAddress" = Option<String>, Query, description = "recipient")), responses((status = 200, description = "OK", body = CompareResult), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(lane, cached))]
async fn compare_get(
    State(q): State<Quoting>,
    query: QueryFields,
) -> Result<LargeJson<CompareResult>, ApiError> {
    respond(&q, edge::params(None, query)?).await
}

#[utoipa::path(post, path = "/api/route/compare", tag = "best-execution", summary = "Every applicable rail ranked (12 s cache)", request_body = relay_wire::RouteRequest, responses((status = 200, description = "OK", body = CompareResult), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(lane, cached))]
pub(crate) async fn compare_post(
    State(q): State<Quoting>,
    query: QueryFields,
    body: JsonObject,
) -> Result<LargeJson<CompareResult>, ApiError> {
    respond(&q, edge::params(Some(body), query)?).await
}

async fn respond(q: &Quoting, fields: Value) -> Result<LargeJson<CompareResult>, ApiError> {
    let (result, cached) = compared(q, &fields).await?;
    tracing::Span::current().record("cached", cached);
    let mut body = (*result).clone();
    body.cached = cached;
    Ok(LargeJson(body))
}

/// The comparison for the RouteRequest in `fields` (from the 12 s cache
/// when it holds one: `true`).
pub(super) async fn compared(
    q: &Quoting,
    fields: &Value,
) -> Result<(std::sync::Arc<CompareResult>, bool), ApiError> {
    let ask = q.parse(fields)?;
    let span = tracing::Span::current();
    span.record("lane", format!("{}->{}", ask.from_chain, ask.to_chain));
    let key = cache_key(&ask);
    Ok(match q.compare_cache.get(&key) {
        Some(hit) => (hit, true),
        None => {
            let outcome = q.run(&ask).await?;
            let result = CompareResult::of(&q.app.config.quote, &ask, &outcome);
            (q.compare_cache.put(key, result), false)
        }
    })
}
