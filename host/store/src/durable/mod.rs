//! Durable operations: the one implementation of each policy every feature
//! shares, so a fix to one reaches all of them.
//!
//! - [`Lease`]: which replica works a row, and until when — claim, renew,
//!   release over a table's lease columns, with one comparison rule (a
//!   lease running until `t` has lapsed at `t`: it is live while
//!   `now < t`). Routes, sponsorships, yield-account spends, netting
//!   withdrawals, route primitives, webhook deliveries and session sweeps
//!   all lease through it.
//! - [`Idempotency`]: one guard for `x-idempotency-key`, keyed by
//!   ([`IdemKey`]) scope, caller and key, fingerprinting the raw request
//!   bytes (SHA-256), so a repeat replays the first answer and the same key
//!   with other bytes is refused.
//!
//! Time is never read here from the system: a lease takes the caller's
//! clock reading, the idempotency guard reads the store's injected clock.
//! Retry spacing is [`relay_types::Backoff`].

mod idempotency;
mod lease;

pub use idempotency::{fingerprint, IdemKey, Idempotency, IdempotencyBegin, Once};
pub use lease::{renewing, Lease};

#[cfg(test)]
mod tests;
