//! The rail interface's functions, found by index once at load and called
//! on each fresh instance without a lookup by name.
//!
//! The generated bindings (`RailPlugin::instantiate`) look up and
//! type-check all five of the interface's functions on every instance; a
//! call uses one. Here the first call of a component (its manifest, read
//! at load) type-checks all five, and every later call takes the function
//! it calls by the index found at load, unchecked: every instance comes
//! from the same pre-instantiated component, so its functions have the
//! types the first check saw.

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

/// The functions of the rail interface on one instance: type-checked
/// against the world when they are taken, until the component's first
/// check ([`RailFuncs::check_all`]) has passed.
pub(super) struct RailFuncs<'s> {
    store: &'s mut Store<CallState>,
    instance: &'s Instance,
    at: &'s RailExports,
    /// Whether all five of this component's functions have passed
    /// [`RailFuncs::check_all`] on an earlier instance.
    checked: bool,
}

impl<'s> RailFuncs<'s> {
    /// The functions of `instance` (of a component whose indices are `at`);
    /// `checked` when an instance of the same pre-instantiated component
    /// has passed [`RailFuncs::check_all`].
    pub(super) fn new(
        store: &'s mut Store<CallState>,
        instance: &'s Instance,
        at: &'s RailExports,
        checked: bool,
    ) -> Self {
        RailFuncs {
            store,
            instance,
            at,
            checked,
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

    /// Type-checks all five.
    pub(super) fn check_all(&mut self) -> wasmtime::Result<()> {
        self.checked = false;
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
        if !self.checked {
            return self
                .instance
                .get_typed_func::<P, R>(&mut *self.store, index);
        }
        let func = self
            .instance
            .get_func(&mut *self.store, index)
            .ok_or_else(|| wasmtime::Error::msg("no function at the rail export's index"))?;
        // SAFETY: `checked` says that this function, in an instance of the
        // same pre-instantiated component, passed `check_all` with exactly
        // these parameter and result types; every instance of a component
        // has the same function types (wasmtime's generated bindings rely
        // on the same to call through `new_unchecked`).
        Ok(unsafe { TypedFunc::new_unchecked(func) })
    }
}
