//! Operator configuration of the capabilities.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A credential the host injects into a rail's requests by name.
///
/// The value is read from the environment variable `env` at call time; it
/// never appears in configuration files, logs, errors or the rail.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialConfig {
    /// Header to set (e.g. `x-lifi-api-key`).
    pub header: String,
    /// Environment variable holding the value.
    pub env: String,
}

/// Capability settings (`[capabilities]` in the host config).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilityConfig {
    /// Allow rails to reach loopback and private networks (default false;
    /// the devnet turns it on because its simulators listen on 127.0.0.1).
    pub allow_private_networks: bool,
    /// Largest response body a rail may receive, bytes (default 4 MiB).
    pub max_response_bytes: usize,
    /// Credentials by name.
    pub credentials: BTreeMap<String, CredentialConfig>,
    /// RPC endpoints per chain (`"8453" = ["http://…", …]`), tried in order.
    pub rpc: BTreeMap<String, Vec<String>>,
}

impl Default for CapabilityConfig {
    fn default() -> Self {
        CapabilityConfig {
            allow_private_networks: false,
            max_response_bytes: 4 * 1024 * 1024,
            credentials: BTreeMap::new(),
            rpc: BTreeMap::new(),
        }
    }
}
