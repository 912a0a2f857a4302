//! The template rail as a wasm component of the `relay:rail` world: one line.

use relay_rail_template::TemplateRail;

relay_plugin_wasm::export_wasm_rail!(TemplateRail);
