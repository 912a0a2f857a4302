//! The `relay` binary's library half: wiring the host's crates into a
//! running process ([`server`]), the operator's rail commands
//! ([`operator`]), the command line ([`cli`]), the messaging client
//! ([`msg`]), the privacy pool's client ([`pool`]) and — behind the `devnet`
//! feature only — the one-command devnet ([`devnet`]).
//!
//! Nothing here holds logic of its own: each domain lives in its crate
//! (`relay-engine`, `relay-execution`, `relay-api`, …); this crate decides
//! which parts a process runs. A production build (the default features:
//! jemalloc, no `devnet`) carries no simulator and no devnet key.

pub mod accept;
#[cfg(feature = "jemalloc")]
mod alloc;
pub mod cli;
#[cfg(feature = "devnet")]
pub mod devnet;
pub mod doctor;
pub mod hostapi;
pub mod msg;
pub mod operator;
pub mod pool;
pub mod server;
#[cfg(feature = "devnet")]
pub mod standalone;
pub mod telemetry;
