//! Runs a route's plan step by step. Each step's side effect goes through
//! the crash-safe sender (journaled before and after), and the route row
//! advances with its outbox event after each step, so a restart resumes at
//! the first unfinished step without repeating a finished one.

use std::sync::Arc;

use alloy::{
    primitives::{Address, U256},
    sol,
    sol_types::SolCall,
};
use relay_plugin_api::{ChainRef, PlanAction};

use super::{
    model::{Failure, RouteRecord, RouteStatus},
    relayer::Relayer,
};
use crate::{
    chain::{
        permit2::transfer_calldata,
        sender::{Call, SendError},
    },
    store::{Store, TxState},
};

sol! {
    /// ERC-20 `transfer`.
    function transfer(address to, uint256 amount) returns (bool);
}

/// Why a step could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The route row could not be read or written.
    #[error("store: {0}")]
    Store(String),
    /// The route does not exist.
    #[error("unknown route {0}")]
    Unknown(String),
    /// A step this executor cannot perform yet.
    #[error("step {0} is not supported by this host")]
    Unsupported(String),
    /// A send failed.
    #[error(transparent)]
    Send(#[from] SendError),
    /// A field of a step is malformed.
    #[error("bad step: {0}")]
    BadStep(String),
}

fn store_err(e: impl std::fmt::Display) -> ExecError {
    ExecError::Store(e.to_string())
}

/// Runs plans.
pub struct Executor {
    store: Store,
    relayer: Arc<Relayer>,
    permit2: Address,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor").finish_non_exhaustive()
    }
}

fn evm(chain: ChainRef) -> Result<u64, ExecError> {
    chain
        .evm_id()
        .ok_or_else(|| ExecError::Unsupported(format!("a step on {chain}")))
}

fn address(s: &str) -> Result<Address, ExecError> {
    s.parse()
        .map_err(|_| ExecError::BadStep(format!("{s:?} is not an address")))
}

impl Executor {
    /// An executor signing as `relayer`.
    pub fn new(store: Store, relayer: Arc<Relayer>, permit2: Address) -> Self {
        Executor {
            store,
            relayer,
            permit2,
        }
    }

    /// Runs the route from its next unfinished step to the end.
    #[tracing::instrument(skip_all, fields(route = id))]
    pub async fn run(&self, id: &str) -> Result<RouteRecord, ExecError> {
        let (mut r, mut version) = self
            .store
            .get_route(id)
            .await
            .map_err(store_err)?
            .ok_or_else(|| ExecError::Unknown(id.into()))?;
        while r.next_step < r.plan.steps.len() && !r.status.is_terminal() {
            let step = r.plan.steps[r.next_step].clone();
            let outcome = self.perform(&r, &step).await;
            let event = match outcome {
                Ok(hash) => {
                    self.advance(&mut r, &step, hash);
                    if r.next_step == r.plan.steps.len() {
                        "done"
                    } else {
                        "status"
                    }
                }
                Err(e) => {
                    let moved =
                        r.next_step > 0 || matches!(e, ExecError::Send(SendError::Unknown { .. }));
                    r.status = RouteStatus::Failed;
                    r.failure = Some(Failure {
                        code: "EXECUTION_FAILED".into(),
                        message: e.to_string(),
                        funds_moved: moved,
                        refund_tx: None,
                    });
                    "failed"
                }
            };
            version = self
                .store
                .update_route(&r, version, event)
                .await
                .map_err(store_err)?
                .ok_or_else(|| store_err("route changed under the executor"))?;
        }
        Ok(r)
    }

    fn advance(&self, r: &mut RouteRecord, step: &PlanAction, hash: Option<String>) {
        match step {
            PlanAction::Permit2Pull { .. } => {
                r.src_tx = hash;
                r.status = RouteStatus::Bridging;
                r.stage = Some("SENDING".into());
            }
            PlanAction::InventoryPayout { .. } => {
                r.dest_tx = hash;
            }
            _ => {}
        }
        r.next_step += 1;
        if r.next_step == r.plan.steps.len() {
            r.status = RouteStatus::Done;
            r.stage = Some("COMPLETED".into());
        }
    }

    async fn perform(
        &self,
        r: &RouteRecord,
        step: &PlanAction,
    ) -> Result<Option<String>, ExecError> {
        let (chain, call) = match step {
            PlanAction::Permit2Pull { chain, amount, .. } => {
                let permit = r.permit.as_ref().ok_or_else(|| {
                    ExecError::BadStep("no permit2 signature on the route".into())
                })?;
                let data = transfer_calldata(permit, self.relayer.address(), amount.0);
                (
                    evm(*chain)?,
                    Call {
                        to: self.permit2,
                        data: data.into(),
                        value: U256::ZERO,
                        gas_limit: 150_000,
                    },
                )
            }
            PlanAction::InventoryPayout {
                chain,
                token,
                to,
                amount,
            } => {
                let data = transferCall {
                    to: address(to)?,
                    amount: amount.0,
                }
                .abi_encode();
                (
                    evm(*chain)?,
                    Call {
                        to: address(token)?,
                        data: data.into(),
                        value: U256::ZERO,
                        gas_limit: 100_000,
                    },
                )
            }
            other => return Err(ExecError::Unsupported(format!("{other:?}"))),
        };
        let sender = self
            .relayer
            .sender(chain)
            .ok_or_else(|| ExecError::Unsupported(format!("no sender for chain {chain}")))?;
        // A step journaled before a crash is finished, never planned again.
        let journaled = self.store.journal_of(&r.id).await.map_err(store_err)?;
        let previous = journaled
            .into_iter()
            .rfind(|e| e.step == r.next_step as i64);
        let receipt = match previous {
            Some(e) if e.state == TxState::Mined => return Ok(e.tx_hash),
            Some(e) => sender.complete(e).await?,
            None => sender.send(&r.id, r.next_step as i64, &call).await?,
        };
        Ok(Some(format!("{:#x}", receipt.transaction_hash)))
    }
}
