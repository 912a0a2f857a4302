//! The wasm packaging shell: built once per rail with that rail's cargo
//! feature, it exports the rail as a `relay:rail` component. Which rails ship
//! as wasm is decided in `plugins/plugins.toml`, not here.

#[cfg(feature = "floatlane")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_floatlane::FloatLane);
