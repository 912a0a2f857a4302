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

use super::bindings::{relay::rail::types as wit, CallState};

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

/// What a rail function that can fail returns: `result<T, rail-error>`.
pub(super) type Answer<T> = (Result<T, wit::RailError>,);

/// The functions of the rail interface on one instance, each type-checked
/// against the world when it is taken.
pub(super) struct RailFuncs<'s> {
    store: &'s mut Store<CallState>,
    instance: &'s Instance,
    at: &'s RailExports,
}

impl<'s> RailFuncs<'s> {
    /// The functions of `instance` (of a component whose indices are `at`).
    pub(super) fn new(
        store: &'s mut Store<CallState>,
        instance: &'s Instance,
        at: &'s RailExports,
    ) -> Self {
        RailFuncs {
            store,
            instance,
            at,
        }
    }

    /// `manifest: func() -> rail-manifest`.
    pub(super) fn manifest(&mut self) -> wasmtime::Result<TypedFunc<(), (wit::RailManifest,)>> {
        self.typed(&self.at.manifest)
    }

    /// `health: func() -> rail-health`.
    pub(super) fn health(&mut self) -> wasmtime::Result<TypedFunc<(), (wit::RailHealth,)>> {
        self.typed(&self.at.health)
    }

    /// `quote: func(req) -> result<rail-quote, rail-error>`.
    pub(super) fn quote<'r>(
        &mut self,
    ) -> wasmtime::Result<TypedFunc<(&'r wit::QuoteRequest,), Answer<wit::RailQuote>>> {
        self.typed(&self.at.quote)
    }

    /// `prepare: func(req) -> result<execution-plan, rail-error>`.
    pub(super) fn prepare<'r>(
        &mut self,
    ) -> wasmtime::Result<TypedFunc<(&'r wit::PrepareRequest,), Answer<wit::ExecutionPlan>>> {
        self.typed(&self.at.prepare)
    }

    /// `track: func(req) -> result<track-status, rail-error>`.
    pub(super) fn track<'r>(
        &mut self,
    ) -> wasmtime::Result<TypedFunc<(&'r wit::TrackRequest,), Answer<wit::TrackStatus>>> {
        self.typed(&self.at.track)
    }

    /// Type-checks all five (a call checks only the one it makes).
    pub(super) fn check_all(&mut self) -> wasmtime::Result<()> {
        self.manifest()?;
        self.health()?;
        self.quote()?;
        self.prepare()?;
        self.track()?;
        Ok(())
    }

    /// The store the functions are called in.
    pub(super) fn store(&mut self) -> &mut Store<CallState> {
        self.store
    }

    fn typed<P, R>(&mut self, index: &ComponentExportIndex) -> wasmtime::Result<TypedFunc<P, R>>
    where
        P: ComponentNamedList + Lower,
        R: ComponentNamedList + Lift,
    {
        self.instance
            .get_typed_func::<P, R>(&mut *self.store, index)
    }
}
