//! `POST /api/route/improve` (spec §4.3): what would make a route cheaper
//! ([`relay_analysis::improve`]). The body is a RouteRequest (as for
//! `POST /api/route/compare`) or `{id}` of a live route; the baseline and
//! every probe are the comparisons compare serves (same 12 s cache), so
//! each figure can be checked against `/api/route/compare`.

use axum::{extract::State, Json};
use futures::future::join_all;
use relay_analysis::improve::{self, ImproveAnswer, Inputs};
use relay_engine::{answer::CompareResult, fees::FeeSchedule, route::RouteAsk};
use relay_plugin_api::Amount;
use serde_json::{json, Value};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    compare::compared,
    edge::{self, JsonObject, QueryFields},
    quote::Quoting,
    why::request_of,
    ApiError, AppState, ErrorCode,
};

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(route_improve))
        .with_state(q)
}

/// The float lane's micro tier ceiling (spec §8.2: 25 USD), whole units.
const MICRO_CEILING_USD: u64 = 25;

/// Comparisons of `fields` with `key` set to each of `values` (a probe that
/// fails — an amount no rail carries, say — is left out).
async fn probes(q: &Quoting, fields: &Value, key: &str, values: Vec<Value>) -> Vec<CompareResult> {
    let runs = values.into_iter().map(|v| {
        let mut f = fields.clone();
        f[key] = v;
        async move { compared(q, &f).await.ok().map(|(c, _)| (*c).clone()) }
    });
    join_all(runs).await.into_iter().flatten().collect()
}

fn micro_cap(q: &Quoting, ask: &RouteAsk) -> Option<Amount> {
    let stable = q
        .app
        .config
        .quote
        .stablecoins
        .iter()
        .any(|s| s.eq_ignore_ascii_case(&ask.from_token.symbol));
    stable.then(|| {
        Amount::from_u128(
            u128::from(MICRO_CEILING_USD) * 10u128.pow(u32::from(ask.from_token.decimals)),
        )
    })
}

/// The other stablecoins configured on the destination chain.
fn other_tokens(q: &Quoting, ask: &RouteAsk) -> Vec<Value> {
    let cfg = &q.app.config;
    let Some(chain) = ask
        .to_chain
        .evm_id()
        .and_then(|c| cfg.chains.get(&c.to_string()))
    else {
        return Vec::new();
    };
    chain
        .tokens
        .keys()
        .filter(|sym| !sym.eq_ignore_ascii_case(&ask.to_token.symbol))
        .filter(|sym| {
            cfg.quote
                .stablecoins
                .iter()
                .any(|s| s.eq_ignore_ascii_case(sym))
        })
        .map(|sym| json!(sym))
        .collect()
}

async fn request_fields(
    q: &Quoting,
    body: JsonObject,
    query: QueryFields,
) -> Result<Value, ApiError> {
    let fields = edge::params(Some(body), query)?;
    let Some(id) = fields.get("id").and_then(Value::as_str) else {
        return Ok(fields);
    };
    let (route, _) = q
        .app
        .store
        .get_route(id)
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownRoute, "unknown route id"))?;
    Ok(request_of(&route))
}

#[utoipa::path(post, path = "/api/route/improve", tag = "analysis", summary = "What would make a route cheaper: amounts where another rail wins or the fee drops, membership, timing (gas), another destination token — each with the figure it changes", request_body = relay_wire::RouteRequest, responses((status = 200, description = "OK", body = ImproveAnswer), (status = "default", description = "A typed error (the compare errors; 404 UNKNOWN_ROUTE for an unknown id)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(lane))]
async fn route_improve(
    State(q): State<Quoting>,
    query: QueryFields,
    body: JsonObject,
) -> Result<Json<ImproveAnswer>, ApiError> {
    let fields = request_fields(&q, body, query).await?;
    let ask = q.parse(&fields)?;
    let (base, _) = compared(&q, &fields).await?;
    let amounts = improve::probe_amounts(ask.amount, micro_cap(&q, &ask))
        .into_iter()
        .map(|a| json!(a.to_string()))
        .collect();
    let (amounts, tokens) = futures::join!(
        probes(&q, &fields, "amount", amounts),
        probes(&q, &fields, "toToken", other_tokens(&q, &ask)),
    );
    Ok(Json(improve::improve(&Inputs {
        base: &base,
        amounts: &amounts,
        tokens: &tokens,
        fees: FeeSchedule::from_config(&q.app.config.quote),
    })))
}
