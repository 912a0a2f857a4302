//! Loading a native plugin: open the library, check that it is a relay rail
//! of a layout and contract version this host understands, read its
//! manifest.
//!
//! Libraries are never unloaded (`abi_stable` hands out `'static`
//! references into them, and a call abandoned at its deadline may still be
//! running inside one). Each library is opened by path through
//! [`RawLibrary`] rather than `RootModule::load_from_file`, whose
//! process-wide, per-type cache would hand back the first loaded module for
//! every later path and make a new version of a plugin impossible to load
//! beside the old one.

use abi_stable::library::{lib_header_from_raw_library, LibraryError, RawLibrary, RootModule};
use relay_plugin_api::{is_supported_contract, RailManifest, Version, CONTRACT_VERSION};
use relay_plugin_native::{call_manifest, RailModuleRef};
use std::path::Path;

/// Longest detail kept from an `abi_stable` error (layout reports are long).
const MAX_DETAIL: usize = 2_000;

/// Why a native plugin was refused.
#[derive(Debug, thiserror::Error)]
pub enum NativeLoadError {
    /// The file could not be opened as a dynamic library.
    #[error("cannot open native plugin {}: {detail}", path.display())]
    Open {
        /// The artifact.
        path: std::path::PathBuf,
        /// The loader's message.
        detail: String,
    },
    /// The library exports no relay rail root module.
    #[error("{} is not a relay plugin: {detail}", path.display())]
    NotARelayPlugin {
        /// The artifact.
        path: std::path::PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// The root module's layout (or the `abi_stable` version) differs from
    /// the one this host was built with.
    #[error("{} has an incompatible native ABI (abi layout mismatch): {detail}", path.display())]
    AbiMismatch {
        /// The artifact.
        path: std::path::PathBuf,
        /// `abi_stable`'s report, truncated.
        detail: String,
    },
    /// The plugin was built against a contract version this host cannot load.
    #[error(
        "{} was built against relay contract {version}, which this host (contract {}) does \
         not support: {detail}",
        path.display(),
        CONTRACT_VERSION
    )]
    UnsupportedContract {
        /// The artifact.
        path: std::path::PathBuf,
        /// The version the plugin declares.
        version: String,
        /// Which versions are supported, or why the version is unreadable.
        detail: String,
    },
    /// The plugin's root module failed to initialise, or its manifest could
    /// not be read or contradicts the module.
    #[error("{} has no usable manifest: {detail}", path.display())]
    Manifest {
        /// The artifact.
        path: std::path::PathBuf,
        /// What went wrong.
        detail: String,
    },
}

/// A loaded, checked plugin.
pub(super) struct Loaded {
    pub(super) module: RailModuleRef,
    pub(super) contract_version: Version,
    pub(super) manifest: RailManifest,
}

/// Opens `path` and checks it; see the module docs.
pub(super) fn load(path: &Path) -> Result<Loaded, NativeLoadError> {
    let module = open_module(path)?;
    let contract_version = check_contract(path, module.contract_version().as_str())?;
    let manifest = read_manifest(path, module, &contract_version)?;
    Ok(Loaded {
        module,
        contract_version,
        manifest,
    })
}

fn open_module(path: &Path) -> Result<RailModuleRef, NativeLoadError> {
    let raw = RawLibrary::load_at(path).map_err(|e| library_error(path, e))?;
    // Leaked on purpose: see the module docs.
    let raw: &'static RawLibrary = Box::leak(Box::new(raw));
    // SAFETY: the header borrows from the library, which is never unloaded.
    let header = unsafe { lib_header_from_raw_library(raw) }.map_err(|e| library_error(path, e))?;
    let name = header.root_mod_consts().name().as_str();
    if name != RailModuleRef::NAME {
        return Err(NativeLoadError::NotARelayPlugin {
            path: path.to_owned(),
            detail: format!("it exports the abi_stable root module {name:?}, not a relay rail"),
        });
    }
    header
        .init_root_module::<RailModuleRef>()
        .map_err(|e| library_error(path, e))
}

fn library_error(path: &Path, err: LibraryError) -> NativeLoadError {
    let path = path.to_owned();
    let mut detail = err.to_string();
    if detail.len() > MAX_DETAIL {
        let cut = (0..=MAX_DETAIL)
            .rev()
            .find(|&i| detail.is_char_boundary(i))
            .unwrap_or(0);
        detail.truncate(cut);
        detail.push_str(" …");
    }
    match err {
        LibraryError::OpenError { .. } => NativeLoadError::Open { path, detail },
        LibraryError::GetSymbolError { .. } => NativeLoadError::NotARelayPlugin {
            path,
            detail: "it exports no abi_stable root module".into(),
        },
        LibraryError::RootModule { .. } => NativeLoadError::Manifest { path, detail },
        _ => NativeLoadError::AbiMismatch { path, detail },
    }
}

fn check_contract(path: &Path, declared: &str) -> Result<Version, NativeLoadError> {
    let unsupported = |detail: String| NativeLoadError::UnsupportedContract {
        path: path.to_owned(),
        version: declared.to_owned(),
        detail,
    };
    let version = Version::parse(declared).map_err(|e| unsupported(format!("not semver: {e}")))?;
    if !is_supported_contract(&version) {
        return Err(unsupported(supported_range()));
    }
    Ok(version)
}

/// The contract versions this host loads, in words.
fn supported_range() -> String {
    let host = relay_plugin_api::contract_version();
    if host.major == 0 {
        format!("it loads {}.{}.x up to {host}", host.major, host.minor)
    } else {
        format!("it loads {}.0 to {}.{}", host.major, host.major, host.minor)
    }
}

fn read_manifest(
    path: &Path,
    module: RailModuleRef,
    contract_version: &Version,
) -> Result<RailManifest, NativeLoadError> {
    let bad = |detail: String| NativeLoadError::Manifest {
        path: path.to_owned(),
        detail,
    };
    let json = call_manifest(module).map_err(|f| bad(format!("manifest() failed: {f}")))?;
    let manifest: RailManifest =
        serde_json::from_str(&json).map_err(|e| bad(format!("manifest is not valid: {e}")))?;
    if &manifest.contract_version != contract_version {
        return Err(bad(format!(
            "the manifest says contract {} but the module was built against {contract_version}",
            manifest.contract_version
        )));
    }
    Ok(manifest)
}
