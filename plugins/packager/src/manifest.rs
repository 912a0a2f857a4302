//! Writing `plugin.toml` from what the built artifact itself reports.

use std::{path::Path, sync::Arc};

use anyhow::Context;
use relay_host::{capabilities::CapabilityBroker, config::HostConfig, runtime::rails::RailSet};
use relay_registry::{
    discovery::sha256_file,
    manifest::{ContractEntry, CoverageSection, EgressSection, PluginSection},
    PluginKind, PluginManifest,
};

/// Loads `artifact` through the host loader and writes `dir/plugin.toml`.
pub async fn write(
    dir: &Path,
    artifact: &Path,
    kind: PluginKind,
) -> anyhow::Result<PluginManifest> {
    let sha256 = sha256_file(artifact)?;
    let config = HostConfig {
        data_dir: dir.join(".cache"),
        ..HostConfig::default()
    };
    let broker = Arc::new(CapabilityBroker::new(&config.capabilities));
    let set = RailSet::new(&config, broker).map_err(|e| anyhow::anyhow!("{e}"))?;
    let rail = set
        .load_artifact(kind, artifact, &sha256)
        .await
        .with_context(|| format!("loading {}", artifact.display()))?;
    let _ = std::fs::remove_dir_all(dir.join(".cache"));
    let m = rail.manifest();
    let file_name = artifact.file_name().context("artifact has a file name")?;
    let manifest = PluginManifest {
        plugin: PluginSection {
            id: m.id.clone(),
            version: m.version.clone(),
            contract: m.contract_version.clone(),
            kind,
            artifact: file_name.into(),
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
    };
    std::fs::write(dir.join("plugin.toml"), manifest.to_toml())?;
    Ok(manifest)
}
