//! What a route authorised through the `RelayRouter` contract carries: the
//! route terms the user signed ([`RelayIntent`]), the rail's deposit call
//! the host composed ([`DepositCall`], whose hash the intent commits to),
//! the fee the relayer withholds, and the user's signatures
//! ([`RouterForm`]). Checking and encoding them is the chain layer's job
//! (`relay-chain`'s `router`); this is the data.

use alloy_primitives::{Address, Bytes, B256, U256};
use serde::{Deserialize, Serialize};

/// The route terms a user signs: the Permit2 witness, and the body of the
/// router's own `RelayOrder`. Field for field the Solidity struct.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelayIntent {
    /// Destination address, as text.
    pub recipient: String,
    /// Destination chain id in decimal, or a non-EVM node name.
    pub to_chain: String,
    /// Destination token: contract address, or symbol.
    pub to_token: String,
    /// Least the recipient receives, destination smallest units.
    pub min_out: U256,
    /// The rail that carries it.
    pub rail: String,
    /// Hash of the composed deposit call ([`DepositCall`]).
    pub plan_hash: B256,
    /// Most the relayer may withhold (route fee and gas), source units.
    pub fee_cap: U256,
    /// Unix seconds.
    pub deadline: U256,
}

/// The one source-chain call the router makes after taking its fee: a
/// call of the rail's declared deposit contract (approving `spender`), or
/// with empty `data` a transfer of the net amount to `target` (the float
/// lane's inventory intake).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepositCall {
    /// Contract called, or the intake address.
    pub target: Address,
    /// Approved for the net amount before the call (zero: the target).
    pub spender: Address,
    /// Native value forwarded.
    pub value: U256,
    /// Calldata; empty for an intake.
    pub data: Bytes,
}

/// An EIP-2612 permit the router submits before pulling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenPermit {
    /// Allowance granted.
    pub value: U256,
    /// Unix seconds.
    pub deadline: U256,
    /// 65-byte signature.
    pub signature: Bytes,
}

/// How the user authorised the router.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "form",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum RouterForm {
    /// A Permit2 `PermitWitnessTransferFrom` for spender = the router with
    /// the intent as witness (`mode: "permit2-witness"`), optionally after
    /// an EIP-2612 permit that approves Permit2.
    Permit2Witness {
        /// The Permit2 signature (owner, token, amount, nonce, deadline).
        permit: crate::SignedPermit,
        /// EIP-2612 permit for Permit2, when the owner has no allowance yet.
        token_permit: Option<TokenPermit>,
    },
    /// The router's own EIP-712 `RelayOrder` (`mode: "intent"`), optionally
    /// after an EIP-2612 permit that approves the router (`mode: "erc2612"`).
    Order {
        /// Whose tokens move.
        owner: Address,
        /// The token.
        token: Address,
        /// The amount pulled.
        amount: U256,
        /// Unordered nonce in the router's bitmap.
        nonce: U256,
        /// Signature (65/64 bytes, or a contract wallet's ERC-1271 bytes).
        signature: Bytes,
        /// EIP-2612 permit for the router.
        token_permit: Option<TokenPermit>,
    },
}

impl RouterForm {
    /// The `mode` a client names this form with.
    pub fn mode(&self) -> &'static str {
        match self {
            RouterForm::Permit2Witness { .. } => "permit2-witness",
            RouterForm::Order {
                token_permit: Some(_),
                ..
            } => "erc2612",
            RouterForm::Order { .. } => "intent",
        }
    }

    /// Whose tokens move.
    pub fn owner(&self) -> Address {
        match self {
            RouterForm::Permit2Witness { permit, .. } => permit.owner,
            RouterForm::Order { owner, .. } => *owner,
        }
    }
}

/// Everything the executor needs to make the one router call of a route.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouterAuth {
    /// The router on the source chain.
    pub router: Address,
    /// The signed terms.
    pub intent: RelayIntent,
    /// The composed deposit call (`intent.planHash` commits to it).
    pub deposit: DepositCall,
    /// Withheld by the router (route fee and gas), at most `intent.feeCap`.
    pub fee: U256,
    /// Where the fee goes.
    pub fee_recipient: Address,
    /// The signatures; `None` while the intent is prepared and unsigned.
    pub form: Option<RouterForm>,
}
