//! The paid run: settle the payment, then sponsor; refund when the
//! sponsorship fails after the payment settled.
//!
//! Each of the three side effects is a step of the relayer's journal under
//! the sponsorship's id (0 settle, 1 type-4, 2 refund): signed and
//! journaled before it is broadcast, so after a crash the very same bytes
//! are finished, never a second transaction ([`relay_chain::sender`]). The
//! record moves `ACCEPTED → SETTLED → SPONSORED`, or `SETTLED → REFUNDING →
//! REFUNDED` when the type-4 transaction cannot be sent or reverts, or
//! `ACCEPTED → FAILED` when the payment cannot be settled (nothing was
//! charged). A replica holds a record by a lease it renews before each
//! step; the resume job ([`SponsorService::resume`]) drives records whose
//! holder died. So a crash never charges without sponsoring or refunding,
//! and never sponsors twice.
//!
//! Fault injection for the crash tests: `RELAY_FAULT_SPONSOR=settled`
//! halts the run right after the payment's settlement is recorded,
//! `=planned` right after the type-4 transaction is journaled (before it
//! is broadcast), so the test can `kill -9` the process exactly there.

use alloy::primitives::{keccak256, Address, Bytes, U256};
use relay_chain::{
    eip3009::{self, SignedTransfer},
    eip7702::SignedAuthorization,
    sender::{Call, SendError, Sender},
};
use relay_store::durable::renewing;
use relay_x402::orders::PaymentRecord;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    plan::{parse, Plan, SponsorAsk, SETTLE_GAS},
    store::{SponsorshipMove, SponsorshipRow},
    x402::{network_name, Payment},
    SponsorError, SponsorService,
};

/// Paid, not yet settled.
pub const ACCEPTED: &str = "ACCEPTED";
/// Payment settled, sponsorship not yet mined.
pub const SETTLED: &str = "SETTLED";
/// The type-4 transaction mined.
pub const SPONSORED: &str = "SPONSORED";
/// The sponsorship failed after settling; the refund is not yet mined.
pub const REFUNDING: &str = "REFUNDING";
/// Refunded.
pub const REFUNDED: &str = "REFUNDED";
/// The payment could not be settled: nothing was charged or sent.
pub const FAILED: &str = "FAILED";
/// States the resume job drives.
pub const OPEN: [&str; 3] = [ACCEPTED, SETTLED, REFUNDING];

/// The fault-injection variable ([`self`]).
pub const FAULT_ENV: &str = "RELAY_FAULT_SPONSOR";

/// Gas of a refund (an ERC-20 transfer).
const REFUND_GAS: u64 = 80_000;

/// What a record's body keeps: the ask, the plan it was paid for, the
/// payment.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    ask: SponsorAsk,
    plan: Plan,
    #[serde(flatten)]
    payment: PaymentRecord,
}

impl Body {
    fn transfer(&self) -> Result<SignedTransfer, SponsorError> {
        self.payment.transfer().map_err(SponsorError::Store)
    }
}

/// A sponsorship as the API reports it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sponsorship {
    /// `sp_…`.
    pub id: String,
    /// `ACCEPTED`, `SETTLED`, `SPONSORED`, `REFUNDING`, `REFUNDED` or `FAILED`.
    pub state: String,
    /// The chain.
    pub chain_id: u64,
    /// The type-4 transaction (when sent).
    pub tx_hash: Option<String>,
    /// The payment's settlement.
    pub settle_tx: Option<String>,
    /// The refund (when the sponsorship failed after settling).
    pub refund_tx: Option<String>,
    /// Why it failed or was refunded.
    pub error: Option<String>,
    /// Who paid.
    pub payer: String,
    /// The network the payment was made on (x402 name).
    pub network: String,
    /// The plan paid for.
    pub plan: Plan,
}

fn body_of(row: &SponsorshipRow) -> Result<Body, SponsorError> {
    serde_json::from_str(&row.body).map_err(|e| SponsorError::Store(format!("record body: {e}")))
}

fn report(row: &SponsorshipRow) -> Result<Sponsorship, SponsorError> {
    let b = body_of(row)?;
    Ok(Sponsorship {
        id: row.id.clone(),
        state: row.state.clone(),
        chain_id: row.chain_id,
        tx_hash: row.sponsor_tx.clone(),
        settle_tx: row.settle_tx.clone(),
        refund_tx: row.refund_tx.clone(),
        error: row.error.clone(),
        payer: b.payment.payer,
        network: b.payment.network,
        plan: b.plan,
    })
}

fn fault(point: &str) {
    relay_x402::orders::halt_at(FAULT_ENV, point);
}

fn moved(state: &str) -> SponsorshipMove {
    SponsorshipMove {
        state: state.into(),
        ..Default::default()
    }
}

impl SponsorService {
    fn sender(&self, chain: u64) -> Result<&Sender, SponsorError> {
        self.deps
            .parts
            .senders
            .as_ref()
            .and_then(|s| s.by_chain.get(&chain))
            .map(|s| s.as_ref())
            .ok_or(SponsorError::RelayerUnavailable(chain))
    }

    /// Checks `payment` against `plan`'s invoice: network, signature,
    /// payee, amount, window, unused nonce, funds (the settlement
    /// simulated).
    async fn verify_payment(&self, plan: &Plan, payment: &Payment) -> Result<(), SponsorError> {
        let checkout = self.checkout(plan.chain_id)?;
        let relayer = self.relayer(plan.chain_id)?;
        let amount = plan.price.amount.parse().unwrap_or(U256::MAX);
        let reader = &self.deps.parts.reader;
        let now = self.now_ms() / 1_000;
        Ok(checkout
            .verify(reader, relayer, payment, (amount, now))
            .await?)
    }

    /// The relayer that settles on `chain`.
    fn relayer(&self, chain: u64) -> Result<Address, SponsorError> {
        self.sender(chain)?;
        let relayer = self.deps.parts.senders.as_ref().map(|s| s.relayer);
        relayer.ok_or(SponsorError::RelayerUnavailable(chain))
    }

    /// The record an idempotency key names, reported once it is
    /// finished ([`SponsorError::InFlight`] while it runs).
    pub async fn by_key(&self, key: &str) -> Result<Option<Sponsorship>, SponsorError> {
        let row = self.deps.store.sponsorship_by_key(key).await?;
        row.as_ref()
            .map(|r| self.answer_existing(r, Some(key)))
            .transpose()
    }

    /// Checks, prices and verifies; records the paid sponsorship; settles
    /// and sponsors (or refunds). A repeated key or payment answers with
    /// the record it already has.
    pub async fn pay_and_sponsor(
        &self,
        ask: &SponsorAsk,
        payment: &Payment,
        idem_key: Option<&str>,
    ) -> Result<Sponsorship, SponsorError> {
        let t = &payment.transfer;
        let (_, token, _) = self.asset_on(ask.chain_id)?;
        let payment_key = format!("{}:{token:#x}:{:#x}:{}", ask.chain_id, t.from, t.nonce);
        if let Some(done) = self.repeated(idem_key, &payment_key).await? {
            return Ok(done);
        }
        self.sender(ask.chain_id)?;
        let plan = self.plan(ask).await?;
        self.verify_payment(&plan, payment).await?;
        let network = network_name(&self.sponsor_config().networks, ask.chain_id);
        let body = Body {
            ask: ask.clone(),
            plan,
            payment: PaymentRecord::of(network, t),
        };
        let now = self.now_ms();
        let row = SponsorshipRow {
            id: format!(
                "sp_{}",
                &hex::encode(keccak256(payment_key.as_bytes()))[..24]
            ),
            idem_key: idem_key.map(String::from),
            payment_key,
            chain_id: ask.chain_id,
            state: ACCEPTED.into(),
            body: serde_json::to_string(&body).map_err(|e| SponsorError::Store(e.to_string()))?,
            settle_tx: None,
            sponsor_tx: None,
            refund_tx: None,
            error: None,
            created_ms: now,
        };
        let (row, new) = self
            .deps
            .store
            .begin_sponsorship(&row, (&self.replica, now + self.sponsor_config().lease_ms))
            .await?;
        if !new {
            return self.answer_existing(&row, idem_key);
        }
        tracing::info!(id = %row.id, chain = row.chain_id, "sponsorship paid; settling");
        let done = self.drive(&row.id).await?;
        report(&done)
    }

    async fn repeated(
        &self,
        idem_key: Option<&str>,
        payment_key: &str,
    ) -> Result<Option<Sponsorship>, SponsorError> {
        let Some(key) = idem_key else {
            return Ok(None);
        };
        match self.deps.store.sponsorship_by_key(key).await? {
            None => Ok(None),
            Some(row) if row.payment_key != payment_key => Err(SponsorError::KeyReused),
            Some(row) => self.answer_existing(&row, Some(key)).map(Some),
        }
    }

    fn answer_existing(
        &self,
        row: &SponsorshipRow,
        idem_key: Option<&str>,
    ) -> Result<Sponsorship, SponsorError> {
        if idem_key.is_some() && row.idem_key.as_deref() != idem_key {
            // the same payment under another key (or none): already spent
            return Err(eip3009::PaymentError::NonceUsed(
                body_of(row)?.payment.nonce.parse().unwrap_or_default(),
            )
            .into());
        }
        if OPEN.contains(&row.state.as_str()) {
            return Err(SponsorError::InFlight);
        }
        report(row)
    }

    /// Drives record `id` until it is terminal or a step's outcome is
    /// unknown (then the resume job picks it up again), while this replica
    /// holds its lease: renewed before each step and every third of the
    /// lease during one (a settlement may wait on a slow block), each move
    /// recorded only from the state it was made in and only by the holder.
    /// A driver that lost the lease stops ([`SponsorError::InFlight`]): the
    /// holder drives on, finishing any journaled transaction, never a
    /// second one nor a refund of a sponsorship that ran.
    pub async fn drive(&self, id: &str) -> Result<SponsorshipRow, SponsorError> {
        loop {
            let row = self
                .deps
                .store
                .sponsorship(id)
                .await?
                .ok_or_else(|| SponsorError::Store(format!("no sponsorship {id}")))?;
            if !OPEN.contains(&row.state.as_str()) {
                self.deps
                    .store
                    .lease_sponsorship(id, &self.replica, 0)
                    .await?;
                return Ok(row);
            }
            if !self.renew(id).await? {
                return Err(self.lost(id));
            }
            let body = body_of(&row)?;
            let next = match row.state.as_str() {
                ACCEPTED => self.held(id, self.settle(&row, &body)).await?,
                SETTLED => self.held(id, self.sponsor(&row, &body)).await?,
                REFUNDING => self.held(id, self.refund(&row, &body)).await?,
                other => return Err(SponsorError::Store(format!("{id}: no step for {other}"))),
            };
            let from = (row.state.as_str(), self.replica.as_str());
            let Some(next) = next else {
                return Err(self.lost(id));
            };
            if !self.deps.store.update_sponsorship(id, &next, from).await? {
                return Err(self.lost(id));
            }
            tracing::info!(%id, state = %next.state, "sponsorship moved");
            if next.state == SETTLED {
                fault("settled");
            }
        }
    }

    /// Renews this replica's lease of `id`: whether it still held it.
    async fn renew(&self, id: &str) -> Result<bool, SponsorError> {
        let until = self.now_ms() + self.sponsor_config().lease_ms;
        Ok(self
            .deps
            .store
            .lease_sponsorship(id, &self.replica, until)
            .await?)
    }

    /// Runs one step of `id` while renewing its lease every third of the
    /// lease ([`renewing`]); the step's move, or `None` when the lease was
    /// lost meanwhile.
    async fn held(
        &self,
        id: &str,
        step: impl std::future::Future<Output = Result<SponsorshipMove, SponsorError>>,
    ) -> Result<Option<SponsorshipMove>, SponsorError> {
        let lease_ms = self.sponsor_config().lease_ms;
        let lease = std::time::Duration::from_millis(lease_ms);
        let renew = || {
            let until = self.now_ms() + lease_ms;
            self.deps.store.lease_sponsorship(id, &self.replica, until)
        };
        let (next, lost) = renewing(lease, renew, step).await;
        Ok((!lost).then_some(next?))
    }

    /// The answer of a driver that lost `id`'s lease to another replica.
    fn lost(&self, id: &str) -> SponsorError {
        tracing::warn!(%id, "the sponsorship's lease was lost; its holder drives it");
        SponsorError::InFlight
    }

    /// Whether step `step` of `row` is journaled (planned or further).
    async fn has_step(&self, row: &SponsorshipRow, step: i64) -> Result<bool, SponsorError> {
        let journal = self.deps.store.journal_of(&row.id).await?;
        Ok(journal.iter().any(|e| e.step == step))
    }

    /// Why `ask` cannot be sponsored any more (the authority's nonce moved
    /// since it paid, the batch would revert, …), checked again right
    /// before the type-4 transaction is signed; `None` when it still can.
    async fn no_longer_sponsorable(
        &self,
        ask: &SponsorAsk,
    ) -> Result<Option<String>, SponsorError> {
        match self.plan(ask).await {
            Ok(_) => Ok(None),
            Err(
                e @ (SponsorError::Authorization { .. }
                | SponsorError::WouldRevert(_)
                | SponsorError::Target(_)
                | SponsorError::Invalid { .. }),
            ) => Ok(Some(e.to_string())),
            Err(e) => Err(e),
        }
    }

    /// Runs journal step `step` of `id`: finishes the journaled attempt
    /// if there is one, else plans one from `build` and sends it.
    async fn step(
        &self,
        row: &SponsorshipRow,
        step: i64,
        build: impl FnOnce() -> Result<(Call, Vec<SignedAuthorization>), SponsorError>,
    ) -> Result<Result<String, SendError>, SponsorError> {
        let sender = self.sender(row.chain_id)?;
        let journaled: Vec<_> = self
            .deps
            .store
            .journal_of(&row.id)
            .await?
            .into_iter()
            .filter(|e| e.step == step)
            .collect();
        let attempts = if journaled.is_empty() {
            let (call, auths) = build()?;
            match sender.plan_delegated(&row.id, step, &call, &auths).await {
                Ok(e) => vec![e],
                Err(e) => return Ok(Err(e)),
            }
        } else {
            journaled
        };
        if step == 1 {
            fault("planned");
        }
        Ok(sender
            .complete(attempts)
            .await
            .map(|r| format!("{:#x}", r.transaction_hash)))
    }

    async fn settle(
        &self,
        row: &SponsorshipRow,
        b: &Body,
    ) -> Result<SponsorshipMove, SponsorError> {
        let (_, token, _) = self.asset_on(row.chain_id)?;
        let t = b.transfer()?;
        if !self.has_step(row, 0).await? {
            // the payer may have moved its funds since the request was checked
            let checkout = self.checkout(row.chain_id)?;
            let relayer = self.relayer(row.chain_id)?;
            let reader = &self.deps.parts.reader;
            if let Some(why) = checkout.refusal(reader, relayer, &t).await? {
                return Ok(SponsorshipMove {
                    error: Some(format!(
                        "the payment cannot be settled: {why}; nothing was sent"
                    )),
                    ..moved(FAILED)
                });
            }
        }
        let sent = self
            .step(row, 0, || {
                let data = eip3009::settle_calldata(&t)?;
                Ok((call(token, data, SETTLE_GAS), vec![]))
            })
            .await?;
        Ok(match sent {
            Ok(hash) => SponsorshipMove {
                settle_tx: Some(hash),
                ..moved(SETTLED)
            },
            Err(SendError::Reverted(h)) => SponsorshipMove {
                settle_tx: Some(format!("{h:#x}")),
                error: Some("the payment's settlement reverted; nothing was charged".into()),
                ..moved(FAILED)
            },
            Err(SendError::NotSent(e)) => SponsorshipMove {
                error: Some(format!("the payment could not be settled: {e}")),
                ..moved(FAILED)
            },
            Err(e) => return Err(SponsorError::Chain(e.to_string())),
        })
    }

    async fn sponsor(
        &self,
        row: &SponsorshipRow,
        b: &Body,
    ) -> Result<SponsorshipMove, SponsorError> {
        if !self.has_step(row, 1).await? {
            if let Some(why) = self.no_longer_sponsorable(&b.ask).await? {
                return Ok(SponsorshipMove {
                    error: Some(format!("{why}; the payment is refunded")),
                    ..moved(REFUNDING)
                });
            }
        }
        let p = parse(&b.ask)?;
        let to: Address = b.plan.envelope.to.parse().unwrap_or_default();
        let gas = b.plan.envelope.gas;
        let sent = self
            .step(row, 1, || {
                Ok((call(to, p.data.clone(), gas), vec![p.auth.clone()]))
            })
            .await?;
        Ok(match sent {
            Ok(hash) => SponsorshipMove {
                sponsor_tx: Some(hash),
                ..moved(SPONSORED)
            },
            Err(SendError::Reverted(h)) => SponsorshipMove {
                sponsor_tx: Some(format!("{h:#x}")),
                error: Some("the sponsored transaction reverted; the payment is refunded".into()),
                ..moved(REFUNDING)
            },
            Err(SendError::NotSent(e)) => SponsorshipMove {
                error: Some(format!(
                    "the sponsored transaction could not be sent ({e}); the payment is refunded"
                )),
                ..moved(REFUNDING)
            },
            Err(e) => return Err(SponsorError::Chain(e.to_string())),
        })
    }

    async fn refund(
        &self,
        row: &SponsorshipRow,
        b: &Body,
    ) -> Result<SponsorshipMove, SponsorError> {
        let (_, token, _) = self.asset_on(row.chain_id)?;
        let t = b.transfer()?;
        let sent = self
            .step(row, 2, || {
                Ok((
                    call(
                        token,
                        eip3009::transfer_calldata(t.from, t.value),
                        REFUND_GAS,
                    ),
                    vec![],
                ))
            })
            .await?;
        match sent {
            Ok(hash) => Ok(SponsorshipMove {
                refund_tx: Some(hash),
                ..moved(REFUNDED)
            }),
            Err(e) => Err(SponsorError::Chain(format!("refund: {e}"))),
        }
    }

    /// One pass of the resume job: drives every open record whose holder's
    /// lease lapsed. Returns how many it drove.
    pub async fn resume(&self) -> usize {
        let mut n = 0;
        loop {
            let now = self.now_ms();
            let until = now + self.sponsor_config().lease_ms;
            let claimed = self
                .deps
                .store
                .claim_sponsorship(&self.replica, (now, until))
                .await;
            let row = match claimed {
                Ok(Some(row)) => row,
                Ok(None) => return n,
                Err(e) => {
                    tracing::warn!(error = %e, "sponsorship resume: store");
                    return n;
                }
            };
            n += 1;
            tracing::info!(id = %row.id, state = %row.state, "resuming sponsorship");
            if let Err(e) = self.drive(&row.id).await {
                tracing::warn!(id = %row.id, error = %e, "resumed sponsorship stopped");
            }
        }
    }
}

fn call(to: Address, data: Bytes, gas_limit: u64) -> Call {
    Call {
        to,
        data,
        value: U256::ZERO,
        gas_limit,
    }
}
