//! Native plugins: `abi_stable` cdylibs exporting a relay rail root module
//! (see `relay_plugin_native`), behind [`PluginBackend`].
//!
//! Native plugins are **trusted code** running in the host's address space;
//! containment is best effort. A panic is caught at the plugin's export
//! boundary and becomes [`BackendError::Crashed`]; the rail keeps serving.
//! Each call runs on one of the rail's own worker threads (see `worker`:
//! a persistent pool with a spinning hand-off, ~1 µs instead of a
//! `spawn_blocking` round trip); a call that has not returned by its
//! deadline yields [`BackendError::DeadlineExceeded`] and its thread is
//! abandoned — it cannot be interrupted, it keeps running until the plugin
//! returns, and its capability calls fail from then on; the next call runs
//! on another worker. The supervisor quarantines a rail that does this.
//!
//! Libraries are never unloaded; a new version of a plugin is loaded from
//! its own path beside the old one (see [`NativeBackend::load`]).

mod bridge;
mod load;
mod worker;

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
    workers: worker::Workers,
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
            workers: worker::Workers::new(&loaded.manifest.id),
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
        let deadline = caps.deadline();
        let module = self.module;
        let worker_span = tracing::Span::current();
        let host = bridge::BlockingHost {
            caps,
            handle: tokio::runtime::Handle::current(),
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job = Box::new(move || {
            let result = worker_span.in_scope(|| bridge::run(module, &call, &host));
            Box::new(move || {
                // The caller may have given up at the deadline.
                let _ = tx.send(result);
            }) as worker::Deliver
        });
        if let Err(e) = self.workers.submit(job) {
            return Err(BackendError::Crashed(format!(
                "cannot start a native call worker: {e}"
            )));
        }
        let outcome = self.await_reply(rx, deadline).await;
        let took = started.elapsed();
        self.workers.record(took);
        tracing::debug!(
            duration_us = took.as_micros() as u64,
            ok = outcome.is_ok(),
            "native call finished"
        );
        outcome
    }

    /// The worker's reply: spun for briefly when the rail's calls are short
    /// (no wake-up), else awaited until `deadline`.
    async fn await_reply(
        &self,
        mut rx: tokio::sync::oneshot::Receiver<Result<RailReply, BackendError>>,
        deadline: std::time::Instant,
    ) -> Result<RailReply, BackendError> {
        use tokio::sync::oneshot::error::TryRecvError;
        let lost = || BackendError::Crashed("native call worker failed".into());
        if let Some(budget) = self.workers.spin_budget() {
            let until = Instant::now() + budget;
            loop {
                match rx.try_recv() {
                    Ok(result) => return result,
                    Err(TryRecvError::Closed) => return Err(lost()),
                    Err(TryRecvError::Empty) if Instant::now() < until => std::hint::spin_loop(),
                    Err(TryRecvError::Empty) => break,
                }
            }
        }
        match tokio::time::timeout_at(deadline.into(), rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_closed)) => Err(lost()),
            Err(_elapsed) => {
                tracing::warn!("native call missed its deadline; its thread is abandoned");
                Err(BackendError::DeadlineExceeded)
            }
        }
    }
}
