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
    std_types::{RStr, RString},
};
use relay_plugin_api::{Host, Rail};
use serde::{de::DeserializeOwned, Serialize};

use crate::{
    method, CallFailure, CallResult, FailureKind, HostCallbacksRef, NativeHost, RailModule,
    RailModuleRef,
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
    }
    .leak_into_prefix()
}

extern "C" fn manifest_entry<S: RailSource>() -> CallResult {
    guarded(|| to_json(&S::rail().manifest()))
}

extern "C" fn call_entry<S: RailSource>(
    method: RStr<'_>,
    request: RStr<'_>,
    host: HostCallbacksRef<'_>,
) -> CallResult {
    guarded(|| {
        dispatch(
            S::rail(),
            method.as_str(),
            request.as_str(),
            &NativeHost(host),
        )
    })
}

/// Runs `f`, turning a panic into [`FailureKind::Panicked`] whose message
/// is the payload and where it was raised.
fn guarded(f: impl FnOnce() -> Result<String, CallFailure>) -> CallResult {
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
        .map(RString::from)
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

fn dispatch(
    rail: &dyn Rail,
    name: &str,
    request: &str,
    host: &dyn Host,
) -> Result<String, CallFailure> {
    match name {
        method::QUOTE => reply(rail.quote(host, &parse(request)?)),
        method::PREPARE => reply(rail.prepare(host, &parse(request)?)),
        method::TRACK => reply(rail.track(host, &parse(request)?)),
        method::HEALTH => to_json(&rail.health(host)),
        other => Err(CallFailure::new(
            FailureKind::Contract,
            format!("unknown method {other:?}"),
        )),
    }
}

fn parse<T: DeserializeOwned>(request: &str) -> Result<T, CallFailure> {
    serde_json::from_str(request)
        .map_err(|e| CallFailure::new(FailureKind::Contract, format!("malformed request: {e}")))
}

fn reply<T: Serialize>(
    result: Result<T, relay_plugin_api::RailError>,
) -> Result<String, CallFailure> {
    match result {
        Ok(value) => to_json(&value),
        Err(err) => Err(CallFailure::new(FailureKind::Rail, to_json(&err)?)),
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<String, CallFailure> {
    crate::to_json(value)
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
        let result = guarded(|| panic!("boom {}", 7)).into_result();
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
