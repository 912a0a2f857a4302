//! The host's configuration: one typed struct, loaded by the `config` crate
//! from a TOML file and `RELAY_*` environment variables (`__` separates
//! levels: `RELAY_RUNTIME__CALL_TIMEOUT_MS=5000`). Defaults are documented
//! next to each field.
//!
//! Secrets never live here: the relayer key comes from `RELAY_RELAYER_KEY`
//! (or a keystore file), upstream credentials from the environment variables
//! that `[capabilities.credentials.*]` name.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::{capabilities::CapabilityConfig, runtime::Packaging};

/// A token the host knows on a chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenConfig {
    /// Contract address.
    pub address: String,
    /// Decimals.
    pub decimals: u8,
}

/// One EVM chain the host serves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChainConfig {
    /// Display name (default: the well-known name of the chain id).
    pub name: Option<String>,
    /// RPC endpoints, tried in order.
    pub rpc: Vec<String>,
    /// Tokens by symbol.
    pub tokens: BTreeMap<String, TokenConfig>,
}

/// Operator settings for one rail (`[rails.<id>]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RailConfig {
    /// Extra egress hosts (e.g. a simulator or a self-hosted upstream).
    pub egress: Vec<String>,
    /// Credential names the rail may use.
    pub credentials: Vec<String>,
    /// Values the rail reads with `host.config(key)`.
    pub config: BTreeMap<String, String>,
}

/// Plugin runtime settings (`[runtime]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RuntimeConfig {
    /// Deadline of one plugin call, ms (default 10000).
    pub call_timeout_ms: u64,
    /// Memory limit of one wasm call, MiB (default 64).
    pub wasm_memory_mib: u64,
    /// How often the plugins directory is rescanned for hot reload, ms
    /// (default 2000; 0 disables).
    pub reload_interval_ms: u64,
    /// Which packaging serves a rail installed in both at the same version
    /// (default wasm: sandboxed).
    pub prefer: Packaging,
    /// First quarantine after a plugin fault, ms (default 2000), doubling up
    /// to five minutes.
    pub quarantine_base_ms: u64,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            call_timeout_ms: 10_000,
            wasm_memory_mib: 64,
            reload_interval_ms: 2_000,
            prefer: Packaging::Wasm,
            quarantine_base_ms: 2_000,
        }
    }
}

/// The whole configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostConfig {
    /// HTTP listen address (default 127.0.0.1:8787).
    pub listen: SocketAddr,
    /// Data directory: SQLite database, compiled-module cache (default `.relay`).
    pub data_dir: PathBuf,
    /// Database URL; default `sqlite://<data_dir>/relay.db`. A
    /// `postgres://…` URL switches to Postgres.
    pub database_url: Option<String>,
    /// Directory of installed plugins (default `plugins/dist`).
    pub plugins_dir: PathBuf,
    /// The relayer's public address (its key comes from the environment).
    pub relayer: Option<String>,
    /// The Permit2 contract (default the canonical address).
    pub permit2: String,
    /// EVM chains by chain id.
    pub chains: BTreeMap<String, ChainConfig>,
    /// Capability broker settings.
    pub capabilities: CapabilityConfig,
    /// Per-rail operator settings.
    pub rails: BTreeMap<String, RailConfig>,
    /// Plugin runtime settings.
    pub runtime: RuntimeConfig,
}

/// The canonical Permit2 address.
pub const CANONICAL_PERMIT2: &str = "0x000000000022D473030F116dDEE9F6B43aC78BA3";

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            listen: "127.0.0.1:8787".parse().expect("valid address"),
            data_dir: PathBuf::from(".relay"),
            database_url: None,
            plugins_dir: PathBuf::from("plugins/dist"),
            relayer: None,
            permit2: CANONICAL_PERMIT2.into(),
            chains: BTreeMap::new(),
            capabilities: CapabilityConfig::default(),
            rails: BTreeMap::new(),
            runtime: RuntimeConfig::default(),
        }
    }
}

/// Why configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(String);

impl HostConfig {
    /// Loads `file` (if given; it must exist) and the `RELAY_*` environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut b = config::Config::builder();
        if let Some(f) = file {
            if !f.is_file() {
                return Err(ConfigError(format!("{} does not exist", f.display())));
            }
            b = b.add_source(config::File::from(f).format(config::FileFormat::Toml));
        }
        b = b.add_source(
            config::Environment::with_prefix("RELAY")
                .separator("__")
                .prefix_separator("_")
                .try_parsing(true),
        );
        let raw = b.build().map_err(|e| ConfigError(e.to_string()))?;
        let cfg: HostConfig = raw
            .try_deserialize()
            .map_err(|e| ConfigError(e.to_string()))?;
        Ok(cfg)
    }

    /// The database URL in effect.
    pub fn database_url(&self) -> String {
        self.database_url.clone().unwrap_or_else(|| {
            format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("relay.db").display()
            )
        })
    }

    /// EVM chain ids configured, ascending.
    pub fn chain_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.chains.keys().filter_map(|k| k.parse().ok()).collect();
        ids.sort_unstable();
        ids
    }

    /// The well-known or configured name of a chain.
    pub fn chain_name(&self, id: u64) -> String {
        self.chains
            .get(&id.to_string())
            .and_then(|c| c.name.clone())
            .unwrap_or_else(|| crate::chains::well_known_name(id).to_string())
    }
}
