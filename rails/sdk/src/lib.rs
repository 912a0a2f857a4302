//! The relay rail SDK: what a rail needs besides the contract
//! (`relay-plugin-api`), written once. Every rail of this repository is
//! built on it, and so is the crate `relay-plugins new` writes.
//!
//! | you need to… | use |
//! |---|---|
//! | call your upstream's JSON API through the host (egress, credentials, deadlines) | [`Upstream`]: [`Upstream::get`]/[`Upstream::post`] build the request, [`Upstream::json`] sends it and reads a typed answer; failures become typed [`relay_plugin_api::RailError`]s ([`upstream`]) |
//! | encode contract calls (a deposit, an ERC-20 transfer) | [`evm_abi::encode_call`] with [`evm_abi::AbiValue`]s |
//! | describe execution | [`plan::PlanBuilder`]: intake (Permit2 pull), approve + call, deposit instruction, await upstream, inventory payout; [`evm_plan`] for the aggregator shape |
//! | read an upstream's estimate honestly | [`estimate`]: amount checks, fee classification, gas and duration conventions; [`Quantity`] for numbers as upstreams spell them |
//! | check a request against your lanes | [`lane`]: the gasless EVM set and one request check ([`Transfer`]) |
//! | answer `track` from a status API | [`track`] |
//! | answer `health` without hanging | [`health`] |
//! | validate non-EVM addresses | [`non_evm`] |
//! | keep a recorded upstream for tests and the kit | [`fixture`] (`fixture/upstream.json`) |
//! | unit-test without a host | `testing::RecordingHost` (feature `testing`): a fake host with canned HTTP answers that records every request |
//!
//! Like every rail crate, this owns no I/O and no keys: everything goes
//! through the [`relay_plugin_api::Host`] a call lends, and plans are
//! descriptions the host checks, signs and sends — never signed here. It
//! compiles to `wasm32-unknown-unknown` as well as natively.
//!
//! **Outside this repository**, depend on it by path or git like the
//! contract crates (cargo resolves their workspace settings from the relay
//! checkout):
//!
//! ```toml
//! [dependencies]
//! relay-plugin-api = { path = "../relay/plugin-api" }
//! relay-rail-sdk = { path = "../relay/rails/sdk" }
//! # or: relay-rail-sdk = { git = "https://example.invalid/relay" }
//! [dev-dependencies]
//! relay-rail-sdk = { path = "../relay/rails/sdk", features = ["testing"] }
//! ```
//!
//! `relay-plugins new <name> --out DIR` writes such a crate.

pub mod aggregator;
pub mod estimate;
pub mod fixture;
pub mod health;
pub mod lane;
pub mod plan;
pub mod quantity;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod track;
pub mod upstream;
pub mod vendor;
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
