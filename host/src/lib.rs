//! The relay host: loads rails as plugins, lends them capabilities, and
//! serves the HTTP API.
//!
//! Layout follows the architecture: [`runtime`] loads and contains plugins of
//! either packaging behind one async trait; [`capabilities`] is the broker
//! that is a rail's only way to reach the world; [`engine`] derives the mesh
//! from the loaded rails; [`api`] is the HTTP surface; [`store`] persists.
//! Keys live only in this crate and never cross into a plugin.

pub mod api;
pub mod capabilities;
pub mod chain;
pub mod chains;
pub mod cli;
pub mod codes;
pub mod config;
pub mod devnet;
pub mod engine;
pub mod execution;
pub mod operator;
pub mod runtime;
pub mod server;
pub mod store;
