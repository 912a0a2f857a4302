//! Execution plans: declarative actions the host checks, signs and sends.
//!
//! A rail never signs. It describes what must happen; the host validates
//! every action against policy (declared contracts, amounts within the
//! quote, the relayer as the only spender) before its own signer acts.

use serde::{Deserialize, Serialize};

use crate::{Amount, ChainRef, RailQuote};

/// How the source funds reach the relayer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceMode {
    /// The operator moves its own funds.
    #[serde(rename = "self")]
    Operator,
    /// The user signed a Permit2 transfer; the host pulls with it.
    Permit2,
}

/// What the engine asks a rail once a quote is accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrepareRequest {
    /// The route id the host assigned.
    pub route_id: String,
    /// The accepted quote (as this rail returned it).
    pub quote: RailQuote,
    /// The source chain.
    pub from_chain: ChainRef,
    /// The destination chain.
    pub to_chain: ChainRef,
    /// The source token address (none for native/non-EVM).
    pub from_token_address: Option<String>,
    /// The destination token address.
    pub to_token_address: Option<String>,
    /// Who funds the route.
    pub sender: String,
    /// Who receives on the destination.
    pub recipient: String,
    /// The relayer address on the source chain (the only spender).
    pub relayer: String,
    /// How funds reach the relayer.
    pub mode: SourceMode,
}

/// One declarative step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "action",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum PlanAction {
    /// Pull `amount` of `token` from the sender into the relayer with the
    /// user's Permit2 signature (the host holds it).
    Permit2Pull {
        /// Chain.
        chain: ChainRef,
        /// Token address.
        token: String,
        /// Amount.
        amount: Amount,
    },
    /// Approve `spender` (a declared contract) for `amount` of `token`.
    Approve {
        /// Chain.
        chain: ChainRef,
        /// Token address.
        token: String,
        /// Spender (must be declared in the manifest).
        spender: String,
        /// Amount.
        amount: Amount,
    },
    /// Call a declared contract with calldata.
    ContractCall {
        /// Chain.
        chain: ChainRef,
        /// Target (must be declared in the manifest, or the upstream's
        /// transaction target when the manifest declares it).
        to: String,
        /// Calldata, 0x-hex.
        data: String,
        /// Native value, wei.
        value: Amount,
        /// Gas limit hint.
        gas_limit: Option<u64>,
    },
    /// Pay `amount` of `token` from the relayer's inventory to `to`.
    InventoryPayout {
        /// Chain.
        chain: ChainRef,
        /// Token address.
        token: String,
        /// Recipient.
        to: String,
        /// Amount.
        amount: Amount,
    },
    /// The user must send funds to an address (non-EVM source legs).
    DepositInstruction {
        /// Node the deposit is made on.
        node: ChainRef,
        /// Deposit address.
        address: String,
        /// Asset symbol.
        asset: String,
        /// Amount expected.
        amount: Amount,
        /// Deposit expiry, epoch ms.
        expires_at_ms: Option<u64>,
    },
    /// Wait for the upstream to report progress (polled through `track`).
    AwaitUpstream {
        /// Upstream reference to track.
        reference: String,
    },
}

impl PlanAction {
    /// The chain or node this action acts on.
    pub fn chain(&self) -> Option<ChainRef> {
        match self {
            PlanAction::Permit2Pull { chain, .. }
            | PlanAction::Approve { chain, .. }
            | PlanAction::ContractCall { chain, .. }
            | PlanAction::InventoryPayout { chain, .. } => Some(*chain),
            PlanAction::DepositInstruction { node, .. } => Some(*node),
            PlanAction::AwaitUpstream { .. } => None,
        }
    }

    /// Whether the action moves funds on a chain.
    pub fn moves_funds(&self) -> bool {
        !matches!(
            self,
            PlanAction::AwaitUpstream { .. } | PlanAction::DepositInstruction { .. }
        )
    }
}

/// The ordered steps of a route.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionPlan {
    /// Steps, in order.
    pub steps: Vec<PlanAction>,
    /// Reference for `track` (upstream route id, message hash).
    pub track_ref: Option<String>,
}
