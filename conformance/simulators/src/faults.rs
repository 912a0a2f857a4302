//! Fault injection, per simulator: set at start or at runtime with
//! `POST /simulator/faults {"mode": "none|error|garbage|hang|accept-then-fail", "latencyMs": 0}`.
//!
//! - `error`: the upstream's own error body and status;
//! - `garbage`: a truncated, unparsable body with status 200;
//! - `hang`: never answers (the client's timeout must end the call);
//! - `accept-then-fail`: quotes normally, takes the deposit, then reports
//!   the transfer failed and refunds the depositor instead of paying out.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::post,
    Json, Router,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A fault mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultMode {
    /// Behave.
    #[default]
    None,
    /// Answer the upstream's error.
    Error,
    /// Answer a truncated body.
    Garbage,
    /// Never answer.
    Hang,
    /// Take deposits, then fail and refund.
    AcceptThenFail,
}

/// The faults of one simulator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultConfig {
    /// Mode.
    pub mode: FaultMode,
    /// Extra latency before every answer, ms.
    #[serde(default)]
    pub latency_ms: u64,
}

/// Shared, runtime-settable faults.
#[derive(Debug, Default)]
pub struct Faults(Mutex<FaultConfig>);

impl Faults {
    /// Current settings.
    pub fn get(&self) -> FaultConfig {
        *self.0.lock().expect("faults lock")
    }

    /// Replaces the settings.
    pub fn set(&self, c: FaultConfig) {
        *self.0.lock().expect("faults lock") = c;
    }

    /// Applies latency and request-level faults; `Some(response)` means
    /// answer that instead of the real handler's answer.
    pub async fn intercept(&self, error: (StatusCode, Value)) -> Option<Response> {
        let c = self.get();
        if c.latency_ms > 0 {
            tokio::time::sleep(Duration::from_millis(c.latency_ms)).await;
        }
        match c.mode {
            FaultMode::Error => Some((error.0, Json(error.1)).into_response()),
            FaultMode::Garbage => {
                Some((StatusCode::OK, "{\"estimate\": {\"toAmount\": \"12").into_response())
            }
            FaultMode::Hang => std::future::pending().await,
            FaultMode::None | FaultMode::AcceptThenFail => None,
        }
    }
}

impl Faults {
    /// [`Faults::intercept`] for upstreams whose error body is
    /// `{"message": …}` with status 500.
    pub async fn intercept_500(&self, message: &str) -> Option<Response> {
        self.intercept((
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({ "message": message }),
        ))
        .await
    }
}

async fn set_faults(State(f): State<Arc<Faults>>, Json(c): Json<FaultConfig>) -> Json<FaultConfig> {
    f.set(c);
    Json(c)
}

/// `POST /simulator/faults`.
pub fn routes(f: Arc<Faults>) -> Router {
    Router::new()
        .route("/simulator/faults", post(set_faults))
        .with_state(f)
}
