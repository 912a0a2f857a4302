//! The native packaging shell: built once per rail with that rail's cargo
//! feature, it exports the rail as an abi_stable plugin. Which rails ship
//! natively is decided in `plugins/plugins.toml`, not here.

#[cfg(feature = "floatlane")]
relay_plugin_native::export_native_rail!(
    relay_rail_floatlane::FloatLane,
    relay_rail_floatlane::FloatLane
);
#[cfg(feature = "lifi")]
relay_plugin_native::export_native_rail!(relay_rail_lifi::Lifi, relay_rail_lifi::Lifi);
#[cfg(feature = "squid")]
relay_plugin_native::export_native_rail!(relay_rail_squid::Squid, relay_rail_squid::Squid);
#[cfg(feature = "bungee")]
relay_plugin_native::export_native_rail!(relay_rail_bungee::Bungee, relay_rail_bungee::Bungee);
#[cfg(feature = "cctp")]
relay_plugin_native::export_native_rail!(relay_rail_cctp::Cctp, relay_rail_cctp::Cctp);
#[cfg(feature = "stablebridge")]
relay_plugin_native::export_native_rail!(
    relay_rail_stablebridge::StableBridge,
    relay_rail_stablebridge::StableBridge
);
#[cfg(feature = "btc")]
relay_plugin_native::export_native_rail!(relay_rail_btc::Btc, relay_rail_btc::Btc);
#[cfg(feature = "sui")]
relay_plugin_native::export_native_rail!(relay_rail_sui::Sui, relay_rail_sui::Sui);
#[cfg(feature = "tron")]
relay_plugin_native::export_native_rail!(
    relay_rail_tron::TronComparator,
    relay_rail_tron::TronComparator
);
