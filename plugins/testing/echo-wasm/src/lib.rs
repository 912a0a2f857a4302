//! The echo test rail as a wasm component of the `relay:rail` world.
//! Build: `plugins/build-wasm.sh relay-rail-echo-wasm echo.wasm`.

relay_plugin_wasm::export_wasm_rail!(relay_rail_echo::EchoRail);
