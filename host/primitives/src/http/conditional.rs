//! `POST /api/route/conditional`, `GET` and `DELETE
//! /api/route/conditional/{id}` (spec §2.12, §4.4; the spec leaves the
//! path open and shows no GET or DELETE: these are this project's choice,
//! shaped as the schedule's).
//!
//! `when`: `{type: "priceAbove" | "priceBelow", asset: "ETH/USD", value}`
//! (`value` a decimal string or number of USD, also accepted as `price`;
//! compared in 18-decimal fixed point, strictly above / below) or `{type:
//! "timeAfter", at}` (epoch seconds or ISO-8601; `value` accepted too).
//! Prices are the host's price book, as `GET /api/pricefeeds` lists it.
//! `expiresAt` (optional; default `primitives.conditional_ttl_secs`, 30
//! days): unfired by then, the record is `expired`.
//!
//! States: `armed` → `triggered` (its one run executing) → `executed`
//! (simulated or live; `runs[0].simulated` says which) or `failed` (the
//! run's error in `runs[0]`); `armed` → `expired`; `armed` → `cancelled`
//! (DELETE, only with the record's `x-cancel-token` — the `cancelToken`
//! the create answer carries, once — or the owner's credential:
//! [`super`]). Every move past `armed` appends a `runs[]` entry (`event`:
//! `triggered` with what was `observed`, or `expired`).

use super::{answer, authority, canceller, check_route, request, Prim};
use crate::{
    record::{self, Cancelled, Conditional, ConditionalView},
    service::Kind,
};
use axum::{
    body::Bytes,
    extract::{Path, State},
    http::HeaderMap,
    response::Response,
};
use relay_errors::{ApiError, ErrorBody};
use relay_wire::ConditionalRequest;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<Prim> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(read, cancel))
}

#[utoipa::path(
    post,
    path = "/api/route/conditional",
    tag = "primitives",
    summary = "Arm a conditional route: priceAbove / priceBelow an <ASSET>/USD feed, or timeAfter a time; simulated unless the host's gate is on and live:true",
    request_body = ConditionalRequest,
    params(("authorization" = Option<String>, Header, description = "Bearer <owner token>: required for live:true")),
    responses(
        (status = 200, description = "The conditional (armed), with its cancelToken (shown only here)", body = ConditionalView),
        (status = "default", description = "A typed error (400 naming the field: when.type, when.asset, when.value, when.at, expiresAt, route.<field>; 401 OPERATOR_AUTH_REQUIRED for live:true without the owner's credential)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(conditional))]
async fn create(State(p): State<Prim>, headers: HeaderMap, body: Bytes) -> Response {
    let run = async {
        let body: ConditionalRequest = request(&body)?;
        let route = record::route(body.route.as_ref())?;
        check_route(&p, &route, "route")?;
        let now = p.parts.clock.now_ms() / 1000;
        let ttl = p.parts.config.primitives.conditional_ttl_secs;
        let mut c = Conditional::from_request(&body, route, now, ttl)?;
        c.authority = authority(&p, &headers, body.authority.as_ref(), c.live)?;
        let view = p.svc.create_conditional(c).await?;
        tracing::Span::current().record("conditional", view.id.as_str());
        Ok::<_, ApiError>(view)
    };
    answer(run.await)
}

#[utoipa::path(
    get,
    path = "/api/route/conditional/{id}",
    tag = "primitives",
    summary = "A conditional: its state and runs[]",
    params(("id" = String, Path, description = "The cond_ id")),
    responses(
        (status = 200, description = "The conditional", body = ConditionalView),
        (status = "default", description = "404 PRIMITIVE_NOT_FOUND for an unknown id", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(conditional = %id))]
async fn read(State(p): State<Prim>, Path(id): Path<String>) -> Response {
    answer(p.svc.conditional(&id).await.map_err(ApiError::from))
}

#[utoipa::path(
    delete,
    path = "/api/route/conditional/{id}",
    tag = "primitives",
    summary = "Disarm a conditional",
    params(
        ("id" = String, Path, description = "The cond_ id"),
        ("x-cancel-token" = Option<String>, Header, description = "The cancelToken the create answer carried"),
        ("authorization" = Option<String>, Header, description = "Bearer <owner token>: cancels any record"),
    ),
    responses(
        (status = 200, description = "`{id, status:\"cancelled\"}`", body = Cancelled),
        (status = "default", description = "401 PRIMITIVE_CANCEL_UNAUTHORIZED without x-cancel-token or the owner's credential; 403 PRIMITIVE_CANCEL_FORBIDDEN for another record's token (the record is unchanged); 404 PRIMITIVE_NOT_FOUND; 409 PRIMITIVE_FINISHED once it fired or expired", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all, fields(conditional = %id))]
async fn cancel(State(p): State<Prim>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let who = canceller(&p, &headers);
    answer(
        p.svc
            .cancel(Kind::Conditional, &id, who)
            .await
            .map_err(ApiError::from),
    )
}
