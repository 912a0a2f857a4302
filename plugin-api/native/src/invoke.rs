//! Host side: calling a loaded [`RailModuleRef`] with typed arguments.
//!
//! These are thin, blocking wrappers: the caller runs them on a thread it
//! can afford to lose (a native call cannot be interrupted) and enforces the
//! deadline from outside.

use abi_stable::std_types::RStr;
use relay_plugin_api::Host;

use crate::{CallFailure, HostAdapter, RailModuleRef};

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
