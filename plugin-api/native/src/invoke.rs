//! Host side: calling a loaded [`RailModuleRef`] with typed arguments.
//!
//! These are thin, blocking wrappers: the caller runs them on a thread it
//! can afford to lose (a native call cannot be interrupted) and enforces the
//! deadline from outside.

use abi_stable::std_types::{RSlice, RStr, RVec};
use relay_plugin_api::Host;

use crate::{CallFailure, FailureKind, HostAdapter, RailModuleRef};

/// Calls the plugin's `manifest` entry; `Ok` is the JSON of a `RailManifest`.
pub fn call_manifest(module: RailModuleRef) -> Result<String, CallFailure> {
    (module.manifest())()
        .into_result()
        .map(|json| json.into_string())
}

/// Calls one rail method (see [`crate::method`]) with its JSON request,
/// lending `host` for the length of the call; `Ok` is the reply's JSON.
pub fn call_method(
    module: RailModuleRef,
    method: &str,
    request: &str,
    host: &dyn Host,
) -> Result<String, CallFailure> {
    let adapter = HostAdapter(host);
    (module.call())(
        RStr::from_str(method),
        RStr::from_str(request),
        adapter.as_callbacks(),
    )
    .into_result()
    .map(|json| json.into_string())
}

/// A packed reply: MessagePack ([`crate::wire`]) in the plugin's memory,
/// read in place and freed by the plugin's allocator when dropped.
pub type PackedReply = RVec<u8>;

/// Whether the plugin has the packed entry (one built before it existed
/// has only [`call_method`]'s).
pub fn has_packed_entry(module: RailModuleRef) -> bool {
    module.call_packed().is_some()
}

/// Calls one rail method on the packed wire with its MessagePack request
/// ([`crate::wire::to_packed`]); a [`FailureKind::Contract`] failure when
/// the plugin has no packed entry (see [`has_packed_entry`]).
pub fn call_method_packed(
    module: RailModuleRef,
    method: &str,
    request: &[u8],
    host: &dyn Host,
) -> Result<PackedReply, CallFailure> {
    let Some(entry) = module.call_packed() else {
        return Err(CallFailure::new(
            FailureKind::Contract,
            "the plugin has no packed entry",
        ));
    };
    let adapter = HostAdapter(host);
    entry(
        RStr::from_str(method),
        RSlice::from_slice(request),
        adapter.as_callbacks(),
    )
    .into_result()
}
