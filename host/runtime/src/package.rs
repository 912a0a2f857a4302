//! Writing a plugin's `plugin.toml` from what its artifact reports when the
//! host's real loader loads it — used by the packager, by integrators
//! (`relay-plugins package`), and by tests that install plugins.

use relay_plugin_api::RailManifest;
use relay_registry::{
    manifest::{ContractEntry, CoverageSection, EgressSection, PluginSection},
    sha256_file, PluginKind, PluginManifest,
};
use std::{path::Path, sync::Arc};

use super::rails::{LoadError, RailSet};
use relay_capabilities::CapabilityBroker;
use relay_config::HostConfig;

/// Why a manifest could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// Reading the artifact or writing the manifest.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The artifact did not load.
    #[error("loading the artifact: {0}")]
    Load(#[from] LoadError),
    /// The runtime could not start.
    #[error("plugin runtime: {0}")]
    Runtime(String),
}

/// The `plugin.toml` describing `artifact` (which must sit in the plugin's
/// directory) as the rail reports itself.
pub fn manifest_for(
    m: &RailManifest,
    kind: PluginKind,
    artifact: &Path,
    sha256: String,
) -> PluginManifest {
    PluginManifest {
        plugin: PluginSection {
            id: m.id.clone(),
            version: m.version.clone(),
            contract: m.contract_version.clone(),
            kind,
            artifact: artifact.file_name().map(Into::into).unwrap_or_default(),
            sha256,
        },
        coverage: CoverageSection {
            lanes: m.coverage.iter().map(|l| l.lane.clone()).collect(),
        },
        egress: EgressSection {
            hosts: m.egress.clone(),
        },
        contracts: m
            .contracts
            .iter()
            .map(|c| ContractEntry {
                chain: c.chain.to_string(),
                address: c.address.clone(),
                label: c.label.clone(),
            })
            .collect(),
    }
}

/// Loads `artifact` through the host loader and writes `plugin.toml` next
/// to it.
pub async fn write_manifest(
    artifact: &Path,
    kind: PluginKind,
) -> Result<PluginManifest, PackageError> {
    let dir = artifact.parent().unwrap_or(Path::new("."));
    let sha256 = sha256_file(artifact)?;
    let scratch = tempdir_in(dir)?;
    let config = HostConfig {
        data_dir: scratch.clone(),
        ..HostConfig::default()
    };
    let broker = Arc::new(CapabilityBroker::new(&config.capabilities));
    let set = RailSet::new(&config, broker).map_err(|e| PackageError::Runtime(e.to_string()))?;
    let loaded = set.load_artifact(kind, artifact, &sha256).await;
    let _ = std::fs::remove_dir_all(&scratch);
    let manifest = manifest_for(loaded?.manifest(), kind, artifact, sha256);
    std::fs::write(dir.join("plugin.toml"), manifest.to_toml())?;
    Ok(manifest)
}

fn tempdir_in(dir: &Path) -> std::io::Result<std::path::PathBuf> {
    let p = dir.join(format!(".relay-package-{}", std::process::id()));
    std::fs::create_dir_all(&p)?;
    Ok(p)
}
