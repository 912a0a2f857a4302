//! Plugin loading and containment.
//!
//! [`backend`] is the seam both packagings implement; [`native`] loads
//! `abi_stable` cdylibs, [`wasm`] runs components under wasmtime. The engine
//! sees neither: it talks to [`LoadedRail`]s ([`supervisor`]), which add
//! deadlines, quarantine with back-off and tracing around every call, held
//! in a hot-reloadable [`rails::RailSet`].

pub mod backend;
pub mod native;
pub mod package;
pub mod rails;
pub mod supervisor;
pub mod wasm;

pub use backend::{BackendError, Packaging, PluginBackend, RailCall, RailReply};
pub use supervisor::{CallError, CallLimits, LoadedRail};
