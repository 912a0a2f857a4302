//! What the concierge knows, gathered from the host's live state by the
//! same functions that serve the endpoints it cites: fees from
//! [`FeeSchedule`] (`/api/membership/status`, `/api/route/quote`), limits
//! from the rate limiter itself ([`RateLimiter::bucket`]), chains from
//! [`gasless::info`] (`/api/gasless/info`), the mesh and health from
//! [`mesh`] (`/api/route/chains`, `/api/status`), codes from the errors
//! catalogue (`/api/errors`). No HTTP types: plain values.

use crate::{error::Catalogue, limits::RateLimiter};
use relay_config::HostConfig;
use relay_engine::{fees::FeeSchedule, gasless::GaslessInfo, mesh};
use std::sync::Arc;

/// The live facts one answer is computed from.
pub struct Facts {
    /// The configuration (quote, http and limits sections).
    pub config: Arc<HostConfig>,
    /// Fee tiers as quotes apply them.
    pub fees: FeeSchedule,
    /// The rate limiter as the edge builds it from the configuration.
    pub limiter: RateLimiter,
    /// `GET /api/gasless/info`.
    pub gasless: GaslessInfo,
    /// `GET /api/route/chains` (None when the store could not be read).
    pub mesh: Option<mesh::Mesh>,
    /// `GET /api/status` (None when the store could not be read).
    pub status: Option<mesh::Status>,
    /// `GET /api/errors`.
    pub catalogue: Catalogue,
    /// The terms' version (`GET /api/terms`).
    pub terms_version: &'static str,
    /// Where the hosted MCP endpoint is.
    pub mcp_path: &'static str,
}
