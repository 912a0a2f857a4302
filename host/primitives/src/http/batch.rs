//! `POST /api/route/batch`, `GET /api/route/batch/{id}` (spec §2.12,
//! §3.2, §4.4): a batch payout plan of up to 20 legs, each a RouteRequest
//! with `toAddress`. Each leg is quoted and planned exactly as a step of
//! `POST /api/route/plan` (`relay_app::Routing::winner`): `plan` is `{rail,
//! estOut, feeUnits, durationSec, token, lane}`, or `{ok:false, errorCode,
//! error}` for a leg no rail can carry now (and a warning naming it).
//!
//! The record: `{id: batch_…, status, live, authority, legs[] {index,
//! route, plan}, warnings[], createdAt, note, runs[]}`. 21 legs → 400
//! naming `routes`; a leg without `toAddress` → 400 naming
//! `routes[i].toAddress`.
//!
//! Running it (this project's design; the spec leaves it open): `POST
//! /api/route/batch/{id}/run` with the operator's owner credential
//! (`Authorization: Bearer <owner token>`; else 401
//! `OPERATOR_AUTH_REQUIRED`) runs each leg in order as its own route
//! through the execute service `POST /api/route/execute` uses, as
//! `mode:"self"` under the idempotency key `<id>:<index+1>` — the same
//! path as a schedule's live runs ([`crate::watcher::perform`]).
//! Gated as every primitive: a leg moves funds only when the host runs
//! with `PRIMITIVES_LIVE=1` and the batch was created `live:true` (with
//! the owner's credential); otherwise each leg is simulated and its run
//! records `wouldExecute`. The status goes `planned` → `running` →
//! `completed` (every leg executed or simulated), `partial` (some legs
//! failed) or `failed`; `runs[]` has one entry per leg `{index, status
//! (executed, failed, simulated), routeId?, routeStatus?, error?,
//! errorCode?, wouldExecute?}`; a failed leg does not stop the others.
//! A batch runs once: a second run → 409 `PRIMITIVE_FINISHED` (GET shows
//! the outcome) — unless it sends the `x-idempotency-key` the run was
//! asked with (kept as each leg run's `requestKey`): then the batch as it
//! stands; an unknown id → 404 `PRIMITIVE_NOT_FOUND`. The run is
//! answered when every leg has been submitted (routes then settle on
//! their own: follow each `routeId` with `GET /api/route/status/{id}`).

use super::{answer, authority, request, within, Prim};
use crate::{
    record::{self, Batch, Leg, NOTE},
    service::Kind,
};
use axum::{
    body::Bytes,
    extract::{Path, State},
    http::HeaderMap,
    response::Response,
};
use relay_engine::plan::{self, PlanStep};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_wire::BatchRequest;
use serde_json::{json, Value};
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<Prim> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(read))
        .routes(routes!(run))
}

/// Plans leg `i`: the engine's winner priced as a plan step, or why not.
async fn plan_leg(p: &Prim, i: usize, route: &Value) -> Result<(Leg, Option<String>), ApiError> {
    let at = format!("routes[{i}]");
    let ask = p.parse(route).map_err(|e| within(&at, e))?;
    let rail = route.get("rail").and_then(Value::as_str);
    let (plan, warning) = match p.live.planner.winner(&ask, rail).await {
        Ok((o, w)) => {
            let cost = plan::step_cost(i, &o, w).ok_or_else(|| {
                ApiError::new(ErrorCode::RailsUnavailable, "the winning answer vanished")
            })?;
            let step = PlanStep {
                cost,
                token: o.ask.to_token.symbol.clone(),
                lane: o.results[w].lane.clone(),
            };
            (serde_json::to_value(step).unwrap_or_default(), None)
        }
        Err(e) if e.code == ErrorCode::StoreUnavailable => return Err(e),
        Err(e) => {
            let warning = format!("{at}: {}: {}", e.code.as_str(), e.message);
            let plan = json!({"ok": false, "errorCode": e.code.as_str(), "error": e.message});
            (plan, Some(warning))
        }
    };
    let leg = Leg {
        index: i,
        route: route.clone(),
        plan,
    };
    Ok((leg, warning))
}

#[utoipa::path(
    post,
    path = "/api/route/batch",
    tag = "primitives",
    summary = "Plan a batch payout: up to 20 legs, each quoted and planned by the engine; nothing runs until POST /api/route/batch/{id}/run",
    request_body = BatchRequest,
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>: required for live:true")),
    responses(
        (status = 200, description = "The planned batch", body = Batch),
        (status = "default", description = "A typed error (400 naming routes or routes[i].<field>; 401 OPERATOR_AUTH_REQUIRED for live:true without the owner's credential)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(batch, legs))]
async fn create(State(p): State<Prim>, headers: HeaderMap, body: Bytes) -> Response {
    let run = async {
        let body: BatchRequest = request(&body)?;
        let routes = record::legs(&body)?;
        let live = record::live(body.live.as_ref())?;
        let authority = authority(&p, &headers, body.authority.as_ref(), live)?;
        for (i, route) in routes.iter().enumerate() {
            p.parse(route)
                .map_err(|e| within(&format!("routes[{i}]"), e))?;
        }
        let planned =
            futures::future::join_all(routes.iter().enumerate().map(|(i, r)| plan_leg(&p, i, r)))
                .await;
        let mut batch = Batch {
            id: crate::new_id(Kind::Batch.prefix()),
            status: "planned".into(),
            live,
            authority,
            legs: Vec::new(),
            warnings: Vec::new(),
            created_at: p.parts.clock.now_ms() / 1000,
            note: NOTE.into(),
            runs: Vec::new(),
        };
        for leg in planned {
            let (leg, warning) = leg?;
            batch.legs.push(leg);
            batch.warnings.extend(warning);
        }
        if live {
            batch.warnings.push("live: POST /api/route/batch/{id}/run (with the owner's credential) runs it once; its legs move funds only when the host runs with PRIMITIVES_LIVE=1, else they are simulated".into());
        }
        let span = tracing::Span::current();
        span.record("batch", batch.id.as_str());
        span.record("legs", batch.legs.len());
        p.svc.create_batch(&batch).await?;
        Ok::<_, ApiError>(batch)
    };
    answer(run.await)
}

#[utoipa::path(
    get,
    path = "/api/route/batch/{id}",
    tag = "primitives",
    summary = "A batch: its plan, state and legs' runs",
    params(("id" = String, Path, description = "The batch_ id")),
    responses(
        (status = 200, description = "The batch", body = Batch),
        (status = "default", description = "404 PRIMITIVE_NOT_FOUND for an unknown id", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(batch = %id))]
async fn read(State(p): State<Prim>, Path(id): Path<String>) -> Response {
    answer(p.svc.batch(&id).await.map_err(ApiError::from))
}

#[utoipa::path(
    post,
    path = "/api/route/batch/{id}/run",
    tag = "primitives",
    summary = "Run a planned batch once, each leg its own route (mode self, the owner's funds); simulated unless the host's gate is on and the batch is live:true",
    params(
        ("id" = String, Path, description = "The batch_ id"),
        ("authorization" = String, Header, description = "Bearer <owner token>"),
        ("x-idempotency-key" = Option<String>, Header, description = "a repeat with the key the run was asked with answers the batch as it stands instead of 409"),
    ),
    responses(
        (status = 200, description = "The batch after its run: status completed, partial or failed, and runs[] per leg", body = Batch),
        (status = "default", description = "401 OPERATOR_AUTH_REQUIRED without the owner's credential; 404 PRIMITIVE_NOT_FOUND for an unknown id; 409 PRIMITIVE_FINISHED once it has run", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(batch = %id))]
async fn run(State(p): State<Prim>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let go = async {
        if !p.is_owner(&headers) {
            return Err(ApiError::new(
                ErrorCode::OperatorAuthRequired,
                "running a batch spends the operator's funds and needs the owner's credential (Authorization: Bearer <owner token>)",
            )
            .field("authorization"));
        }
        let gate = crate::gate(p.parts.config.primitives.live);
        let runner = p.live.runner.clone();
        let svc = p.svc.clone();
        let key = relay_feature::edge::idempotency_key(&headers);
        // its own task: a client that hangs up (or a handler timeout) does
        // not stop it half-way
        let task = tokio::spawn(async move {
            svc.run_batch(&id, (runner.as_ref(), gate), key.as_deref())
                .await
        });
        let done = task
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the batch run died: {e}")))?;
        Ok(done?)
    };
    answer(go.await)
}
