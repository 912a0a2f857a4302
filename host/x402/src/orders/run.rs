//! The run of an order ([`super`]): place, drive each step, resume.

use alloy::primitives::{keccak256, Address, U256};
use relay_chain::{
    eip3009,
    sender::{Call, SendError, Sender},
};

use super::*;

/// A payment may exceed its invoice by at most 1/100 (a price that decays
/// — a name's premium — drops between the invoice and the payment); more
/// is a mistake and is refused before anything is sent.
const OVERPAY_DIVISOR: u64 = 100;

/// Gas of a payout or refund (an ERC-20 transfer).
const TRANSFER_GAS: u64 = 80_000;

fn moved(state: &str) -> OrderMove {
    OrderMove {
        state: state.into(),
        ..Default::default()
    }
}

fn body_of(row: &OrderRow) -> Result<Body, OrderError> {
    serde_json::from_str(&row.body).map_err(|e| {
        OrderError::Store(relay_store::StoreError::Corrupt(format!("order body: {e}")))
    })
}

fn report(row: &OrderRow) -> Result<Order, OrderError> {
    let b = body_of(row)?;
    Ok(Order {
        id: row.id.clone(),
        state: row.state.clone(),
        chain_id: row.chain_id,
        goods: b.goods,
        amount: b.amount,
        payer: b.payment.payer,
        network: b.payment.network,
        settle_tx: row.settle_tx.clone(),
        delivered: row.delivered.clone(),
        payout: b.payout,
        payout_tx: row.payout_tx.clone(),
        refund_tx: row.refund_tx.clone(),
        error: row.error.clone(),
    })
}

fn transfer_call(token: Address, to: Address, value: U256) -> Call {
    Call {
        to: token,
        data: eip3009::transfer_calldata(to, value),
        value: U256::ZERO,
        gas_limit: TRANSFER_GAS,
    }
}

impl<G: Goods> Till<G> {
    fn now_ms(&self) -> u64 {
        self.parts.clock.now_ms()
    }

    fn sender(&self) -> Result<(Address, &Sender), OrderError> {
        self.parts
            .sender
            .as_ref()
            .map(|(a, s)| (*a, s.as_ref()))
            .ok_or(OrderError::RelayerUnavailable(self.checkout.chain_id))
    }

    fn idem(&self, key: Option<&str>) -> Option<String> {
        key.map(|k| format!("{}:{k}", self.feature))
    }

    /// The order an idempotency key names, once it is finished
    /// ([`OrderError::InFlight`] while it runs).
    pub async fn by_key(&self, key: &str) -> Result<Option<Order>, OrderError> {
        let key = self.idem(Some(key));
        let row = self
            .parts
            .orders
            .order_by_key(key.as_deref().unwrap_or(""))
            .await?;
        row.as_ref()
            .map(|r| self.answer_existing(r, key.as_deref()))
            .transpose()
    }

    /// The order `id` of this feature.
    pub async fn order(&self, id: &str) -> Result<Option<Order>, OrderError> {
        let row = self.parts.orders.order(id).await?;
        row.filter(|r| r.feature == self.feature)
            .as_ref()
            .map(report)
            .transpose()
    }

    /// Checks `payment` for `new`, records the order, and runs it to its
    /// end (or until a step's outcome is unknown: then the resume job
    /// finishes it). A repeated key or payment answers the order it made.
    pub async fn place(
        &self,
        new: NewOrder,
        payment: &Payment,
        idem_key: Option<&str>,
    ) -> Result<Order, OrderError> {
        let t = &payment.transfer;
        let payment_key = self.checkout.payment_key(t);
        let idem = self.idem(idem_key);
        if let Some(key) = &idem {
            if let Some(row) = self.parts.orders.order_by_key(key).await? {
                if row.payment_key != payment_key {
                    return Err(OrderError::KeyReused);
                }
                return self.answer_existing(&row, Some(key));
            }
        }
        // a payment already taking its course is answered by its order (a
        // duplicate's checks would see the settlement pending); spent on
        // something else, it is spent
        let found = self
            .parts
            .orders
            .order_for(&payment_key, idem.as_deref())
            .await?;
        if let Some(row) = found {
            let b = body_of(&row)?;
            if b.goods != new.goods {
                let nonce = b.payment.nonce.parse().unwrap_or_default();
                return Err(PaymentError::NonceUsed(nonce).into());
            }
            return self.answer_existing(&row, idem.as_deref());
        }
        let (relayer, _) = self.sender()?;
        let now = self.now_ms();
        let most = new.amount + new.amount / U256::from(OVERPAY_DIVISOR);
        if t.value > most {
            return Err(CheckoutError::Malformed(format!(
                "payment.value {} is more than this invoice's {}: pay the amount the invoice asks (an overpayment is never taken)",
                t.value, new.amount
            ))
            .into());
        }
        self.checkout
            .verify(
                &self.parts.reader,
                relayer,
                payment,
                (new.amount, now / 1_000),
            )
            .await?;
        let body = Body {
            goods: new.goods,
            amount: new.amount.to_string(),
            payout: new.payout,
            payment: PaymentRecord::of(payment.network.clone(), t),
        };
        let row = OrderRow {
            id: format!("or_{}", &hex_of(&payment_key)[..24]),
            feature: self.feature.into(),
            idem_key: idem.clone(),
            payment_key,
            hold: new.hold.clone(),
            chain_id: self.checkout.chain_id,
            state: ACCEPTED.into(),
            body: serde_json::to_string(&body).expect("an order body serializes"),
            settle_tx: None,
            delivered: None,
            payout_tx: None,
            refund_tx: None,
            error: None,
            created_ms: now,
        };
        match self
            .parts
            .orders
            .begin_order(&row, (&self.holder, now + self.lease_ms))
            .await?
        {
            Begun::New(row) => {
                tracing::info!(id = %row.id, feature = self.feature, "order paid; settling");
                report(&self.drive(&row.id).await?)
            }
            Begun::Existing(row) => self.answer_existing(&row, idem.as_deref()),
            Begun::Held => Err(OrderError::Held(new.hold.unwrap_or_default())),
        }
    }

    fn answer_existing(&self, row: &OrderRow, idem: Option<&str>) -> Result<Order, OrderError> {
        if row.idem_key.as_deref() != idem {
            // the same payment under another key (or none): already spent
            let nonce = body_of(row)?.payment.nonce.parse().unwrap_or_default();
            return Err(PaymentError::NonceUsed(nonce).into());
        }
        if OPEN.contains(&row.state.as_str()) {
            return Err(OrderError::InFlight);
        }
        report(row)
    }

    /// Drives order `id` until it is terminal or a step's outcome is
    /// unknown, while this replica holds its lease: renewed before each
    /// step and every third of the lease during one
    /// ([`relay_store::durable::renewing`]), each move recorded only from
    /// the state it was made in and only by the holder. A driver that lost
    /// the lease stops ([`OrderError::InFlight`]); the holder drives on.
    pub async fn drive(&self, id: &str) -> Result<OrderRow, OrderError> {
        let orders = &self.parts.orders;
        loop {
            let row = orders
                .order(id)
                .await?
                .ok_or_else(|| OrderError::Chain(format!("no order {id}")))?;
            if !OPEN.contains(&row.state.as_str()) {
                orders.lease_order(id, &self.holder, 0).await?;
                return Ok(row);
            }
            if !orders
                .lease_order(id, &self.holder, self.now_ms() + self.lease_ms)
                .await?
            {
                return Err(self.lost(id));
            }
            let body = body_of(&row)?;
            let next = match row.state.as_str() {
                ACCEPTED => self.held(id, self.settle(&row, &body)).await?,
                SETTLED => self.held(id, self.deliver(&row)).await?,
                DELIVERED => self.held(id, self.pay_out(&row, &body)).await?,
                REFUNDING => self.held(id, self.refund(&row, &body)).await?,
                other => return Err(OrderError::Chain(format!("{id}: no step for {other}"))),
            };
            let Some(next) = next else {
                return Err(self.lost(id));
            };
            let from = (row.state.as_str(), self.holder.as_str());
            if !orders.update_order(id, &next, from).await? {
                return Err(self.lost(id));
            }
            tracing::info!(%id, state = %next.state, "order moved");
            if next.state == SETTLED {
                halt_at(FAULT_ENV, "settled");
            }
        }
    }

    /// Runs one step of `id` renewing its lease every third of the lease;
    /// the step's move, or `None` when the lease was lost meanwhile.
    async fn held(
        &self,
        id: &str,
        step: impl std::future::Future<Output = Result<OrderMove, OrderError>>,
    ) -> Result<Option<OrderMove>, OrderError> {
        let lease = std::time::Duration::from_millis(self.lease_ms);
        let renew = || {
            let until = self.now_ms() + self.lease_ms;
            self.parts.orders.lease_order(id, &self.holder, until)
        };
        let (next, lost) = relay_store::durable::renewing(lease, renew, step).await;
        Ok((!lost).then_some(next?))
    }

    /// The answer of a driver that lost `id`'s lease to another replica.
    fn lost(&self, id: &str) -> OrderError {
        tracing::warn!(%id, "the order's lease was lost; its holder drives it");
        OrderError::InFlight
    }

    async fn settle(&self, row: &OrderRow, b: &Body) -> Result<OrderMove, OrderError> {
        let (relayer, sender) = self.sender()?;
        let t = b.payment.transfer().map_err(OrderError::Chain)?;
        let journaled = orders_has_step(&self.parts.orders, &row.id, 0).await?;
        if !journaled {
            if let Some(why) = self.goods.check(&report(row)?).await? {
                return Ok(OrderMove {
                    error: Some(format!("{why}; nothing was charged")),
                    ..moved(REFUSED)
                });
            }
            // the payer may have moved its funds since the request was checked
            let refusal = self
                .checkout
                .refusal(&self.parts.reader, relayer, &t)
                .await?;
            if let Some(why) = refusal {
                return Ok(OrderMove {
                    error: Some(format!(
                        "the payment cannot be settled: {why}; nothing was sent"
                    )),
                    ..moved(FAILED)
                });
            }
        }
        let call = Call {
            to: self.checkout.token,
            data: eip3009::settle_calldata(&t)?,
            value: U256::ZERO,
            gas_limit: crate::checkout::SETTLE_GAS,
        };
        Ok(match sender.run_step(&row.id, 0, &call).await {
            Ok(r) => OrderMove {
                settle_tx: Some(format!("{:#x}", r.transaction_hash)),
                ..moved(SETTLED)
            },
            Err(SendError::Reverted(h)) => OrderMove {
                settle_tx: Some(format!("{h:#x}")),
                error: Some("the payment's settlement reverted; nothing was charged".into()),
                ..moved(FAILED)
            },
            Err(SendError::NotSent(e)) => OrderMove {
                error: Some(format!("the payment could not be settled: {e}")),
                ..moved(FAILED)
            },
            Err(e) => return Err(OrderError::Chain(e.to_string())),
        })
    }

    async fn deliver(&self, row: &OrderRow) -> Result<OrderMove, OrderError> {
        let order = report(row)?;
        Ok(match self.goods.deliver(&order).await? {
            Delivery::Delivered(reference) => OrderMove {
                delivered: Some(reference),
                ..moved(DELIVERED)
            },
            Delivery::Refused(why) => OrderMove {
                error: Some(format!("{why}; the payment is refunded")),
                ..moved(REFUNDING)
            },
        })
    }

    async fn pay_out(&self, row: &OrderRow, b: &Body) -> Result<OrderMove, OrderError> {
        let Some(p) = &b.payout else {
            return Ok(moved(DONE));
        };
        let bad = |e: &dyn std::fmt::Display| OrderError::Chain(format!("payout: {e}"));
        let to: Address = p.to.parse().map_err(|e| bad(&e))?;
        let amount: U256 = p.amount.parse().map_err(|e| bad(&e))?;
        if amount.is_zero() {
            return Ok(moved(DONE));
        }
        let (_, sender) = self.sender()?;
        let call = transfer_call(self.checkout.token, to, amount);
        match sender.run_step(&row.id, 1, &call).await {
            Ok(r) => Ok(OrderMove {
                payout_tx: Some(format!("{:#x}", r.transaction_hash)),
                ..moved(DONE)
            }),
            Err(e) => Err(bad(&e)),
        }
    }

    async fn refund(&self, row: &OrderRow, b: &Body) -> Result<OrderMove, OrderError> {
        let t = b.payment.transfer().map_err(OrderError::Chain)?;
        let (_, sender) = self.sender()?;
        let call = transfer_call(self.checkout.token, t.from, t.value);
        match sender.run_step(&row.id, 2, &call).await {
            Ok(r) => Ok(OrderMove {
                refund_tx: Some(format!("{:#x}", r.transaction_hash)),
                ..moved(REFUNDED)
            }),
            Err(e) => Err(OrderError::Chain(format!("refund: {e}"))),
        }
    }

    /// One pass of the resume job: drives every open order of this feature
    /// whose holder's lease lapsed. Returns how many it drove.
    pub async fn resume(&self) -> usize {
        let mut n = 0;
        loop {
            let now = self.now_ms();
            let claimed = self
                .parts
                .orders
                .claim_order((self.feature, &self.holder), (now, now + self.lease_ms))
                .await;
            let row = match claimed {
                Ok(Some(row)) => row,
                Ok(None) => return n,
                Err(e) => {
                    tracing::warn!(error = %e, "order resume: store");
                    return n;
                }
            };
            n += 1;
            tracing::info!(id = %row.id, state = %row.state, "resuming order");
            if let Err(e) = self.drive(&row.id).await {
                tracing::warn!(id = %row.id, error = %e, "resumed order stopped");
            }
        }
    }
}

async fn orders_has_step(orders: &Orders, id: &str, step: i64) -> Result<bool, OrderError> {
    Ok(orders.journal_of(id).await?.iter().any(|e| e.step == step))
}

fn hex_of(s: &str) -> String {
    keccak256(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
