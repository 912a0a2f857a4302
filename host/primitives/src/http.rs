//! The route primitives' HTTP adapter (spec §2.12, §4.4): the feature's
//! descriptor ([`feature`]) and what its handlers ([`batch`],
//! [`schedule`], [`conditional`]) share — the state, the route check, the
//! live authority check, and the host's routing as [`Live`] hands it (the
//! live runner over the one execute service and the leg planner).
//!
//! Authority (this project's design; the spec leaves it open): a record
//! with `live:true` must carry authority at creation or is refused. The
//! one authority served is the operator's owner credential
//! (`Authorization: Bearer <owner token>`, `authority:"owner"`, the
//! default): its runs execute as `mode:"self"` through the same execute
//! service as `POST /api/route/execute`, spending the operator's funds. No
//! credential → 401 `OPERATOR_AUTH_REQUIRED` naming `live`; `authority`
//! `session` or `permit2` → 400 `AUTHORITY_UNSUPPORTED` (not served yet).
//! A record without `live:true` needs no authority: it only simulates.
//!
//! Cancelling (`DELETE` of a schedule or conditional): only the owner's
//! credential (`Authorization: Bearer <owner token>`) or the record's own
//! cancel token — `cancelToken` in the create answer, sent back as the
//! header `x-cancel-token` — cancels a record
//! ([`crate::cancel`]). The token is stored hashed and shown
//! once. Neither → 401 `PRIMITIVE_CANCEL_UNAUTHORIZED`; a token that is not
//! the record's → 403 `PRIMITIVE_CANCEL_FORBIDDEN`; either way the record
//! stays as it was.

pub mod batch;
pub mod conditional;
pub mod schedule;

use async_trait::async_trait;
use axum::{
    http::HeaderMap,
    response::{IntoResponse, Response},
    Json,
};
use relay_engine::{quote::QuoteOutcome, route::RouteAsk};
use relay_errors::{ApiError, ErrorCode};
use relay_feature::{
    edge::JsonObject,
    operator::{self, is_operator},
    Feature, HasHandles, Limit, Parts,
};
use relay_wire::{Loose, RouteRequest};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;

use crate::{
    cancel::Canceller,
    errors,
    record::{self, Authority, UNSUPPORTED_AUTHORITIES},
    service::Primitives,
    watcher::Runner,
};

/// How a batch's legs are planned: the host's quote fan-out and the
/// answer an execute would use.
#[cfg_attr(any(test, feature = "test-utils"), mockall::automock)]
#[async_trait]
#[auto_impl::auto_impl(&, Arc, Box)]
pub trait Planner: Send + Sync {
    /// Quotes `ask` and finds the answer an execute would use (optionally
    /// only `rail`'s): the outcome and the winner's index, or the typed
    /// refusal a quote answers with.
    async fn winner<'r>(
        &self,
        ask: &RouteAsk,
        rail: Option<&'r str>,
    ) -> Result<(QuoteOutcome, usize), ApiError>;
}

/// What the host hands the feature: the live runner (one execute through
/// the execute service `POST /api/route/execute` uses) and the leg planner,
/// both over its one routing service.
#[derive(Clone)]
pub struct Live {
    /// Runs a record's route.
    pub runner: Arc<dyn Runner>,
    /// Plans a batch's legs.
    pub planner: Arc<dyn Planner>,
}

/// The handlers' state.
#[derive(Clone)]
pub struct Prim {
    /// The records.
    pub svc: Primitives,
    /// The host's routing.
    pub live: Live,
    /// The host's parts (configuration, clock, owner token).
    pub parts: Parts,
}

impl Prim {
    /// Decodes `fields` as a RouteRequest and checks it.
    pub(crate) fn parse(&self, fields: &Value) -> Result<RouteAsk, ApiError> {
        let request: RouteRequest = relay_wire::decode(fields)?;
        Ok(RouteAsk::from_request(&request, &self.parts.config)?)
    }

    /// Whether the request carries the owner's credential.
    fn is_owner(&self, headers: &HeaderMap) -> bool {
        is_operator(self.parts.owner.as_ref(), headers)
    }
}

/// The header a record's cancel token is sent in.
pub(crate) const CANCEL_TOKEN_HEADER: &str = crate::cancel::TOKEN_HEADER;

/// Who asks to cancel a record: the owner (by credential), the holder of
/// a cancel token (checked by the service), or nobody.
pub(crate) fn canceller<'h>(p: &Prim, headers: &'h HeaderMap) -> Canceller<'h> {
    if p.is_owner(headers) {
        return Canceller::Owner;
    }
    match headers
        .get(CANCEL_TOKEN_HEADER)
        .map(|v| v.to_str().map(str::trim))
    {
        Some(Ok(t)) if !t.is_empty() => Canceller::Token(t),
        Some(_) => Canceller::Token(""),
        None => Canceller::Anonymous,
    }
}

/// `e` with its field (and message) under `at` (`routes[3]`, `route`).
pub(crate) fn within(at: &str, mut e: ApiError) -> ApiError {
    e.field = Some(e.field.map_or(at.to_string(), |f| format!("{at}.{f}")));
    e.message = format!("{at}.{}", e.message);
    e
}

/// Checks `route` (a RouteRequest with `toAddress`, as execute reads it)
/// found at `at`.
pub(crate) fn check_route(p: &Prim, route: &Value, at: &str) -> Result<(), ApiError> {
    let o = route.as_object().ok_or_else(|| {
        ApiError::new(ErrorCode::InvalidField, format!("{at}: must be an object")).field(at)
    })?;
    if o.get("toAddress").is_none_or(Value::is_null) {
        let f = format!("{at}.toAddress");
        return Err(ApiError::new(ErrorCode::MissingField, format!("{f}: required")).field(f));
    }
    if let Some(mode) = o.get("mode").filter(|m| m.as_str() != Some("self")) {
        let f = format!("{at}.mode");
        return Err(ApiError::new(
            errors::AuthorityUnsupported,
            format!("{f}: {mode} — a primitive's runs execute as mode self (the owner's authority); omit mode"),
        )
        .field(f));
    }
    p.parse(route).map_err(|e| within(at, e))?;
    Ok(())
}

/// The authority of a record with `live` (`requested`: the body's
/// `authority`): the owner's credential, or a typed refusal (module docs).
/// `None` for a record that only simulates.
pub(crate) fn authority(
    p: &Prim,
    headers: &HeaderMap,
    requested: Option<&Loose<String>>,
    live: bool,
) -> Result<Option<Authority>, ApiError> {
    match record::authority(requested)?.as_deref() {
        None | Some("owner") => {}
        Some(a) if UNSUPPORTED_AUTHORITIES.contains(&a) => {
            return Err(ApiError::new(
                errors::AuthorityUnsupported,
                format!("authority: {a:?} is not served yet; a live primitive runs on the owner's credential (authority \"owner\")"),
            )
            .field("authority"))
        }
        Some(a) => {
            return Err(ApiError::new(
                ErrorCode::InvalidField,
                format!("authority: {a:?} is not one of owner, session, permit2"),
            )
            .field("authority"))
        }
    }
    if !live {
        return Ok(None);
    }
    if !p.is_owner(headers) {
        return Err(ApiError::new(
            ErrorCode::OperatorAuthRequired,
            "live: a live primitive spends the operator's funds when it runs and needs the owner's credential at creation (Authorization: Bearer <owner token>); without live:true it only simulates",
        )
        .field("live"));
    }
    Ok(Some(Authority::Owner))
}

/// A handler's answer: the JSON, or the typed error (a 401 with its
/// challenge).
pub(crate) fn answer<T: Serialize>(r: Result<T, ApiError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => operator::refusal(e, &[]),
    }
}

/// The body, a JSON object, decoded as a primitive's request (whose
/// fields are all kept as sent: only a body that is not an object fails).
pub(crate) fn request<T: DeserializeOwned>(body: &axum::body::Bytes) -> Result<T, ApiError> {
    let JsonObject(obj) = JsonObject::parse(body)?;
    Ok(relay_wire::decode(&Value::Object(obj))?)
}

/// Each create is a record the host keeps and may run.
const LIMITS: &[Limit] = &[
    Limit::post("batch", "/api/route/batch", 30),
    Limit::post("schedule", "/api/route/schedule", 30),
    Limit::post("conditional", "/api/route/conditional", 30),
];

/// Route primitives (spec §4.4): batches, schedules and price
/// conditionals, as the host registers them.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "primitives",
        home: "host/primitives",
        spec: "§2.12, §4.4",
        section: None,
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(crate::start),
    }
}

/// The routes over the host's state `s`, holding the [`Prim`] handle the
/// start left.
fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    let routes = batch::routes()
        .merge(schedule::routes())
        .merge(conditional::routes());
    relay_feature::mount::<S, Prim>(s, routes)
}
