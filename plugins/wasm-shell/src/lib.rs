//! The wasm packaging shell: built once per rail with that rail's cargo
//! feature, it exports the rail as a `relay:rail` component. Which rails ship
//! as wasm is decided in `plugins/plugins.toml`, not here.

#[cfg(feature = "floatlane")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_floatlane::FloatLane);
#[cfg(feature = "lifi")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_lifi::Lifi);
#[cfg(feature = "squid")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_squid::Squid);
#[cfg(feature = "bungee")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_bungee::Bungee);
#[cfg(feature = "cctp")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_cctp::Cctp);
#[cfg(feature = "stablebridge")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_stablebridge::StableBridge);
#[cfg(feature = "btc")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_btc::Btc);
#[cfg(feature = "sui")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_sui::Sui);
#[cfg(feature = "tron")]
relay_plugin_wasm::export_wasm_rail!(relay_rail_tron::TronComparator);
