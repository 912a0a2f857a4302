//! Talking to an upstream through the host: where it lives, which credential
//! the host injects, and how its HTTP answers become typed rail errors.
//!
//! Operator configuration a rail reads (`[rails.<id>].config`):
//!
//! - `base_url` — the upstream's base URL (default: the real public API).
//!   Pointing a rail at a simulator or a self-hosted mirror is this setting
//!   plus an `egress` entry, never code.
//! - `credential` — the name of an operator credential (`[capabilities.
//!   credentials.<name>]`, also granted in `[rails.<id>].credentials`) whose
//!   header the host injects. Unset: no key is sent. The rail never sees the
//!   value.

use relay_plugin_api::{Host, HttpRequest, HttpResponse, RailError, RailErrorKind};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Timeout a rail asks for on quote/prepare/track calls; the host clips it
/// to the call's deadline.
pub const CALL_TIMEOUT_MS: u64 = 10_000;

/// One upstream API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// Short name used in error messages (`LI.FI`, `Squid`).
    pub name: &'static str,
    /// The real public base URL, without a trailing slash.
    pub default_base: &'static str,
}

/// An upstream's error answer, read from its body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorReport {
    /// HTTP status.
    pub status: u16,
    /// The upstream's own error code or type, when it gives one.
    pub code: Option<String>,
    /// The upstream's message (truncated), or the status when it gives none.
    pub message: String,
}

impl Upstream {
    /// The base URL: `base_url` from the rail's configuration, else the real one.
    pub fn base_url(&self, host: &dyn Host) -> String {
        host.config("base_url")
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| self.default_base.to_string())
            .trim()
            .trim_end_matches('/')
            .to_string()
    }

    /// A GET of `path` with `query` (pairs are percent-encoded), carrying the
    /// configured credential reference.
    pub fn get(&self, host: &dyn Host, path: &str, query: &[(&str, String)]) -> HttpRequest {
        let url = format!("{}{path}{}", self.base_url(host), query_string(query));
        with_credential(host, HttpRequest::get(url))
    }

    /// A JSON POST of `body` to `path`, carrying the configured credential.
    pub fn post(&self, host: &dyn Host, path: &str, body: &Value) -> HttpRequest {
        let url = format!("{}{path}", self.base_url(host));
        with_credential(host, HttpRequest::post_json(url, body))
    }

    /// Sends `req`; a host failure becomes the matching rail error (timeout →
    /// `UPSTREAM_TIMEOUT`, network → `UPSTREAM`, policy → `CAPABILITY`).
    pub fn send(&self, host: &dyn Host, mut req: HttpRequest) -> Result<HttpResponse, RailError> {
        req.timeout_ms = req.timeout_ms.min(CALL_TIMEOUT_MS);
        host.http(req).map_err(|e| {
            let mut err = RailError::from(e);
            err.message = format!("{}: {}", self.name, err.message);
            err
        })
    }

    /// Sends `req` and reads a 2xx answer as `T` (`what` names it in
    /// errors); any other status becomes the typed error
    /// [`Upstream::status_error`] gives. The one call most rails need:
    ///
    /// ```no_run
    /// # use relay_rail_sdk::Upstream;
    /// # fn f(host: &dyn relay_plugin_api::Host) -> Result<(), relay_plugin_api::RailError> {
    /// #[derive(serde::Deserialize)]
    /// #[serde(rename_all = "camelCase")]
    /// struct Fees { fee_bps: u32 }
    /// const ACME: Upstream = Upstream { name: "Acme", default_base: "https://api.acme.example" };
    /// let fees: Fees = ACME.json(host, ACME.get(host, "/v1/fees", &[]), "fees")?;
    /// # Ok(()) }
    /// ```
    pub fn json<T: DeserializeOwned>(
        &self,
        host: &dyn Host,
        req: HttpRequest,
        what: &str,
    ) -> Result<T, RailError> {
        let resp = self.send(host, req)?;
        if !(200..300).contains(&resp.status) {
            return Err(self.status_error(&error_report(&resp)));
        }
        self.parse(what, &resp.body)
    }

    /// Parses a body as `T`; anything else is `UPSTREAM_MALFORMED` naming
    /// `what` and serde's reason (which names the missing or broken field).
    pub fn parse<T: DeserializeOwned>(&self, what: &str, body: &[u8]) -> Result<T, RailError> {
        serde_json::from_slice(body).map_err(|e| self.malformed(format!("{what}: {e}")))
    }

    /// An `UPSTREAM_MALFORMED` error from this upstream.
    pub fn malformed(&self, why: impl std::fmt::Display) -> RailError {
        RailError::malformed(format!(
            "{} answered outside its documented format: {why}",
            self.name
        ))
    }

    /// The default reading of an error status, for codes the upstream does
    /// not document more precisely: 400/422 invalid input, 401/403 a
    /// credential problem (not retryable), 404 no route, 408/504 timeout,
    /// 429 and 5xx retryable upstream failures.
    pub fn status_error(&self, e: &ErrorReport) -> RailError {
        let what = match &e.code {
            Some(c) => format!("{} {} ({c}): {}", self.name, e.status, e.message),
            None => format!("{} {}: {}", self.name, e.status, e.message),
        };
        match e.status {
            400 | 422 => RailError::new(RailErrorKind::InvalidInput, what),
            401 | 403 => RailError {
                retryable: false,
                ..RailError::new(
                    RailErrorKind::Capability,
                    format!("{what} (is the `credential` configured and granted?)"),
                )
            },
            404 => RailError::unsupported(what),
            408 | 504 => RailError::new(RailErrorKind::UpstreamTimeout, what),
            _ => RailError::upstream(what),
        }
    }
}

fn with_credential(host: &dyn Host, req: HttpRequest) -> HttpRequest {
    match host.config("credential").filter(|c| !c.trim().is_empty()) {
        Some(name) => req.with_credential(name.trim()),
        None => req,
    }
}

/// Reads an error answer: the message from `message` (a string or a list),
/// `error` (a string or `{message}`) or `errors[0].message`; the code from
/// `code`, `errorType`, `type` or `errors[0].code`. Bodies that are not JSON
/// keep a truncated text.
pub fn error_report(resp: &HttpResponse) -> ErrorReport {
    let v: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    let first_error = v.get("errors").and_then(|e| e.get(0));
    let message = text(v.get("message"))
        .or_else(|| text(v.get("error")))
        .or_else(|| v.get("error").and_then(|e| text(e.get("message"))))
        .or_else(|| first_error.and_then(|e| text(e.get("message"))))
        .or_else(|| {
            let t = String::from_utf8_lossy(&resp.body);
            (!t.trim().is_empty()).then(|| t.trim().to_string())
        })
        .unwrap_or_else(|| format!("HTTP {}", resp.status));
    let code = ["code", "errorType", "type"]
        .iter()
        .find_map(|k| scalar(v.get(*k)))
        .or_else(|| first_error.and_then(|e| scalar(e.get("code"))));
    ErrorReport {
        status: resp.status,
        code,
        message: message.chars().take(300).collect(),
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Array(a) => {
            let parts: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            (!parts.is_empty()).then(|| parts.join("; "))
        }
        _ => None,
    }
}

fn scalar(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Every string value of `key` anywhere under `v` (upstreams nest their
/// per-tool error codes at varying depths).
pub fn strings_under<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a str>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| strings_under(x, key, out)),
        Value::Object(o) => {
            for (k, x) in o {
                match x.as_str() {
                    Some(s) if k == key => out.push(s),
                    _ => strings_under(x, key, out),
                }
            }
        }
        _ => {}
    }
}

/// `?k=v&…` with RFC 3986 percent-encoding of every value; empty for no pairs.
pub fn query_string(pairs: &[(&str, String)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(&encode(k));
        out.push('=');
        out.push_str(&encode(v));
    }
    out
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, body: &str) -> HttpResponse {
        HttpResponse {
            status,
            headers: vec![],
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn error_reports_read_every_documented_shape() {
        let r = error_report(&resp(
            404,
            r#"{"message":"No available quotes for the requested transfer","code":1002}"#,
        ));
        assert_eq!(r.code.as_deref(), Some("1002"));
        assert!(r.message.starts_with("No available quotes"));
        let r = error_report(&resp(400, r#"{"message":"bad","type":"BAD_REQUEST"}"#));
        assert_eq!(r.code.as_deref(), Some("BAD_REQUEST"));
        let r = error_report(&resp(
            500,
            r#"{"success":false,"error":{"message":"boom"}}"#,
        ));
        assert_eq!((r.code, r.message.as_str()), (None, "boom"));
        let r = error_report(&resp(
            400,
            r#"{"errors":[{"errorType":"x","code":"AMOUNT_TOO_LOW","message":"too low"}]}"#,
        ));
        assert_eq!(r.message, "too low");
        let r = error_report(&resp(400, r#"{"message":["a","b"]}"#));
        assert_eq!(r.message, "a; b");
        let r = error_report(&resp(502, "<html>bad gateway</html>"));
        assert_eq!(r.message, "<html>bad gateway</html>");
        assert_eq!(error_report(&resp(503, "")).message, "HTTP 503");
    }

    #[test]
    fn statuses_map_to_typed_errors() {
        let up = Upstream {
            name: "X",
            default_base: "https://x.example",
        };
        let kind = |status| {
            up.status_error(&ErrorReport {
                status,
                code: None,
                message: "m".into(),
            })
        };
        assert_eq!(kind(400).kind, RailErrorKind::InvalidInput);
        assert!(!kind(400).retryable);
        assert_eq!(kind(401).kind, RailErrorKind::Capability);
        assert!(!kind(403).retryable);
        assert_eq!(kind(404).kind, RailErrorKind::UnsupportedLane);
        assert_eq!(kind(504).kind, RailErrorKind::UpstreamTimeout);
        assert!(kind(429).retryable);
        assert_eq!(kind(503).kind, RailErrorKind::Upstream);
        assert!(kind(500).retryable);
    }

    #[test]
    fn nested_codes_are_found_at_any_depth() {
        let v: Value = serde_json::from_str(
            r#"{"failed":[{"subpaths":{"a":[{"code":"AMOUNT_TOO_LOW"}]}}],"code":"X","n":{"code":3}}"#,
        )
        .unwrap();
        let mut out = vec![];
        strings_under(&v, "code", &mut out);
        out.sort_unstable();
        assert_eq!(out, ["AMOUNT_TOO_LOW", "X"]);
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            query_string(&[("a", "x y&z".into()), ("b", "0xAb".into())]),
            "?a=x%20y%26z&b=0xAb"
        );
        assert_eq!(query_string(&[]), "");
    }
}
