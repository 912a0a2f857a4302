//! The template rail as a native (abi_stable) plugin: one line.

use relay_rail_template::TemplateRail;

relay_plugin_native::export_native_rail!(TemplateRail, TemplateRail);
