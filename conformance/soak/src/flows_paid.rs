//! The money-moving flows a client pays for itself: a sponsorship (an
//! EOA with zero ETH has an EIP-7702 batch sent for it, paying the x402
//! invoice with an EIP-3009 authorization — [`sponsor`]) and a yield
//! account spend (an agent's vault shares redeemed by the relayer and
//! routed to a fresh address with one EIP-712 signature — [`spend`]).
//! Each is recorded in the [`Ledger`] with what it should move, so the
//! invariants (`invariants_paid`) can check the chains against it. The
//! requests are built by `relay_devnet::client`, as the integration tests
//! build theirs.

pub(crate) mod spend;
pub(crate) mod sponsor;

use std::{collections::BTreeMap, sync::Mutex};

use alloy::primitives::{Address, U256};
use serde::Serialize;
use serde_json::Value;

pub use spend::yield_spend;
pub use sponsor::sponsor;

use crate::world::World;

/// One sponsorship the soak paid for.
#[derive(Clone, Debug, Serialize)]
pub struct Sponsored {
    /// `sp_…`, once answered.
    pub id: Option<String>,
    /// Its state as last answered (`SPONSORED`, `REFUNDED`, `FAILED`;
    /// `UNPAID` when a payment was refused and never recorded; `None`
    /// while unknown).
    pub state: Option<String>,
    /// The fresh EOA (zero ETH) that signed and paid.
    pub payer: Address,
    /// USDC and USDT minted to it.
    pub minted: (u64, u64),
    /// The invoice's payee.
    pub pay_to: Address,
    /// The values it signed payments for (a second one when the price
    /// rose between the invoice and the payment).
    pub offered: Vec<u64>,
    /// The batch: the fresh recipient of USDC and the amount, the fresh
    /// recipient of USDT and the amount.
    pub batch: [(Address, u64); 2],
    /// The request, its payment header and key (asked again at the end).
    #[serde(skip)]
    pub ask: (Value, String, String),
}

/// One yield-account spend the soak signed.
#[derive(Clone, Debug, Serialize)]
pub struct Spent {
    /// `nc_…`.
    pub id: Option<String>,
    /// Its state as last seen (`DELIVERED`, `REFUNDED`, `FAILED`;
    /// `NOT_RECORDED` when the host has no such spend; `None` while
    /// unknown).
    pub state: Option<String>,
    /// The fresh agent.
    pub agent: Address,
    /// Its vault shares once opened (before the spend).
    pub shares: U256,
    /// The assets redeemed (the fee comes out of them).
    pub amount: u64,
    /// What its route carries (`amount − fee`).
    pub routed: u64,
    /// The fresh recipient on the destination chain.
    pub recipient: Address,
    /// Its delivery route, once known.
    pub route: Option<String>,
}

/// The paid flows' ledger.
#[derive(Default)]
pub struct Ledger {
    /// Sponsorships paid for.
    pub sponsorships: Mutex<Vec<Sponsored>>,
    /// Yield spends signed.
    pub spends: Mutex<Vec<Spent>>,
    /// One mint at a time from the minting account (its nonces).
    minting: tokio::sync::Mutex<()>,
}

/// The anvil account that mints test tokens to the paid flows' fresh
/// accounts (unlocked; the users are 1..=8).
const MINTER: usize = 9;

impl Ledger {
    /// Mints each `(token, amount)` to `to` on `chain` (the devnet tokens
    /// mint openly).
    pub async fn mint(
        &self,
        w: &World,
        chain: u64,
        to: Address,
        what: &[(Address, u64)],
    ) -> anyhow::Result<()> {
        let _one = self.minting.lock().await;
        for (token, amount) in what {
            let receipt = relay_devnet::contracts::TestToken::new(*token, w.chain(chain))
                .mint(to, U256::from(*amount))
                .from(relay_devnet::keys::anvil_address(MINTER))
                .send()
                .await?
                .get_receipt()
                .await?;
            anyhow::ensure!(receipt.status(), "mint reverted");
        }
        Ok(())
    }

    /// The records by flow and state (the report's counts).
    pub fn by_state(&self) -> BTreeMap<String, BTreeMap<String, u64>> {
        let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        let mut count = |kind: &str, state: &Option<String>| {
            let s = state.clone().unwrap_or_else(|| "unanswered".into());
            *out.entry(kind.into()).or_default().entry(s).or_default() += 1;
        };
        for s in self.sponsorships.lock().expect("ledger").iter() {
            count("sponsor", &s.state);
        }
        for s in self.spends.lock().expect("ledger").iter() {
            count("yield-spend", &s.state);
        }
        out
    }
}
