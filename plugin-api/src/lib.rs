//! The one contract between the relay host and its rails.
//!
//! A rail is a piece of routing knowledge — how to price a lane, how to turn an
//! accepted quote into declarative execution steps, how to read progress back
//! from its upstream. It is written once against the [`Rail`] trait and shipped
//! in either packaging (a native `abi_stable` plugin or a wasm component of the
//! `relay:rail` WIT world); the host cannot tell them apart.
//!
//! What a rail must never do: own I/O or keys. Everything it needs from the
//! world — HTTP to its declared upstream hosts, read-only chain RPC, the clock,
//! logging, operator configuration — arrives through the [`Host`] capability
//! trait, and everything it wants done on a chain is described as
//! [`PlanAction`]s that the host checks against policy, signs and broadcasts.
//!
//! Amounts are integer smallest units ([`Amount`], a U256) end to end.
//!
//! # What the host does with each answer
//!
//! The docs of each item say how the host really treats it, so a rail can be
//! written without reading the host:
//!
//! - [`QuoteRequest`]: when the host asks for a quote, for which amount
//!   (the whole amount when pricing, the carried amount before `prepare`),
//!   and how it nets the answer; [`Fee::included`], [`GasEstimate`] (the
//!   host adds the Permit2 pull's gas itself).
//! - [`PrepareRequest::quote`]: the amounts a plan moves; [`ExecutionPlan`]:
//!   how a plan runs (order, simulation, refunds, the router forms);
//!   [`PlanAction`]: what each step really does (a pull moves the whole
//!   signed amount, an approval is unlimited and sent only when short, …).
//! - [`Rail::track`] and [`TrackState`]: how often the host asks, what each
//!   answer does, and what to answer when the upstream has no status API.
//! - [`RailRole`]: only the float lane's role changes behaviour;
//!   [`LaneCoverage::executable`] decides what executes.

mod amount;
mod chain;
mod error;
mod health;
mod host;
mod manifest;
mod plan;
mod quote;
mod rail;
mod track;
mod version;

pub use amount::{Amount, AmountError, U256};
pub use chain::{ChainRef, ChainRefError, NonEvmNode};
pub use error::{RailError, RailErrorKind};
pub use health::{HealthStatus, LaneHealth, RailHealth};
pub use host::{Host, HostError, HostErrorKind, HttpMethod, HttpRequest, HttpResponse, LogLevel};
pub use manifest::{DeclaredContract, LaneCoverage, RailManifest, RailRole};
pub use plan::{ExecutionPlan, PlanAction, PrepareRequest, SourceMode};
pub use quote::{Fee, FeeKind, GasEstimate, QuoteRequest, RailQuote, Token};
pub use rail::Rail;
/// Re-exported so rails name versions without their own semver dependency.
pub use semver::Version;
pub use track::{TrackRequest, TrackState, TrackStatus};
pub use version::{contract_version, is_supported_contract, CONTRACT_VERSION};
