//! What the primitives' handlers share ([`crate::batch`],
//! [`crate::schedule`], [`crate::conditional`]; spec §2.12, §4.4): the
//! state, typed errors, the route check, the live authority check, and the
//! watcher's live runner over the one execute service.
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
//! ([`relay_primitives::cancel`]). The token is stored hashed and shown
//! once. Neither → 401 `PRIMITIVE_CANCEL_UNAUTHORIZED`; a token that is not
//! the record's → 403 `PRIMITIVE_CANCEL_FORBIDDEN`; either way the record
//! stays as it was.

use super::{auth, edge::JsonObject, execute, quote::Quoting, ApiError, AppState, ErrorCode};
use axum::{
    http::HeaderMap,
    response::{IntoResponse, Response},
    Json,
};
use relay_primitives::{
    cancel::Canceller,
    record::{self, Authority, UNSUPPORTED_AUTHORITIES},
    service::Primitives,
};
use relay_wire::Loose;
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// The handlers' state.
#[derive(Clone)]
pub(crate) struct Prim {
    /// Quoting (and the host's state).
    pub q: Quoting,
    /// The records.
    pub svc: Primitives,
}

impl Prim {
    pub(crate) fn new(q: Quoting) -> Self {
        let svc = Primitives::new(Arc::new(q.app.store.clone()), q.app.clock.clone());
        Prim { q, svc }
    }
}

/// The header a record's cancel token is sent in.
pub(crate) const CANCEL_TOKEN_HEADER: &str = relay_primitives::cancel::TOKEN_HEADER;

/// Who asks to cancel a record: the owner (by credential), the holder of
/// a cancel token (checked by the service), or nobody.
pub(crate) fn canceller<'h>(s: &AppState, headers: &'h HeaderMap) -> Canceller<'h> {
    if auth::is_operator(s.owner_token.as_ref(), headers) {
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
pub(crate) fn check_route(q: &Quoting, route: &Value, at: &str) -> Result<(), ApiError> {
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
            ErrorCode::AuthorityUnsupported,
            format!("{f}: {mode} — a primitive's runs execute as mode self (the owner's authority); omit mode"),
        )
        .field(f));
    }
    q.parse(route).map_err(|e| within(at, e))?;
    Ok(())
}

/// The authority of a record with `live` (`requested`: the body's
/// `authority`): the owner's credential, or a typed refusal (module docs).
/// `None` for a record that only simulates.
pub(crate) fn authority(
    s: &AppState,
    headers: &HeaderMap,
    requested: Option<&Loose<String>>,
    live: bool,
) -> Result<Option<Authority>, ApiError> {
    match record::authority(requested)?.as_deref() {
        None | Some("owner") => {}
        Some(a) if UNSUPPORTED_AUTHORITIES.contains(&a) => {
            return Err(ApiError::new(
                ErrorCode::AuthorityUnsupported,
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
    if !auth::is_operator(s.owner_token.as_ref(), headers) {
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
        Err(e) => execute::error_response(e),
    }
}

/// The body, a JSON object, decoded as a primitive's request (whose
/// fields are all kept as sent: only a body that is not an object fails).
pub(crate) fn request<T: DeserializeOwned>(body: &axum::body::Bytes) -> Result<T, ApiError> {
    let JsonObject(obj) = JsonObject::parse(body)?;
    Ok(relay_wire::decode(&Value::Object(obj))?)
}

/// The primitives' routes over the host's routing.
fn routes(s: &AppState) -> utoipa_axum::router::OpenApiRouter<AppState> {
    let q = Quoting::of(s);
    super::batch::routes(q.clone())
        .merge(super::schedule::routes(q.clone()))
        .merge(super::conditional::routes(q))
}

/// Route primitives (spec §4.4): batches, schedules and price
/// conditionals, 30 a minute each.
pub(crate) const FEATURE: relay_feature::Feature<AppState> = relay_feature::Feature {
    name: "primitives",
    home: "host/primitives",
    spec: "§4.4",
    section: None,
    routes,
    limits: &[
        relay_feature::Limit::post("batch", "/api/route/batch", 30),
        relay_feature::Limit::post("schedule", "/api/route/schedule", 30),
        relay_feature::Limit::post("conditional", "/api/route/conditional", 30),
    ],
    errors: &[
        ErrorCode::PrimitiveNotFound,
        ErrorCode::PrimitiveFinished,
        ErrorCode::PrimitiveCancelUnauthorized,
        ErrorCode::PrimitiveCancelForbidden,
        ErrorCode::AuthorityUnsupported,
    ],
    start: None,
};
