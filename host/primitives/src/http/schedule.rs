//! `POST /api/route/schedule`, `GET` and `DELETE /api/route/schedule/{id}`
//! (spec §2.12, §3.2, §4.4): a route run once at `at`, or `count` times
//! every `everySeconds` (at least 10) from `at` (default now).
//!
//! The record: `{id: sched_…, status, active, route, everySeconds, at,
//! count, remaining, live, authority, nextRunAt, createdAt, runs[], note}`
//! (times in epoch seconds). `active` until its last run; then
//! `completed` (`remaining` 0, `active:false`, no `nextRunAt`); a DELETE
//! makes it `cancelled` (`{id, status:"cancelled"}`) — only with the
//! record's `x-cancel-token` (the `cancelToken` the create answer carries,
//! once) or the owner's credential ([`super`]). Each run appends
//! `{seq, at, key, simulated, wouldExecute | ok, routeId, status, error}`
//! ([`crate::watcher`]). A bad id → 404 `PRIMITIVE_NOT_FOUND`.

use super::{answer, authority, canceller, check_route, request, Prim};
use crate::{
    record::{self, Cancelled, Schedule, ScheduleView},
    service::Kind,
};
use axum::{
    body::Bytes,
    extract::{Path, State},
    http::HeaderMap,
    response::Response,
};
use relay_errors::{ApiError, ErrorBody};
use relay_wire::ScheduleRequest;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<Prim> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(read, cancel))
}

#[utoipa::path(
    post,
    path = "/api/route/schedule",
    tag = "primitives",
    summary = "Schedule a route: once at `at`, or `count` (1 to 1000) times every `everySeconds` (>= 10); simulated unless the host's gate is on and live:true",
    request_body = ScheduleRequest,
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>: required for live:true")),
    responses(
        (status = 200, description = "The schedule (active), with its cancelToken (shown only here)", body = ScheduleView),
        (status = "default", description = "A typed error (400 naming the field: everySeconds, count, at, route.<field>; 401 OPERATOR_AUTH_REQUIRED for live:true without the owner's credential)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(schedule))]
async fn create(State(p): State<Prim>, headers: HeaderMap, body: Bytes) -> Response {
    let run = async {
        let body: ScheduleRequest = request(&body)?;
        let route = record::route(body.route.as_ref())?;
        check_route(&p, &route, "route")?;
        let now = p.parts.clock.now_ms() / 1000;
        let mut s = Schedule::from_request(&body, route, now)?;
        s.authority = authority(&p, &headers, body.authority.as_ref(), s.live)?;
        let view = p.svc.create_schedule(s).await?;
        tracing::Span::current().record("schedule", view.id.as_str());
        Ok::<_, ApiError>(view)
    };
    answer(run.await)
}

#[utoipa::path(
    get,
    path = "/api/route/schedule/{id}",
    tag = "primitives",
    summary = "A schedule: its state, remaining runs and runs[]",
    params(("id" = String, Path, description = "The sched_ id")),
    responses(
        (status = 200, description = "The schedule", body = ScheduleView),
        (status = "default", description = "404 PRIMITIVE_NOT_FOUND for an unknown id", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(schedule = %id))]
async fn read(State(p): State<Prim>, Path(id): Path<String>) -> Response {
    answer(p.svc.schedule(&id).await.map_err(ApiError::from))
}

#[utoipa::path(
    delete,
    path = "/api/route/schedule/{id}",
    tag = "primitives",
    summary = "Cancel a schedule: no further run starts",
    params(
        ("id" = String, Path, description = "The sched_ id"),
        ("x-cancel-token" = Option<String>, Header, description = "The cancelToken the create answer carried"),
        ("authorization" = Option<String>, Header, description = "Bearer <owner token>: cancels any record"),
    ),
    responses(
        (status = 200, description = "`{id, status:\"cancelled\"}`", body = Cancelled),
        (status = "default", description = "401 PRIMITIVE_CANCEL_UNAUTHORIZED without x-cancel-token or the owner's credential; 403 PRIMITIVE_CANCEL_FORBIDDEN for another record's token (the record is unchanged); 404 PRIMITIVE_NOT_FOUND; 409 PRIMITIVE_FINISHED for a completed schedule", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(schedule = %id))]
async fn cancel(State(p): State<Prim>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let who = canceller(&p, &headers);
    answer(
        p.svc
            .cancel(Kind::Schedule, &id, who)
            .await
            .map_err(ApiError::from),
    )
}
