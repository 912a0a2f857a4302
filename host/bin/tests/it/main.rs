//! The host's integration tests, one binary (every extra test binary re-links
//! wasmtime, alloy and sqlx): real anvil chains, SQLite and Postgres, the real
//! plugin loader, the real HTTP server on an ephemeral port.

mod api_discovery;
mod api_execute;
mod api_mesh;
mod api_openapi;
mod api_quote;
mod api_rails;
mod api_routing;
mod api_track;
mod chain_nonce;
mod chain_rpc;
mod chain_sender;
mod common;
mod concierge;
mod containment;
mod crash_resume;
mod dest_watch;
mod durable;
mod edge;
mod keys;
mod mcp;
mod native_backend;
mod operator_auth;
mod operator_cli;
mod permit2_verify;
mod pricefeeds;
mod primitives;
mod rail_scaffold;
mod relay_up;
mod router;
mod schemathesis;
mod session;
mod store;
mod wasm_backend;
mod webhooks;
