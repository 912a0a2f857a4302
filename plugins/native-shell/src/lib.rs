//! The native packaging shell: built once per rail with that rail's cargo
//! feature, it exports the rail as an abi_stable plugin. Which rails ship
//! natively is decided in `plugins/plugins.toml`, not here.

#[cfg(feature = "floatlane")]
relay_plugin_native::export_native_rail!(
    relay_rail_floatlane::FloatLane,
    relay_rail_floatlane::FloatLane
);
