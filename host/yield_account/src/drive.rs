//! Driving an accepted spend to its end (module docs of [`super::spend`]):
//!
//! - `ACCEPTED` → the redeem (journal step 0 under the spend's id: signed
//!   and journaled before broadcast, never sent twice) → `REDEEMED`, or
//!   `FAILED` when it fails (nothing moved);
//! - `REDEEMED` → the delivery route started through the engine
//!   ([`super::leg`]) → `ROUTING`, or the refund when no rail takes it;
//! - `ROUTING` → once the route is terminal: `DELIVERED`; the refund when
//!   it failed before anything left the relayer; `FAILED` for the operator
//!   when funds may have left it.
//!
//! The refund (journal step 2) pays the redeemed `amount` back to the agent
//! on srcChain. One replica drives a spend at a time: the one that accepted
//! it holds its lease while it follows the route; when it dies, the lease
//! lapses and [`YieldService::resume`] on any replica takes over.

use std::{sync::Arc, time::Duration};

use crate::store::{NcSpendMove, NcSpendRow};
use alloy::primitives::{Address, U256};
use relay_chain::sender::{Call, SendError};
use relay_store::events::RouteChange;
use relay_types::{RouteRecord, RouteStatus};
use tokio::sync::broadcast::error::RecvError;

use super::{
    leg::{Leg, LegRouter, LegState},
    spend::{Body, ACCEPTED, DELIVERED, FAILED, REDEEMED, REDEEM_GAS, REFUNDED, ROUTING},
    YieldError, YieldService,
};

/// Gas of the refund (an ERC-20 transfer).
const REFUND_GAS: u64 = 100_000;
/// Journal steps under a spend's id.
const REDEEM_STEP: i64 = 0;
const REFUND_STEP: i64 = 2;

impl YieldService {
    /// Drives spend `id` as far as it goes now (module docs); the caller
    /// holds its lease, which is renewed every third of it while the spend
    /// moves (a slow redeem or route start never lets a second replica in).
    /// Answers the record, `ROUTING` while the route runs.
    pub async fn drive(&self, id: &str, legs: &dyn LegRouter) -> Result<NcSpendRow, YieldError> {
        let work = self.drive_held(id, legs);
        tokio::pin!(work);
        let mut renew = tokio::time::interval(self.renew_every());
        renew.tick().await;
        loop {
            tokio::select! {
                moved = &mut work => return moved,
                _ = renew.tick() => self.hold(id).await,
            }
        }
    }

    /// How often a held lease is renewed: a third of it.
    fn renew_every(&self) -> Duration {
        Duration::from_millis((self.deps.settings.lease_ms / 3).max(10))
    }

    /// [`Self::drive`]'s steps, the lease held by the caller.
    async fn drive_held(&self, id: &str, legs: &dyn LegRouter) -> Result<NcSpendRow, YieldError> {
        loop {
            let row = self
                .deps
                .store
                .nc_spend(id)
                .await?
                .ok_or_else(|| YieldError::Store(format!("no spend {id}")))?;
            let b: Body =
                serde_json::from_str(&row.body).map_err(|e| YieldError::Store(e.to_string()))?;
            let next = match row.state.as_str() {
                ACCEPTED => self.redeem(&row, &b).await?,
                REDEEMED => self.route(&row, &b, legs).await?,
                ROUTING => match self.settle(&row, &b).await? {
                    Some(next) => next,
                    None => return Ok(row),
                },
                _ => return Ok(row),
            };
            self.deps.store.update_nc_spend(id, &next).await?;
            tracing::info!(%id, state = %next.state, "yield spend moved");
        }
    }

    /// Follows spend `id`, held by this replica, until it settles: driven
    /// again whenever its route changes (and at least every third of the
    /// lease, which it renews). Any failure lets the lease go; the resume
    /// pass finishes it.
    pub async fn follow(self, id: String, legs: Arc<dyn LegRouter>) {
        let route = Leg::route_id(&id);
        let mut events = self.deps.store.route_events().subscribe();
        let every = self.renew_every();
        loop {
            match self.drive(&id, legs.as_ref()).await {
                Ok(row) if row.state == ROUTING => {}
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!(%id, error = %e, "yield spend: following stopped");
                    break;
                }
            }
            self.hold(&id).await;
            let _ = tokio::time::timeout(every, changed(&mut events, &route)).await;
        }
        self.release(&id).await;
    }

    /// One resume pass: every open spend whose holder's lease lapsed is
    /// claimed and driven (a spend whose route still runs is let go again
    /// until a later pass). Answers how many it drove.
    pub async fn resume(&self) -> usize {
        let legs = self.deps.legs.as_ref();
        let mut n = 0;
        loop {
            let now = self.deps.clock.now_ms();
            let until = now + self.deps.settings.lease_ms;
            let row = match self.deps.store.claim_nc_spend(now, until).await {
                Ok(Some(row)) => row,
                Ok(None) => return n,
                Err(e) => {
                    tracing::warn!(error = %e, "yield spend resume: store");
                    return n;
                }
            };
            n += 1;
            tracing::info!(id = %row.id, state = %row.state, "resuming yield spend");
            match self.drive(&row.id, legs).await {
                // Still routing: let it go until the next pass (a later
                // claim in this pass would only find it again).
                Ok(r) if r.state == ROUTING => {
                    let next = now + self.deps.settings.resume_interval_ms.max(1);
                    let _ = self.deps.store.lease_nc_spend(&row.id, next).await;
                }
                Ok(_) => self.release(&row.id).await,
                Err(e) => {
                    tracing::warn!(id = %row.id, error = %e, "resumed yield spend stopped");
                    self.release(&row.id).await;
                }
            }
        }
    }

    /// Renews this replica's hold on spend `id`.
    async fn hold(&self, id: &str) {
        let until = self.deps.clock.now_ms() + self.deps.settings.lease_ms;
        if let Err(e) = self.deps.store.lease_nc_spend(id, until).await {
            tracing::warn!(%id, error = %e, "yield spend: lease not renewed");
        }
    }

    /// Lets spend `id` go (any replica may drive it).
    pub(super) async fn release(&self, id: &str) {
        if let Err(e) = self.deps.store.lease_nc_spend(id, 0).await {
            tracing::warn!(%id, error = %e, "yield spend: lease not released");
        }
    }

    /// Journal step `step` of `row` on `chain` ([`relay_chain::sender::Sender::run_step`]).
    async fn step(
        &self,
        row: &NcSpendRow,
        (chain, step): (u64, i64),
        call: Call,
    ) -> Result<Result<String, SendError>, YieldError> {
        let sent = self.sender(chain)?.run_step(&row.id, step, &call).await;
        Ok(sent.map(|r| format!("{:#x}", r.transaction_hash)))
    }

    async fn redeem(&self, row: &NcSpendRow, b: &Body) -> Result<NcSpendMove, YieldError> {
        let src = self.vault(b.src_chain)?;
        let relayer = self.relayer()?;
        let call = Call {
            to: src.vault,
            data: relay_chain::vault::withdraw_calldata(b.amount, relayer, b.agent),
            value: U256::ZERO,
            gas_limit: REDEEM_GAS,
        };
        Ok(
            match self.step(row, (b.src_chain, REDEEM_STEP), call).await? {
                Ok(hash) => NcSpendMove {
                    state: REDEEMED.into(),
                    redeem_tx: Some(hash),
                    ..Default::default()
                },
                Err(e) => NcSpendMove {
                    state: FAILED.into(),
                    redeem_tx: reverted(&e),
                    error: Some(format!("the redeem failed, nothing moved: {e}")),
                    ..Default::default()
                },
            },
        )
    }

    /// The delivery leg of record `row`.
    fn leg_of(&self, row: &NcSpendRow, b: &Body) -> Leg {
        let chains = (b.src_chain, b.to_chain);
        let who = (b.agent, b.to_address);
        self.leg(Leg::route_id(&row.id), chains, b.amount - b.fee, who)
    }

    async fn route(
        &self,
        row: &NcSpendRow,
        b: &Body,
        legs: &dyn LegRouter,
    ) -> Result<NcSpendMove, YieldError> {
        match legs.start(&self.leg_of(row, b)).await {
            Ok(()) => Ok(NcSpendMove {
                state: ROUTING.into(),
                ..Default::default()
            }),
            Err(e) => {
                let why = format!("no rail took the delivery ({e})");
                self.refund(row, b, why).await
            }
        }
    }

    /// The move once the delivery route is terminal; `None` while it runs.
    async fn settle(&self, row: &NcSpendRow, b: &Body) -> Result<Option<NcSpendMove>, YieldError> {
        let id = Leg::route_id(&row.id);
        let Some((route, _)) = self.deps.store.get_route(&id).await? else {
            // Recorded ROUTING, but the route is not there: start it again.
            return Ok(Some(NcSpendMove {
                state: REDEEMED.into(),
                ..Default::default()
            }));
        };
        Ok(match leg_state(&route) {
            LegState::Running => None,
            LegState::Done(tx) => Some(NcSpendMove {
                state: DELIVERED.into(),
                deliver_tx: tx,
                ..Default::default()
            }),
            LegState::Failed { why, moved: false } => {
                let why = format!("the delivery route {id} failed before anything left the relayer ({why})");
                Some(self.refund(row, b, why).await?)
            }
            LegState::Failed { why, moved: true } => Some(NcSpendMove {
                state: FAILED.into(),
                error: Some(format!(
                    "the delivery route {id} failed after funds may have left the relayer ({why}); the operator settles it"
                )),
                ..Default::default()
            }),
        })
    }

    /// Pays the redeemed `amount` back to the agent on srcChain.
    async fn refund(
        &self,
        row: &NcSpendRow,
        b: &Body,
        why: String,
    ) -> Result<NcSpendMove, YieldError> {
        let src = self.vault(b.src_chain)?;
        let call = transfer(src.asset, b.agent, b.amount);
        Ok(
            match self.step(row, (b.src_chain, REFUND_STEP), call).await? {
                Ok(hash) => NcSpendMove {
                    state: REFUNDED.into(),
                    refund_tx: Some(hash),
                    error: Some(why),
                    ..Default::default()
                },
                Err(e) => NcSpendMove {
                    state: FAILED.into(),
                    refund_tx: reverted(&e),
                    error: Some(format!(
                        "{why}; the refund failed, left to the operator: {e}"
                    )),
                    ..Default::default()
                },
            },
        )
    }
}

/// Waits for a change of route `route` (or a resync).
async fn changed(events: &mut tokio::sync::broadcast::Receiver<RouteChange>, route: &str) {
    loop {
        match events.recv().await {
            Ok(RouteChange::Route(id)) if &*id == route => return,
            Ok(RouteChange::Route(_)) => {}
            Ok(RouteChange::Resync) | Err(RecvError::Lagged(_)) => return,
            Err(RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}

/// A delivery route's state as the spend reads it.
pub(super) fn leg_state(r: &RouteRecord) -> LegState {
    match r.status {
        RouteStatus::Done => LegState::Done(r.dest_tx.clone().or_else(|| r.src_tx.clone())),
        RouteStatus::Failed | RouteStatus::FundsRequired | RouteStatus::Dry => {
            let (why, in_doubt) = match &r.failure {
                Some(f) => (format!("{}: {}", f.code, f.message), f.funds_moved),
                None => (r.status.public().to_string(), false),
            };
            LegState::Failed {
                why,
                moved: in_doubt || r.src_tx.is_some() || r.dest_tx.is_some(),
            }
        }
        _ => LegState::Running,
    }
}

/// The hash of a transaction that mined and reverted.
fn reverted(e: &SendError) -> Option<String> {
    match e {
        SendError::Reverted(h) => Some(format!("{h:#x}")),
        _ => None,
    }
}

/// An ERC-20 `transfer(to, amount)` of `token`.
fn transfer(token: Address, to: Address, amount: U256) -> Call {
    Call {
        to: token,
        data: relay_chain::eip3009::transfer_calldata(to, amount),
        value: U256::ZERO,
        gas_limit: REFUND_GAS,
    }
}
