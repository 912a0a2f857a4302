//! relay-app: the application services, built once by the `relay` binary
//! and shared by every adapter — the HTTP API, the MCP endpoint, the
//! dashboard and the background jobs hold the same handles, so there is
//! one execute service (one set of route ids and nonce reservations), one
//! quoter and one compare cache per host.
//!
//! Services here are typed in and typed out: they never see HTTP, JSON
//! bodies or `errorCode`s (the adapters map their errors), and no service
//! is reached by calling back through the HTTP router.

pub mod bookshare;
pub mod legs;
pub mod primitives;
pub mod routing;
pub mod sandbox;
pub mod sessions;

pub use routing::{Routing, RoutingDeps, RoutingError};
