//! Durable execution: every route is a persisted state machine
//! ([`relay_types::RouteRecord`]) whose side effects are journaled before and after
//! they happen, so a crash at any point resumes without a second broadcast
//! and without losing the route.

pub mod executor;
pub mod receipt;
pub mod relayer;
pub mod sandbox;
pub mod steps;
mod upstream;
