//! Durable execution: every route is a persisted state machine
//! ([`relay_types::RouteRecord`]) whose side effects are journaled before and after
//! they happen, so a crash at any point resumes without a second broadcast
//! and without losing the route.
//!
//! Also here: the execute orchestration behind the API ([`execute`]: rail
//! choice, operator authority, sandbox / dry / live), and the simulation of
//! every transaction before the relayer signs it ([`simulate`]: nothing is
//! broadcast that must revert), and the destination watch of routes whose
//! rail's upstream has no status API ([`dest_watch`]). This crate never
//! speaks HTTP.

pub mod compose;
pub mod dest_watch;
pub mod execute;
pub mod executor;
pub mod intent;
pub mod receipt;
pub mod relayer;
pub mod router;
pub mod sandbox;
pub mod simulate;
pub mod steps;
mod upstream;
