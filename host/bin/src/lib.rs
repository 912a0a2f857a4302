//! The `relay` binary's library half: wiring the host's crates into a
//! running process ([`server`]), the operator's rail commands
//! ([`operator`]), the command line ([`cli`]) and — behind the `devnet`
//! feature only — the one-command devnet ([`devnet`]).
//!
//! Nothing here holds logic of its own: each domain lives in its crate
//! (`relay-engine`, `relay-execution`, `relay-api`, …); this crate decides
//! which parts a process runs. A production build (`--no-default-features`
//! is the default) carries no simulator and no devnet key.

/// The allocator of every process that links the host (the `relay`
/// binary, its tests and benches): mimalloc. A quote allocates and frees
/// hundreds of small objects across the runtime's threads (JSON, the
/// book's answers, the edge's headers), where glibc's arenas spent a sixth
/// of the CPU of a warm quote in `malloc`, `free` and their consolidation.
/// Native plugins keep their own (each cdylib has its allocator; nothing
/// allocated on one side of the ABI is freed on the other).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod accept;
pub mod cli;
#[cfg(feature = "devnet")]
pub mod devnet;
pub mod doctor;
pub mod operator;
pub mod server;
#[cfg(feature = "devnet")]
pub mod standalone;
pub mod telemetry;
