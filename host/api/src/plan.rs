//! `POST /api/route/plan` (spec §2.14): is a multi-step plan feasible under
//! its constraints? Read-only; nothing is signed.
//!
//! Request: `{steps: [RouteRequest, …] (1 to 10), constraints:
//! {maxTotalSeconds?: integer, maxTotalFeeUnits?: decimal string}}`. Each
//! step is a RouteRequest (spec §2.5, optional `rail`) priced on its own
//! amount; steps are quoted in order and evaluation stops at the first
//! unroutable one. A malformed step is a typed 400 naming
//! `steps[i].<field>`; a bad constraint names `constraints.<field>`.
//!
//! Feasible (the spec does not show it; this is the shape):
//!
//! ```json
//! {"feasible": true,
//!  "steps": [{"index": 0, "rail": "floatlane", "estOut": "4977500", "feeUnits": "22500",
//!             "durationSec": 15, "token": "USDC", "lane": "evm->evm"}],
//!  "totals": {"durationSec": 15, "fees": "22500"},
//!  "constraints": {"maxTotalSeconds": 60, "maxTotalFeeUnits": null},
//!  "note": "…"}
//! ```
//!
//! `estOut` and `feeUnits` are the step's destination-token smallest units
//! (`feeUnits` is everything the step withholds; see
//! [`relay_engine::plan`]), `durationSec` the winning rail's estimate.
//! Infeasible: `{feasible: false, bindingConstraint {constraint, limit,
//! actual, why}, whatWouldMakeThisWork: [string], steps, totals, note}`,
//! where `steps` are those priced before evaluation stopped; an unroutable
//! step binds as `{constraint: "routable", limit: "every step routable",
//! actual: "step i: <errorCode>", why, step: i}`.

use axum::{extract::State, Json};
use relay_plugin_api::Amount;
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{edge::JsonObject, quote::Quoting, ApiError, AppState, ErrorCode};
use relay_engine::{
    plan::{self, Binding, Constraints, PlanAnswer, PlanStep},
    quote::QuoteOutcome,
    route::RouteAsk,
};

/// Most steps one plan may carry.
const MAX_STEPS: usize = 10;

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(plan)).with_state(q)
}

/// Quotes `ask` and finds the answer execute would use (optionally only
/// `rail`); every failure typed as the quote types it.
pub(super) async fn winner(
    q: &Quoting,
    ask: &RouteAsk,
    rail: Option<&str>,
) -> Result<(QuoteOutcome, usize), ApiError> {
    q.app.routing.winner(ask, rail).await
}

fn invalid(field: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::InvalidField, format!("{field}: {why}")).field(field)
}

/// Names a step's bad field `steps[i].<field>`.
fn in_step(i: usize, mut e: ApiError) -> ApiError {
    let at = format!("steps[{i}]");
    e.field = Some(e.field.map_or(at.clone(), |f| format!("{at}.{f}")));
    e.message = format!("{at}.{}", e.message);
    e
}

fn parse_steps(
    q: &Quoting,
    body: &serde_json::Map<String, Value>,
) -> Result<Vec<(RouteAsk, Option<String>)>, ApiError> {
    let steps = match body.get("steps") {
        None | Some(Value::Null) => {
            return Err(ApiError::new(
                ErrorCode::MissingField,
                "steps: required (1 to 10 route bodies)",
            )
            .field("steps"))
        }
        Some(Value::Array(s)) if (1..=MAX_STEPS).contains(&s.len()) => s,
        Some(Value::Array(s)) => {
            return Err(invalid(
                "steps",
                format!("{} steps given; 1 to {MAX_STEPS} are accepted", s.len()),
            ))
        }
        Some(_) => return Err(invalid("steps", "must be an array of route bodies")),
    };
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let ask = q.parse(step).map_err(|e| in_step(i, e))?;
            let rail = match step.get("rail") {
                None | Some(Value::Null) => None,
                Some(Value::String(r)) => Some(r.clone()),
                Some(_) => return Err(in_step(i, invalid("rail", "must be a string"))),
            };
            Ok((ask, rail))
        })
        .collect()
}

fn parse_constraints(v: Option<&Value>) -> Result<Constraints, ApiError> {
    let c = match v {
        None | Some(Value::Null) => return Ok(Constraints::default()),
        Some(Value::Object(c)) => c,
        Some(_) => return Err(invalid("constraints", "must be an object")),
    };
    let secs = match c.get("maxTotalSeconds") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            invalid(
                "constraints.maxTotalSeconds",
                "must be a non-negative integer",
            )
        })?),
    };
    let fees = match c.get("maxTotalFeeUnits") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.is_u64() => Some(Amount::from_u128(u128::from(
            n.as_u64().unwrap_or_default(),
        ))),
        Some(Value::String(s)) => Some(
            s.parse()
                .map_err(|e| invalid("constraints.maxTotalFeeUnits", e))?,
        ),
        Some(_) => {
            return Err(invalid(
                "constraints.maxTotalFeeUnits",
                "must be a decimal string of smallest units",
            ))
        }
    };
    Ok(Constraints {
        max_total_seconds: secs,
        max_total_fee_units: fees,
    })
}

#[utoipa::path(post, path = "/api/route/plan", tag = "routing", summary = "Feasibility of a multi-step plan under constraints", request_body = relay_wire::PlanRequest, responses((status = 200, description = "OK", body = PlanAnswer), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(steps, feasible))]
pub(crate) async fn plan(
    State(q): State<Quoting>,
    body: JsonObject,
) -> Result<Json<PlanAnswer>, ApiError> {
    let steps = parse_steps(&q, &body.0)?;
    let constraints = parse_constraints(body.0.get("constraints"))?;
    let span = tracing::Span::current();
    span.record("steps", steps.len());
    let (mut costs, mut shown) = (Vec::new(), Vec::<PlanStep>::new());
    let mut stopped: Option<Binding> = None;
    for (i, (ask, rail)) in steps.iter().enumerate() {
        match winner(&q, ask, rail.as_deref()).await {
            Ok((o, w)) => {
                let c = plan::step_cost(i, &o, w).ok_or_else(|| {
                    ApiError::new(ErrorCode::RailsUnavailable, "the winning answer vanished")
                })?;
                shown.push(PlanStep {
                    cost: c.clone(),
                    token: o.ask.to_token.symbol.clone(),
                    lane: o.results[w].lane.clone(),
                });
                costs.push(c);
            }
            Err(e) if e.code == ErrorCode::StoreUnavailable => return Err(e),
            Err(e) => {
                stopped = Some(plan::unroutable(
                    i,
                    e.code.as_str(),
                    &e.message,
                    e.suggested_action.as_deref(),
                ));
                break;
            }
        }
    }
    let binding = stopped.or_else(|| plan::binding(&constraints, &costs));
    span.record("feasible", binding.is_none());
    Ok(Json(PlanAnswer::new(
        steps.len(),
        shown,
        &constraints,
        binding,
    )))
}
