//! From a rail's declarative plan to the one `RelayRouter` call that
//! replaces its source leg. Rails know nothing of the router: a plan still
//! reads `Permit2Pull`, then (optionally) `Approve` + `ContractCall` on the
//! same chain; the host folds those steps into one router call after
//! checking the call's target and spender against the rail's manifest (or
//! the operator's allowance), exactly as it would before sending them.
//!
//! - pull, approve `spender`, call `target` → the router pulls, withholds
//!   the fee, approves `spender` for the rest and calls `target`;
//! - pull, call `target` (no approval) → the same, approving `target`;
//! - pull followed by anything else (the float lane's payout on the other
//!   chain, an upstream wait) → an *intake*: the router transfers the rest
//!   to the relayer's inventory (`target` = the relayer, no calldata).

use std::ops::Range;

use alloy::primitives::{Address, Bytes, U256};
use relay_plugin_api::{ExecutionPlan, PlanAction};
use relay_types::DepositCall;

use super::{executor::ExecError, steps::StepPolicy};

/// The plan steps a router call replaces, and the deposit call it makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Composed {
    /// The source chain.
    pub chain: u64,
    /// Steps replaced (the pull first).
    pub span: Range<usize>,
    /// What the router calls after withholding its fee.
    pub deposit: DepositCall,
    /// Gas the call needs besides the pull (the plan's hint, or a default).
    pub call_gas: u64,
}

/// Gas of a deposit call when the plan gives no hint.
const CALL_GAS: u64 = 400_000;
/// Gas of an intake transfer.
const INTAKE_GAS: u64 = 60_000;

fn bad(why: impl Into<String>) -> ExecError {
    ExecError::BadStep(why.into())
}

/// Folds the plan's source leg into a router call (module docs).
pub fn compose(plan: &ExecutionPlan, p: &StepPolicy<'_>) -> Result<Composed, ExecError> {
    let start = plan
        .steps
        .iter()
        .position(|s| matches!(s, PlanAction::Permit2Pull { .. }))
        .ok_or_else(|| bad("the rail's plan has no pull for the router to replace"))?;
    let PlanAction::Permit2Pull { chain, token, .. } = &plan.steps[start] else {
        unreachable!("found above");
    };
    let chain_id = chain
        .evm_id()
        .ok_or_else(|| bad("a router pull on a non-EVM chain"))?;
    let on_chain = |s: &PlanAction| match s {
        PlanAction::Approve { chain, .. } | PlanAction::ContractCall { chain, .. } => {
            chain.evm_id() == Some(chain_id)
        }
        _ => false,
    };
    let mut next = start + 1;
    let mut spender = Address::ZERO;
    if let Some(PlanAction::Approve {
        token: approved,
        spender: s,
        ..
    }) = plan.steps.get(next).filter(|s| on_chain(s))
    {
        if !approved.eq_ignore_ascii_case(token) {
            return Err(ExecError::Refused(format!(
                "the plan approves {approved}, not the pulled token {token}"
            )));
        }
        spender = p.checked(chain_id, s, "spender")?;
        next += 1;
    }
    let call = plan.steps.get(next).filter(|s| on_chain(s));
    let (deposit, call_gas, end) = match call {
        Some(PlanAction::ContractCall {
            to,
            data,
            value,
            gas_limit,
            ..
        }) => {
            let target = p.checked(chain_id, to, "call target")?;
            let data: Bytes = data.parse().map_err(|_| bad("calldata is not 0x-hex"))?;
            let deposit = DepositCall {
                target,
                spender,
                value: value.0,
                data,
            };
            (deposit, gas_limit.unwrap_or(CALL_GAS), next + 1)
        }
        _ if spender != Address::ZERO => {
            return Err(bad("the plan approves a spender but calls nothing"))
        }
        _ => {
            let intake = DepositCall {
                target: p.relayer,
                spender: Address::ZERO,
                value: U256::ZERO,
                data: Bytes::new(),
            };
            (intake, INTAKE_GAS, start + 1)
        }
    };
    Ok(Composed {
        chain: chain_id,
        span: start..end,
        deposit,
        call_gas,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::{Amount, ChainRef};

    const TOKEN: &str = "0x00000000000000000000000000000000000000c3";
    const BRIDGE: &str = "0x00000000000000000000000000000000000000d1";

    fn policy(op: &relay_config::RailConfig) -> StepPolicy<'_> {
        StepPolicy {
            manifest: None,
            operator: Some(op),
            relayer: Address::repeat_byte(0xaa),
            permit2: Address::repeat_byte(0x22),
        }
    }

    fn pull() -> PlanAction {
        PlanAction::Permit2Pull {
            chain: ChainRef::Evm(8453),
            token: TOKEN.into(),
            amount: Amount::from_u128(5),
        }
    }

    fn call(to: &str) -> PlanAction {
        PlanAction::ContractCall {
            chain: ChainRef::Evm(8453),
            to: to.into(),
            data: "0x1234".into(),
            value: Amount::ZERO,
            gas_limit: Some(200_000),
        }
    }

    fn approve(spender: &str) -> PlanAction {
        PlanAction::Approve {
            chain: ChainRef::Evm(8453),
            token: TOKEN.into(),
            spender: spender.into(),
            amount: Amount::from_u128(5),
        }
    }

    fn plan(steps: Vec<PlanAction>) -> ExecutionPlan {
        ExecutionPlan {
            steps,
            ..Default::default()
        }
    }

    fn allowed() -> relay_config::RailConfig {
        relay_config::RailConfig {
            contracts: vec![BRIDGE.into()],
            ..Default::default()
        }
    }

    #[test]
    fn pull_approve_call_folds_into_one_deposit_call() {
        let op = allowed();
        let p = plan(vec![
            pull(),
            approve(BRIDGE),
            call(BRIDGE),
            PlanAction::AwaitUpstream {
                reference: String::new(),
            },
        ]);
        let c = compose(&p, &policy(&op)).unwrap();
        assert_eq!(c.span, 0..3);
        assert_eq!(c.deposit.target, BRIDGE.parse::<Address>().unwrap());
        assert_eq!(c.deposit.spender, BRIDGE.parse::<Address>().unwrap());
        assert_eq!(c.deposit.data.as_ref(), &[0x12, 0x34]);
        assert_eq!(c.call_gas, 200_000);
    }

    #[test]
    fn a_pull_followed_by_a_payout_is_an_intake_to_the_relayer() {
        let op = allowed();
        let payout = PlanAction::InventoryPayout {
            chain: ChainRef::Evm(42161),
            token: TOKEN.into(),
            to: "0x00000000000000000000000000000000000000bb".into(),
            amount: Amount::from_u128(4),
        };
        let c = compose(&plan(vec![pull(), payout]), &policy(&op)).unwrap();
        assert_eq!(c.span, 0..1);
        assert_eq!(c.deposit.target, Address::repeat_byte(0xaa));
        assert!(c.deposit.data.is_empty());
    }

    #[test]
    fn an_undeclared_target_or_spender_is_refused() {
        let none = relay_config::RailConfig::default();
        let p = plan(vec![pull(), call(BRIDGE)]);
        assert!(matches!(
            compose(&p, &policy(&none)),
            Err(ExecError::Refused(_))
        ));
        let op = allowed();
        let other = "0x00000000000000000000000000000000000000e2";
        let p = plan(vec![pull(), approve(other), call(BRIDGE)]);
        assert!(matches!(
            compose(&p, &policy(&op)),
            Err(ExecError::Refused(_))
        ));
    }

    #[test]
    fn a_plan_without_a_pull_cannot_use_the_router() {
        let op = allowed();
        assert!(compose(&plan(vec![call(BRIDGE)]), &policy(&op)).is_err());
    }
}
