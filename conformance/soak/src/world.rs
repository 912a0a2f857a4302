//! What every flow shares: the balancer, the chains (read directly, never
//! through the host), the devnet's tokens and keys, and the ledger of what
//! the soak asked for — every route it started, with the amount it pulls
//! and the fresh address it pays — that the invariants are checked
//! against.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
};

use alloy::{
    primitives::{keccak256, Address},
    providers::{DynProvider, Provider, ProviderBuilder},
};
use anyhow::{Context, Result};
use serde::Serialize;

use crate::client::Client;

/// The chains every flow runs between.
pub const SRC: u64 = 8453;
/// See [`SRC`].
pub const DST: u64 = 42161;
/// The anvil accounts that act as users (each approved Permit2 on [`SRC`]).
pub const USERS: std::ops::RangeInclusive<usize> = 1..=8;

/// One route the soak started.
#[derive(Clone, Debug, Serialize)]
pub struct Started {
    /// Route id.
    pub id: String,
    /// What kind (`permit2:floatlane`, `router:lifi`, …).
    pub kind: String,
    /// Who pays it: the anvil account that signed, a session's fund
    /// address, the relayer (a live primitive).
    pub payer: Address,
    /// Source amount, USDC base units (unique per route).
    pub amount: u64,
    /// The fresh address it pays.
    pub recipient: Address,
    /// Whether a webhook was registered for it.
    pub hooked: bool,
}

/// A payout that is not a route (a netting withdrawal).
#[derive(Clone, Debug, Serialize)]
pub struct Payout {
    /// Its id.
    pub id: String,
    /// What kind.
    pub kind: String,
    /// The fresh address it pays.
    pub recipient: Address,
    /// Its state when answered (`PAID`, `PENDING`, `FAILED`).
    pub state: String,
    /// What it pays, when answered.
    pub net: Option<u64>,
}

/// One ERC-20 `Transfer`: transaction, from, to, value.
pub type TokenTransfer = (
    alloy::primitives::B256,
    Address,
    Address,
    alloy::primitives::U256,
);

/// Every transfer of each token read so far, by (chain, token).
pub type TransferBook = HashMap<(u64, Address), std::sync::Arc<Vec<TokenTransfer>>>;

/// The shared state of a run.
pub struct World {
    /// The balancer.
    pub client: Client,
    /// Direct providers by chain.
    pub chains: HashMap<u64, DynProvider>,
    /// USDC by chain.
    pub usdc: HashMap<u64, Address>,
    /// USDT by chain.
    pub usdt: HashMap<u64, Address>,
    /// RPC endpoints by chain (for the wallets the paid flows open).
    pub rpc: HashMap<u64, alloy::transports::http::reqwest::Url>,
    /// The relayer's address.
    pub relayer: Address,
    /// Every relayer key (the relayer's and the pool's).
    pub keys: Vec<Address>,
    /// The webhook receiver's URL.
    pub hook_url: String,
    /// Routes started.
    pub started: Mutex<Vec<Started>>,
    /// Payouts that are not routes.
    pub payouts: Mutex<Vec<Payout>>,
    /// USDC the netting deposits credited.
    pub netting_credited: AtomicU64,
    /// One netting flow at a time (an account's nonces are sequential).
    pub netting_lock: tokio::sync::Mutex<()>,
    /// Sponsorships and yield spends asked for.
    pub paid: crate::flows_paid::Ledger,
    /// Every transfer of a token, once read for the checks
    /// ([`crate::invariants::token_transfers`]).
    pub transfer_book: tokio::sync::Mutex<TransferBook>,
    counter: AtomicU64,
    seed: u64,
}

impl World {
    /// Reads the chains and tokens from the devnet's `relay.toml`.
    pub fn new(
        client: Client,
        devnet: &crate::cluster::Devnet,
        (keys, hook_url, seed): (Vec<Address>, String, u64),
    ) -> Result<Self> {
        let mut chains = HashMap::new();
        let (mut usdc, mut usdt, mut rpc) = (HashMap::new(), HashMap::new(), HashMap::new());
        for id in [SRC, DST] {
            let url: alloy::transports::http::reqwest::Url = devnet.rpc(id)?.parse()?;
            chains.insert(
                id,
                ProviderBuilder::new().connect_http(url.clone()).erased(),
            );
            rpc.insert(id, url);
            let tokens = &devnet.config["chains"][id.to_string()]["tokens"];
            for (symbol, into) in [("USDC", &mut usdc), ("USDT", &mut usdt)] {
                let token = tokens[symbol]["address"]
                    .as_str()
                    .with_context(|| format!("{symbol} in relay.toml"))?;
                into.insert(id, token.parse()?);
            }
        }
        let relayer = devnet.config["relayer"]
            .as_str()
            .context("relayer")?
            .parse()?;
        Ok(World {
            client,
            chains,
            usdc,
            usdt,
            rpc,
            relayer,
            keys,
            hook_url,
            started: Mutex::default(),
            payouts: Mutex::default(),
            netting_credited: AtomicU64::new(0),
            netting_lock: tokio::sync::Mutex::new(()),
            paid: crate::flows_paid::Ledger::default(),
            transfer_book: tokio::sync::Mutex::default(),
            counter: AtomicU64::new(1),
            seed,
        })
    }

    /// A number never handed out before in this run.
    pub fn next(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }

    /// A fresh address nobody holds a key for (a route's recipient).
    pub fn fresh_address(&self) -> Address {
        let n = self.next();
        Address::from_slice(&keccak256(format!("relay-soak:{}:{n}", self.seed))[12..])
    }

    /// A provider for `chain`.
    pub fn chain(&self, chain: u64) -> &DynProvider {
        &self.chains[&chain]
    }

    /// Records a route the soak started.
    pub fn record(&self, s: Started) {
        self.started.lock().expect("ledger").push(s);
    }

    /// Records a payout that is not a route.
    pub fn payout(&self, p: Payout) {
        self.payouts.lock().expect("ledger").push(p);
    }

    /// Counts a credited netting deposit.
    pub fn netting_deposit(&self, amount: u64) {
        self.netting_credited.fetch_add(amount, Ordering::Relaxed);
    }

    /// `from` (an anvil account: unlocked) sends `amount` USDC to `to` on
    /// `chain`; the transaction's hash once mined.
    pub async fn transfer_usdc(
        &self,
        chain: u64,
        from: Address,
        to: Address,
        amount: u64,
    ) -> Result<String> {
        let receipt = relay_devnet::contracts::TestToken::new(self.usdc[&chain], self.chain(chain))
            .transfer(to, alloy::primitives::U256::from(amount))
            .from(from)
            .send()
            .await?
            .get_receipt()
            .await?;
        anyhow::ensure!(receipt.status(), "transfer reverted");
        Ok(format!("{:#x}", receipt.transaction_hash))
    }

    /// Every route started so far.
    pub fn routes(&self) -> Vec<Started> {
        self.started.lock().expect("ledger").clone()
    }

    /// A route id started so far, picked by `n`.
    pub fn some_route(&self, n: u64) -> Option<String> {
        let s = self.started.lock().expect("ledger");
        (!s.is_empty()).then(|| s[(n as usize) % s.len()].id.clone())
    }
}

/// The seconds since the epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A small deterministic generator; the seed is printed to replay a run.
pub struct Lcg(pub u64);

impl Lcg {
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Each user approves Permit2 for all its USDC on [`SRC`] (anvil's
/// unlocked accounts).
pub async fn approve_users(w: &World) -> Result<()> {
    for user in USERS {
        relay_devnet::contracts::TestToken::new(w.usdc[&SRC], w.chain(SRC))
            .approve(relay_devnet::PERMIT2_ADDRESS, alloy::primitives::U256::MAX)
            .from(relay_devnet::keys::anvil_address(user))
            .send()
            .await?
            .get_receipt()
            .await?;
    }
    Ok(())
}
