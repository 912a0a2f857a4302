//! `native-echo` declaring contract version 9.0.0, which no host of contract
//! 1.x supports: the host must refuse to load it, naming the version.
//!
//! It compiles the rail's source itself rather than linking the
//! `native_echo` library, whose own root-module export would clash with
//! this one.

#[path = "../src/rail.rs"]
mod rail;

relay_plugin_native::export_native_rail!(
    rail::EchoRail,
    rail::EchoRail,
    contract_version = "9.0.0"
);
