//! Operator configuration of the capabilities.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// A value handed in by the process itself (the devnet), taking the
    /// place of `env`. Never read from or written to a file.
    #[serde(skip)]
    pub value: Option<Secret>,
}

/// A secret held in memory: never serialised, redacted when printed.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
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
