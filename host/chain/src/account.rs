//! The relayer's account for a key pool. With pool keys configured, the
//! relayer's primary address delegates its code (EIP-7702) to a
//! `RelayerAccount` (`conformance/devnet/contracts/RelayerAccount.sol`),
//! which lets the pool's keys — executors — have it make any call. Each
//! executor signs from its own nonce stream, so routes spread over keys
//! never queue behind one nonce, while every call still runs as the primary
//! address: the Permit2 spender clients sign for, the holder of the float,
//! the router's registered relayer.
//!
//! Enrolment is one type-4 transaction the primary key signs and sends to
//! its own address: its authorization (at the transaction's nonce + 1,
//! as a self-sponsored authorization must be) installs the code, its call
//! (`setExecutors`) registers the executors. [`enrolment`] reads whether a
//! chain is enrolled; a chain that is not sends only with the primary key.

use alloy::{
    primitives::{Address, Bytes, U256},
    providers::Provider,
    sol,
    sol_types::SolCall,
};

use crate::{eip7702::delegated_to, rpc::FailoverProvider, sender::Call};

sol! {
    /// The account code's calls (`RelayerAccount.sol`).
    interface IRelayerAccount {
        function run(address to, uint256 value, bytes data) external payable returns (bytes result);
        function setExecutors(address[] who, bool allowed) external;
        function isExecutor(address who) external view returns (bool);
    }
}

/// Gas the account's `run` adds around the call it makes: the delegated
/// account's cold access, the executor check and the calldata copy.
const RUN_OVERHEAD_GAS: u64 = 40_000;

/// `call` as an executor sends it: to the relayer's `account`, which makes
/// the call itself. The gas limit leaves the inner call its whole limit
/// (a call forwards at most 63/64 of what is left) plus the overhead.
pub fn wrap(account: Address, call: &Call) -> Call {
    let data = IRelayerAccount::runCall {
        to: call.to,
        value: call.value,
        data: call.data.clone(),
    }
    .abi_encode();
    Call {
        to: account,
        data: data.into(),
        value: U256::ZERO,
        gas_limit: call.gas_limit + call.gas_limit / 63 + RUN_OVERHEAD_GAS,
    }
}

/// The call that registers `executors` on the account (sent by the
/// account to itself).
pub fn enrol_call(account: Address, executors: &[Address]) -> Call {
    let data = IRelayerAccount::setExecutorsCall {
        who: executors.to_vec(),
        allowed: true,
    }
    .abi_encode();
    Call {
        to: account,
        data: data.into(),
        value: U256::ZERO,
        gas_limit: 60_000 + 30_000 * executors.len() as u64,
    }
}

/// Where a chain stands with the relayer's account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enrolment {
    /// The account's code is the expected `RelayerAccount`.
    pub delegated: bool,
    /// The executors not (yet) registered.
    pub missing: Vec<Address>,
}

impl Enrolment {
    /// Every executor may send as the account.
    pub fn complete(&self) -> bool {
        self.delegated && self.missing.is_empty()
    }
}

/// Reads whether `account` runs `code` and which of `executors` it lacks.
pub async fn enrolment(
    rpc: &FailoverProvider,
    account: Address,
    code: Address,
    executors: &[Address],
) -> Result<Enrolment, String> {
    let on_chain: Bytes = rpc
        .run(
            "eth_getCode",
            |p| async move { p.get_code_at(account).await },
        )
        .await
        .map_err(|e| e.to_string())?;
    let delegated = delegated_to(&on_chain) == Some(code);
    if !delegated {
        return Ok(Enrolment {
            delegated,
            missing: executors.to_vec(),
        });
    }
    let mut missing = Vec::new();
    for who in executors {
        let data: Bytes = IRelayerAccount::isExecutorCall { who: *who }
            .abi_encode()
            .into();
        let answer = rpc
            .run("eth_call", |p| {
                let tx = alloy::rpc::types::TransactionRequest::default()
                    .to(account)
                    .input(data.clone().into());
                async move { p.call(tx).await }
            })
            .await
            .map_err(|e| e.to_string())?;
        let is = IRelayerAccount::isExecutorCall::abi_decode_returns(&answer)
            .map_err(|e| e.to_string())?;
        if !is {
            missing.push(*who);
        }
    }
    Ok(Enrolment { delegated, missing })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_call_runs_the_same_call_as_the_account() {
        let call = Call {
            to: Address::repeat_byte(0xbb),
            data: Bytes::from(vec![1, 2, 3]),
            value: U256::from(5),
            gas_limit: 63_000,
        };
        let account = Address::repeat_byte(0xaa);
        let w = wrap(account, &call);
        assert_eq!((w.to, w.value), (account, U256::ZERO));
        assert_eq!(w.gas_limit, 63_000 + 1_000 + RUN_OVERHEAD_GAS);
        let inner = IRelayerAccount::runCall::abi_decode(&w.data).unwrap();
        assert_eq!((inner.to, inner.value), (call.to, call.value));
        assert_eq!(inner.data, call.data);
    }
}
