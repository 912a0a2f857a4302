//! The set of installed rails: loading discovered plugins through the right
//! backend, checking what they report against their `plugin.toml`, choosing
//! the active packaging of each rail, and hot reload.
//!
//! Reload swaps the whole set atomically. Calls already running hold their
//! `Arc<LoadedRail>` and finish on the old instance (drain). A wasm rail's
//! old component is dropped when its last call ends; a native library
//! cannot be unloaded (abi_stable), so the new version is loaded beside it
//! and only new calls reach it.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{Arc, RwLock},
    time::Duration,
};

use relay_plugin_api::RailManifest;
use relay_registry::{DiscoveredPlugin, Discovery, PluginKind, RejectedPlugin};
use serde::Serialize;

use super::{
    native::NativeBackend,
    supervisor::{CallLimits, LoadedRail},
    wasm::{WasmRuntime, WasmRuntimeConfig},
    BackendError, Packaging, PluginBackend,
};
use relay_capabilities::{CapabilityBroker, RailPolicy};
use relay_config::{HostConfig, RailConfig};

/// One installed plugin that loaded.
#[derive(Clone, Debug)]
pub struct InstalledRail {
    /// What discovery found.
    pub plugin: DiscoveredPlugin,
    /// The loaded rail.
    pub rail: Arc<LoadedRail>,
    /// Whether it serves its rail id (one packaging per id does).
    pub active: bool,
}

/// A consistent view of what is installed.
#[derive(Clone, Debug, Default)]
pub struct RailSnapshot {
    /// Loaded plugins.
    pub installed: Vec<InstalledRail>,
    /// Refused plugins, with reasons.
    pub rejected: Vec<RejectedPlugin>,
}

impl RailSnapshot {
    /// The active rail of each id.
    pub fn active(&self) -> impl Iterator<Item = &Arc<LoadedRail>> {
        self.installed.iter().filter(|i| i.active).map(|i| &i.rail)
    }

    /// The active rail with this id.
    pub fn get(&self, id: &str) -> Option<&Arc<LoadedRail>> {
        self.active().find(|r| r.id() == id)
    }
}

/// Listing row for operators (`relay rails list --json`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RailListing {
    /// Rail id.
    pub id: String,
    /// Packaging.
    pub packaging: Packaging,
    /// Rail version.
    pub version: String,
    /// Contract version.
    pub contract: String,
    /// Whether this packaging serves the id.
    pub active: bool,
    /// Artifact path.
    pub artifact: PathBuf,
    /// Artifact sha256.
    pub sha256: String,
    /// The manifest the rail reported.
    pub manifest: RailManifest,
}

/// Loads plugins and holds the current [`RailSnapshot`].
pub struct RailSet {
    broker: Arc<CapabilityBroker>,
    wasm: WasmRuntime,
    limits: CallLimits,
    prefer: Packaging,
    rails_config: BTreeMap<String, RailConfig>,
    relayer: Option<String>,
    current: RwLock<Arc<RailSnapshot>>,
}

impl std::fmt::Debug for RailSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RailSet").finish_non_exhaustive()
    }
}

/// Why a discovered plugin did not load.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The backend refused the artifact.
    #[error("{0}")]
    Backend(String),
    /// The rail's own manifest disagrees with its `plugin.toml`.
    #[error("manifest mismatch: {0}")]
    Mismatch(String),
    /// The rail faulted while reporting its manifest.
    #[error("manifest() failed: {0}")]
    Manifest(#[from] BackendError),
}

impl RailSet {
    /// An empty set configured from `config`.
    pub fn new(config: &HostConfig, broker: Arc<CapabilityBroker>) -> Result<Self, BackendError> {
        let rt = &config.runtime;
        let wasm = WasmRuntime::new(WasmRuntimeConfig {
            memory_limit_bytes: rt.wasm_memory_mib as usize * 1024 * 1024,
            cache_dir: Some(config.data_dir.join("module-cache")),
            pool_slots: rt.wasm_pool_slots,
        })
        .map_err(|e| BackendError::Contract(e.to_string()))?;
        Ok(RailSet {
            broker,
            wasm,
            limits: CallLimits {
                timeout: Duration::from_millis(rt.call_timeout_ms),
                backoff_base: Duration::from_millis(rt.quarantine_base_ms),
                ..CallLimits::default()
            },
            prefer: rt.prefer,
            rails_config: config.rails.clone(),
            relayer: config.relayer.clone(),
            current: RwLock::new(Arc::new(RailSnapshot::default())),
        })
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<RailSnapshot> {
        self.current.read().expect("rail set lock").clone()
    }

    /// Loads everything `discovery` found, reusing rails whose artifact did
    /// not change, and swaps the snapshot in one step.
    pub async fn apply(&self, discovery: Discovery) -> Arc<RailSnapshot> {
        let old = self.snapshot();
        let mut rejected = discovery.rejected;
        let reused: Vec<Option<InstalledRail>> = discovery
            .plugins
            .iter()
            .map(|plugin| {
                old.installed
                    .iter()
                    .find(|i| {
                        i.plugin.key() == plugin.key()
                            && i.plugin.fingerprint.sha256 == plugin.fingerprint.sha256
                    })
                    .map(|prev| InstalledRail {
                        active: false,
                        ..prev.clone()
                    })
            })
            .collect();
        // The new ones load side by side (each opens, checks and maps its
        // artifact on a blocking thread, then reports its manifest); the
        // set keeps discovery's order.
        let fresh = discovery
            .plugins
            .iter()
            .zip(&reused)
            .filter(|(_, r)| r.is_none());
        let mut loads = futures::future::join_all(fresh.map(|(p, _)| self.load(p)))
            .await
            .into_iter();
        let mut installed = Vec::new();
        for (plugin, reuse) in discovery.plugins.into_iter().zip(reused) {
            if let Some(prev) = reuse {
                installed.push(prev);
                continue;
            }
            match loads.next().expect("one load per new plugin") {
                Ok(rail) => {
                    tracing::info!(plugin = %plugin.key(), sha256 = %plugin.fingerprint.sha256, "rail loaded");
                    installed.push(InstalledRail {
                        plugin,
                        rail: Arc::new(rail),
                        active: false,
                    });
                }
                Err(e) => {
                    tracing::warn!(plugin = %plugin.key(), error = %e, "plugin refused");
                    rejected.push(RejectedPlugin {
                        manifest_path: plugin.manifest_path.clone(),
                        id: Some(plugin.manifest.plugin.id.clone()),
                        reason: e.to_string(),
                    });
                }
            }
        }
        choose_active(&mut installed, self.prefer);
        let snap = Arc::new(RailSnapshot {
            installed,
            rejected,
        });
        *self.current.write().expect("rail set lock") = snap.clone();
        snap
    }

    /// Scans `dir` and applies what it finds.
    pub async fn reload_from(&self, dir: &Path) -> Arc<RailSnapshot> {
        self.apply(relay_registry::discover(dir)).await
    }

    async fn load(&self, plugin: &DiscoveredPlugin) -> Result<LoadedRail, LoadError> {
        let kind = plugin.manifest.plugin.kind;
        let rail = self
            .load_artifact(kind, &plugin.artifact_path, &plugin.fingerprint.sha256)
            .await?;
        check_manifest(plugin, rail.manifest())?;
        Ok(rail)
    }

    /// Loads one artifact through the real backend, asks it for its manifest
    /// and wraps it under the policy its manifest and the operator allow.
    /// No `plugin.toml` is involved (the packager and the conformance kit
    /// start from a bare artifact).
    pub async fn load_artifact(
        &self,
        kind: PluginKind,
        path: &Path,
        sha256: &str,
    ) -> Result<LoadedRail, LoadError> {
        let (wasm, path, sha256) = (self.wasm.clone(), path.to_owned(), sha256.to_owned());
        let open = move || -> Result<Arc<dyn PluginBackend>, String> {
            Ok(match kind {
                PluginKind::Native => {
                    Arc::new(NativeBackend::load(&path).map_err(|e| e.to_string())?)
                }
                PluginKind::Wasm => Arc::new(wasm.load(&path, &sha256).map_err(|e| e.to_string())?),
            })
        };
        let backend = tokio::task::spawn_blocking(open)
            .await
            .map_err(|e| LoadError::Backend(format!("loader thread failed: {e}")))?
            .map_err(LoadError::Backend)?;
        let manifest = LoadedRail::fetch_manifest(&backend, &self.broker, self.limits).await?;
        let policy = self.policy_for(&manifest);
        Ok(LoadedRail::new(
            manifest,
            backend,
            Arc::new(policy),
            self.broker.clone(),
            self.limits,
        ))
    }

    fn policy_for(&self, manifest: &RailManifest) -> RailPolicy {
        let op = self
            .rails_config
            .get(&manifest.id)
            .cloned()
            .unwrap_or_default();
        let mut config = op.config;
        if let Some(r) = &self.relayer {
            config.entry("relayer".into()).or_insert_with(|| r.clone());
        }
        RailPolicy {
            rail_id: manifest.id.clone(),
            egress: manifest
                .egress
                .iter()
                .chain(op.egress.iter())
                .cloned()
                .collect(),
            rpc_chains: manifest.rpc_chains.clone(),
            config,
            credentials: op.credentials,
        }
    }
}

/// The operator listing of a snapshot.
pub fn listing(snap: &RailSnapshot) -> Vec<RailListing> {
    snap.installed
        .iter()
        .map(|i| RailListing {
            id: i.rail.id().to_string(),
            packaging: i.rail.packaging(),
            version: i.rail.manifest().version.to_string(),
            contract: i.rail.manifest().contract_version.to_string(),
            active: i.active,
            artifact: i.plugin.artifact_path.clone(),
            sha256: i.plugin.fingerprint.sha256.clone(),
            manifest: i.rail.manifest().clone(),
        })
        .collect()
}

fn check_manifest(plugin: &DiscoveredPlugin, m: &RailManifest) -> Result<(), LoadError> {
    let p = &plugin.manifest.plugin;
    let mismatch = |what: &str, toml: String, rail: String| {
        Err(LoadError::Mismatch(format!(
            "plugin.toml says {what} {toml}, the rail reports {rail}"
        )))
    };
    if p.id != m.id {
        return mismatch("id", p.id.clone(), m.id.clone());
    }
    if p.version != m.version {
        return mismatch("version", p.version.to_string(), m.version.to_string());
    }
    if p.contract != m.contract_version {
        return mismatch(
            "contract",
            p.contract.to_string(),
            m.contract_version.to_string(),
        );
    }
    if !relay_plugin_api::is_supported_contract(&m.contract_version) {
        return Err(LoadError::Mismatch(format!(
            "unsupported contract version {}",
            m.contract_version
        )));
    }
    let declared = &plugin.manifest.egress.hosts;
    if let Some(h) = m.egress.iter().find(|h| !declared.contains(h)) {
        return Err(LoadError::Mismatch(format!(
            "egress host {h} is not declared in plugin.toml"
        )));
    }
    Ok(())
}

/// Marks one installed packaging per rail id active: the highest version,
/// then the preferred packaging.
fn choose_active(installed: &mut [InstalledRail], prefer: Packaging) {
    let mut best: BTreeMap<String, usize> = BTreeMap::new();
    for (i, cand) in installed.iter().enumerate() {
        let id = cand.rail.id().to_string();
        let better = match best.get(&id) {
            None => true,
            Some(&j) => {
                let (a, b) = (cand.rail.manifest(), installed[j].rail.manifest());
                a.version > b.version
                    || (a.version == b.version
                        && cand.rail.packaging() == prefer
                        && installed[j].rail.packaging() != prefer)
            }
        };
        if better {
            best.insert(id, i);
        }
    }
    for (i, r) in installed.iter_mut().enumerate() {
        r.active = best.get(r.rail.id()) == Some(&i);
    }
}
