//! Compile once: precompiled components cached on disk.
//!
//! A cache entry is named by the artifact's sha256 and wasmtime's
//! precompile-compatibility hash (which covers the wasmtime version, the
//! target and every compiler setting), so a new wasmtime, a different CPU
//! or a changed artifact never reuses a stale entry. An entry that fails to
//! load is recompiled and overwritten; a cache that cannot be written only
//! costs a compile on the next load.

use std::{
    hash::{Hash, Hasher},
    path::{Path, PathBuf},
    time::Instant,
};

use super::WasmLoadError;
use wasmtime::{component::Component, Engine};

/// Where a component came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    /// Loaded from the disk cache.
    Cached,
    /// Compiled now.
    Compiled,
}

/// The component for `bytes` (whose sha256 is `sha256`), from `cache_dir`
/// when an entry exists, otherwise compiled (and stored there).
pub(super) fn load_component(
    engine: &Engine,
    cache_dir: Option<&Path>,
    artifact: &Path,
    bytes: &[u8],
    sha256: &str,
) -> Result<(Component, Origin), WasmLoadError> {
    let compile_error = |e: wasmtime::Error| WasmLoadError::Compile {
        path: artifact.to_path_buf(),
        reason: format!("{e:#}"),
    };
    let Some(dir) = cache_dir else {
        return Ok((
            Component::new(engine, bytes).map_err(compile_error)?,
            Origin::Compiled,
        ));
    };
    let entry = entry_path(engine, dir, sha256);
    if entry.is_file() {
        // SAFETY: entries are only ever written by `store_entry` below from
        // `Engine::precompile_component` output, under a name that binds the
        // artifact hash and the engine's compatibility hash, in a directory
        // the operator keeps writable by the host alone (documented on
        // `WasmRuntimeConfig::cache_dir`).
        match unsafe { Component::deserialize_file(engine, &entry) } {
            Ok(component) => return Ok((component, Origin::Cached)),
            Err(e) => {
                tracing::warn!(entry = %entry.display(), error = %e, "stale wasm cache entry; recompiling")
            }
        }
    }
    let started = Instant::now();
    let precompiled = engine.precompile_component(bytes).map_err(compile_error)?;
    tracing::info!(
        artifact = %artifact.display(),
        ms = started.elapsed().as_millis() as u64,
        "wasm component compiled"
    );
    store_entry(dir, &entry, &precompiled);
    // SAFETY: `precompiled` was produced just now by this engine.
    let component =
        unsafe { Component::deserialize(engine, &precompiled) }.map_err(compile_error)?;
    Ok((component, Origin::Compiled))
}

/// `<dir>/<sha256>-<compat>.cwasm`.
fn entry_path(engine: &Engine, dir: &Path, sha256: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    dir.join(format!(
        "{}-wasmtime-{:016x}.cwasm",
        sha256.to_ascii_lowercase(),
        hasher.finish()
    ))
}

/// Writes an entry through a temporary file of its own (named by process
/// and a per-process counter: hosts in one process may share the
/// directory) so a concurrent reader never sees half of it. Failures are
/// logged, not returned.
fn store_entry(dir: &Path, entry: &Path, precompiled: &[u8]) {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = entry.with_extension(format!("tmp{}-{n}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, precompiled))
        .and_then(|()| std::fs::rename(&tmp, entry));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        tracing::warn!(entry = %entry.display(), error = %e, "could not write wasm cache entry");
    }
}
