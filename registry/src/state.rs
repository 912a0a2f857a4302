//! Operator state: which rails are enabled and which lanes are
//! `executeReady`. Persisted by the host's store through
//! [`OperatorStateStore`]; read on every routing decision so a toggle takes
//! effect at once and survives restarts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The operator's switch for one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneState {
    /// Whether execute may move funds on this lane.
    pub execute_ready: bool,
}

/// The operator's switches for one rail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RailState {
    /// Whether the rail is used at all (quotes and execute).
    pub enabled: bool,
    /// Per-lane overrides; a lane not listed follows the rail's manifest.
    pub lanes: BTreeMap<String, LaneState>,
}

impl Default for RailState {
    fn default() -> Self {
        RailState {
            enabled: true,
            lanes: BTreeMap::new(),
        }
    }
}

/// Operator state for every rail; a rail not listed is enabled with its
/// manifest's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorState {
    /// By rail id.
    pub rails: BTreeMap<String, RailState>,
}

impl OperatorState {
    /// Whether the rail is enabled.
    pub fn rail_enabled(&self, rail: &str) -> bool {
        self.rails.get(rail).map(|r| r.enabled).unwrap_or(true)
    }

    /// Whether the operator lets the lane execute (`default` is the
    /// manifest's executability).
    pub fn lane_execute_ready(&self, rail: &str, lane: &str, default: bool) -> bool {
        self.rails
            .get(rail)
            .and_then(|r| r.lanes.get(lane))
            .map(|l| l.execute_ready && default)
            .unwrap_or(default)
    }
}

/// Why operator state could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("operator state: {0}")]
pub struct StateError(pub String);

/// Persistence of operator state (implemented by the host's store).
#[async_trait::async_trait]
pub trait OperatorStateStore: Send + Sync {
    /// The whole state.
    async fn load_operator_state(&self) -> Result<OperatorState, StateError>;
    /// Enables or disables a rail.
    async fn set_rail_enabled(&self, rail: &str, enabled: bool) -> Result<(), StateError>;
    /// Sets `executeReady` for a lane of a rail.
    async fn set_lane_execute_ready(
        &self,
        rail: &str,
        lane: &str,
        ready: bool,
    ) -> Result<(), StateError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlisted_rails_follow_the_manifest_and_off_wins() {
        let mut s = OperatorState::default();
        assert!(s.rail_enabled("lifi"));
        assert!(s.lane_execute_ready("lifi", "evm->evm", true));
        assert!(!s.lane_execute_ready("sui", "evm->sui", false));
        s.rails.entry("lifi".into()).or_default().lanes.insert(
            "evm->evm".into(),
            LaneState {
                execute_ready: false,
            },
        );
        assert!(!s.lane_execute_ready("lifi", "evm->evm", true));
        s.rails.entry("sui".into()).or_default().lanes.insert(
            "evm->sui".into(),
            LaneState {
                execute_ready: true,
            },
        );
        assert!(
            !s.lane_execute_ready("sui", "evm->sui", false),
            "an operator cannot make a quote-only lane execute"
        );
    }
}
