//! What is installed, and what the operator allows.
//!
//! - [`manifest`]: the `plugin.toml` format that sits next to every artifact.
//! - [`discovery`]: finding plugins in a directory, verifying checksums and
//!   contract versions, and refusing bad ones with a clear reason while the
//!   others load.
//! - [`state`]: operator state (rail enabled, `executeReady` per lane) and the
//!   store trait that persists it.
//!
//! This crate reads files and hashes them; it loads no code and holds no keys.

pub mod discovery;
pub mod hashes;
pub mod manifest;
pub mod state;

pub use discovery::{
    discover, discover_with, sha256_file, ArtifactFingerprint, DiscoveredPlugin, Discovery,
    RejectedPlugin,
};
pub use hashes::Hashes;
pub use manifest::{ManifestError, PluginKind, PluginManifest};
pub use state::{LaneState, OperatorState, OperatorStateStore, RailState, StateError};
