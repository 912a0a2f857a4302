//! The developer keys' HTTP adapter (spec §2.13, §4.5, §5.2), thin over
//! [`KeyService`]:
//!
//! - `POST /api/keys/create {label?}` → KeyCreated: the `ak_` key, shown
//!   once. Rate-limited per IP (bucket `keys`, 10 a minute), even when the
//!   request carries a key.
//! - `GET /api/keys/me` → the key's label, creation time and prefix.
//! - `GET /api/keys/usage` → KeyUsage: the last hour and day (`total`,
//!   `errors`, `topPaths`) and the latest 20 requests.
//! - `POST /api/keys/revoke` → revoked: from then on the key is treated
//!   exactly like no key.
//!
//! The key is read from header `x-relay-key`, or query `?key=` (the
//! header wins when both are sent). No key is 400 `KEY_REQUIRED`; a key
//! that was never issued here or was revoked is 404 `KEY_UNKNOWN`.
//! Unknown body fields are refused. The HTTP edge reads the key a request
//! presents with [`presented`].

use std::{collections::HashMap, sync::Arc};

use axum::{
    extract::{Query, State},
    http::{HeaderMap, Uri},
    Extension, Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::{
    edge::{self, ParsedBody},
    Feature, HasHandles, Limit,
};
use relay_wire::{KeyCreateRequest, Loose};
use serde_json::{Map, Value};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{errors, KeyCreated, KeyError, KeyInfo, KeyRevoked, KeyService, KeyUsage};

/// The handlers' state: the service the feature's start left.
type Keys = Arc<KeyService>;

/// The header a key is sent in.
pub const KEY_HEADER: &str = "x-relay-key";

/// Keys are created 10 a day per IP, whatever key the request carries.
const LIMITS: &[Limit] = &[Limit::post("keys", "/api/keys/create", 10)
    .per_day()
    .by_ip()];

/// Developer keys and their usage (spec §4.5), as the host registers them.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "keys",
        home: "host/keys",
        spec: "§4.5",
        section: None,
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(crate::start),
    }
}

/// The routes over the host's state `s`, holding the service the start
/// left.
fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    relay_feature::mount(s, routes())
}

fn routes() -> OpenApiRouter<Keys> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(me))
        .routes(routes!(usage))
        .routes(routes!(revoke))
}

/// The API error of a refusal.
fn refused(e: KeyError) -> ApiError {
    match e {
        KeyError::Label(_) => ApiError::new(ErrorCode::InvalidField, e.to_string())
            .field("label")
            .suggest("send a label of at most 64 printable characters, or none"),
        KeyError::Unknown => ApiError::new(errors::KeyUnknown, e.to_string())
            .suggest("create a key with POST /api/keys/create; requests need no key"),
        KeyError::Store(_) => ApiError::new(ErrorCode::StoreUnavailable, e.to_string()),
    }
}

/// The key a request presents: header `x-relay-key`, else — when
/// `query_allowed` — query `?key=`. A header that is not text is
/// presented as the empty key (which no key matches).
pub fn presented(headers: &HeaderMap, uri: &Uri, query_allowed: bool) -> Option<String> {
    if let Some(v) = headers.get(KEY_HEADER) {
        return Some(v.to_str().unwrap_or_default().to_string());
    }
    if !query_allowed || uri.query().is_none() {
        return None;
    }
    let Query(q) = Query::<HashMap<String, String>>::try_from_uri(uri).ok()?;
    q.get("key").cloned()
}

fn required(headers: &HeaderMap, uri: &Uri) -> Result<String, ApiError> {
    presented(headers, uri, true).ok_or_else(|| {
        ApiError::new(
            errors::KeyRequired,
            format!("no key: send it as header {KEY_HEADER} or query ?key="),
        )
        .field("key")
    })
}

/// The body's fields (none when there is no body); anything but a JSON
/// object is refused.
fn body_object(body: Option<Extension<ParsedBody>>) -> Result<Map<String, Value>, ApiError> {
    match body {
        None => Ok(Map::new()),
        Some(Extension(ParsedBody(Value::Object(m)))) => Ok(m),
        Some(_) => Err(ApiError::new(
            ErrorCode::MalformedBody,
            "body: expected a JSON object",
        )),
    }
}

/// The body's fields, as [`body_object`] reads them, none outside
/// `allowed`.
fn body_fields(
    body: Option<Extension<ParsedBody>>,
    allowed: &[&str],
) -> Result<Map<String, Value>, ApiError> {
    let fields = body_object(body)?;
    edge::only_fields(&fields, allowed).map_err(|e| match allowed.is_empty() {
        true => e.suggest("the key goes in header x-relay-key or query ?key="),
        false => e,
    })?;
    Ok(fields)
}

#[utoipa::path(
    post,
    path = "/api/keys/create",
    tag = "keys",
    summary = "Create a developer key (shown once; tags requests for usage and scopes rate limits to the key; never required). Limited per IP.",
    request_body(content = KeyCreateRequest, description = "`{label?}`: at most 64 printable characters; the body may be empty"),
    responses(
        (status = 200, description = "The key, shown once", body = KeyCreated),
        (status = "default", description = "A typed error (400 INVALID_FIELD, 429 RATE_LIMITED, …)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn create(
    State(keys): State<Keys>,
    body: Option<Extension<ParsedBody>>,
) -> Result<Json<KeyCreated>, ApiError> {
    let req: KeyCreateRequest = relay_wire::decode(&Value::Object(body_object(body)?))?;
    let label = match &req.label {
        None => None,
        Some(Loose::Typed(l)) => Some(l.as_str()),
        Some(_) => {
            return Err(
                ApiError::new(ErrorCode::InvalidField, "label: must be a string").field("label"),
            )
        }
    };
    Ok(Json(keys.create(label).await.map_err(refused)?))
}

#[utoipa::path(
    get,
    path = "/api/keys/me",
    tag = "keys",
    summary = "The developer key sent (header x-relay-key or ?key=): label, created, prefix",
    params(
        ("x-relay-key" = Option<String>, Header, description = "The key (or ?key=)"),
        ("key" = Option<String>, Query, description = "The key, when not sent as x-relay-key"),
    ),
    responses(
        (status = 200, description = "The key's metadata", body = KeyInfo),
        (status = "default", description = "A typed error (400 KEY_REQUIRED, 404 KEY_UNKNOWN)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn me(
    State(keys): State<Keys>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Json<KeyInfo>, ApiError> {
    let key = required(&headers, &uri)?;
    Ok(Json(keys.lookup(&key).await.map_err(refused)?))
}

#[utoipa::path(
    get,
    path = "/api/keys/usage",
    tag = "keys",
    summary = "What the key's requests did: last hour and day (total, errors, top paths) and the latest 20 requests",
    params(
        ("x-relay-key" = Option<String>, Header, description = "The key (or ?key=)"),
        ("key" = Option<String>, Query, description = "The key, when not sent as x-relay-key"),
    ),
    responses(
        (status = 200, description = "The key's usage (requests of the last second or so may still be on their way)", body = KeyUsage),
        (status = "default", description = "A typed error (400 KEY_REQUIRED, 404 KEY_UNKNOWN)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn usage(
    State(keys): State<Keys>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Json<KeyUsage>, ApiError> {
    let key = required(&headers, &uri)?;
    Ok(Json(keys.usage(&key).await.map_err(refused)?))
}

#[utoipa::path(
    post,
    path = "/api/keys/revoke",
    tag = "keys",
    summary = "Revoke the key sent (header x-relay-key or ?key=); from then on it is treated like no key",
    params(
        ("x-relay-key" = Option<String>, Header, description = "The key (or ?key=)"),
        ("key" = Option<String>, Query, description = "The key, when not sent as x-relay-key"),
    ),
    responses(
        (status = 200, description = "Revoked", body = KeyRevoked),
        (status = "default", description = "A typed error (400 KEY_REQUIRED, 404 KEY_UNKNOWN)", body = ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn revoke(
    State(keys): State<Keys>,
    headers: HeaderMap,
    uri: Uri,
    body: Option<Extension<ParsedBody>>,
) -> Result<Json<KeyRevoked>, ApiError> {
    body_fields(body, &[])?;
    let key = required(&headers, &uri)?;
    Ok(Json(keys.revoke(&key).await.map_err(refused)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_header_wins_and_the_query_counts_only_where_allowed() {
        let uri: Uri = "/api/keys/me?key=ak_from_query".parse().unwrap();
        let mut h = HeaderMap::new();
        assert_eq!(presented(&h, &uri, true).as_deref(), Some("ak_from_query"));
        assert_eq!(presented(&h, &uri, false), None);
        h.insert(KEY_HEADER, HeaderValue::from_static("ak_from_header"));
        assert_eq!(presented(&h, &uri, true).as_deref(), Some("ak_from_header"));
        let bare: Uri = "/api/keys/me".parse().unwrap();
        assert_eq!(presented(&HeaderMap::new(), &bare, true), None);
    }
}
