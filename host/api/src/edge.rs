//! Raw input → typed values at the edge (spec §2.5, §7): JSON bodies and
//! query strings become one JSON object, and every rejection is a typed
//! error — never axum's plain-text rejections, never a 5xx.
//!
//! - [`JsonObject`]: the body must be a JSON object no larger than
//!   [`BODY_LIMIT`] (`MALFORMED_BODY` naming the line and column,
//!   `BODY_TOO_LARGE`).
//! - [`params`]: query-string fields fill in what the body does not carry
//!   (so `?token=USDC` is the source-token alias on a POST, and a GET
//!   compare is a RouteRequest in the query).
//! - [`RequestError`] maps onto `errorCode`s with the field named and a
//!   `suggestedAction`.

use std::collections::BTreeMap;

use super::{ApiError, ErrorCode};
use axum::{
    body::Bytes,
    extract::{FromRequest, Query, Request},
    http::StatusCode,
};
use relay_engine::{route::RequestError, EngineError};
use serde_json::{Map, Value};

/// Largest body a RouteRequest endpoint reads.
pub const BODY_LIMIT: usize = 64 * 1024;

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Request(r) => r.into(),
            EngineError::Permit2(p) => {
                let code = match p {
                    relay_chain::permit2::Permit2Error::Rpc(_) => ErrorCode::RelayerUnavailable,
                    _ => ErrorCode::Permit2Invalid,
                };
                ApiError::new(code, p.to_string())
            }
            EngineError::RelayerUnavailable(m) => ApiError::new(ErrorCode::RelayerUnavailable, m),
        }
    }
}

impl From<RequestError> for ApiError {
    fn from(e: RequestError) -> Self {
        let code = match &e {
            RequestError::Malformed(_) => ErrorCode::MalformedBody,
            RequestError::Missing { .. } => ErrorCode::MissingField,
            RequestError::UnknownChain { .. } => ErrorCode::UnknownChain,
            RequestError::UnknownToken { .. } => ErrorCode::UnknownToken,
            RequestError::InvalidAmount { .. } => ErrorCode::InvalidAmount,
            RequestError::InvalidAddress { .. } => ErrorCode::InvalidAddress,
            RequestError::Invalid { .. } => ErrorCode::InvalidField,
            RequestError::SameChainSameToken => ErrorCode::SameChainSameToken,
        };
        let mut err = ApiError::new(code, e.to_string()).suggest(e.suggestion());
        if let Some(f) = e.field() {
            err = err.field(f);
        }
        err
    }
}

fn malformed(why: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::MalformedBody, format!("body: {why}"))
        .suggest("send a JSON object with content-type: application/json")
}

/// A request body that is a JSON object.
#[derive(Clone, Debug)]
pub struct JsonObject(pub Map<String, Value>);

impl JsonObject {
    /// Parses `bytes` as a JSON object.
    pub fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(malformed("empty; expected a JSON object"));
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(m)) => Ok(JsonObject(m)),
            Ok(other) => Err(malformed(format!(
                "expected a JSON object, got {}",
                kind(&other)
            ))),
            Err(e) => Err(malformed(format!(
                "not JSON ({} at line {}, column {})",
                category(&e),
                e.line(),
                e.column()
            ))),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn category(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Eof => "truncated",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "invalid data",
        serde_json::error::Category::Io => "unreadable",
    }
}

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    ErrorCode::BodyTooLarge,
                    format!("body: larger than {BODY_LIMIT} bytes"),
                )
            } else {
                malformed(e.body_text())
            }
        })?;
        JsonObject::parse(&bytes)
    }
}

/// Query-string fields, typed errors on a malformed query.
pub type QueryFields =
    Result<Query<BTreeMap<String, String>>, axum::extract::rejection::QueryRejection>;

/// The request's fields: the body's, with query-string fields filling in
/// what the body lacks.
pub fn params(body: Option<JsonObject>, query: QueryFields) -> Result<Value, ApiError> {
    let Query(query) = query.map_err(|e| {
        ApiError::new(ErrorCode::InvalidField, format!("query: {}", e.body_text())).field("query")
    })?;
    let mut fields = body.map(|b| b.0).unwrap_or_default();
    for (k, v) in query {
        fields.entry(k).or_insert(Value::String(v));
    }
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_that_are_not_json_objects_are_typed() {
        for (body, says) in [
            (&b""[..], "empty"),
            (b"{\"a\":", "truncated"),
            (b"{not json", "syntax"),
            (b"[1,2]", "an array"),
        ] {
            let e = JsonObject::parse(body).unwrap_err();
            assert_eq!(e.code, ErrorCode::MalformedBody);
            assert!(e.message.contains(says), "{}", e.message);
        }
        assert!(JsonObject::parse(b" {\"a\": 1} ").is_ok());
    }

    #[test]
    fn query_fields_fill_in_but_never_override_the_body() {
        let body = JsonObject::parse(br#"{"amount":"5"}"#).unwrap();
        let q: BTreeMap<String, String> = [("amount", "7"), ("token", "USDC")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let v = params(Some(body), Ok(Query(q))).unwrap();
        assert_eq!(v["amount"], "5");
        assert_eq!(v["token"], "USDC");
    }
}
