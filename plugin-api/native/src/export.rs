//! Plugin side: the exported entries behind [`export_native_rail!`].
//!
//! Every entry runs the rail under `catch_unwind`: `abi_stable` aborts the
//! process when a panic unwinds across an `extern "C"` frame, so a panic is
//! turned into a [`FailureKind::Panicked`] reply here instead, carrying the
//! panic message and location (a chained panic hook keeps guarded panics
//! off the host's stderr).
//!
//! [`export_native_rail!`]: crate::export_native_rail

use std::{
    any::Any,
    cell::Cell,
    panic::{catch_unwind, AssertUnwindSafe},
    sync::Once,
};

use abi_stable::{
    library::{CheckTypeLayout, LibHeader, RootModuleResult},
    prefix_type::PrefixTypeTrait,
    std_types::{RSlice, RStr, RString, RVec},
};
use relay_plugin_api::{Host, Rail};
use serde::{de::DeserializeOwned, Serialize};

use crate::{
    method, wire, CallFailure, CallResult, FailureKind, HostCallbacksRef, NativeHost, PackedResult,
    RailModule, RailModuleRef,
};

/// The symbol under which `abi_stable` looks up a library's root module
/// (`abi_stable::library::ROOT_MODULE_LOADER_NAME`); [`export_native_rail!`]
/// spells it out so plugin crates need no `abi_stable` dependency.
///
/// [`export_native_rail!`]: crate::export_native_rail
pub const ROOT_MODULE_SYMBOL: &str = crate::__root_module_symbol!();

/// Items the export macro expands to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use abi_stable::library::LibHeader;
    pub use relay_plugin_api::{Rail, CONTRACT_VERSION};

    pub use super::{lib_header, RailSource};
}

/// The rail a plugin exports, as the export macro defines it.
#[doc(hidden)]
pub trait RailSource: 'static {
    /// The contract version the plugin declares.
    const CONTRACT_VERSION: &'static str;

    /// The rail, built on first use.
    fn rail() -> &'static dyn Rail;
}

/// The library header exported under [`ROOT_MODULE_SYMBOL`].
#[doc(hidden)]
pub const fn lib_header<S: RailSource>() -> LibHeader {
    // SAFETY: `erased_module::<S>` returns the erased prefix of a
    // `RailModuleRef`, which is the module type named here.
    unsafe {
        LibHeader::from_constructor::<RailModuleRef>(erased_module::<S>, CheckTypeLayout::Yes)
    }
}

extern "C" fn erased_module<S: RailSource>() -> RootModuleResult {
    abi_stable::library::__call_root_module_loader(module::<S>)
}

fn module<S: RailSource>() -> RailModuleRef {
    RailModule {
        contract_version: RStr::from_str(S::CONTRACT_VERSION),
        manifest: manifest_entry::<S>,
        call: call_entry::<S>,
        call_packed: call_packed_entry::<S>,
    }
    .leak_into_prefix()
}

extern "C" fn manifest_entry<S: RailSource>() -> CallResult {
    guarded(|| encode::<Json, _>(&S::rail().manifest())).map(RString::from)
}

extern "C" fn call_entry<S: RailSource>(
    method: RStr<'_>,
    request: RStr<'_>,
    host: HostCallbacksRef<'_>,
) -> CallResult {
    let request = request.as_str().as_bytes();
    guarded(|| dispatch::<Json>(S::rail(), method.as_str(), request, &NativeHost(host)))
        .map(RString::from)
}

extern "C" fn call_packed_entry<S: RailSource>(
    method: RStr<'_>,
    request: RSlice<'_, u8>,
    host: HostCallbacksRef<'_>,
) -> PackedResult {
    let request = request.as_slice();
    guarded(|| dispatch::<Packed>(S::rail(), method.as_str(), request, &NativeHost(host)))
        .map(RVec::from)
}

/// Runs `f`, turning a panic into [`FailureKind::Panicked`] whose message
/// is the payload and where it was raised.
fn guarded<R>(
    f: impl FnOnce() -> Result<R, CallFailure>,
) -> abi_stable::std_types::RResult<R, CallFailure> {
    install_panic_hook();
    IN_GUARDED_CALL.with(|flag| flag.set(true));
    let outcome = catch_unwind(AssertUnwindSafe(f));
    IN_GUARDED_CALL.with(|flag| flag.set(false));
    outcome
        .unwrap_or_else(|payload| {
            let mut message = panic_message(&*payload);
            if let Some(at) = PANIC_LOCATION.with(|l| l.take()) {
                message = format!("{message} (at {at})");
            }
            Err(CallFailure::new(FailureKind::Panicked, message))
        })
        .into()
}

thread_local! {
    /// Whether this thread is inside [`guarded`].
    static IN_GUARDED_CALL: Cell<bool> = const { Cell::new(false) };
    /// Where the last guarded panic on this thread was raised.
    static PANIC_LOCATION: Cell<Option<String>> = const { Cell::new(None) };
}

/// Chains a panic hook (once per copy of `std`, i.e. per plugin) that
/// records the location of a panic inside a guarded call instead of
/// printing it: the host reports it as a typed crash. Panics elsewhere go to
/// the previous hook unchanged.
fn install_panic_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_GUARDED_CALL.with(Cell::get) {
                PANIC_LOCATION.with(|l| l.set(info.location().map(|at| at.to_string())));
            } else {
                previous(info);
            }
        }));
    });
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_string())
}

/// How an entry's request is read and its reply written.
trait Wire {
    /// The reply's encoding.
    type Reply;
    fn decode<T: DeserializeOwned>(request: &[u8]) -> Result<T, String>;
    fn encode<T: Serialize>(value: &T) -> Result<Self::Reply, String>;
}

/// The original entry's wire.
struct Json;

impl Wire for Json {
    type Reply = String;
    fn decode<T: DeserializeOwned>(request: &[u8]) -> Result<T, String> {
        serde_json::from_slice(request).map_err(|e| e.to_string())
    }
    fn encode<T: Serialize>(value: &T) -> Result<String, String> {
        wire::to_json(value).map_err(|e| e.to_string())
    }
}

/// The packed entry's wire ([`wire`]).
struct Packed;

impl Wire for Packed {
    type Reply = Vec<u8>;
    fn decode<T: DeserializeOwned>(request: &[u8]) -> Result<T, String> {
        wire::from_packed(request).map_err(|e| e.to_string())
    }
    fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
        wire::to_packed(value).map_err(|e| e.to_string())
    }
}

fn dispatch<W: Wire>(
    rail: &dyn Rail,
    name: &str,
    request: &[u8],
    host: &dyn Host,
) -> Result<W::Reply, CallFailure> {
    match name {
        method::QUOTE => reply::<W, _>(rail.quote(host, &parse::<W, _>(request)?)),
        method::PREPARE => reply::<W, _>(rail.prepare(host, &parse::<W, _>(request)?)),
        method::TRACK => reply::<W, _>(rail.track(host, &parse::<W, _>(request)?)),
        method::HEALTH => encode::<W, _>(&rail.health(host)),
        other => Err(CallFailure::new(
            FailureKind::Contract,
            format!("unknown method {other:?}"),
        )),
    }
}

fn parse<W: Wire, T: DeserializeOwned>(request: &[u8]) -> Result<T, CallFailure> {
    W::decode(request)
        .map_err(|e| CallFailure::new(FailureKind::Contract, format!("malformed request: {e}")))
}

/// The rail's answer; a typed rail error travels as the JSON of a
/// `RailError` on either wire.
fn reply<W: Wire, T: Serialize>(
    result: Result<T, relay_plugin_api::RailError>,
) -> Result<W::Reply, CallFailure> {
    match result {
        Ok(value) => encode::<W, _>(&value),
        Err(err) => Err(CallFailure::new(
            FailureKind::Rail,
            encode::<Json, _>(&err)?,
        )),
    }
}

fn encode<W: Wire, T: Serialize>(value: &T) -> Result<W::Reply, CallFailure> {
    W::encode(value)
        .map_err(|e| CallFailure::new(FailureKind::Contract, format!("unserialisable reply: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_module_symbol_is_the_one_abi_stable_loads() {
        assert_eq!(
            ROOT_MODULE_SYMBOL,
            abi_stable::library::ROOT_MODULE_LOADER_NAME
        );
    }

    #[test]
    fn panics_become_panicked_failures() {
        let result = guarded::<String>(|| panic!("boom {}", 7)).into_result();
        let failure = result.unwrap_err();
        assert_eq!(failure.kind, FailureKind::Panicked);
        assert!(
            failure.message.starts_with("boom 7 (at "),
            "{}",
            failure.message
        );
        assert!(failure.message.contains("export.rs"), "{}", failure.message);
    }
}
