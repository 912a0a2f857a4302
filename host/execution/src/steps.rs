//! From a declarative plan step to the one transaction the relayer signs
//! for it, under the host's policy: a rail never signs and never picks
//! what the relayer pays with.
//!
//! - `Permit2Pull` always pulls the route's whole signed amount (the
//!   relayer keeps its fees out of it) with the user's stored signature.
//! - `Approve` and `ContractCall` reach only contracts the rail's manifest
//!   declares on that chain or the operator allows (`rails.<id>.contracts`).
//!   An approval is unlimited and sent only when the allowance is short:
//!   routes running at once share the relayer's allowance, and an exact
//!   approval of one would overwrite another's before its call consumes it.
//! - `InventoryPayout` pays only the route's recipient, never more than the
//!   route's estimate.

use super::executor::ExecError;
use alloy::{
    primitives::{Address, Bytes, U256},
    sol,
    sol_types::SolCall,
};
use relay_chain::{permit2::transfer_calldata, sender::Call};
use relay_config::RailConfig;
use relay_plugin_api::{ChainRef, PlanAction, RailManifest};
use relay_types::RouteRecord;

sol! {
    /// ERC-20 `transfer`.
    function transfer(address to, uint256 amount) returns (bool);
    /// ERC-20 `approve`.
    function approve(address spender, uint256 amount) returns (bool);
}

/// Gas of an ERC-20 `approve` or `transfer` when the plan gives none.
const TOKEN_GAS: u64 = 100_000;
/// Gas of a contract call when the plan gives no hint.
const CALL_GAS: u64 = 600_000;

/// What a step may touch.
pub struct StepPolicy<'a> {
    /// The rail's manifest, when it is loaded.
    pub manifest: Option<&'a RailManifest>,
    /// The operator's settings for the rail.
    pub operator: Option<&'a RailConfig>,
    /// The relayer address (the Permit2 pull's destination).
    pub relayer: Address,
    /// Permit2.
    pub permit2: Address,
}

impl StepPolicy<'_> {
    fn allows(&self, chain: u64, target: &str) -> bool {
        let declared = self.manifest.is_some_and(|m| {
            m.contracts
                .iter()
                .any(|c| c.chain == ChainRef::Evm(chain) && c.address.eq_ignore_ascii_case(target))
        });
        declared
            || self
                .operator
                .is_some_and(|o| o.allows_contract(chain, target))
    }

    fn checked(&self, chain: u64, target: &str, what: &str) -> Result<Address, ExecError> {
        if !self.allows(chain, target) {
            return Err(ExecError::Refused(format!(
                "{what} {target} on chain {chain} is neither declared by the rail nor allowed by the operator"
            )));
        }
        address(target)
    }
}

fn evm(chain: ChainRef) -> Result<u64, ExecError> {
    chain
        .evm_id()
        .ok_or_else(|| ExecError::Unsupported(format!("a transaction on {chain}")))
}

fn address(s: &str) -> Result<Address, ExecError> {
    s.parse()
        .map_err(|_| ExecError::BadStep(format!("{s:?} is not an address")))
}

fn token_call(token: Address, data: Vec<u8>) -> Call {
    Call {
        to: token,
        data: data.into(),
        value: U256::ZERO,
        gas_limit: TOKEN_GAS,
    }
}

/// The chain and call of a step that sends a transaction, or `None` for a
/// step that does not (`AwaitUpstream`, `DepositInstruction`).
pub fn call_for(
    step: &PlanAction,
    r: &RouteRecord,
    p: &StepPolicy<'_>,
) -> Result<Option<(u64, Call)>, ExecError> {
    Ok(Some(match step {
        PlanAction::Permit2Pull { chain, .. } => {
            let permit = r
                .permit
                .as_ref()
                .ok_or_else(|| ExecError::BadStep("no Permit2 signature on the route".into()))?;
            let data = transfer_calldata(permit, p.relayer, r.amount.0);
            let call = Call {
                to: p.permit2,
                data: data.into(),
                value: U256::ZERO,
                gas_limit: 150_000,
            };
            (evm(*chain)?, call)
        }
        PlanAction::Approve {
            chain,
            token,
            spender,
            amount,
        } => {
            let chain = evm(*chain)?;
            let spender = p.checked(chain, spender, "spender")?;
            let _ = amount;
            let data = approveCall {
                spender,
                amount: U256::MAX,
            }
            .abi_encode();
            (chain, token_call(address(token)?, data))
        }
        PlanAction::ContractCall {
            chain,
            to,
            data,
            value,
            gas_limit,
        } => {
            let chain = evm(*chain)?;
            let to = p.checked(chain, to, "call target")?;
            let data: Bytes = data
                .parse()
                .map_err(|_| ExecError::BadStep("calldata is not 0x-hex".into()))?;
            let call = Call {
                to,
                data,
                value: value.0,
                gas_limit: gas_limit.unwrap_or(CALL_GAS),
            };
            (chain, call)
        }
        PlanAction::InventoryPayout {
            chain,
            token,
            to,
            amount,
        } => {
            if !to.eq_ignore_ascii_case(&r.recipient) || *amount > r.estimated {
                return Err(ExecError::Refused(format!(
                    "payout of {amount} to {to}: the route pays {} at most {}",
                    r.recipient, r.estimated
                )));
            }
            let data = transferCall {
                to: address(to)?,
                amount: amount.0,
            }
            .abi_encode();
            (evm(*chain)?, token_call(address(token)?, data))
        }
        PlanAction::DepositInstruction { .. } | PlanAction::AwaitUpstream { .. } => {
            return Ok(None)
        }
    }))
}
