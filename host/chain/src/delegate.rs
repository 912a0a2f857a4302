//! The relay's EIP-7702 batch executor (`RelayDelegate`, spec §4.8): its
//! ABI, the EIP-712 batch an account signs for `executeSigned` (domain
//! `{name "RelayDelegate", version "1", chainId, verifyingContract: the
//! account}`), and the calldata the relayer submits.

use alloy::{
    primitives::{Address, Bytes, B256},
    sol,
    sol_types::{eip712_domain, Eip712Domain, SolCall, SolStruct},
};

sol! {
    /// The executor's interface (the Solidity source is
    /// `conformance/devnet/contracts/RelayDelegate.sol`).
    #[sol(abi)]
    #[derive(Debug)]
    interface RelayDelegate {
        /// One call of a batch.
        struct Call { address to; uint256 value; bytes data; }
        error Unauthorized();
        error UnsupportedExecutionMode();
        error BatchExpired(uint256 deadline);
        error InvalidNonce(uint256 expected, uint256 given);
        error InvalidSignature();
        error CallFailed(uint256 index, bytes reason);
        event BatchExecuted(uint256 indexed nonce, uint256 calls);
        function nonce() external view returns (uint256);
        function CALL_TYPEHASH() external view returns (bytes32);
        function BATCH_TYPEHASH() external view returns (bytes32);
        function DOMAIN_SEPARATOR() external view returns (bytes32);
        function supportsExecutionMode(bytes32 mode) external pure returns (bool);
        function execute(bytes32 mode, bytes calldata executionData) external payable;
        function executeSigned(Call[] calldata calls, uint256 batchNonce, uint256 deadline, bytes calldata signature) external payable;
    }
}

sol! {
    /// A call as the account signs it (EIP-712 `Call`).
    #[derive(Debug, PartialEq, Eq)]
    struct Call { address to; uint256 value; bytes data; }

    /// The batch the account signs (EIP-712 `Batch`).
    #[derive(Debug, PartialEq, Eq)]
    struct Batch { Call[] calls; uint256 nonce; uint256 deadline; }
}

/// The EIP-712 domain of `account` (delegated to the executor) on `chain_id`.
pub fn domain(chain_id: u64, account: Address) -> Eip712Domain {
    eip712_domain! {
        name: "RelayDelegate",
        version: "1",
        chain_id: chain_id,
        verifying_contract: account,
    }
}

/// The digest `account` signs for `batch`.
pub fn digest(chain_id: u64, account: Address, batch: &Batch) -> B256 {
    batch.eip712_signing_hash(&domain(chain_id, account))
}

/// The EIP-712 type string of [`Batch`].
pub fn batch_type() -> String {
    Batch::eip712_encode_type().into_owned()
}

/// The `executeSigned` calldata of a signed batch.
pub fn execute_signed_calldata(batch: &Batch, signature: Bytes) -> Bytes {
    RelayDelegate::executeSignedCall {
        calls: batch
            .calls
            .iter()
            .map(|c| RelayDelegate::Call {
                to: c.to,
                value: c.value,
                data: c.data.clone(),
            })
            .collect(),
        batchNonce: batch.nonce,
        deadline: batch.deadline,
        signature,
    }
    .abi_encode()
    .into()
}

/// The ABI, as JSON.
pub fn abi_json() -> serde_json::Value {
    serde_json::to_value(RelayDelegate::abi::contract()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_batch_type_is_the_contracts() {
        assert_eq!(
            batch_type(),
            "Batch(Call[] calls,uint256 nonce,uint256 deadline)Call(address to,uint256 value,bytes data)"
        );
        let abi = abi_json();
        let names: Vec<&str> = abi
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["name"].as_str())
            .collect();
        assert!(
            names.contains(&"executeSigned") && names.contains(&"execute"),
            "{names:?}"
        );
    }
}
