//! [`WasmBackend`]: one loaded component, pre-instantiated, called through a
//! fresh store per call.

use std::{
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use relay_plugin_wasm::{ConvertError, Lift, Lower};
use sha2::{Digest, Sha256};
use tracing::Instrument;
use wasmtime::{component::InstancePre, Store, StoreLimitsBuilder, Trap, UpdateDeadline};

use super::{
    bindings::{relay::rail::types as wit, CallState},
    cache::{self, Origin},
    exports::{RailExports, RailFuncs},
    WasmLoadError, WasmRuntime,
};
use crate::backend::{BackendError, Packaging, PluginBackend, RailCall, RailReply};
use relay_capabilities::CallCapabilities;

/// The imports a rail component may have.
const ALLOWED_IMPORTS: &[&str] = &["relay:rail/types@1.0.0", "relay:rail/host@1.0.0"];
/// The export that makes a component a rail.
const RAIL_EXPORT: &str = "relay:rail/rail@1.0.0";
/// How long past its deadline a call may run before the host stops waiting
/// (the epoch deadline normally stops it first; this covers a guest
/// suspended in a host import).
const DEADLINE_GRACE: Duration = Duration::from_millis(50);

/// A loaded wasm rail: its component compiled and pre-instantiated against
/// the host's linker. Every call instantiates it into a fresh store.
pub struct WasmBackend {
    runtime: WasmRuntime,
    pre: InstancePre<CallState>,
    exports: RailExports,
    /// Whether an instance has passed the interface's type check (see
    /// `exports`).
    checked: AtomicBool,
    artifact: PathBuf,
    sha256: String,
}

impl std::fmt::Debug for WasmBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmBackend")
            .field("artifact", &self.artifact)
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

/// Why a call ended without a reply, before it is classified.
enum Fault {
    /// wasmtime stopped the guest (trap, interrupt, refused growth).
    Trap(wasmtime::Error),
    /// The rail returned a typed error.
    Rail(relay_plugin_api::RailError),
    /// The guest returned something that is not a contract value.
    Contract(ConvertError),
    /// A function of the interface has another signature than the world's.
    Signature(wasmtime::Error),
}

impl From<wasmtime::Error> for Fault {
    fn from(e: wasmtime::Error) -> Self {
        Fault::Trap(e)
    }
}

impl From<ConvertError> for Fault {
    fn from(e: ConvertError) -> Self {
        Fault::Contract(e)
    }
}

impl WasmBackend {
    /// Loads the component at `path`, checking that its sha256 is `sha256`
    /// (hex), that it is a component of the `relay:rail@1` world, and that it
    /// imports nothing but `relay:rail/host`. Compiles it, or takes it from
    /// the runtime's cache.
    #[tracing::instrument(skip_all, fields(artifact = %path.display()))]
    pub fn load(runtime: &WasmRuntime, path: &Path, sha256: &str) -> Result<Self, WasmLoadError> {
        let bytes = std::fs::read(path).map_err(|source| WasmLoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let actual = hex::encode(Sha256::digest(&bytes));
        if !actual.eq_ignore_ascii_case(sha256.trim()) {
            return Err(WasmLoadError::Checksum {
                path: path.to_path_buf(),
                expected: sha256.into(),
                actual,
            });
        }
        if is_core_module(&bytes) {
            return Err(WasmLoadError::CoreModule(path.to_path_buf()));
        }
        let started = Instant::now();
        let cache_dir = runtime.config().cache_dir.as_deref();
        let (component, origin) =
            cache::load_component(runtime.engine(), cache_dir, path, &bytes, &actual)?;
        check_world(runtime, &component, path)?;
        let incompatible = |e: wasmtime::Error| WasmLoadError::Incompatible {
            path: path.to_path_buf(),
            reason: format!("{e:#}"),
        };
        let exports = RailExports::find(&component, RAIL_EXPORT).map_err(|reason| {
            WasmLoadError::Incompatible {
                path: path.to_path_buf(),
                reason,
            }
        })?;
        let pre = runtime
            .linker()
            .instantiate_pre(&component)
            .map_err(incompatible)?;
        tracing::debug!(
            cached = origin == Origin::Cached,
            ms = started.elapsed().as_millis() as u64,
            "wasm rail loaded"
        );
        Ok(WasmBackend {
            runtime: runtime.clone(),
            pre,
            exports,
            checked: AtomicBool::new(false),
            artifact: path.to_path_buf(),
            sha256: actual,
        })
    }

    /// The artifact it was loaded from.
    pub fn artifact(&self) -> &Path {
        &self.artifact
    }

    /// The artifact's sha256 (lower-case hex).
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// A store for one call: the call's capabilities, the memory limit, and
    /// an epoch deadline that yields to the executor every tick and
    /// interrupts the guest once `deadline` has passed.
    fn new_store(&self, caps: Arc<CallCapabilities>, deadline: Instant) -> Store<CallState> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.runtime.config().memory_limit_bytes)
            .build();
        let mut store = Store::new(self.runtime.engine(), CallState::new(caps, limits));
        store.limiter(|state| state);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            Ok(if Instant::now() >= deadline {
                UpdateDeadline::Interrupt
            } else {
                UpdateDeadline::Yield(1)
            })
        });
        store
    }

    /// Instantiates the component in `store` and runs `call` on it.
    async fn run(&self, store: &mut Store<CallState>, call: RailCall) -> Result<RailReply, Fault> {
        let instance = self.pre.instantiate_async(&mut *store).await?;
        let checked = self.checked.load(Ordering::Acquire);
        let mut funcs = RailFuncs::new(store, &instance, &self.exports, checked);
        if !checked {
            // The first call (the manifest, read at load) checks all five
            // functions: one of another signature refuses the component
            // then, and later calls take theirs unchecked.
            funcs.check_all().map_err(Fault::Signature)?;
            self.checked.store(true, Ordering::Release);
        }
        Ok(match call {
            RailCall::Manifest => {
                let f = funcs.manifest().map_err(Fault::Signature)?;
                RailReply::Manifest(f.call_async(funcs.store(), ()).await?.0.lift()?)
            }
            RailCall::Health => {
                let f = funcs.health().map_err(Fault::Signature)?;
                RailReply::Health(f.call_async(funcs.store(), ()).await?.0.lift()?)
            }
            RailCall::Quote(req) => {
                let req: wit::QuoteRequest = req.lower();
                let f = funcs.quote().map_err(Fault::Signature)?;
                RailReply::Quote(answer(f.call_async(funcs.store(), (&req,)).await?.0)?)
            }
            RailCall::Prepare(req) => {
                let req: wit::PrepareRequest = req.lower();
                let f = funcs.prepare().map_err(Fault::Signature)?;
                RailReply::Plan(answer(f.call_async(funcs.store(), (&req,)).await?.0)?)
            }
            RailCall::Track(req) => {
                let req: wit::TrackRequest = req.lower();
                let f = funcs.track().map_err(Fault::Signature)?;
                RailReply::Track(answer(f.call_async(funcs.store(), (&req,)).await?.0)?)
            }
        })
    }

    /// Turns a fault into the error the supervisor branches on, using what
    /// the store saw (refused growth, a panic message the guest logged).
    fn classify(store: &Store<CallState>, fault: Fault) -> BackendError {
        let e = match fault {
            Fault::Rail(e) => return BackendError::Rail(e),
            Fault::Contract(e) => return BackendError::Contract(e.to_string()),
            Fault::Signature(e) => {
                return BackendError::Contract(format!("not the relay:rail interface: {e:#}"))
            }
            Fault::Trap(e) => e,
        };
        if let Some(refused) = store.data().refused() {
            return BackendError::ResourceLimit(refused.to_string());
        }
        let trap = e.downcast_ref::<Trap>().copied();
        if trap == Some(Trap::Interrupt) {
            return BackendError::DeadlineExceeded;
        }
        let reason = match trap {
            Some(trap) => trap.to_string(),
            None => format!("{e:#}"),
        };
        match store.data().panic_message() {
            Some(panic) => BackendError::Crashed(format!("{reason} ({panic})")),
            None => BackendError::Crashed(reason),
        }
    }
}

/// Lifts a rail's `result<T, rail-error>`.
fn answer<W: Lift<A>, A>(result: Result<W, wit::RailError>) -> Result<A, Fault> {
    match result {
        Ok(value) => Ok(value.lift()?),
        Err(e) => Err(Fault::Rail(e.lift()?)),
    }
}

#[async_trait::async_trait]
impl PluginBackend for WasmBackend {
    fn packaging(&self) -> Packaging {
        Packaging::Wasm
    }

    async fn call(
        &self,
        call: RailCall,
        caps: Arc<CallCapabilities>,
    ) -> Result<RailReply, BackendError> {
        let span = tracing::debug_span!(
            "wasm_call",
            rail = caps.rail_id(),
            method = call.method(),
            packaging = "wasm",
            sha256 = %self.sha256,
        );
        async move {
            let started = Instant::now();
            let deadline = caps.deadline();
            // A slot is nearly always free: only a full pool waits (with
            // a timer) for one.
            let _slot = match self.runtime.try_slot() {
                Ok(slot) => slot,
                Err(()) => {
                    match tokio::time::timeout_at(deadline.into(), self.runtime.slot()).await {
                        Ok(slot) => slot,
                        Err(_elapsed) => return Err(BackendError::DeadlineExceeded),
                    }
                }
            };
            let mut store = self.new_store(caps, deadline);
            let guarded = tokio::time::timeout_at(
                (deadline + DEADLINE_GRACE).into(),
                self.run(&mut store, call),
            );
            let result = match guarded.await {
                Ok(Ok(reply)) => Ok(reply),
                Ok(Err(fault)) => Err(Self::classify(&store, fault)),
                Err(_elapsed) => Err(BackendError::DeadlineExceeded),
            };
            let us = started.elapsed().as_micros() as u64;
            match &result {
                Ok(_) => tracing::debug!(us, "wasm call done"),
                Err(e) => tracing::debug!(us, error = %e, "wasm call failed"),
            }
            result
        }
        .instrument(span)
        .await
    }
}

/// Whether `bytes` is a core wasm module (layer 0) rather than a component.
fn is_core_module(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && bytes[..4] == *b"\0asm" && bytes[6..8] == [0, 0]
}

/// Checks the component's imports and exports by name against the world
/// (the linker then checks their types).
fn check_world(
    runtime: &WasmRuntime,
    component: &wasmtime::component::Component,
    path: &Path,
) -> Result<(), WasmLoadError> {
    let ty = component.component_type();
    let engine = runtime.engine();
    if let Some((import, _)) = ty
        .imports(engine)
        .find(|(name, _)| !ALLOWED_IMPORTS.contains(name))
    {
        return Err(WasmLoadError::ForeignImport {
            path: path.to_path_buf(),
            import: import.to_string(),
            allowed: ALLOWED_IMPORTS,
        });
    }
    if !ty.exports(engine).any(|(name, _)| name == RAIL_EXPORT) {
        return Err(WasmLoadError::MissingExport {
            path: path.to_path_buf(),
            export: RAIL_EXPORT,
        });
    }
    Ok(())
}
