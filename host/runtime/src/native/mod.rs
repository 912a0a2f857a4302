//! Native plugins: `abi_stable` cdylibs exporting a relay rail root module
//! (see `relay_plugin_native`), behind [`PluginBackend`].
//!
//! Native plugins are **trusted code** running in the host's address space;
//! containment is best effort. A panic is caught at the plugin's export
//! boundary and becomes [`BackendError::Crashed`]; the rail keeps serving.
//! Each call runs on a `spawn_blocking` worker; a call that has not returned
//! by its deadline yields [`BackendError::DeadlineExceeded`] and its thread is
//! abandoned — it cannot be interrupted, it keeps running until the plugin
//! returns, and its capability calls fail from then on. The supervisor
//! quarantines a rail that does this. Abandoned threads hold on to a
//! blocking-pool slot, so a host shutting down should use
//! `Runtime::shutdown_timeout` rather than wait for them.
//!
//! Libraries are never unloaded; a new version of a plugin is loaded from
//! its own path beside the old one (see [`NativeBackend::load`]).

mod bridge;
mod load;

use std::{
    fmt,
    path::{Path, PathBuf},
    sync::Arc,
    time::Instant,
};

pub use self::load::NativeLoadError;
use crate::backend::{BackendError, Packaging, PluginBackend, RailCall, RailReply};
use relay_capabilities::CallCapabilities;
use relay_plugin_api::{RailManifest, Version};
use relay_plugin_native::RailModuleRef;
use tracing::Instrument as _;

/// A loaded native plugin.
pub struct NativeBackend {
    module: RailModuleRef,
    path: PathBuf,
    contract_version: Version,
    manifest: RailManifest,
}

impl NativeBackend {
    /// Loads the plugin at `path`: opens the library, checks that it exports
    /// a relay rail module of this host's layout (`abi_stable`) and a
    /// supported contract version, and reads its manifest.
    ///
    /// Blocking (it opens a file and runs the plugin's `manifest`). Loading a
    /// second copy of a plugin from another path gives an independent
    /// instance beside the first; loading the same path again gives the
    /// already loaded library.
    pub fn load(path: &Path) -> Result<NativeBackend, NativeLoadError> {
        let span = tracing::info_span!("native_load", path = %path.display());
        let _entered = span.enter();
        let loaded = load::load(path)?;
        tracing::info!(
            rail = %loaded.manifest.id,
            version = %loaded.manifest.version,
            contract = %loaded.contract_version,
            "native plugin loaded"
        );
        Ok(NativeBackend {
            module: loaded.module,
            path: path.to_owned(),
            contract_version: loaded.contract_version,
            manifest: loaded.manifest,
        })
    }

    /// The manifest read at load time.
    pub fn manifest(&self) -> &RailManifest {
        &self.manifest
    }

    /// The contract version the plugin was built against.
    pub fn contract_version(&self) -> &Version {
        &self.contract_version
    }

    /// Where the plugin was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl fmt::Debug for NativeBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NativeBackend")
            .field("rail", &self.manifest.id)
            .field("path", &self.path)
            .field("contract_version", &self.contract_version)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl PluginBackend for NativeBackend {
    fn packaging(&self) -> Packaging {
        Packaging::Native
    }

    async fn call(
        &self,
        call: RailCall,
        caps: Arc<CallCapabilities>,
    ) -> Result<RailReply, BackendError> {
        let span = tracing::debug_span!(
            "rail_call",
            rail = %self.manifest.id,
            method = call.method(),
            packaging = Packaging::Native.as_str(),
        );
        self.call_on_worker(call, caps).instrument(span).await
    }
}

impl NativeBackend {
    async fn call_on_worker(
        &self,
        call: RailCall,
        caps: Arc<CallCapabilities>,
    ) -> Result<RailReply, BackendError> {
        let started = Instant::now();
        let deadline = tokio::time::Instant::from_std(caps.deadline());
        let module = self.module;
        let worker_span = tracing::Span::current();
        let host = bridge::BlockingHost {
            caps,
            handle: tokio::runtime::Handle::current(),
        };
        let task = tokio::task::spawn_blocking(move || {
            worker_span.in_scope(|| bridge::run(module, &call, &host))
        });
        let outcome = match tokio::time::timeout_at(deadline, task).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(BackendError::Crashed(format!(
                "native call worker failed: {join}"
            ))),
            Err(_elapsed) => {
                tracing::warn!("native call missed its deadline; its thread is abandoned");
                Err(BackendError::DeadlineExceeded)
            }
        };
        tracing::debug!(
            duration_us = started.elapsed().as_micros() as u64,
            ok = outcome.is_ok(),
            "native call finished"
        );
        outcome
    }
}
