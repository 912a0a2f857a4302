//! Paid orders: what a feature sells for an x402 payment, run so that a
//! crash never charges without delivering or refunding and never
//! delivers or pays out twice.
//!
//! The run ([`Till::place`], [`Till::drive`]): the payment is checked
//! ([`crate::checkout`]) and the order recorded `ACCEPTED`; the relayer
//! settles it (journal step 0) → `SETTLED`; the feature delivers
//! ([`Goods::deliver`], idempotent) → `DELIVERED`; when the order pays a
//! seller, the relayer pays them out (step 1) → `DONE` (at once without a
//! payout). A delivery the feature refuses after the payment settled (the
//! name was taken meanwhile) goes `REFUNDING` → `REFUNDED` (step 2, the
//! whole payment back to the payer); a payment that cannot be settled
//! goes `FAILED` and nothing was charged; an order the feature can no
//! longer deliver when it is about to settle ([`Goods::check`], asked once
//! the order holds what it buys) goes `REFUSED`, nothing charged either. Each transaction is signed and
//! journaled before it is broadcast, so after a crash the same bytes are
//! finished ([`relay_chain::sender`]). One replica drives an order at a
//! time (a lease); the resume job ([`Till::resume`]) finishes orders whose
//! holder died. An open order holds what it buys (`hold`): a second
//! payment for the same name while the first settles is refused before
//! anything is sent (`ORDER_PENDING`).
//!
//! Fault injection for the crash tests: `RELAY_FAULT_ORDER=settled` halts
//! the run right after the settlement is recorded, so the test can
//! `kill -9` the process exactly there.

mod run;
pub mod store;

use std::sync::Arc;

use alloy::primitives::{Address, U256};
use relay_chain::{
    eip3009::{PaymentError, SignedTransfer},
    reader::ChainReader,
    sender::Sender,
};
use relay_types::SharedClock;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    checkout::{Checkout, CheckoutError},
    Payment,
};
pub use store::{Begun, OrderMove, OrderRow, Orders, MIGRATIONS};

/// Paid, not yet settled.
pub const ACCEPTED: &str = "ACCEPTED";
/// Settled, not yet delivered.
pub const SETTLED: &str = "SETTLED";
/// Delivered; the seller's payout is not yet mined.
pub const DELIVERED: &str = "DELIVERED";
/// Delivered (and paid out).
pub const DONE: &str = "DONE";
/// Refused after settling; the refund is not yet mined.
pub const REFUNDING: &str = "REFUNDING";
/// Refunded.
pub const REFUNDED: &str = "REFUNDED";
/// The payment could not be settled: nothing was charged or delivered.
pub const FAILED: &str = "FAILED";
/// The goods could no longer be delivered when the order was about to
/// settle: nothing was charged.
pub const REFUSED: &str = "REFUSED";
/// States the run (and the resume job) drives.
pub const OPEN: [&str; 4] = [ACCEPTED, SETTLED, DELIVERED, REFUNDING];
/// States an order ends in.
pub const TERMINAL: [&str; 4] = [DONE, REFUNDED, FAILED, REFUSED];

/// The fault-injection variable ([`self`]).
pub const FAULT_ENV: &str = "RELAY_FAULT_ORDER";

/// Halts this thread for good when `var` is `point` (fault injection: a
/// crash test kills the process there).
pub fn halt_at(var: &str, point: &str) {
    if std::env::var(var).is_ok_and(|v| v == point) {
        tracing::error!(point, "{var}: halted here until killed (fault injection)");
        loop {
            std::thread::park();
        }
    }
}

/// What a feature sells.
pub trait Goods: Send + Sync + 'static {
    /// Why `order` could not be delivered now (`None`: it could), asked
    /// once the order holds what it buys and before its payment is
    /// settled, so a buyer who lost a race is not charged.
    fn check(
        &self,
        order: &Order,
    ) -> impl std::future::Future<Output = Result<Option<String>, OrderError>> + Send;

    /// Delivers `order` once its payment settled. Called again after a
    /// crash, a delivery that already happened answers its reference.
    fn deliver(
        &self,
        order: &Order,
    ) -> impl std::future::Future<Output = Result<Delivery, OrderError>> + Send;
}

/// What [`Goods::deliver`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Delivered; its reference (e.g. a witness entry).
    Delivered(String),
    /// Cannot be delivered any more (why): the payment is refunded.
    Refused(String),
}

/// A seller's share of an order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Payout {
    /// Who is paid.
    pub to: String,
    /// Smallest units of the asset.
    pub amount: String,
}

/// An EIP-3009 payment as a record keeps it (decimal and hex strings).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRecord {
    /// The x402 network it was made on.
    pub network: String,
    /// Who paid.
    pub payer: String,
    /// Who was paid.
    pub to: String,
    /// Smallest units.
    pub value: String,
    /// Unix seconds.
    pub valid_after: String,
    /// Unix seconds.
    pub valid_before: String,
    /// The EIP-3009 nonce.
    pub nonce: String,
    /// The payer's signature.
    pub signature: String,
}

impl PaymentRecord {
    /// The record of `t`, made on `network`.
    pub fn of(network: String, t: &SignedTransfer) -> Self {
        PaymentRecord {
            network,
            payer: t.from.to_string(),
            to: t.to.to_string(),
            value: t.value.to_string(),
            valid_after: t.valid_after.to_string(),
            valid_before: t.valid_before.to_string(),
            nonce: t.nonce.to_string(),
            signature: t.signature.to_string(),
        }
    }

    /// The authorization again.
    pub fn transfer(&self) -> Result<SignedTransfer, String> {
        let bad = |e: &dyn std::fmt::Display| format!("payment record: {e}");
        Ok(SignedTransfer {
            from: self.payer.parse().map_err(|e| bad(&e))?,
            to: self.to.parse().map_err(|e| bad(&e))?,
            value: self.value.parse().map_err(|e| bad(&e))?,
            valid_after: self.valid_after.parse().map_err(|e| bad(&e))?,
            valid_before: self.valid_before.parse().map_err(|e| bad(&e))?,
            nonce: self.nonce.parse().map_err(|e| bad(&e))?,
            signature: self.signature.parse().map_err(|e| bad(&e))?,
        })
    }
}

/// What an order's record keeps.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    goods: serde_json::Value,
    amount: String,
    payout: Option<Payout>,
    #[serde(flatten)]
    payment: PaymentRecord,
}

/// An order as the feature and the API see it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// `or_…`.
    pub id: String,
    /// `ACCEPTED`, `SETTLED`, `DELIVERED`, `DONE`, `REFUNDING`,
    /// `REFUNDED`, `FAILED` or `REFUSED`.
    pub state: String,
    /// The payment's chain.
    pub chain_id: u64,
    /// What was bought (the feature's).
    #[schema(value_type = Object)]
    pub goods: serde_json::Value,
    /// The price, smallest units of the asset.
    pub amount: String,
    /// Who paid.
    pub payer: String,
    /// The network it was paid on (x402 name).
    pub network: String,
    /// The settlement.
    pub settle_tx: Option<String>,
    /// What the feature delivered (its reference).
    pub delivered: Option<String>,
    /// The seller's share, when the order pays one.
    pub payout: Option<Payout>,
    /// The payout.
    pub payout_tx: Option<String>,
    /// The refund.
    pub refund_tx: Option<String>,
    /// Why it failed or was refunded.
    pub error: Option<String>,
}

/// A new order.
#[derive(Clone, Debug)]
pub struct NewOrder {
    /// What is bought (the feature's JSON, handed back to
    /// [`Goods::deliver`]).
    pub goods: serde_json::Value,
    /// What an open order reserves (`name:alice`).
    pub hold: Option<String>,
    /// The price, smallest units of the asset.
    pub amount: U256,
    /// The seller's share, paid after delivery.
    pub payout: Option<Payout>,
}

/// Why an order is refused or could not go on.
#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    /// The payment is refused or could not be checked.
    #[error(transparent)]
    Checkout(#[from] CheckoutError),
    /// Another open order holds the same thing.
    #[error("another paid order for {0} is being settled; retry in a few seconds")]
    Held(String),
    /// The first request with this idempotency key still runs.
    #[error("the first request with this x-idempotency-key is still running")]
    InFlight,
    /// The idempotency key was used with another payment.
    #[error("x-idempotency-key was already used with a different payment")]
    KeyReused,
    /// The host cannot send on the payment's chain.
    #[error("no relayer can send on chain {0}")]
    RelayerUnavailable(u64),
    /// A step's outcome is not known yet (the resume job finishes it).
    #[error("chain: {0}")]
    Chain(String),
    /// The feature could not deliver now (retried).
    #[error("delivery: {0}")]
    Delivery(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] relay_store::StoreError),
}

impl From<PaymentError> for OrderError {
    fn from(e: PaymentError) -> Self {
        OrderError::Checkout(e.into())
    }
}

/// What a [`Till`] needs from the host.
#[derive(Clone)]
pub struct TillParts {
    /// The orders' records (and the journal).
    pub orders: Orders,
    /// Chain reads.
    pub reader: Arc<ChainReader>,
    /// The relayer's sender on the payment chain and its address; `None`:
    /// nothing can be sold.
    pub sender: Option<(Address, Arc<Sender>)>,
    /// Time.
    pub clock: SharedClock,
}

/// One feature's checkout counter: places and drives its orders.
pub struct Till<G> {
    feature: &'static str,
    parts: TillParts,
    checkout: Checkout,
    lease_ms: u64,
    goods: G,
    /// Its name as an order's lease holder: unique per till, not per
    /// process (two hosts in one process are two replicas).
    holder: String,
}

impl<G> std::fmt::Debug for Till<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Till")
            .field("feature", &self.feature)
            .field("checkout", &self.checkout)
            .finish_non_exhaustive()
    }
}

impl<G: Goods> Till<G> {
    /// `feature`'s till taking payments at `checkout`; a replica holds an
    /// order it drives for `lease_ms`.
    pub fn new(
        feature: &'static str,
        parts: TillParts,
        checkout: Checkout,
        lease_ms: u64,
        goods: G,
    ) -> Self {
        Till {
            feature,
            parts,
            checkout,
            lease_ms,
            goods,
            holder: format!(
                "{feature}-{}-{}",
                std::process::id(),
                uuid::Uuid::new_v4().simple()
            ),
        }
    }

    /// Where payments are taken.
    pub fn checkout(&self) -> &Checkout {
        &self.checkout
    }

    /// What is sold.
    pub fn goods(&self) -> &G {
        &self.goods
    }
}
