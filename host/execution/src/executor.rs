//! Runs a route's plan step by step (DESIGN "durable journaled routes").
//! Each transaction goes through the crash-safe sender (journaled before
//! and after), and the route row advances with its outbox event after each
//! step, so a restart resumes at the first unfinished step without
//! repeating a finished one.
//!
//! Steps: the host's own transactions ([`super::steps`]); a deposit the
//! user makes (the route waits `AWAITING_DEPOSIT`); waiting on the upstream
//! (`upstream`), whose follow-up actions (a CCTP mint) are written
//! into the plan before they run. A failure after the relayer pulled the
//! sender's funds refunds them (`Executor::refund`) unless they may have
//! left the relayer.
//!
//! Every transaction is simulated right before it is first signed
//! ([`super::simulate::check_call`], at the pending block, once the steps
//! before it have mined): one that would revert is never broadcast — the
//! route fails `STEP_REFUSED` naming the revert, and a pull already made is
//! refunded. A step journaled before a crash is finished, not simulated
//! again.

use super::{
    relayer::Relayer,
    simulate::{check_call, SimulateError},
    steps::{call_for, StepPolicy},
    upstream::{RecheckCache, Upstream},
};
use alloy::primitives::Address;
use relay_chain::reader::ChainReader;
use relay_chain::sender::{Call, SendError};
use relay_config::HostConfig;
use relay_plugin_api::{Amount, PlanAction};
use relay_runtime::rails::RailSet;
use relay_store::{durable::renewing, Store, TxState};
use relay_types::{Failure, FailureCode, RouteRecord, RouteStatus};
use std::{collections::HashSet, sync::Arc};

/// The journal step index of a route's refund (after any plan step).
const REFUND_STEP: i64 = 1_000_000;

/// Why a step could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The route row could not be read or written.
    #[error("store: {0}")]
    Store(String),
    /// The route does not exist.
    #[error("unknown route {0}")]
    Unknown(String),
    /// A step this host cannot perform.
    #[error("step {0} is not supported by this host")]
    Unsupported(String),
    /// A send failed.
    #[error(transparent)]
    Send(#[from] SendError),
    /// A field of a step is malformed.
    #[error("bad step: {0}")]
    BadStep(String),
    /// The host's policy refuses the step.
    #[error("refused: {0}")]
    Refused(String),
    /// The step's transaction would revert: it was not sent.
    #[error("not sent: {0}")]
    WouldRevert(String),
    /// The upstream failed, refunded, or never finished.
    #[error("{code}: {message}")]
    Upstream {
        /// `UPSTREAM_FAILED`, `REFUNDED_BY_UPSTREAM` or `UPSTREAM_TIMEOUT`.
        code: FailureCode,
        /// Detail.
        message: String,
    },
}

impl ExecError {
    /// The failure's errorCode.
    fn code(&self) -> FailureCode {
        match self {
            ExecError::Refused(_) | ExecError::WouldRevert(_) => FailureCode::StepRefused,
            ExecError::Upstream { code, .. } => *code,
            ExecError::Send(SendError::Reverted(_)) => FailureCode::TxReverted,
            _ => FailureCode::ExecutionFailed,
        }
    }

    /// Whether the funds may still be delivered, so that no automatic
    /// refund is safe: an upstream that has not answered delivery by the
    /// track timeout once it may hold the funds — the relayer pulled them,
    /// or the user's own deposit reached it (it may deliver later; a refund
    /// then would pay the route twice). Such a route ends `FAILED` with
    /// `fundsMoved` and no `refundTx`, for the operator. Only a route still
    /// `awaiting_deposit` (the upstream never saw the user's deposit) moved
    /// nothing: not in doubt.
    fn funds_in_doubt(&self, awaiting_deposit: bool) -> bool {
        match self {
            ExecError::Upstream {
                code: FailureCode::UpstreamTimeout,
                ..
            } => !awaiting_deposit,
            _ => false,
        }
    }

    /// Whether the error says nothing about the route: its row or its
    /// transaction journal could not be read or written (the store went
    /// away), another replica holds it now, or a transaction of it is out
    /// and its fate not known yet (the chain did not answer, or gave no
    /// receipt in time). A transaction may be out already (a journal write
    /// fails after the broadcast as easily as before it), so the route is
    /// neither failed nor refunded: it resumes from its journal, which asks
    /// the chain before it sends anything — the same signed bytes, never a
    /// second transaction — until the chain tells (mined, or its nonce
    /// taken by another: not sent).
    fn leaves_route_to_resume(&self) -> bool {
        matches!(
            self,
            ExecError::Store(_)
                | ExecError::Send(SendError::Journal(_) | SendError::Unknown { .. })
        )
    }
}

pub(super) fn store_err(e: impl std::fmt::Display) -> ExecError {
    ExecError::Store(e.to_string())
}

/// Runs plans.
pub struct Executor {
    /// This process's claim owner name (unique per executor).
    owner: String,
    pub(super) store: Store,
    relayer: Arc<Relayer>,
    pub(super) rails: Arc<RailSet>,
    pub(super) config: Arc<HostConfig>,
    /// Simulates each transaction before it is signed; watches destinations.
    pub(super) reader: Arc<ChainReader>,
    permit2: Address,
    /// Status reads' recent upstream answers.
    pub(super) rechecks: RecheckCache,
    /// Routes a task of this replica is running now.
    running: std::sync::Mutex<HashSet<String>>,
}

/// A route marked as running in this replica until dropped.
struct Running<'a> {
    set: &'a std::sync::Mutex<HashSet<String>>,
    id: String,
}

impl<'a> Running<'a> {
    /// Marks `id` running; `None` when a task of this replica already runs it.
    fn enter(set: &'a std::sync::Mutex<HashSet<String>>, id: &str) -> Option<Self> {
        let fresh = set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_string());
        fresh.then(|| Running {
            set,
            id: id.to_string(),
        })
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor").finish_non_exhaustive()
    }
}

/// A route and the version it was read at.
pub(super) struct Held {
    pub r: RouteRecord,
    pub version: i64,
}

impl Held {
    /// Writes the route with `event`; the route must not have changed.
    pub(super) async fn save(&mut self, store: &Store, event: &str) -> Result<(), ExecError> {
        self.version = store
            .update_route(&self.r, self.version, event)
            .await
            .map_err(store_err)?
            .ok_or_else(|| store_err("route changed under the executor"))?;
        Ok(())
    }
}

impl Executor {
    /// An executor signing as `relayer`, tracking through `rails`,
    /// simulating through `reader`.
    pub fn new(
        store: Store,
        relayer: Arc<Relayer>,
        rails: Arc<RailSet>,
        config: Arc<HostConfig>,
        reader: Arc<ChainReader>,
    ) -> Result<Self, String> {
        let permit2 = config
            .permit2
            .parse()
            .map_err(|_| "permit2 is not an address".to_string())?;
        let owner = format!("relay-{:016x}", rand_id());
        Ok(Executor {
            owner,
            store,
            relayer,
            rails,
            config,
            reader,
            permit2,
            rechecks: RecheckCache::default(),
            running: Default::default(),
        })
    }

    /// Runs the route from its next unfinished step to a terminal state,
    /// holding its lease; `Ok(None)` when another replica holds it.
    #[tracing::instrument(skip_all, fields(route = id))]
    pub async fn run(&self, id: &str) -> Result<Option<RouteRecord>, ExecError> {
        // The lease keeps other replicas out; this keeps a second task of
        // this replica out (the request that created the route and the
        // resume tick may both reach for it; the lease is re-entrant).
        let Some(_running) = Running::enter(&self.running, id) else {
            tracing::debug!("already running in this replica");
            return Ok(None);
        };
        if !self.claim(id).await? {
            tracing::debug!("claimed by another replica");
            return Ok(None);
        }
        let out = self.run_claimed(id).await;
        let _ = self.store.release_route(id, &self.owner).await;
        out.map(Some)
    }

    /// Runs `step` of route `id` while renewing this executor's lease
    /// every third of it ([`renewing`]): the step's outcome, and whether
    /// the lease was lost meanwhile (the outcome is then not this
    /// executor's to act on). A step may wait minutes (a sender slot, a
    /// receipt, its upstream); the lease never lapses under it.
    async fn holding<T>(&self, id: &str, step: impl std::future::Future<Output = T>) -> (T, bool) {
        let lease_ms = self.config.execution.route_lease_ms;
        let renew = || self.store.claim_route(id, &self.owner, lease_ms);
        renewing(std::time::Duration::from_millis(lease_ms), renew, step).await
    }

    /// Takes or renews this executor's lease on the route.
    pub(super) async fn claim(&self, id: &str) -> Result<bool, ExecError> {
        self.store
            .claim_route(id, &self.owner, self.config.execution.route_lease_ms)
            .await
            .map_err(store_err)
    }

    async fn run_claimed(&self, id: &str) -> Result<RouteRecord, ExecError> {
        let (r, version) = self
            .store
            .get_route(id)
            .await
            .map_err(store_err)?
            .ok_or_else(|| ExecError::Unknown(id.into()))?;
        let mut h = Held { r, version };
        while !h.r.status.is_terminal() {
            if let Some(refund) = h.r.failure.as_ref().filter(|f| f.refund_due()) {
                tracing::info!(code = %refund.code, "finishing the refund");
                held(self.holding(id, self.refund(&mut h)).await)?;
                break;
            }
            if !self.claim(id).await? {
                return Err(store_err("lost the route's lease to another replica"));
            }
            let Some(step) = h.r.plan.steps.get(h.r.next_step).cloned() else {
                h.r.status = RouteStatus::Done;
                h.r.stage = Some("COMPLETED".into());
                h.save(&self.store, "done").await?;
                break;
            };
            match held(self.holding(id, self.step(&mut h, &step)).await) {
                Ok(()) => {
                    h.r.next_step += 1;
                    let event = if h.r.next_step == h.r.plan.steps.len() {
                        "done"
                    } else {
                        "status"
                    };
                    if event == "done" {
                        h.r.status = RouteStatus::Done;
                        h.r.stage = Some("COMPLETED".into());
                    }
                    h.save(&self.store, event).await?;
                }
                // The store went away or another replica holds the route
                // now: nothing about the route failed. Stop driving it; it
                // resumes from its journal (never a second transaction)
                // here or there. Failing it would refund a sender whose
                // funds may already be with the upstream, or whose payout
                // is already out, which then delivers too.
                Err(e) if e.leaves_route_to_resume() => {
                    tracing::warn!(error = %e, step = h.r.next_step, "left to resume");
                    return Err(e);
                }
                Err(e) => held(self.holding(id, self.fail(&mut h, e)).await)?,
            }
        }
        Ok(h.r)
    }

    async fn step(&self, h: &mut Held, step: &PlanAction) -> Result<(), ExecError> {
        match step {
            PlanAction::AwaitUpstream { reference } => {
                let follow = Upstream::new(self).wait(h, reference).await?;
                if !follow.is_empty() {
                    let at = h.r.next_step + 1;
                    let mut more = follow;
                    more.push(PlanAction::AwaitUpstream {
                        reference: String::new(),
                    });
                    h.r.plan.steps.splice(at..at, more);
                }
                Ok(())
            }
            PlanAction::DepositInstruction { .. } => {
                h.r.status = RouteStatus::AwaitingDeposit;
                h.r.stage = Some("RECEIVING".into());
                Ok(())
            }
            PlanAction::Permit2Pull { .. } if h.r.router.is_some() => {
                let (hash, replaced) = self.transact_router(&h.r).await?;
                h.r.src_tx = Some(hash);
                h.r.status = RouteStatus::Bridging;
                let stage = if replaced > 1 { "SENDING" } else { "RECEIVING" };
                h.r.stage = Some(stage.into());
                // The run loop steps past the last replaced step.
                h.r.next_step += replaced.saturating_sub(1);
                Ok(())
            }
            _ => {
                let hash = self.transact(&h.r, step).await?;
                advance(&mut h.r, step, hash);
                Ok(())
            }
        }
    }

    /// Sends the step's transaction (or finishes a journaled one).
    async fn transact(&self, r: &RouteRecord, step: &PlanAction) -> Result<String, ExecError> {
        let snap = self.rails.snapshot();
        let policy = StepPolicy::of_rail(
            &snap,
            &self.config,
            &r.rail,
            (self.relayer.address(), self.permit2),
        );
        let (chain, call) = call_for(step, r, &policy)?
            .ok_or_else(|| ExecError::BadStep(format!("{step:?} sends nothing")))?;
        if let PlanAction::Approve { amount, .. } = step {
            if let Some(hash) = self.approved_already(r, chain, &call, amount.0).await? {
                return Ok(hash);
            }
        }
        self.send_journaled(r, r.next_step as i64, chain, &call)
            .await
    }

    /// Sends a router route's one source transaction (the pull and the
    /// deposit call it replaces; [`super::compose`]), or finishes the
    /// journaled one; answers its hash and how many plan steps it covered.
    async fn transact_router(&self, r: &RouteRecord) -> Result<(String, usize), ExecError> {
        let snap = self.rails.snapshot();
        let policy = StepPolicy::of_rail(
            &snap,
            &self.config,
            &r.rail,
            (self.relayer.address(), self.permit2),
        );
        let (chain, call, replaced) = super::router::executor_call(r, &policy)?;
        let hash = self
            .send_journaled(r, r.next_step as i64, chain, &call)
            .await?;
        Ok((hash, replaced))
    }

    /// An approval whose allowance already covers `amount` needs no
    /// transaction (`Some("")`), unless this step was journaled before.
    async fn approved_already(
        &self,
        r: &RouteRecord,
        chain: u64,
        call: &Call,
        amount: alloy::primitives::U256,
    ) -> Result<Option<String>, ExecError> {
        let journaled = self.store.journal_of(&r.id).await.map_err(store_err)?;
        if journaled.iter().any(|e| e.step == r.next_step as i64) {
            return Ok(None);
        }
        let sender = self.route_sender(r, chain, &journaled)?;
        // approve(address spender, uint256): the spender is the first word.
        let spender = Address::from_slice(&call.data[16..36]);
        let allowance = sender.allowance(call.to, spender).await?;
        Ok((allowance >= amount).then(String::new))
    }

    async fn send_journaled(
        &self,
        r: &RouteRecord,
        index: i64,
        chain: u64,
        call: &Call,
    ) -> Result<String, ExecError> {
        let journal = self.store.journal_of(&r.id).await.map_err(store_err)?;
        let sender = self.route_sender(r, chain, &journal)?;
        // A step journaled before a crash is finished, never planned again.
        let attempts: Vec<_> = journal.into_iter().filter(|e| e.step == index).collect();
        if let Some(e) = attempts.iter().find(|e| e.state == TxState::Mined) {
            return e
                .tx_hash
                .clone()
                .ok_or_else(|| store_err("mined entry without a hash"));
        }
        let receipt = if attempts.is_empty() {
            self.simulate(chain, index, &sender.outgoing(call)).await?;
            sender.send(&r.id, index, call).await?
        } else {
            sender.complete(attempts).await?
        };
        Ok(format!("{:#x}", receipt.transaction_hash))
    }

    /// The key route `r` sends with on `chain`: the one that signed its
    /// journaled transactions there, else the one its id is assigned.
    fn route_sender(
        &self,
        r: &RouteRecord,
        chain: u64,
        journal: &[relay_store::JournalEntry],
    ) -> Result<&Arc<relay_chain::sender::Sender>, ExecError> {
        let chain_s = chain.to_string();
        let signed = journal
            .iter()
            .filter(|e| e.chain == chain_s)
            .find_map(|e| e.signer.as_deref());
        self.relayer
            .route_sender(chain, &r.id, signed)
            .ok_or_else(|| ExecError::Unsupported(format!("no sender for chain {chain}")))
    }

    /// Simulates step `index`'s transaction, as its key sends it (`from`,
    /// the call), before it is first signed.
    async fn simulate(
        &self,
        chain: u64,
        index: i64,
        (from, call): &(Address, Call),
    ) -> Result<(), ExecError> {
        let what = if index == REFUND_STEP {
            "the refund".to_string()
        } else {
            format!("plan step {index}")
        };
        check_call(&self.reader, chain, *from, call, &what)
            .await
            .map_err(|e| match e {
                SimulateError::Reverts(r) => ExecError::WouldRevert(r.to_string()),
                SimulateError::Unavailable(e) => {
                    ExecError::Send(SendError::NotSent(format!("cannot simulate {what}: {e}")))
                }
            })
    }

    async fn fail(&self, h: &mut Held, e: ExecError) -> Result<(), ExecError> {
        tracing::warn!(error = %e, step = h.r.next_step, "route failed");
        let pulled = pulled(&h.r);
        let in_doubt = e.funds_in_doubt(h.r.status == RouteStatus::AwaitingDeposit);
        h.r.failure = Some(Failure {
            code: e.code().as_str().into(),
            message: e.to_string(),
            funds_moved: pulled || in_doubt,
            refund_tx: None,
        });
        if pulled && !in_doubt {
            h.save(&self.store, "status").await?;
            return self.refund(h).await;
        }
        if in_doubt {
            tracing::error!(
                route = %h.r.id,
                error = %e,
                "funds in doubt: no automatic refund; left to the operator"
            );
        }
        h.r.status = RouteStatus::Failed;
        h.save(&self.store, "failed").await
    }

    /// Pays the sender back what the relayer pulled, less the relayer's gas
    /// fee, then marks the route FAILED with the refund transaction.
    async fn refund(&self, h: &mut Held) -> Result<(), ExecError> {
        let outcome = match self.refund_call(&h.r).await {
            // The refund may be out already: it resumes from its journal
            // (the route still owes it), never sent twice.
            Err(e) if e.leaves_route_to_resume() => return Err(e),
            outcome => outcome,
        };
        let f = h.r.failure.get_or_insert_with(|| Failure {
            code: FailureCode::ExecutionFailed.as_str().into(),
            message: String::new(),
            funds_moved: true,
            refund_tx: None,
        });
        match outcome {
            Ok(tx) => f.refund_tx = Some(tx),
            Err(e) => {
                f.message = format!("{}; refund failed, left to the operator: {e}", f.message)
            }
        }
        h.r.status = RouteStatus::Failed;
        h.r.stage = None;
        h.save(&self.store, "failed").await
    }

    async fn refund_call(&self, r: &RouteRecord) -> Result<String, ExecError> {
        let Some(PlanAction::Permit2Pull { chain, token, .. }) = r
            .plan
            .steps
            .iter()
            .find(|s| matches!(s, PlanAction::Permit2Pull { .. }))
        else {
            return Err(ExecError::BadStep("no pull to refund".into()));
        };
        let amount = refund_amount(r);
        let payout = PlanAction::InventoryPayout {
            chain: *chain,
            token: token.clone(),
            to: r.sender.clone(),
            amount,
        };
        let mut as_refund = r.clone();
        as_refund.recipient = r.sender.clone();
        as_refund.estimated = amount;
        let policy = StepPolicy {
            manifest: None,
            operator: None,
            relayer: self.relayer.address(),
            permit2: self.permit2,
        };
        let (chain, call) = call_for(&payout, &as_refund, &policy)?
            .ok_or_else(|| ExecError::BadStep("refund sends nothing".into()))?;
        self.send_journaled(r, REFUND_STEP, chain, &call).await
    }
}

/// The outcome of a step run while holding the route's lease, unless the
/// lease was lost meanwhile: another replica may hold the route then, and
/// what the step sent is journaled for it to finish.
fn held<T>((outcome, lost): (Result<T, ExecError>, bool)) -> Result<T, ExecError> {
    if lost {
        return Err(store_err("lost the route's lease while a step ran"));
    }
    outcome
}

/// Whether the relayer pulled the sender's funds (a Permit2 pull ran).
fn pulled(r: &RouteRecord) -> bool {
    r.plan.steps[..r.next_step.min(r.plan.steps.len())]
        .iter()
        .any(|s| matches!(s, PlanAction::Permit2Pull { .. }))
}

/// Records what a finished transaction means for the route.
fn advance(r: &mut RouteRecord, step: &PlanAction, hash: String) {
    let awaited = r.plan.steps[..r.next_step]
        .iter()
        .any(|s| matches!(s, PlanAction::AwaitUpstream { .. }));
    match step {
        PlanAction::Permit2Pull { .. } => {
            r.src_tx = Some(hash);
            r.status = RouteStatus::Bridging;
            r.stage = Some("RECEIVING".into());
        }
        PlanAction::ContractCall { .. } if awaited => r.track_ref = Some(hash),
        PlanAction::ContractCall { .. } => {
            r.src_tx = Some(hash);
            r.status = RouteStatus::Bridging;
            r.stage = Some("SENDING".into());
        }
        PlanAction::InventoryPayout { .. } => r.dest_tx = Some(hash),
        _ => {}
    }
}

/// The amount a route refunds its sender: all it pulled but the relayer's
/// gas fee (the route fee is not charged on a failed route).
pub fn refund_amount(r: &RouteRecord) -> Amount {
    r.amount.saturating_sub(r.gas_fee)
}

/// A process-unique number for the claim owner.
fn rand_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish()
}
