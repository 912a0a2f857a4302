//! Where a new rail lives: inside a relay clone (a workspace member under
//! `plugins/`) or on its own, as a workspace of three crates that depends on
//! a relay checkout by path.

use std::{
    fs,
    path::{Path, PathBuf},
};

use super::NewError;

/// Where the new rail's crates take their dependencies from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Home {
    /// A member of the relay workspace at this root.
    Member(PathBuf),
    /// Its own workspace, depending on the relay checkout at this root.
    Standalone(PathBuf),
}

/// The relay workspace `dir` would belong to: the nearest ancestor whose
/// `Cargo.toml` is a workspace with the `plugins/*/rail` member glob.
pub fn enclosing_relay(dir: &Path) -> Option<PathBuf> {
    let dir = std::path::absolute(dir).ok()?;
    dir.ancestors().skip(1).find_map(|p| {
        let text = fs::read_to_string(p.join("Cargo.toml")).ok()?;
        (text.contains("[workspace]") && text.contains("\"plugins/*/rail\""))
            .then(|| p.to_path_buf())
    })
}

/// The relay checkout this binary was built from, if it is still there.
pub fn built_from() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    is_relay(&root).then(|| root.canonicalize().ok()).flatten()
}

/// Whether `root` holds the crates a rail builds against.
pub fn is_relay(root: &Path) -> bool {
    [
        "plugin-api/Cargo.toml",
        "rails/sdk/Cargo.toml",
        "Cargo.toml",
    ]
    .iter()
    .all(|f| root.join(f).is_file())
}

/// The workspace manifest of a standalone rail: its three crates, the relay
/// crates by path, and the relay workspace's package settings, lints,
/// serde versions and profiles (`wasm` is the one `plugins/build-wasm.sh`
/// uses).
pub fn manifest(relay: &Path) -> Result<String, NewError> {
    let relay_manifest = relay.join("Cargo.toml");
    let text = fs::read_to_string(&relay_manifest).map_err(|source| NewError::Read {
        path: relay_manifest.clone(),
        source,
    })?;
    let doc: toml::Table = text.parse().map_err(|e| NewError::NotRelay {
        path: relay.to_path_buf(),
        why: format!("Cargo.toml: {e}"),
    })?;
    let ws = doc.get("workspace").and_then(|w| w.as_table());
    let pick = |k: &str| ws.and_then(|w| w.get(k)).cloned();
    let dep = |k: &str| {
        ws.and_then(|w| w.get("dependencies"))
            .and_then(|d| d.get(k))
            .cloned()
    };
    let path_dep = |rel: &str| {
        let mut t = toml::Table::new();
        t.insert("path".into(), relay.join(rel).display().to_string().into());
        toml::Value::Table(t)
    };
    let mut deps = toml::Table::new();
    for (name, rel) in [
        ("relay-plugin-api", "plugin-api"),
        ("relay-plugin-native", "plugin-api/native"),
        ("relay-plugin-wasm", "plugin-api/wasm"),
        ("relay-rail-sdk", "rails/sdk"),
    ] {
        deps.insert(name.into(), path_dep(rel));
    }
    for name in ["serde", "serde_json"] {
        deps.insert(name.into(), dep(name).unwrap_or_else(|| "1".into()));
    }
    let mut workspace = toml::Table::new();
    workspace.insert("resolver".into(), "2".into());
    workspace.insert(
        "members".into(),
        toml::Value::Array(vec!["rail".into(), "native".into(), "wasm".into()]),
    );
    for key in ["package", "lints"] {
        if let Some(v) = pick(key) {
            workspace.insert(key.into(), v);
        }
    }
    workspace.insert("dependencies".into(), deps.into());
    let mut out = toml::Table::new();
    out.insert("workspace".into(), workspace.into());
    // The same profiles (the `wasm` one included): the relay crates build
    // exactly as in the checkout, so a shared target directory reuses them.
    if let Some(profile) = doc.get("profile").cloned() {
        out.insert("profile".into(), profile);
    }
    let body = toml::to_string(&out).map_err(|e| NewError::NotRelay {
        path: relay.to_path_buf(),
        why: e.to_string(),
    })?;
    Ok(format!(
        "# Written by `relay-plugins new`: this rail's own workspace, built against the\n\
         # relay checkout at {} (the contract crates and the rail SDK by path).\n{body}",
        relay.display()
    ))
}
