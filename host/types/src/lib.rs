//! The host's shared vocabulary: route records and their states, failure
//! codes, the Permit2 signature a route carries, facts about the gasless
//! chain set, the [`Clock`](clock::Clock) every service reads time from and
//! the one retry [`Backoff`].
//!
//! This crate is the bottom of the host's layers: it depends on no other
//! host crate and does no I/O.

pub mod backoff;
pub mod chains;
pub mod clock;
pub mod codes;
pub mod permit;
pub mod route;
pub mod router;

pub use backoff::Backoff;
pub use clock::{Clock, ManualClock, SharedClock, SystemClock};
pub use permit::SignedPermit;
pub use route::{Failure, FailureCode, RouteRecord, RouteStatus};
pub use router::{DepositCall, RelayIntent, RouterAuth, RouterForm, TokenPermit};
