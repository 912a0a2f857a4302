//! A recorded upstream: the answers an upstream gave, by method and path,
//! in a JSON file a rail keeps next to its code (`fixture/upstream.json`).
//!
//! The same file serves two purposes, so a rail's unit tests and the
//! conformance kit see one upstream:
//!
//! - unit tests load it into the fake host
//!   (`testing::RecordingHost::from_fixture`, feature `testing`);
//! - `relay-conformance rail --fixture fixture/upstream.json` serves it over
//!   HTTP on loopback and points the rail's `base_url` at it, so the kit
//!   proves the rail against its upstream's recorded answers.
//!
//! ```json
//! { "upstream": "Acme bridge API v1, recorded 2026-11-24",
//!   "answers": [
//!     { "method": "GET", "path": "/v1/fees", "status": 200,
//!       "body": { "feeBps": 10, "minFee": "1000", "etaSeconds": 60 } } ] }
//! ```
//!
//! An answer matches a request with the same method whose path is, or ends
//! with, the answer's (the query is ignored; a `base_url` with a path prefix
//! still matches); a request nothing matches gets a 404 naming what was
//! asked.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A recorded upstream.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// What was recorded: the upstream, its API version, when.
    #[serde(default)]
    pub upstream: String,
    /// The answers, first match wins.
    pub answers: Vec<RecordedAnswer>,
}

/// One recorded answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedAnswer {
    /// HTTP method (`GET`, `POST`), case-insensitive.
    #[serde(default = "get")]
    pub method: String,
    /// The URL path, without the query (`/v1/fees`).
    pub path: String,
    /// HTTP status.
    #[serde(default = "ok")]
    pub status: u16,
    /// The JSON body.
    #[serde(default)]
    pub body: Value,
    /// A body that is not JSON, served as it is (instead of `body`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Response headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl RecordedAnswer {
    /// The body's bytes as served: `text` as it is, else `body` as JSON.
    pub fn body_bytes(&self) -> Vec<u8> {
        match &self.text {
            Some(t) => t.as_bytes().to_vec(),
            None => self.body.to_string().into_bytes(),
        }
    }
}

fn get() -> String {
    "GET".into()
}

fn ok() -> u16 {
    200
}

impl Fixture {
    /// Parses a fixture file's text.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The answer for `method` and `path` (a query after `?` is ignored).
    pub fn answer(&self, method: &str, path: &str) -> Option<&RecordedAnswer> {
        let path = path.split('?').next().unwrap_or(path);
        self.answers
            .iter()
            .find(|a| a.method.eq_ignore_ascii_case(method) && path.ends_with(&a.path))
    }

    /// The body served when nothing matches (with status 404).
    pub fn unmatched(method: &str, path: &str) -> Value {
        serde_json::json!({
            "message": format!("the fixture has no recorded answer for {method} {path}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_match_method_and_path_not_query() {
        let f = Fixture::parse(
            r#"{"answers":[{"path":"/v1/fees","body":{"feeBps":10}},
                {"method":"POST","path":"/v1/fees","status":405}]}"#,
        )
        .unwrap();
        assert_eq!(f.answer("get", "/v1/fees?x=1").unwrap().body["feeBps"], 10);
        assert_eq!(f.answer("POST", "/v1/fees").unwrap().status, 405);
        assert!(f.answer("GET", "/v1/other").is_none());
        assert_eq!(f.answer("GET", "/api/v1/fees").unwrap().status, 200);
        assert!(Fixture::parse(r#"{"answers":[],"extra":1}"#).is_err());
    }
}
