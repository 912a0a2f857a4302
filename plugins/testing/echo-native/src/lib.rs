//! The echo test rail as a native plugin.

relay_plugin_native::export_native_rail!(relay_rail_echo::EchoRail, relay_rail_echo::EchoRail);
