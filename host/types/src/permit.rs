//! The user's Permit2 transfer signature as a route carries it. Checking it
//! is the chain layer's job (`relay-chain`'s `permit2`); this is the data.

use alloy_primitives::{Address, Bytes, U256};
use serde::{Deserialize, Serialize};

/// A user's Permit2 transfer signature, as the execute request carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedPermit {
    /// Who signed and whose tokens move.
    pub owner: Address,
    /// Permitted token.
    pub token: Address,
    /// Permitted amount.
    pub amount: U256,
    /// Unordered nonce.
    pub nonce: U256,
    /// Deadline, unix seconds.
    pub deadline: U256,
    /// 65-byte (r, s, v) or 64-byte compact signature.
    pub signature: Bytes,
}
