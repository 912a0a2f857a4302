//! What the EVM aggregator rails (LI.FI, Squid, Bungee) share, written once.
//!
//! - [`lane`]: the gasless EVM set, the `evm->evm` / `same-chain` lanes a
//!   rail declares, and the one request check that turns a quote request
//!   into a [`Transfer`] (typed errors naming the field).
//! - [`upstream`]: the upstream's base URL and credential reference from
//!   operator configuration, sending through the host, and HTTP error
//!   answers → typed [`relay_plugin_api::RailError`]s.
//! - [`quantity`]: integers as upstreams spell them (decimal, `0x`-hex,
//!   numbers) and slippage without floats.
//! - [`estimate`]: the checks every estimate passes, fee classification,
//!   gas and duration conventions.
//! - [`plan`]: the quote `detail` aggregator rails keep, and the declarative
//!   Permit2 → approve → call → await plan.
//! - [`track`]: asking a status endpoint about the source transaction.
//! - [`health`]: a cheap upstream probe that cannot hang.
//!
//! Like every rail crate, this owns no I/O and no keys: everything goes
//! through the [`relay_plugin_api::Host`] a call lends, and plans are
//! descriptions the host checks, signs and sends — never signed here.

pub mod aggregator;
pub mod estimate;
pub mod health;
pub mod lane;
pub mod plan;
pub mod quantity;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod track;
pub mod upstream;
// Added for the non-EVM and burn-mint rails (cctp, stablebridge, btc, sui, tron):
pub mod evm_abi;
pub mod evm_read;
pub mod non_evm;
pub mod quote_only;
pub mod scoped_host;
#[cfg(any(test, feature = "testing"))]
pub mod testing_requests;
#[cfg(any(test, feature = "testing"))]
pub mod testing_rpc;

pub use lane::{EvmCoverage, Transfer};
pub use plan::{evm_plan, EvmCall, EvmQuoteDetail};
pub use quantity::Quantity;
pub use upstream::{ErrorReport, Upstream};

/// How long an aggregator quote stays valid, ms (the upstreams re-price
/// continuously; a minute keeps execute close to the priced state).
pub const QUOTE_TTL_MS: u64 = 60_000;
