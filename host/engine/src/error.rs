//! What the engine's services refuse with. Adapters (the HTTP API, the MCP
//! endpoint) map each variant onto their own error code; the engine knows
//! nothing of HTTP.

use super::route::RequestError;
use relay_chain::permit2::Permit2Error;

/// Why an engine service refused.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request itself is wrong (names the field).
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The Permit2 signature does not authorise this route.
    #[error(transparent)]
    Permit2(#[from] Permit2Error),
    /// The host cannot sign or read the chain for this route right now.
    #[error("{0}")]
    RelayerUnavailable(String),
}
