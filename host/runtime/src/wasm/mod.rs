//! Wasm components of the `relay:rail` world, run under wasmtime.
//!
//! Containment, as the design asks: one [`WasmRuntime`] per host owns the
//! `Engine` (component model, async host imports, epoch interruption) and a
//! background thread that advances the epoch every [`EPOCH_TICK`]. Each
//! artifact is compiled once, cached on disk by its sha256 and the wasmtime
//! version, and pre-instantiated ([`WasmBackend`]). Every call gets a fresh
//! `Store` with a memory limit and an epoch deadline taken from the call's
//! deadline, so a trap, a hang or a runaway allocation ends that call only:
//! the next call starts from a clean instance.
//!
//! What it must never do: give a component any import but `relay:rail/host`
//! (no WASI, no filesystem, no sockets, no keys). Components that import
//! anything else are refused at load.

mod backend;
mod bindings;
mod cache;
mod exports;

use std::{
    path::{Path, PathBuf},
    sync::{
        mpsc::{self, RecvTimeoutError},
        Arc,
    },
    thread::JoinHandle,
    time::Duration,
};

pub use self::backend::WasmBackend;
use self::bindings::{CallState, RailPlugin};
use serde::{Deserialize, Serialize};
use wasmtime::{component::Linker, Engine};

/// How often the epoch advances; deadlines are enforced to this granularity.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Default linear-memory limit of one call: 64 MiB.
pub const DEFAULT_MEMORY_LIMIT_BYTES: usize = 64 * 1024 * 1024;

/// Default number of instance slots in the pooling allocator.
pub const DEFAULT_POOL_SLOTS: u32 = 256;

/// Bytes of a pooled linear memory (and async stack) kept resident between
/// calls and reset in place; a rail call touches well under this.
const KEEP_RESIDENT_BYTES: usize = 1 << 20;
/// Bytes of a pooled table kept resident between calls: one page, so a
/// rail's tables (a page or less each) are reset with a `memset`, not a
/// page-table scan.
const KEEP_RESIDENT_TABLE_BYTES: usize = 4 << 10;

/// Core instances, memories and tables one rail component may hold (its
/// module plus the adapter shims `wit-component` adds).
const PER_COMPONENT: u32 = 4;

/// Settings of the wasm runtime.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WasmRuntimeConfig {
    /// Largest linear memory one call may grow to (default 64 MiB). Growth
    /// beyond it is refused and the call ends with a resource-limit error.
    pub memory_limit_bytes: usize,
    /// Directory for precompiled components (default none: compile on every
    /// load). Must be writable by the host only: its files are loaded as
    /// trusted machine code.
    pub cache_dir: Option<PathBuf>,
    /// Instance slots kept ready by wasmtime's pooling allocator (default
    /// 256): each call still gets a fresh, isolated instance, but in a
    /// pre-reserved slot whose linear memory is a copy-on-write image of
    /// the module's, so instantiation maps nothing new. At most this many
    /// wasm calls run at once; more wait for a slot within their deadline.
    /// `0` allocates every instance on demand instead.
    pub pool_slots: u32,
}

impl Default for WasmRuntimeConfig {
    fn default() -> Self {
        WasmRuntimeConfig {
            memory_limit_bytes: DEFAULT_MEMORY_LIMIT_BYTES,
            cache_dir: None,
            pool_slots: DEFAULT_POOL_SLOTS,
        }
    }
}

/// Why a component did not load.
#[derive(Debug, thiserror::Error)]
pub enum WasmLoadError {
    /// The wasmtime engine could not be configured.
    #[error("wasm engine: {0}")]
    Engine(String),
    /// The artifact could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// Artifact path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The artifact is not the one its manifest names.
    #[error("{path}: checksum mismatch: expected sha256 {expected}, artifact has {actual}")]
    Checksum {
        /// Artifact path.
        path: PathBuf,
        /// The sha256 the caller expected.
        expected: String,
        /// The sha256 of the file.
        actual: String,
    },
    /// The artifact is a core wasm module, not a component.
    #[error("{0}: a core wasm module, not a component (build it with plugins/build-wasm.sh)")]
    CoreModule(PathBuf),
    /// wasmtime refused the component.
    #[error("{path}: not a valid component: {reason}")]
    Compile {
        /// Artifact path.
        path: PathBuf,
        /// wasmtime's reason.
        reason: String,
    },
    /// The component imports something the host does not provide.
    #[error("{path}: imports {import:?}; a rail may import only {allowed:?}")]
    ForeignImport {
        /// Artifact path.
        path: PathBuf,
        /// The offending import.
        import: String,
        /// What the world allows.
        allowed: &'static [&'static str],
    },
    /// The component does not export the rail interface.
    #[error("{path}: does not export {export:?} (is it a relay:rail@1 component?)")]
    MissingExport {
        /// Artifact path.
        path: PathBuf,
        /// The missing export.
        export: &'static str,
    },
    /// Imports or exports exist but their types do not match the world.
    #[error("{path}: does not match the relay:rail world: {reason}")]
    Incompatible {
        /// Artifact path.
        path: PathBuf,
        /// wasmtime's type-check error.
        reason: String,
    },
}

/// The host's wasm runtime: one engine, its epoch ticker, and the linker
/// that provides `relay:rail/host`. Cheap to clone; the ticker stops when
/// the last clone (including those inside loaded backends) is dropped.
#[derive(Clone)]
pub struct WasmRuntime {
    shared: Arc<Shared>,
}

struct Shared {
    engine: Engine,
    linker: Linker<CallState>,
    config: WasmRuntimeConfig,
    /// One permit per pool slot (none without the pooling allocator).
    slots: Option<tokio::sync::Semaphore>,
    _ticker: EpochTicker,
}

impl std::fmt::Debug for WasmRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmRuntime")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl WasmRuntime {
    /// Builds the engine and linker and starts the epoch ticker.
    pub fn new(config: WasmRuntimeConfig) -> Result<Self, WasmLoadError> {
        let engine = Engine::new(&engine_config(&config))
            .map_err(|e| WasmLoadError::Engine(e.to_string()))?;
        let mut linker = Linker::new(&engine);
        RailPlugin::add_to_linker::<CallState, wasmtime::component::HasSelf<CallState>>(
            &mut linker,
            |state| state,
        )
        .map_err(|e| WasmLoadError::Engine(e.to_string()))?;
        let ticker = EpochTicker::start(engine.clone(), EPOCH_TICK);
        let slots = (config.pool_slots > 0)
            .then(|| tokio::sync::Semaphore::new(config.pool_slots as usize));
        Ok(WasmRuntime {
            shared: Arc::new(Shared {
                engine,
                linker,
                config,
                slots,
                _ticker: ticker,
            }),
        })
    }

    /// A free instance slot if one is free now (`Ok(None)` without the
    /// pooling allocator); `Err` when every slot is taken.
    fn try_slot(&self) -> Result<Option<tokio::sync::SemaphorePermit<'_>>, ()> {
        match &self.shared.slots {
            Some(s) => s.try_acquire().map(Some).map_err(drop),
            None => Ok(None),
        }
    }

    /// Waits for a free instance slot (none to wait for without the
    /// pooling allocator).
    async fn slot(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        match &self.shared.slots {
            Some(s) => s.acquire().await.ok(),
            None => None,
        }
    }

    /// Loads the component at `path`, whose sha256 must be `sha256` (hex).
    /// Same as [`WasmBackend::load`].
    pub fn load(&self, path: &Path, sha256: &str) -> Result<WasmBackend, WasmLoadError> {
        WasmBackend::load(self, path, sha256)
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &WasmRuntimeConfig {
        &self.shared.config
    }

    fn engine(&self) -> &Engine {
        &self.shared.engine
    }

    fn linker(&self) -> &Linker<CallState> {
        &self.shared.linker
    }
}

/// The engine's configuration: the component model, epoch interruption,
/// and, with `pool_slots`, the pooling allocator sized to them (memories
/// reserved at the per-call limit, copy-on-write images on).
fn engine_config(config: &WasmRuntimeConfig) -> wasmtime::Config {
    let mut c = wasmtime::Config::new();
    c.wasm_component_model(true).epoch_interruption(true);
    if config.pool_slots > 0 {
        let n = config.pool_slots;
        let mut pool = wasmtime::PoolingAllocationConfig::default();
        pool.total_component_instances(n)
            .total_core_instances(n * PER_COMPONENT)
            .total_memories(n * PER_COMPONENT)
            .total_tables(n * PER_COMPONENT)
            .total_stacks(n)
            .max_memory_size(config.memory_limit_bytes)
            // Reset a finished call's slot in place (memset, or with the
            // kernel's PAGEMAP_SCAN only the pages it dirtied, copied back
            // from the image) instead of `madvise`, so the next call's
            // instance takes no page faults on what the last one touched.
            .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
            .table_keep_resident(KEEP_RESIDENT_TABLE_BYTES)
            .async_stack_keep_resident(KEEP_RESIDENT_BYTES)
            .pagemap_scan(wasmtime::Enabled::Auto);
        c.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool))
            .memory_reservation(config.memory_limit_bytes as u64)
            // Bounds and traps are checked in the compiled code rather than
            // by guard pages and signals: a slot's memory then keeps the
            // pages a call grew into read/write for the next call (reset
            // in place like the rest), where guard pages would cost two
            // `mprotect`s per call — the guest's allocator grows memory
            // on every fresh instance — each with a TLB shootdown.
            .memory_guard_size(0)
            .signals_based_traps(false)
            .memory_init_cow(true);
    }
    c
}

/// A thread that advances the engine's epoch every tick until dropped.
struct EpochTicker {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine, tick: Duration) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("relay-wasm-epoch".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(tick) {
                    engine.increment_epoch();
                }
            })
            .map_err(|e| tracing::error!(error = %e, "epoch ticker did not start; wasm deadlines rely on timeouts alone"))
            .ok();
        EpochTicker {
            stop: Some(stop),
            thread,
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        // Disconnecting the channel ends the loop at its next wake-up.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
