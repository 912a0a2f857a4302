//! Fault injection, per simulator: set at start ([`crate::SimConfig`]) or at
//! runtime with `POST /simulator/faults {"mode": "none|error|garbage|hang|accept-then-fail|fail-on-destination", "latencyMs": 0, "status": 429, "extraFeeBps": 0, "settleDelayMs": 0}`
//! (`GET /simulator/faults` reads it back).
//!
//! - `error`: the upstream's own documented error body with its status
//!   (the upstream's server error unless `status` picks another, e.g. 429);
//! - `garbage`: status 200 with a truncated body in the upstream's shape;
//! - `hang`: never answers — the client's timeout must end the call;
//! - `accept-then-fail`: quotes normally, takes the deposit, then reports
//!   the upstream's failed status and refunds the depositor instead of
//!   paying out;
//! - `fail-on-destination`: quotes normally, takes the deposit, then reports
//!   the upstream's destination-failure status: nothing is paid out and
//!   nothing refunded (the funds stay with the bridge, as after a failed
//!   destination execution — Squid's `failed_on_destination`);
//! - `latencyMs`: extra delay before every upstream answer, in any mode;
//! - `extraFeeBps`: a fee on top of the upstream's simulated fee, basis
//!   points of the source amount — moves the upstream's price (the
//!   aggregators: LI.FI, Squid, Bungee) between a quote and an execute;
//! - `settleDelayMs`: a deposit this upstream quoted settles no sooner than
//!   this long after it was seen — re-read while it waits, so setting it
//!   back to 0 releases the held transfers (a route stays in flight for as
//!   long as a test needs).
//!
//! Faults apply to the upstream API only, never to the `/simulator/*`
//! control endpoints.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
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
    /// Take deposits, then report failure and refund.
    AcceptThenFail,
    /// Take deposits, then report a destination failure; neither pay out
    /// nor refund.
    FailOnDestination,
}

/// The faults of one simulator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultConfig {
    /// Mode.
    pub mode: FaultMode,
    /// Extra latency before every upstream answer, ms (default 0).
    #[serde(default)]
    pub latency_ms: u64,
    /// The HTTP status `error` answers with (default: the upstream's
    /// server error, 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Extra simulated fee, bps of the source amount (default 0).
    #[serde(default)]
    pub extra_fee_bps: u64,
    /// Least time from a seen deposit to its settlement, ms (default 0).
    #[serde(default)]
    pub settle_delay_ms: u64,
}

impl FaultConfig {
    /// `mode` with no latency and the default error status.
    pub fn mode(mode: FaultMode) -> Self {
        FaultConfig {
            mode,
            ..Default::default()
        }
    }
}

/// How an upstream says "error", and what its body looks like cut short.
#[derive(Clone, Copy, Debug)]
pub struct ErrorShape {
    /// The upstream's documented error body for a status.
    pub body: fn(StatusCode) -> Value,
    /// A truncated success body in the upstream's shape.
    pub garbage: &'static str,
}

impl ErrorShape {
    /// The upstream's error answer with `status`.
    pub fn respond(&self, status: StatusCode) -> Response {
        (status, Json((self.body)(status))).into_response()
    }
}

/// Shared, runtime-settable faults of one simulator.
#[derive(Debug, Default)]
pub struct Faults(Mutex<FaultConfig>);

impl Faults {
    /// Faults starting as `c`.
    pub fn new(c: FaultConfig) -> Self {
        Faults(Mutex::new(c))
    }

    /// Current settings.
    pub fn get(&self) -> FaultConfig {
        *self.0.lock().expect("faults lock")
    }

    /// Replaces the settings.
    pub fn set(&self, c: FaultConfig) {
        tracing::info!(?c, "simulator faults set");
        *self.0.lock().expect("faults lock") = c;
    }

    /// Whether deposits are to be taken and then failed.
    pub fn accepts_then_fails(&self) -> bool {
        self.get().mode == FaultMode::AcceptThenFail
    }

    /// Whether deposits are to be taken and then left failed on the
    /// destination (neither paid out nor refunded).
    pub fn fails_on_destination(&self) -> bool {
        self.get().mode == FaultMode::FailOnDestination
    }

    /// Applies latency and request-level faults; `Some(response)` means
    /// answer that instead of the real handler's answer.
    pub async fn intercept(&self, shape: &ErrorShape) -> Option<Response> {
        let c = self.get();
        if c.latency_ms > 0 {
            tokio::time::sleep(Duration::from_millis(c.latency_ms)).await;
        }
        match c.mode {
            FaultMode::Error => {
                let status = c
                    .status
                    .and_then(|s| StatusCode::from_u16(s).ok())
                    .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                Some(shape.respond(status))
            }
            FaultMode::Garbage => Some(
                (
                    StatusCode::OK,
                    [("content-type", "application/json")],
                    shape.garbage,
                )
                    .into_response(),
            ),
            FaultMode::Hang => std::future::pending().await,
            FaultMode::None | FaultMode::AcceptThenFail | FaultMode::FailOnDestination => None,
        }
    }
}

impl Faults {
    /// [`Faults::intercept`] for handlers that answer with `?`.
    pub async fn gate(&self, shape: &ErrorShape) -> crate::http::Answer<()> {
        match self.intercept(shape).await {
            Some(r) => Err(r.into()),
            None => Ok(()),
        }
    }
}

async fn read(State(f): State<Arc<Faults>>) -> Json<FaultConfig> {
    Json(f.get())
}

async fn write(State(f): State<Arc<Faults>>, Json(c): Json<FaultConfig>) -> Json<FaultConfig> {
    f.set(c);
    Json(c)
}

/// `GET` and `POST /simulator/faults`.
pub fn routes(f: Arc<Faults>) -> Router {
    Router::new()
        .route("/simulator/faults", get(read).post(write))
        .with_state(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_config_reads_the_documented_json() {
        let c: FaultConfig =
            serde_json::from_str(r#"{"mode":"accept-then-fail","latencyMs":5}"#).unwrap();
        assert_eq!(c.mode, FaultMode::AcceptThenFail);
        assert_eq!(c.latency_ms, 5);
        let c: FaultConfig = serde_json::from_str(r#"{"mode":"error","status":429}"#).unwrap();
        assert_eq!((c.mode, c.status), (FaultMode::Error, Some(429)));
        let c: FaultConfig =
            serde_json::from_str(r#"{"mode":"none","settleDelayMs":30000}"#).unwrap();
        assert_eq!(c.settle_delay_ms, 30_000);
        let c: FaultConfig = serde_json::from_str(r#"{"mode":"fail-on-destination"}"#).unwrap();
        assert_eq!(c.mode, FaultMode::FailOnDestination);
    }
}
