//! The execution's sandbox as notify sees it: which sandbox and dry-run
//! routes this replica holds, who sent them, and their completion event
//! once they finish (stamped on the host's clock).

use std::sync::Arc;

use relay_execution::sandbox::Sandbox;
use relay_notify::{dispatch::SandboxRoutes, hooks::RouteKnown};
use relay_types::{RouteStatus, SharedClock};
use serde_json::Value;

/// This replica's sandbox routes, for notify's registration and delivery.
#[derive(Debug)]
pub struct SandboxCompletions(pub Arc<Sandbox>, pub SharedClock);

impl SandboxRoutes for SandboxCompletions {
    fn completion(&self, route_id: &str) -> Option<Value> {
        let (r, _) = self.0.get(route_id)?;
        let event = match r.status {
            RouteStatus::Done => "done",
            RouteStatus::Failed => "failed",
            _ => return None,
        };
        Some(relay_store::route_event(&r, event, self.1.now_ms(), true))
    }

    fn known(&self, route_id: &str) -> Option<(RouteKnown, String)> {
        let (r, _) = self.0.get(route_id)?;
        let known = match r.status {
            RouteStatus::Dry => RouteKnown::Dry,
            _ => RouteKnown::Sandbox,
        };
        Some((known, r.sender))
    }
}
