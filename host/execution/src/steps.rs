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
use relay_types::{RouteRecord, SignedPermit};

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

impl<'a> StepPolicy<'a> {
    /// The policy of `rail`'s steps: its manifest in `snap` (when loaded)
    /// and the operator's `[rails.<rail>]` settings.
    pub fn of_rail(
        snap: &'a relay_runtime::rails::RailSnapshot,
        config: &'a relay_config::HostConfig,
        rail: &str,
        (relayer, permit2): (Address, Address),
    ) -> Self {
        StepPolicy {
            manifest: snap.get(rail).map(|l| l.manifest()),
            operator: config.rails.get(rail),
            relayer,
            permit2,
        }
    }

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

    pub(crate) fn checked(
        &self,
        chain: u64,
        target: &str,
        what: &str,
    ) -> Result<Address, ExecError> {
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

/// Gas of a Permit2 pull.
const PULL_GAS: u64 = 150_000;

/// The Permit2 `permitTransferFrom` that pulls `amount` of the signed
/// permit's token from its owner to the relayer.
pub fn pull_call(permit: &SignedPermit, p: &StepPolicy<'_>, amount: U256) -> Call {
    Call {
        to: p.permit2,
        data: transfer_calldata(permit, p.relayer, amount).into(),
        value: U256::ZERO,
        gas_limit: PULL_GAS,
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
            (evm(*chain)?, pull_call(permit, p, r.amount.0))
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

#[cfg(test)]
pub(crate) mod tests {
    use relay_config::RailConfig;
    use relay_plugin_api::{Amount, ChainRef, DeclaredContract, RailRole, SourceMode, Version};
    use relay_types::RouteRecord;

    use super::*;

    const DECLARED: &str = "0x00000000000000000000000000000000000000d1";
    const OTHER: &str = "0x00000000000000000000000000000000000000e2";
    pub(crate) const RECIPIENT: &str = "0x00000000000000000000000000000000000000bb";
    const TOKEN: &str = "0x00000000000000000000000000000000000000c3";

    fn manifest() -> RailManifest {
        RailManifest {
            id: "acme".into(),
            name: "acme".into(),
            version: Version::new(1, 0, 0),
            contract_version: Version::new(1, 0, 0),
            role: RailRole::Aggregator,
            coverage: Vec::new(),
            egress: Vec::new(),
            rpc_chains: Vec::new(),
            contracts: vec![DeclaredContract {
                chain: ChainRef::Evm(8453),
                address: DECLARED.into(),
                label: "bridge".into(),
            }],
            upstream: None,
        }
    }

    /// A route 8453 → 42161 of 5 USDC, `minOut` 4.9 USDC, to `RECIPIENT`.
    pub(crate) fn route() -> RouteRecord {
        RouteRecord {
            stage: None,
            rail: "acme".into(),
            estimated: Amount::from_u128(4_900_000),
            min_out: Amount::from_u128(4_900_000),
            relay_fee: Amount::ZERO,
            sender: "0x00000000000000000000000000000000000000aa".into(),
            recipient: RECIPIENT.into(),
            mode: SourceMode::Operator,
            ..RouteRecord::sample("rt_x", 0)
        }
    }

    fn call(chain: u64, to: &str) -> PlanAction {
        PlanAction::ContractCall {
            chain: ChainRef::Evm(chain),
            to: to.into(),
            data: "0x1234".into(),
            value: Amount::ZERO,
            gas_limit: None,
        }
    }

    fn payout(to: &str, amount: u128) -> PlanAction {
        PlanAction::InventoryPayout {
            chain: ChainRef::Evm(42161),
            token: TOKEN.into(),
            to: to.into(),
            amount: Amount::from_u128(amount),
        }
    }

    fn policy<'a>(m: &'a RailManifest, operator: Option<&'a RailConfig>) -> StepPolicy<'a> {
        StepPolicy {
            manifest: Some(m),
            operator,
            relayer: Address::ZERO,
            permit2: Address::ZERO,
        }
    }

    #[test]
    fn only_declared_or_operator_allowed_contracts_are_called() {
        let m = manifest();
        let r = route();
        let p = policy(&m, None);
        assert!(call_for(&call(8453, DECLARED), &r, &p).unwrap().is_some());
        for refused in [call(8453, OTHER), call(42161, DECLARED)] {
            let e = call_for(&refused, &r, &p).unwrap_err();
            assert!(matches!(e, ExecError::Refused(_)), "{e}");
        }
        let allowed = RailConfig {
            contracts: vec![format!("8453:{OTHER}")],
            ..RailConfig::default()
        };
        let p = policy(&m, Some(&allowed));
        assert!(call_for(&call(8453, OTHER), &r, &p).unwrap().is_some());
        assert!(
            call_for(&call(42161, OTHER), &r, &p).is_err(),
            "allowed on 8453 only"
        );
    }

    #[test]
    fn a_payout_goes_only_to_the_recipient_and_never_above_the_estimate() {
        let m = manifest();
        let r = route();
        let p = policy(&m, None);
        let (chain, c) = call_for(&payout(RECIPIENT, 4_900_000), &r, &p)
            .unwrap()
            .unwrap();
        assert_eq!(chain, 42161);
        assert_eq!(c.to, TOKEN.parse::<Address>().unwrap());
        for refused in [payout(OTHER, 1), payout(RECIPIENT, 4_900_001)] {
            let e = call_for(&refused, &r, &p).unwrap_err();
            assert!(matches!(e, ExecError::Refused(_)), "{e}");
        }
    }

    #[test]
    fn an_approval_is_for_a_declared_spender_and_waiting_steps_send_nothing() {
        let m = manifest();
        let r = route();
        let p = policy(&m, None);
        let approve = |spender: &str| PlanAction::Approve {
            chain: ChainRef::Evm(8453),
            token: TOKEN.into(),
            spender: spender.into(),
            amount: Amount::from_u128(1),
        };
        assert!(call_for(&approve(DECLARED), &r, &p).unwrap().is_some());
        assert!(call_for(&approve(OTHER), &r, &p).is_err());
        let wait = PlanAction::AwaitUpstream {
            reference: "x".into(),
        };
        assert!(call_for(&wait, &r, &p).unwrap().is_none());
        let pull = PlanAction::Permit2Pull {
            chain: ChainRef::Evm(8453),
            token: TOKEN.into(),
            amount: Amount::from_u128(1),
        };
        assert!(
            matches!(call_for(&pull, &r, &p), Err(ExecError::BadStep(_))),
            "a pull needs the route's signature"
        );
    }
}
