//! The delivery leg of a spend: once the relayer holds the redeemed
//! assets on the source chain, the engine routes `amount − fee` of them to
//! `toAddress` on the destination chain, ranking every rail that serves the
//! lane by net output and failing over, exactly as it routes an operator's
//! own (`mode: self`) route. The leg runs as an ordinary durable route
//! (`/api/route/status` tracks it) whose id is derived from the spend's, so
//! a replica that picks a spend up after a crash finds the route its
//! predecessor started instead of starting another.
//!
//! [`LegRouter`] is the engine as the yield account sees it; the
//! application layer implements it over routing's quote fan-out and its one
//! execute service, and the host leaves it in the features' handles
//! ([`Legs`]) before they start.

use alloy::primitives::{keccak256, Address, U256};
use std::sync::Arc;

/// The engine's legs as the host hands them to the feature.
pub type Legs = Arc<dyn LegRouter>;

/// One delivery leg.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leg {
    /// The route id the leg runs under (`rt_…`, from the spend's id).
    pub route_id: String,
    /// The source chain (where the relayer holds the redeemed assets).
    pub src_chain: u64,
    /// The destination chain.
    pub to_chain: u64,
    /// The asset's symbol on both chains (`[ncaccount] asset`).
    pub symbol: String,
    /// What the route carries: `amount − fee`, asset base units.
    pub amount: U256,
    /// The agent (the route's sender of record).
    pub agent: Address,
    /// The recipient.
    pub to_address: Address,
}

impl Leg {
    /// The route id of spend `spend_id`'s leg.
    pub fn route_id(spend_id: &str) -> String {
        let h = keccak256(format!("relay-ncaccount-leg:{spend_id}").as_bytes());
        format!("rt_{}", &hex::encode(h)[..20])
    }
}

/// The engine's best answer for a leg.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegQuote {
    /// The rail ranked first.
    pub rail: String,
    /// Its lane.
    pub lane: String,
    /// What the recipient is expected to receive.
    pub estimated: U256,
    /// What it receives at least.
    pub min_out: U256,
}

/// Why the engine cannot route a leg now.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct LegError {
    /// The engine's error code (`NO_ROUTE`, `UNROUTABLE_LANE`,
    /// `FUNDS_REQUIRED`, …).
    pub code: String,
    /// What it said.
    pub message: String,
}

/// A delivery route's state as the spend reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LegState {
    /// Still moving.
    Running,
    /// Delivered: the destination (or the source) transaction.
    Done(Option<String>),
    /// Failed; `moved` when funds may have left the relayer.
    Failed {
        /// The route's errorCode and message.
        why: String,
        /// Whether funds may have left the relayer.
        moved: bool,
    },
}

/// The engine, for the yield account.
#[async_trait::async_trait]
pub trait LegRouter: Send + Sync {
    /// The engine's best answer for `leg` (every applicable rail quoted,
    /// ranked by net output).
    async fn quote(&self, leg: &Leg) -> Result<LegQuote, LegError>;

    /// Starts `leg` as a live route funded by what the relayer holds, under
    /// `leg.route_id`. A route already under that id is left as it is.
    async fn start(&self, leg: &Leg) -> Result<(), LegError>;
}
