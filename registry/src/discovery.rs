//! Finding plugins: every directory under the plugins directory that holds a
//! `plugin.toml`. Each candidate is verified on its own — a bad checksum or
//! an unsupported contract version refuses that plugin, with the reason,
//! while the others are returned for loading.

use std::{
    io::Read,
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use relay_plugin_api::{contract_version, is_supported_contract};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::{hashes::Hashes, PluginManifest};

/// What identifies one build of an artifact: its checksum and mtime.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArtifactFingerprint {
    /// sha256 of the artifact, hex.
    pub sha256: String,
    /// Modification time of the manifest and artifact, whichever is newer.
    #[serde(skip)]
    pub modified: Option<SystemTime>,
}

/// A plugin that passed every check and can be loaded.
#[derive(Clone, Debug, Serialize)]
pub struct DiscoveredPlugin {
    /// The manifest.
    pub manifest: PluginManifest,
    /// The manifest file.
    pub manifest_path: PathBuf,
    /// The artifact file (absolute).
    pub artifact_path: PathBuf,
    /// Its fingerprint.
    pub fingerprint: ArtifactFingerprint,
}

impl DiscoveredPlugin {
    /// `<id>@<kind>`: the key of one installed packaging of a rail.
    pub fn key(&self) -> String {
        format!(
            "{}@{}",
            self.manifest.plugin.id,
            self.manifest.plugin.kind.as_str()
        )
    }
}

/// A plugin that was refused, and why.
#[derive(Clone, Debug, Serialize)]
pub struct RejectedPlugin {
    /// The manifest file.
    pub manifest_path: PathBuf,
    /// The rail id, when the manifest could be read.
    pub id: Option<String>,
    /// Why it was refused, naming the check.
    pub reason: String,
}

/// The result of scanning a plugins directory.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Discovery {
    /// Loadable plugins.
    pub plugins: Vec<DiscoveredPlugin>,
    /// Refused plugins.
    pub rejected: Vec<RejectedPlugin>,
}

/// Scans `dir` (one level of subdirectories, plus `dir` itself), hashing
/// every artifact.
pub fn discover(dir: &Path) -> Discovery {
    discover_with(dir, &Hashes::with_racy_window(Duration::MAX))
}

/// Scans `dir` as [`discover`] does, with checksums remembered in `hashes`
/// between scans (hot reload's rescans: [`crate::hashes`]).
pub fn discover_with(dir: &Path, hashes: &Hashes) -> Discovery {
    let mut out = Discovery::default();
    let mut manifests = Vec::new();
    if dir.join("plugin.toml").is_file() {
        manifests.push(dir.join("plugin.toml"));
    }
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            let mut dirs: Vec<_> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            dirs.sort();
            manifests.extend(
                dirs.into_iter()
                    .map(|d| d.join("plugin.toml"))
                    .filter(|p| p.is_file()),
            );
        }
        Err(e) => out.rejected.push(RejectedPlugin {
            manifest_path: dir.to_path_buf(),
            id: None,
            reason: format!("cannot read plugins directory: {e}"),
        }),
    }
    for path in manifests {
        match check(&path, hashes) {
            Ok(p) => out.plugins.push(p),
            Err((id, reason)) => {
                tracing::warn!(manifest = %path.display(), %reason, "plugin refused");
                out.rejected.push(RejectedPlugin {
                    manifest_path: path,
                    id,
                    reason,
                });
            }
        }
    }
    out
}

fn check(path: &Path, hashes: &Hashes) -> Result<DiscoveredPlugin, (Option<String>, String)> {
    let manifest = PluginManifest::read(path).map_err(|e| (None, e.to_string()))?;
    let id = Some(manifest.plugin.id.clone());
    let contract = &manifest.plugin.contract;
    if !is_supported_contract(contract) {
        return Err((
            id,
            format!(
                "unsupported contract version {contract}: this host implements relay:rail {} (accepts 1.x up to it)",
                contract_version()
            ),
        ));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let artifact_path = dir.join(&manifest.plugin.artifact);
    let fingerprint = fingerprint(path, &artifact_path, hashes).map_err(|e| (id.clone(), e))?;
    if !fingerprint
        .sha256
        .eq_ignore_ascii_case(&manifest.plugin.sha256)
    {
        return Err((
            id,
            format!(
                "checksum mismatch for {}: manifest says sha256 {}, artifact is {}",
                artifact_path.display(),
                manifest.plugin.sha256,
                fingerprint.sha256
            ),
        ));
    }
    Ok(DiscoveredPlugin {
        manifest,
        manifest_path: path.to_path_buf(),
        artifact_path,
        fingerprint,
    })
}

/// Hashes an artifact (or remembers its checksum in `hashes`) and reads
/// the newer mtime of it and its manifest.
pub fn fingerprint(
    manifest: &Path,
    artifact: &Path,
    hashes: &Hashes,
) -> Result<ArtifactFingerprint, String> {
    let sha256 = hashes
        .sha256(artifact)
        .map_err(|e| format!("cannot read artifact {}: {e}", artifact.display()))?;
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    Ok(ArtifactFingerprint {
        sha256,
        modified: mtime(manifest).max(mtime(artifact)),
    })
}

/// sha256 of a file, lower-case hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(root: &Path, name: &str, contract: &str, corrupt: bool) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("rail.wasm"), b"not really wasm").unwrap();
        let mut sha = sha256_file(&dir.join("rail.wasm")).unwrap();
        if corrupt {
            sha = "f".repeat(64);
        }
        let toml = format!(
            "[plugin]\nid = \"{name}\"\nversion = \"0.1.0\"\ncontract = \"{contract}\"\nkind = \"wasm\"\nartifact = \"rail.wasm\"\nsha256 = \"{sha}\"\n"
        );
        std::fs::write(dir.join("plugin.toml"), toml).unwrap();
    }

    #[test]
    fn refuses_bad_checksum_and_contract_but_keeps_the_rest() {
        let root = tempfile::tempdir().unwrap();
        install(root.path(), "good", "1.0.0", false);
        install(root.path(), "tampered", "1.0.0", true);
        install(root.path(), "future", "2.0.0", false);
        let d = discover(root.path());
        assert_eq!(
            d.plugins.iter().map(|p| p.key()).collect::<Vec<_>>(),
            vec!["good@wasm"]
        );
        let reason = |id: &str| {
            d.rejected
                .iter()
                .find(|r| r.id.as_deref() == Some(id))
                .unwrap()
                .reason
                .clone()
        };
        assert!(
            reason("tampered").contains("checksum mismatch"),
            "{}",
            reason("tampered")
        );
        assert!(
            reason("future").contains("unsupported contract version 2.0.0"),
            "{}",
            reason("future")
        );
    }

    #[test]
    fn a_missing_directory_is_reported_not_fatal() {
        let d = discover(Path::new("/nonexistent/relay/plugins"));
        assert!(d.plugins.is_empty());
        assert_eq!(d.rejected.len(), 1);
    }
}
