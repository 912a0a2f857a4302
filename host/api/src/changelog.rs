//! `GET /api/changelog` (spec §4.1, §9.5): the versions of this HTTP API
//! and what each changed, newest first, plus the versions running now.
//!
//! The entries are static data, [`changelog.json`](./changelog.json)
//! beside this file, compiled in with `include_str!` (a unit test keeps it
//! well-formed and its newest entry at the running crate version). Each
//! entry is `{version, date, interface, changes[]}`; each change is
//! `{type: added | changed | fixed | removed, path?, what}`.

use super::AppState;
use axum::Json;
use serde_json::{json, Value};
use std::sync::LazyLock;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The interface description this API implements (spec §9.1).
pub const INTERFACE_VERSION: &str = "3.1.0";

/// The service release per-chain deployments carry (spec §9.1).
pub const SERVICE_RELEASE: &str = "3.1";

const CHANGELOG: &str = include_str!("changelog.json");

static ENTRIES: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(CHANGELOG).unwrap_or_else(|_| json!([])));

/// What is running: the host's version, the interface it implements, the
/// rail contract version.
pub fn running() -> Running {
    Running {
        version: env!("CARGO_PKG_VERSION"),
        interface: INTERFACE_VERSION,
        release: SERVICE_RELEASE,
        rail_contract: relay_plugin_api::CONTRACT_VERSION,
    }
}

/// The versions running.
#[derive(Clone, Copy, Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Running {
    /// The host's version.
    pub version: &'static str,
    /// The interface description version.
    pub interface: &'static str,
    /// The service release.
    pub release: &'static str,
    /// The rail contract version.
    pub rail_contract: &'static str,
}

/// `GET /api/changelog`.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Changelog {
    /// What runs.
    pub running: Running,
    /// Entries, newest first (`{version, date, interface, summary, changes[]}`).
    #[schema(value_type = Vec<Object>)]
    pub entries: Value,
    /// How to read it.
    pub note: &'static str,
}

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(changelog))
}

#[utoipa::path(get, path = "/api/changelog", tag = "discovery", summary = "Changes to the API and the versions running", responses((status = 200, description = "OK", body = Changelog), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn changelog() -> Json<Changelog> {
    Json(Changelog {
        running: running(),
        entries: ENTRIES.clone(),
        note: "newest first; clients must ignore fields they do not know (spec §9.4)",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changelog_is_well_formed_and_starts_at_the_running_version() {
        let v: Value = serde_json::from_str(CHANGELOG).expect("changelog.json is JSON");
        let entries = v.as_array().expect("an array of entries");
        assert_eq!(entries[0]["version"], env!("CARGO_PKG_VERSION"));
        for e in entries {
            assert!(e["date"].is_string() && e["interface"].is_string(), "{e}");
            for c in e["changes"].as_array().expect("changes") {
                let kind = c["type"].as_str().unwrap_or_default();
                assert!(
                    ["added", "changed", "fixed", "removed"].contains(&kind),
                    "{c}"
                );
                assert!(c["what"].is_string(), "{c}");
            }
        }
    }
}
