//! Native packaging of a relay rail: the `abi_stable` root module that a rail
//! cdylib exports and the host loads, shared by both sides.
//!
//! A packaging crate becomes a native plugin with one line:
//!
//! ```ignore
//! relay_plugin_native::export_native_rail!(my_rail::MyRail, my_rail::MyRail::new());
//! ```
//!
//! # What crosses the boundary
//!
//! The root module ([`RailModule`]) carries the contract version the plugin
//! was built against (checked by the host before any call; `abi_stable`
//! checks the module's layout when the library is loaded), a `manifest`
//! entry (JSON) and one generic entry per wire for the rail methods:
//! `call_packed(method, request, host)`, whose requests and replies are the
//! serde MessagePack of the [`relay_plugin_api`] types ([`wire`]), and the
//! original `call`, the same in JSON. The host uses `call_packed` when the
//! plugin has it and `call` for a plugin built before it existed (an
//! appended prefix field: such a plugin still loads). One generic entry
//! instead of one per method keeps the binary interface frozen while the
//! contract grows by minor versions: a new method is a new name, not a new
//! prefix field, and an older plugin answers it with a typed
//! [`FailureKind::Contract`] instead of a layout mismatch. The packed wire
//! costs a microsecond or two per call with a 1 KiB request, about half of
//! what JSON cost (no escaping and scanning of strings).
//!
//! The host's capabilities come back the other way as a `#[sabi_trait]`
//! object ([`HostCallbacks`]) that the plugin side wraps into a
//! [`relay_plugin_api::Host`], so the rail code is identical in every
//! packaging.
//!
//! # What it must never do
//!
//! Let a panic unwind across the boundary: every exported function runs
//! under [`std::panic::catch_unwind`] and reports a panic as
//! [`FailureKind::Panicked`]; the host callbacks do the same on the host
//! side. Plugins must therefore be built with `panic = "unwind"` (the
//! default). Keys never cross: the callbacks expose only the capabilities of
//! [`relay_plugin_api::Host`].

mod callbacks;
mod export;
mod invoke;
pub mod wire;

use abi_stable::{
    declare_root_module_statics,
    library::RootModule,
    package_version_strings,
    sabi_types::VersionStrings,
    std_types::{RResult, RSlice, RStr, RString, RVec},
    StableAbi,
};

pub use callbacks::{
    level_code, level_from_code, HostAdapter, HostCallbacks, HostCallbacksRef, NativeHost,
};
pub use invoke::{call_manifest, call_method, call_method_packed, has_packed_entry, PackedReply};
pub use wire::to_json;

#[doc(hidden)]
pub use export::{__private, ROOT_MODULE_SYMBOL};

/// Re-exported so plugin crates need no direct `abi_stable` dependency.
pub use abi_stable;

/// Methods a native rail answers through [`RailModule::call`], by wire name.
pub mod method {
    /// `Rail::quote`; request `QuoteRequest`, reply `RailQuote`.
    pub const QUOTE: &str = "quote";
    /// `Rail::prepare`; request `PrepareRequest`, reply `ExecutionPlan`.
    pub const PREPARE: &str = "prepare";
    /// `Rail::track`; request `TrackRequest`, reply `TrackStatus`.
    pub const TRACK: &str = "track";
    /// `Rail::health`; request `null`, reply `RailHealth`.
    pub const HEALTH: &str = "health";
}

/// Why an exported entry did not return a reply.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The rail returned a typed error; the message is the JSON of a
    /// [`relay_plugin_api::RailError`].
    Rail,
    /// The rail panicked; the message is the panic payload.
    Panicked,
    /// The request or reply broke the contract (unknown method, a message
    /// that does not decode).
    Contract,
}

/// The error half of every exported entry.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct CallFailure {
    /// What went wrong.
    pub kind: FailureKind,
    /// Detail; see [`FailureKind`] for its format.
    pub message: RString,
}

impl CallFailure {
    /// A failure of `kind`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        CallFailure {
            kind,
            message: RString::from(message.into()),
        }
    }
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for CallFailure {}

/// What a JSON entry returns: the reply JSON or a [`CallFailure`].
pub type CallResult = RResult<RString, CallFailure>;

/// What the packed entry returns: the reply's MessagePack ([`wire`]) or a
/// [`CallFailure`].
pub type PackedResult = RResult<RVec<u8>, CallFailure>;

/// The root module a native rail exports.
///
/// Fields may only be appended (after `call`, with `#[sabi(last_prefix_field)]`
/// staying where it is) in minor contract versions; `abi_stable` accepts a
/// longer prefix from a newer plugin and reports a layout mismatch for
/// anything else.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = RailModuleRef, prefix_fields = RailModulePrefix)))]
#[sabi(missing_field(panic))]
pub struct RailModule {
    /// The relay contract version the plugin was built against (semver).
    pub contract_version: RStr<'static>,
    /// `Rail::manifest`: the JSON of a `RailManifest`. Never uses the host.
    pub manifest: extern "C" fn() -> CallResult,
    /// One rail method (see [`method`]) with its JSON request, using `host`
    /// for capabilities for the duration of the call.
    #[sabi(last_prefix_field)]
    pub call: extern "C" fn(
        method: RStr<'_>,
        request: RStr<'_>,
        host: HostCallbacksRef<'_>,
    ) -> CallResult,
    /// `call` on the packed wire: the request and the reply as MessagePack
    /// ([`wire`]). Absent from a plugin built before it was added; the host
    /// then uses `call`.
    #[sabi(missing_field(option))]
    pub call_packed: extern "C" fn(
        method: RStr<'_>,
        request: RSlice<'_, u8>,
        host: HostCallbacksRef<'_>,
    ) -> PackedResult,
}

impl RootModule for RailModuleRef {
    declare_root_module_statics! {RailModuleRef}

    const BASE_NAME: &'static str = "relay_rail";
    const NAME: &'static str = "relay rail plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// The symbol `abi_stable`'s loader looks up (`ROOT_MODULE_LOADER_NAME`),
/// as a literal for `export_name`.
#[doc(hidden)]
#[macro_export]
macro_rules! __root_module_symbol {
    () => {
        "_1as_0lib_1header_0root_bmodule_bloader"
    };
}

/// Exports a rail from a cdylib as a relay native plugin.
///
/// `$rail` is the rail type, `$ctor` an expression building it (evaluated
/// once, on first use, inside the panic guard). The optional
/// `contract_version = "x.y.z"` overrides the contract version the plugin
/// declares; it exists for tests of the host's version check.
///
/// ```ignore
/// relay_plugin_native::export_native_rail!(floatlane::FloatLane, floatlane::FloatLane::default());
/// ```
#[macro_export]
macro_rules! export_native_rail {
    ($rail:ty, $ctor:expr $(,)?) => {
        $crate::export_native_rail!(
            $rail,
            $ctor,
            contract_version = $crate::__private::CONTRACT_VERSION
        );
    };
    ($rail:ty, $ctor:expr, contract_version = $version:expr $(,)?) => {
        const _: () = {
            struct RelayNativeRail;

            impl $crate::__private::RailSource for RelayNativeRail {
                const CONTRACT_VERSION: &'static str = $version;

                fn rail() -> &'static dyn $crate::__private::Rail {
                    static RAIL: ::std::sync::OnceLock<$rail> = ::std::sync::OnceLock::new();
                    RAIL.get_or_init(|| $ctor)
                }
            }

            #[unsafe(export_name = $crate::__root_module_symbol!())]
            pub static RELAY_RAIL_ROOT_MODULE: $crate::__private::LibHeader =
                $crate::__private::lib_header::<RelayNativeRail>();
        };
    };
}
