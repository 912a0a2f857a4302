//! The host's HTTP API as the command-line clients (`relay msg`, `relay
//! pool`) call it: JSON in, JSON out, a typed refusal for anything but a
//! 2xx.

use serde_json::Value;

/// Why a call did not answer 2xx.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The host could not be reached.
    #[error("the host could not be reached: {0}")]
    Unreachable(String),
    /// The host refused (its typed error).
    #[error("{status} {code}: {message}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// `errorCode`.
        code: String,
        /// `error`.
        message: String,
    },
}

/// A host's API at a base URL.
pub struct HostApi {
    base: String,
    client: reqwest::Client,
}

impl HostApi {
    /// The host at `url`.
    pub fn new(url: &str) -> Self {
        HostApi {
            base: url.trim_end_matches('/').to_string(),
            client: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .build()
                .expect("an HTTP client"),
        }
    }

    async fn answer(resp: Result<reqwest::Response, reqwest::Error>) -> Result<Value, CallError> {
        let resp = resp.map_err(|e| CallError::Unreachable(e.to_string()))?;
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            return Ok(body);
        }
        Err(CallError::Refused {
            status,
            code: body["errorCode"].as_str().unwrap_or("").to_string(),
            message: body["error"].as_str().unwrap_or("").to_string(),
        })
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Value, CallError> {
        Self::answer(self.client.get(format!("{}{path}", self.base)).send().await).await
    }

    /// `GET path` with the query `query` (escaped).
    pub async fn get_with(&self, path: &str, query: &[(&str, &str)]) -> Result<Value, CallError> {
        let url = reqwest::Url::parse_with_params(&format!("{}{path}", self.base), query)
            .map_err(|e| CallError::Unreachable(e.to_string()))?;
        Self::answer(self.client.get(url).send().await).await
    }

    /// `POST path` with the JSON `body`.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, CallError> {
        let url = format!("{}{path}", self.base);
        Self::answer(self.client.post(url).json(body).send().await).await
    }
}
