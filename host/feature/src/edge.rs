//! Raw input → typed values at the edge (spec §2.5, §7): JSON bodies and
//! query strings become one JSON object, and every rejection is a typed
//! error — never axum's plain-text rejections, never a 5xx.
//!
//! - [`parse_json`]: the one strict JSON parser of every body. A key that
//!   appears twice in one object is refused (`DUPLICATE_KEY` naming it —
//!   never last-wins, so two readers of one body cannot disagree about
//!   it); anything else that is not JSON is `MALFORMED_BODY` naming the
//!   line and column. The HTTP edge (`relay_api::layers`) runs it on every
//!   request body before a handler sees it.
//! - [`JsonObject`]: the body must be a JSON object no larger than
//!   `http.body_limit_bytes` (`BODY_TOO_LARGE` above it).
//! - [`params`]: query-string fields fill in what the body does not carry
//!   (so `?token=USDC` is the source-token alias on a POST, and a GET
//!   compare is a RouteRequest in the query).
//! - every refusal is an [`ApiError`] with its `errorCode`, the field
//!   named and a `suggestedAction`.

use std::{cell::RefCell, collections::BTreeMap, collections::HashSet, fmt};

use axum::{
    body::Bytes,
    extract::{FromRequest, Query, Request},
    http::StatusCode,
};
use relay_errors::{ApiError, ErrorCode};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Largest body an endpoint reads by default (`http.body_limit_bytes`).
pub const BODY_LIMIT: usize = 64 * 1024;

fn malformed(why: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::MalformedBody, format!("body: {why}"))
        .suggest("send a JSON object with content-type: application/json")
}

/// Walks a JSON document and refuses the first object key seen twice in
/// one object, remembering it in `dup`. Values are not kept: [`parse_json`]
/// builds the [`Value`] once the document is known to be unambiguous.
struct NoDuplicateKeys<'a> {
    dup: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for NoDuplicateKeys<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicateKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(NoDuplicateKeys { dup: self.dup })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                *self.dup.borrow_mut() = Some(key);
                // Stops the walk; the caller reports the key it recorded.
                return Err(serde::de::Error::custom("duplicate key"));
            }
            map.next_value_seed(NoDuplicateKeys { dup: self.dup })?;
        }
        Ok(())
    }
}

/// Parses a request body strictly: JSON (any value) in which no object
/// repeats a key. `DUPLICATE_KEY` names the repeated key (in `field`);
/// every other failure is `MALFORMED_BODY` with the line and column.
pub fn parse_json(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(malformed("empty; expected a JSON object"));
    }
    let not_json = |e: serde_json::Error| {
        malformed(format!(
            "not JSON ({} at line {}, column {})",
            category(&e),
            e.line(),
            e.column()
        ))
    };
    let dup = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let walked = NoDuplicateKeys { dup: &dup }
        .deserialize(&mut de)
        .and_then(|()| de.end());
    if let Err(e) = walked {
        return Err(match dup.into_inner() {
            Some(key) => ApiError::new(
                ErrorCode::DuplicateKey,
                format!(
                    "body: key {:?} appears twice in one object (line {}, column {})",
                    relay_engine::tokens::clip(&key),
                    e.line(),
                    e.column()
                ),
            )
            .field(relay_engine::tokens::clip(&key))
            .suggest("send each key once"),
            None => not_json(e),
        });
    }
    serde_json::from_slice(bytes).map_err(not_json)
}

/// A JSON answer written into one buffer sized for a large answer (a quote
/// or a compare is 4–8 KiB): axum's `Json` starts its buffer at 128 bytes
/// and copies it a half-dozen times on the way up.
pub struct LargeJson<T>(pub T);

/// What [`LargeJson`] reserves.
const LARGE_JSON_BYTES: usize = 8 * 1024;

impl<T: serde::Serialize> axum::response::IntoResponse for LargeJson<T> {
    fn into_response(self) -> axum::response::Response {
        let mut buf = Vec::with_capacity(LARGE_JSON_BYTES);
        match serde_json::to_writer(&mut buf, &self.0) {
            Ok(()) => {
                let json = axum::http::HeaderValue::from_static("application/json");
                ([(axum::http::header::CONTENT_TYPE, json)], buf).into_response()
            }
            Err(e) => ApiError::new(ErrorCode::Internal, format!("answer not serialisable: {e}"))
                .into_response(),
        }
    }
}

/// A body the HTTP edge has already read and parsed with [`parse_json`],
/// handed to the extractors in the request's extensions.
#[derive(Clone, Debug)]
pub struct ParsedBody(pub Value);

/// A request body that is a JSON object.
#[derive(Clone, Debug)]
pub struct JsonObject(pub Map<String, Value>);

impl JsonObject {
    /// Parses `bytes` as a JSON object ([`parse_json`]: duplicate keys refused).
    pub fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        Self::from_value(parse_json(bytes)?)
    }

    /// Decodes the object as `T`: a missing field is `MISSING_FIELD`, any
    /// other mismatch `INVALID_FIELD`, the message naming it.
    pub fn decode<T: serde::de::DeserializeOwned>(self) -> Result<T, ApiError> {
        serde_json::from_value(Value::Object(self.0)).map_err(|e| {
            let m = e.to_string();
            let code = match m.starts_with("missing field") {
                true => ErrorCode::MissingField,
                false => ErrorCode::InvalidField,
            };
            ApiError::new(code, format!("body: {m}"))
        })
    }

    fn from_value(v: Value) -> Result<Self, ApiError> {
        match v {
            Value::Object(m) => Ok(JsonObject(m)),
            other => Err(malformed(format!(
                "expected a JSON object, got {}",
                kind(&other)
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

    async fn from_request(mut req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(ParsedBody(v)) = req.extensions_mut().remove::<ParsedBody>() {
            return JsonObject::from_value(v);
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(ErrorCode::BodyTooLarge, "body: larger than this host reads")
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

/// Refuses an object key outside `allowed` (`INVALID_FIELD` naming it and
/// listing what is allowed): a misspelt optional field must not be
/// silently ignored.
pub fn only_fields(body: &Map<String, Value>, allowed: &[&str]) -> Result<(), ApiError> {
    let Some(k) = body.keys().find(|k| !allowed.contains(&k.as_str())) else {
        return Ok(());
    };
    let allowed = match allowed {
        [] => "none".to_string(),
        a => a.join(", "),
    };
    Err(ApiError::new(
        ErrorCode::InvalidField,
        format!("{k}: unknown field (allowed: {allowed})"),
    )
    .field(k.clone()))
}

/// The request's `x-idempotency-key` header, when it has a readable one.
pub fn idempotency_key(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get("x-idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
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
    fn a_repeated_key_is_refused_by_name_at_any_depth() {
        for (body, key) in [
            (&br#"{"amount":"1","amount":"2"}"#[..], "amount"),
            (br#"{"permit2":{"nonce":"1","x":[],"nonce":"2"}}"#, "nonce"),
            (br#"[{"a":1},{"b":1,"b":2}]"#, "b"),
        ] {
            let e = parse_json(body).unwrap_err();
            assert_eq!(
                (e.code, e.field.as_deref()),
                (ErrorCode::DuplicateKey, Some(key))
            );
            assert!(e.message.contains(&format!("{key:?}")), "{}", e.message);
        }
        let same_key_elsewhere = br#"{"a":{"a":1},"b":[{"a":2},{"a":3}],"n":1.5}"#;
        assert!(parse_json(same_key_elsewhere).is_ok());
        assert_eq!(
            parse_json(br#"{"a":1} x"#).unwrap_err().code,
            ErrorCode::MalformedBody
        );
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
