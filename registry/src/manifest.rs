//! `plugin.toml`: the manifest next to every plugin artifact.
//!
//! ```toml
//! [plugin]
//! id = "floatlane"            # the rail id the artifact must report
//! version = "0.1.0"           # the rail's version
//! contract = "1.0.0"          # the relay:rail contract it was built against
//! kind = "wasm"               # native | wasm
//! artifact = "floatlane.wasm" # relative to this file
//! sha256 = "…"                # of the artifact, hex
//!
//! [coverage]
//! lanes = ["evm->evm"]
//!
//! [egress]
//! hosts = ["li.quest"]
//!
//! [[contracts]]
//! chain = "8453"
//! address = "0x…"
//! label = "bridge-deposit"
//! ```

use std::path::{Path, PathBuf};

use semver::Version;
use serde::{Deserialize, Serialize};

/// How the artifact is packaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginKind {
    /// An abi_stable cdylib.
    Native,
    /// A wasm component.
    Wasm,
}

impl PluginKind {
    /// `native` or `wasm`.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Native => "native",
            PluginKind::Wasm => "wasm",
        }
    }
}

/// The `[plugin]` table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSection {
    /// Rail id.
    pub id: String,
    /// Rail version.
    pub version: Version,
    /// Contract version built against.
    pub contract: Version,
    /// Packaging.
    pub kind: PluginKind,
    /// Artifact file, relative to the manifest.
    pub artifact: PathBuf,
    /// Artifact sha256, lower-case hex.
    pub sha256: String,
}

/// The `[coverage]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoverageSection {
    /// Lane names the rail covers.
    #[serde(default)]
    pub lanes: Vec<String>,
}

/// The `[egress]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EgressSection {
    /// Hosts the rail may reach.
    #[serde(default)]
    pub hosts: Vec<String>,
}

/// One `[[contracts]]` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractEntry {
    /// Chain (EVM id or node name).
    pub chain: String,
    /// Address.
    pub address: String,
    /// Label.
    pub label: String,
}

/// A parsed `plugin.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginManifest {
    /// Identity and artifact.
    pub plugin: PluginSection,
    /// Coverage summary.
    #[serde(default)]
    pub coverage: CoverageSection,
    /// Egress hosts.
    #[serde(default)]
    pub egress: EgressSection,
    /// Contracts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contracts: Vec<ContractEntry>,
}

/// Why a manifest cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The manifest path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The TOML does not parse or has wrong fields.
    #[error("{path} is not a valid plugin manifest: {message}")]
    Parse {
        /// The manifest path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A field has an invalid value.
    #[error("{path}: {field} {message}")]
    Invalid {
        /// The manifest path.
        path: PathBuf,
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl PluginManifest {
    /// Reads and validates a manifest file.
    pub fn read(path: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let m: PluginManifest = toml::from_str(&text).map_err(|e| ManifestError::Parse {
            path: path.to_path_buf(),
            message: e
                .to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        })?;
        m.validate(path)?;
        Ok(m)
    }

    fn validate(&self, path: &Path) -> Result<(), ManifestError> {
        let invalid = |field, message: &str| ManifestError::Invalid {
            path: path.to_path_buf(),
            field,
            message: message.to_string(),
        };
        let id = &self.plugin.id;
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(invalid(
                "plugin.id",
                "must be lower-case letters, digits and '-'",
            ));
        }
        let sha = &self.plugin.sha256;
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid("plugin.sha256", "must be 64 hex digits"));
        }
        if self.plugin.artifact.is_absolute()
            || self
                .plugin
                .artifact
                .components()
                .any(|c| c.as_os_str() == "..")
        {
            return Err(invalid(
                "plugin.artifact",
                "must be a path inside the plugin's directory",
            ));
        }
        Ok(())
    }

    /// Renders the manifest as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("manifest serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[plugin]
id = "floatlane"
version = "0.1.0"
contract = "1.0.0"
kind = "wasm"
artifact = "floatlane.wasm"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"

[coverage]
lanes = ["evm->evm"]
"#;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("plugin.toml");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn reads_a_valid_manifest() {
        let (_d, p) = write(GOOD);
        let m = PluginManifest::read(&p).unwrap();
        assert_eq!(m.plugin.kind, PluginKind::Wasm);
        assert_eq!(m.coverage.lanes, vec!["evm->evm"]);
        assert_eq!(PluginManifest::read(&write(&m.to_toml()).1).unwrap(), m);
    }

    #[test]
    fn names_the_bad_field() {
        let (_d, p) = write(&GOOD.replace("floatlane\"", "Float Lane\""));
        assert!(PluginManifest::read(&p)
            .unwrap_err()
            .to_string()
            .contains("plugin.id"));
        let (_d, p) = write(&GOOD.replace("\"wasm\"", "\"elf\""));
        assert!(PluginManifest::read(&p)
            .unwrap_err()
            .to_string()
            .contains("kind"));
        let (_d, p) = write(&GOOD.replace("floatlane.wasm", "../x.wasm"));
        assert!(PluginManifest::read(&p)
            .unwrap_err()
            .to_string()
            .contains("plugin.artifact"));
    }
}
