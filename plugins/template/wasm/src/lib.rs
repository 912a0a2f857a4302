//! The template rail as a wasm component of the `relay:rail` world: one line.

relay_plugin_wasm::export_wasm_rail!(relay_rail_template::TemplateRail);
