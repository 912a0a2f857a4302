//! `GET /api/7702/delegate`: where the batch executor is on each chain,
//! its ABI, and the EIP-712 scheme a user signs for `executeSigned`.

use std::collections::BTreeMap;

use relay_chain::delegate;
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::SponsorService;

/// The executor's description.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DelegateInfo {
    /// The contract's name.
    pub name: &'static str,
    /// Its address by chain id (decimal string).
    pub deployments: BTreeMap<String, String>,
    /// Its ABI (the JSON array solc emits).
    #[schema(value_type = Vec<Object>)]
    pub abi: Value,
    /// The ERC-7821 mode `execute` accepts (a single batch, no opData;
    /// only the account itself may call it).
    pub execution_mode: &'static str,
    /// The EIP-712 scheme of `executeSigned`.
    #[schema(value_type = Object)]
    pub eip712: Value,
}

/// ERC-7821's single-batch mode.
pub const MODE_BATCH: &str = "0x0100000000000000000000000000000000000000000000000000000000000000";

fn fields(list: &[(&str, &str)]) -> Value {
    list.iter()
        .map(|(n, t)| json!({"name": n, "type": t}))
        .collect()
}

/// The EIP-712 scheme: domain, types, an example.
fn scheme() -> Value {
    let account = "0x000000000000000000000000000000000000a11c";
    json!({
        "primaryType": "Batch",
        "domain": {
            "name": "RelayDelegate",
            "version": "1",
            "chainId": "<the chain id>",
            "verifyingContract": "<the delegated account itself (the authority), not the executor>"
        },
        "types": {
            "EIP712Domain": fields(&[("name", "string"), ("version", "string"), ("chainId", "uint256"), ("verifyingContract", "address")]),
            "Batch": fields(&[("calls", "Call[]"), ("nonce", "uint256"), ("deadline", "uint256")]),
            "Call": fields(&[("to", "address"), ("value", "uint256"), ("data", "bytes")]),
        },
        "encodeType": delegate::batch_type(),
        "nonce": "the account's next batch nonce: nonce() on the account (0 before the first batch); sequential",
        "deadline": "unix seconds; the batch reverts after it",
        "signature": "65 bytes r ‖ s ‖ v, low s, signed by the account's key",
        "call": "executeSigned(calls, nonce, deadline, signature) on the account; send it as `data` with `to` = the account",
        "example": {
            "domain": {"name": "RelayDelegate", "version": "1", "chainId": "8453", "verifyingContract": account},
            "message": {
                "calls": [
                    {"to": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "value": "0", "data": "0xa9059cbb…(transfer(to, amount))"}
                ],
                "nonce": "0",
                "deadline": "1893456000"
            }
        }
    })
}

impl SponsorService {
    /// The executor's description.
    pub fn delegate(&self) -> DelegateInfo {
        DelegateInfo {
            name: "RelayDelegate",
            deployments: self.sponsor_config().delegates.clone(),
            abi: delegate::abi_json(),
            execution_mode: MODE_BATCH,
            eip712: scheme(),
        }
    }
}
