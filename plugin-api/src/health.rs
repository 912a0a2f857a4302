//! A rail's view of its own health and its upstream's.

use serde::{Deserialize, Serialize};

/// Health status values (spec §3: `operational`, `degraded`, `down`, `unknown`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    /// Serving.
    Operational,
    /// Serving with problems.
    Degraded,
    /// Not serving.
    Down,
    /// Not known yet.
    Unknown,
}

/// Health of one lane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneHealth {
    /// Lane name.
    pub lane: String,
    /// Whether quotes are answering.
    pub quote_ok: bool,
    /// Why not, when not.
    pub quote_error: Option<String>,
    /// Whether the lane can execute now (upstream up, float available).
    pub execute_ready: bool,
}

/// A rail's health report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RailHealth {
    /// Overall status.
    pub status: HealthStatus,
    /// Detail.
    pub detail: Option<String>,
    /// Per lane.
    pub lanes: Vec<LaneHealth>,
}

impl RailHealth {
    /// Operational, every named lane quoting and ready to execute.
    pub fn operational<'a>(lanes: impl IntoIterator<Item = &'a str>) -> Self {
        RailHealth {
            status: HealthStatus::Operational,
            detail: None,
            lanes: lanes
                .into_iter()
                .map(|lane| LaneHealth {
                    lane: lane.to_string(),
                    quote_ok: true,
                    quote_error: None,
                    execute_ready: true,
                })
                .collect(),
        }
    }
}
