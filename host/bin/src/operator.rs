//! Operator commands behind `relay rails …`: they run the real loader
//! against the plugins directory and write operator state to the store the
//! server reads, so a toggle takes effect on the server's next request.

use relay_admin::operator::{self, Actor};
use relay_capabilities::CapabilityBroker;
use relay_config::HostConfig;
use relay_registry::{OperatorState, OperatorStateStore, RejectedPlugin};
use relay_runtime::rails::{listing, RailListing, RailSet};
use relay_store::Store;
use serde::Serialize;

/// What `relay rails list` shows.
#[derive(Debug, Serialize)]
pub struct RailsReport {
    /// Loaded plugins.
    pub rails: Vec<RailListing>,
    /// Refused plugins with reasons.
    pub rejected: Vec<RejectedPlugin>,
    /// Operator state.
    pub operator: OperatorState,
}

/// Why an operator command failed.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The store.
    #[error(transparent)]
    Store(#[from] relay_store::StoreError),
    /// Operator state.
    #[error(transparent)]
    State(#[from] relay_registry::StateError),
    /// The runtime.
    #[error("plugin runtime: {0}")]
    Runtime(String),
    /// The change itself (an unknown rail or lane names it).
    #[error(transparent)]
    Change(#[from] relay_admin::operator::OperatorError),
}

/// Loads every plugin and reads operator state.
pub async fn list(config: &HostConfig) -> Result<RailsReport, OperatorError> {
    let store = Store::connect(&config.database_url()).await?;
    let broker = std::sync::Arc::new(CapabilityBroker::new(&config.capabilities));
    let set = RailSet::new(config, broker).map_err(|e| OperatorError::Runtime(e.to_string()))?;
    let snap = set.reload_from(&config.plugins_dir).await;
    Ok(RailsReport {
        rails: listing(&snap),
        rejected: snap.rejected.clone(),
        operator: store.load_operator_state().await?,
    })
}

/// Enables or disables a rail that is installed: the operator path the
/// dashboard takes too ([`relay_admin::operator`]), audited as
/// `cli:<$USER>`.
pub async fn set_enabled(
    config: &HostConfig,
    rail: &str,
    enabled: bool,
) -> Result<OperatorState, OperatorError> {
    let report = list(config).await?;
    let store = Store::connect(&config.database_url()).await?;
    let actor = Actor::cli_from_env();
    let change = operator::set_enabled(&store, &report.rails, &actor, rail, enabled).await?;
    Ok(change.state)
}

/// Sets `executeReady` of a lane the rail declares (the dashboard's path
/// too), audited as `cli:<$USER>`.
pub async fn set_execute_ready(
    config: &HostConfig,
    rail: &str,
    lane: &str,
    ready: bool,
) -> Result<OperatorState, OperatorError> {
    let report = list(config).await?;
    let store = Store::connect(&config.database_url()).await?;
    let actor = Actor::cli_from_env();
    let change =
        operator::set_execute_ready(&store, &report.rails, &actor, (rail, lane), ready).await?;
    Ok(change.state)
}
