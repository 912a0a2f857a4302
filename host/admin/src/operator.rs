//! The one operator path: `relay rails enable|disable|execute-ready` and
//! the dashboard's switches call these functions, which check the rail
//! (and lane) against the installed plugins, write operator state to the
//! store the server reads (a change takes effect on the next request),
//! and record the change in the audit log.

use relay_registry::{OperatorState, OperatorStateStore};
use relay_runtime::rails::RailListing;
use relay_store::{AuditRow, Store};
use serde::Serialize;
use utoipa::ToSchema;

/// Who made a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    /// The dashboard, signed in with the owner token.
    Owner,
    /// The command line, run by this (operating system) user.
    Cli(String),
}

impl Actor {
    /// The CLI's actor: `$USER` (or `$LOGNAME`), `unknown` without one.
    pub fn cli_from_env() -> Self {
        let user = ["USER", "LOGNAME"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
            .unwrap_or_else(|| "unknown".into());
        Actor::Cli(user)
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Actor::Owner => f.write_str("owner-token"),
            Actor::Cli(user) => write!(f, "cli:{user}"),
        }
    }
}

/// Why an operator change failed.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The store.
    #[error(transparent)]
    Store(#[from] relay_store::StoreError),
    /// Operator state.
    #[error(transparent)]
    State(#[from] relay_registry::StateError),
    /// No installed rail has this id.
    #[error("no installed rail {0:?}")]
    UnknownRail(String),
    /// The rail declares no such lane.
    #[error("rail {rail} has no lane {lane:?} (lanes: {lanes})")]
    UnknownLane {
        /// The rail.
        rail: String,
        /// The lane asked for.
        lane: String,
        /// The lanes it has, comma-separated.
        lanes: String,
    },
}

/// One audited change, as the dashboard and `GET /admin/api/audit` show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Unique id.
    pub id: String,
    /// When, epoch ms.
    pub at_ms: u64,
    /// Who: `owner-token` (the dashboard) or `cli:<user>`.
    pub actor: String,
    /// What: `rail.enabled` or `lane.executeReady`.
    pub action: String,
    /// The rail.
    pub rail: String,
    /// The lane (absent for a rail switch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane: Option<String>,
    /// The effective value before.
    pub before: bool,
    /// The value after.
    pub after: bool,
}

impl From<AuditRow> for AuditEntry {
    fn from(r: AuditRow) -> Self {
        AuditEntry {
            id: r.id,
            at_ms: r.at_ms,
            actor: r.actor,
            action: r.action,
            rail: r.rail,
            lane: r.lane,
            before: r.before,
            after: r.after,
        }
    }
}

/// What a change did: its audit entry and the operator state after it.
#[derive(Clone, Debug)]
pub struct Change {
    /// The recorded entry.
    pub audit: AuditEntry,
    /// Operator state after the change.
    pub state: OperatorState,
}

fn installed<'a>(rails: &'a [RailListing], rail: &str) -> Result<&'a RailListing, OperatorError> {
    rails
        .iter()
        .find(|r| r.id == rail)
        .ok_or_else(|| OperatorError::UnknownRail(rail.into()))
}

/// Enables or disables an installed rail, audited.
pub async fn set_enabled(
    store: &Store,
    rails: &[RailListing],
    actor: &Actor,
    rail: &str,
    enabled: bool,
) -> Result<Change, OperatorError> {
    installed(rails, rail)?;
    let before = store.load_operator_state().await?.rail_enabled(rail);
    store.set_rail_enabled(rail, enabled).await?;
    record(store, actor, "rail.enabled", rail, None, (before, enabled)).await
}

/// Sets `executeReady` of a lane the installed rail declares, audited.
pub async fn set_execute_ready(
    store: &Store,
    rails: &[RailListing],
    actor: &Actor,
    (rail, lane): (&str, &str),
    ready: bool,
) -> Result<Change, OperatorError> {
    let r = installed(rails, rail)?;
    let Some(cov) = r.manifest.coverage.iter().find(|l| l.lane == lane) else {
        let lanes: Vec<&str> = r
            .manifest
            .coverage
            .iter()
            .map(|l| l.lane.as_str())
            .collect();
        return Err(OperatorError::UnknownLane {
            rail: rail.into(),
            lane: lane.into(),
            lanes: lanes.join(", "),
        });
    };
    let before = store
        .load_operator_state()
        .await?
        .lane_execute_ready(rail, lane, cov.executable);
    store.set_lane_execute_ready(rail, lane, ready).await?;
    let change = (before, ready);
    record(store, actor, "lane.executeReady", rail, Some(lane), change).await
}

async fn record(
    store: &Store,
    actor: &Actor,
    action: &str,
    rail: &str,
    lane: Option<&str>,
    (before, after): (bool, bool),
) -> Result<Change, OperatorError> {
    let row = AuditRow {
        id: format!("aud_{:016x}", rand::random::<u64>()),
        at_ms: store.clock().now_ms(),
        actor: actor.to_string(),
        action: action.into(),
        rail: rail.into(),
        lane: lane.map(Into::into),
        before,
        after,
    };
    store.record_audit(&row).await?;
    tracing::info!(actor = %row.actor, action, rail, lane, before, after, "operator change");
    Ok(Change {
        audit: row.into(),
        state: store.load_operator_state().await?,
    })
}

/// The `limit` newest audit entries, newest first.
pub async fn audit_log(store: &Store, limit: u32) -> Result<Vec<AuditEntry>, OperatorError> {
    Ok(store
        .audit_log(limit)
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}
