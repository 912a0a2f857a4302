//! The template rail as a native (abi_stable) plugin: one line.

relay_plugin_native::export_native_rail!(
    relay_rail_template::TemplateRail,
    relay_rail_template::TemplateRail
);
