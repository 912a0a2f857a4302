//! The rail interface's functions, found by index once at load and called
//! on each fresh instance without a lookup by name.
//!
//! The generated bindings (`RailPlugin::instantiate`) look up and
//! type-check all five of the interface's functions on every instance; a
//! call uses one. Here a call type-checks only the function it calls,
//! found by the index taken at load.

use wasmtime::{
    component::{
        Component, ComponentExportIndex, ComponentNamedList, Instance, Lift, Lower, TypedFunc,
    },
    Store,
};

use super::bindings::CallState;

/// The index of each function of the rail interface in one component.
pub(super) struct RailExports {
    /// `manifest()`.
    pub manifest: ComponentExportIndex,
    /// `health()`.
    pub health: ComponentExportIndex,
    /// `quote(req)`.
    pub quote: ComponentExportIndex,
    /// `prepare(req)`.
    pub prepare: ComponentExportIndex,
    /// `track(req)`.
    pub track: ComponentExportIndex,
}

impl RailExports {
    /// Finds the functions of `interface` (an exported instance) in
    /// `component`; the reason when one is missing.
    pub(super) fn find(component: &Component, interface: &str) -> Result<Self, String> {
        let iface = component
            .get_export_index(None, interface)
            .ok_or_else(|| format!("does not export {interface:?}"))?;
        let func = |name: &str| {
            component
                .get_export_index(Some(&iface), name)
                .ok_or_else(|| format!("{interface} has no function {name:?}"))
        };
        Ok(RailExports {
            manifest: func("manifest")?,
            health: func("health")?,
            quote: func("quote")?,
            prepare: func("prepare")?,
            track: func("track")?,
        })
    }
}

/// The function at `index` of `instance`, type-checked as taking `P` and
/// returning `R`.
pub(super) fn typed<P, R>(
    store: &mut Store<CallState>,
    instance: &Instance,
    index: &ComponentExportIndex,
) -> wasmtime::Result<TypedFunc<P, R>>
where
    P: ComponentNamedList + Lower,
    R: ComponentNamedList + Lift,
{
    instance.get_typed_func::<P, R>(store, index)
}
