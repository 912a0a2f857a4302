//! A small HTTP client for the contract suite: every answer as status,
//! headers and body (JSON when it parses).

use serde_json::Value;
use std::time::Duration;

/// One answer.
#[derive(Clone, Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Response headers, lower-case names.
    pub headers: reqwest::header::HeaderMap,
    /// The raw body.
    pub text: String,
    /// The body as JSON (`Null` when it is not JSON).
    pub json: Value,
}

impl Answer {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Whether the body is the typed error shape with `code`.
    pub fn is_error(&self, code: &str) -> bool {
        self.json["errorCode"] == code
            && self.json["error"].is_string()
            && self.json["retryable"].is_boolean()
    }
}

/// The suite's client against one base URL.
#[derive(Clone, Debug)]
pub struct Client {
    base: String,
    http: reqwest::Client,
}

impl Client {
    /// A client for `base` (`http://host:port`).
    pub fn new(base: &str) -> Self {
        Client {
            base: base.trim_end_matches('/').to_string(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("an HTTP client"),
        }
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends a request built on `path`.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<Answer, String> {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(b);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        answer(req.send().await.map_err(|e| format!("{path}: {e}"))?).await
    }

    /// GET `path`.
    pub async fn get(&self, path: &str) -> Result<Answer, String> {
        self.send(reqwest::Method::GET, path, None, &[]).await
    }

    /// POST `body` to `path` with `headers`.
    pub async fn post(
        &self,
        path: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> Result<Answer, String> {
        self.send(reqwest::Method::POST, path, Some(body), headers)
            .await
    }

    /// POST a raw (possibly malformed) body.
    pub async fn post_raw(&self, path: &str, raw: &str) -> Result<Answer, String> {
        let req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(raw.to_string());
        answer(req.send().await.map_err(|e| format!("{path}: {e}"))?).await
    }

    /// The underlying client (streams).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }
}

async fn answer(resp: reqwest::Response) -> Result<Answer, String> {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.map_err(|e| e.to_string())?;
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    Ok(Answer {
        status,
        headers,
        text,
        json,
    })
}
