//! Paid names and name sales (spec §8.2), paid with x402: a priced
//! registration (3–6 characters, or a name in its premium window) and a
//! sale (a `handle/transfer` whose both sides signed a price) are orders
//! of `relay-x402`'s till ([`relay_x402::orders`]): the payment is checked
//! and settled by the relayer, then the name is registered or moved in the
//! witness log (the entry records the payment: [`crate::names::Paid`]),
//! then a sale's seller is paid the price less the finalize fee (2 %, at
//! least 1 USD: [`crate::names::fee_cents`]). A name that cannot be
//! delivered once the payment settled — registered or sold elsewhere
//! meanwhile — is refunded in full. One open order holds a name: a second
//! payment for it while the first settles is refused before anything is
//! sent. Names are priced in USD and paid in the configured USD
//! stablecoin at par (`[messaging.names]`).

use std::sync::Arc;

use alloy::primitives::Address;
use relay_feature::Parts;
use relay_types::SharedClock;
use relay_x402::{
    checkout::Checkout,
    orders::{Delivery, Goods, Order, OrderError, Orders, Till, TillParts},
    AssetDomain,
};
use serde::{Deserialize, Serialize};

use crate::{
    config::NamesConfig,
    mailbox::PublishError,
    names::{Moved, NameRecord, Paid, Registration},
    witness::{PublishOutcome, Witness},
};

/// The feature name orders are kept under.
pub const FEATURE: &str = "names";

/// What a name order buys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum NameOrder {
    /// A priced registration (or renewal) and its price, cents.
    List {
        /// The signed listing.
        registration: Registration,
        /// What it costs, USD cents.
        cents: u64,
    },
    /// A sale: the signed transfer with its terms.
    Sale {
        /// Both sides' signatures and the sale's terms.
        transfer: Moved,
    },
}

/// The names the till sells: it registers or moves them in the witness
/// log.
pub struct NameGoods {
    witness: Arc<Witness>,
    clock: SharedClock,
}

/// A name's till.
pub type NameTill = Till<NameGoods>;

/// The payment of `order` as the log records it (its settlement, once
/// there is one).
fn paid(order: &Order, cents: u64) -> Paid {
    Paid {
        order: order.id.clone(),
        cents,
        chain_id: order.chain_id,
        settle_tx: order.settle_tx.clone().unwrap_or_default(),
    }
}

fn goods_of(order: &Order) -> Result<NameOrder, OrderError> {
    serde_json::from_value(order.goods.clone())
        .map_err(|e| OrderError::Delivery(format!("order goods: {e}")))
}

impl Goods for NameGoods {
    async fn check(&self, order: &Order) -> Result<Option<String>, OrderError> {
        let now = self.clock.now_ms();
        let checked = match goods_of(order)? {
            NameOrder::List {
                mut registration,
                cents,
            } => {
                registration.paid = Some(paid(order, cents));
                self.witness.admissible(&registration, now).await
            }
            NameOrder::Sale { transfer } => self.witness.movable(&transfer, now).await,
        };
        match checked {
            Ok(()) => Ok(None),
            Err(PublishOutcome::Refused(e)) => Ok(Some(e.to_string())),
            Err(PublishOutcome::Name(refusal)) => Ok(Some(refusal.to_string())),
            Err(e) => Err(OrderError::Delivery(e.to_string())),
        }
    }

    async fn deliver(&self, order: &Order) -> Result<Delivery, OrderError> {
        let goods = goods_of(order)?;
        let now = self.clock.now_ms();
        let (name, owner, ts, landed) = match goods {
            NameOrder::List {
                mut registration,
                cents,
            } => {
                registration.paid = Some(paid(order, cents));
                let r = &registration;
                let landed = self.witness.register(r.clone(), now).await;
                (r.name.clone(), r.owner.clone(), r.ts, landed)
            }
            NameOrder::Sale { mut transfer } => {
                if let Some(sale) = transfer.sale.as_mut() {
                    sale.paid = Some(paid(order, sale.price_cents));
                }
                let landed = self.witness.transfer(&transfer, now).await;
                (transfer.name, transfer.to, transfer.accept.0, landed)
            }
        };
        self.outcome(landed, (&name, &owner, ts)).await
    }
}

impl NameGoods {
    /// What an append means for the order: a replay of this very order's
    /// entry (a delivery retried after a crash) is its delivery.
    async fn outcome(
        &self,
        landed: Result<NameRecord, PublishOutcome>,
        (name, owner, ts): (&str, &str, u64),
    ) -> Result<Delivery, OrderError> {
        let unavailable = |e: &dyn std::fmt::Display| OrderError::Delivery(e.to_string());
        match landed {
            Ok(record) => Ok(Delivery::Delivered(record.s.to_string())),
            Err(PublishOutcome::Refused(PublishError::Replayed { .. })) => {
                let record = self.witness.name(name).await.map_err(|e| unavailable(&e))?;
                Ok(match record {
                    Some(r) if r.owner == owner && r.ts == ts => {
                        Delivery::Delivered(r.s.to_string())
                    }
                    _ => Delivery::Refused(format!("a later entry of {name} replaced this one")),
                })
            }
            Err(PublishOutcome::Refused(e)) => Ok(Delivery::Refused(e.to_string())),
            Err(PublishOutcome::Name(refusal)) => Ok(Delivery::Refused(refusal.to_string())),
            Err(e) => Err(unavailable(&e)),
        }
    }
}

/// The names' till when this host takes payment for names (`[messaging.
/// names] payment_chain`, a relayer that can send there, the asset);
/// `None` otherwise.
pub fn till(parts: &Parts, cfg: &NamesConfig, witness: Arc<Witness>) -> Option<NameTill> {
    if cfg.payment_chain == 0 {
        return None;
    }
    let chain = cfg.payment_chain;
    let Some(senders) = parts.senders.as_ref() else {
        tracing::warn!(chain, "[messaging.names] payment_chain is set but the host has no relayer key: paid names are not sold");
        return None;
    };
    let sender = senders.on(chain)?.clone();
    let pay_to = cfg
        .pay_to
        .as_deref()
        .and_then(|a| a.parse::<Address>().ok())
        .unwrap_or(senders.relayer);
    let domain = AssetDomain {
        name: cfg.asset_name.clone(),
        version: cfg.asset_version.clone(),
    };
    let checkout = Checkout::on(
        &parts.config,
        chain,
        (&cfg.asset, domain),
        pay_to,
        (&cfg.networks, cfg.max_timeout_secs),
    )?;
    let till_parts = TillParts {
        orders: Orders::from(parts.store.clone()),
        reader: parts.reader.clone(),
        sender: Some((senders.relayer, sender)),
        clock: parts.clock.clone(),
    };
    let goods = NameGoods {
        witness,
        clock: parts.clock.clone(),
    };
    Some(Till::new(
        FEATURE,
        till_parts,
        checkout,
        cfg.lease_ms,
        goods,
    ))
}
