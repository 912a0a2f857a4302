//! The request bodies as clients send them (spec §2.5 RouteRequest, §2.7
//! ExecuteRequest), typed: the OpenAPI document is generated from these,
//! and the engine hands them back ready to POST (`solve`, `agent/do`).
//!
//! Incoming bodies are still read field by field ([`super::route`],
//! [`super::request`]) so every problem names its field; these types are
//! what a valid body looks like.

use relay_plugin_api::{Amount, ChainRef};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// An EVM chain id (number or numeric string) or a non-EVM node name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum Node {
    /// EVM chain id.
    Id(u64),
    /// Numeric string or node name (`solana`, `stellar`, `bitcoin`, `tron`, `sui`).
    Name(String),
}

impl From<ChainRef> for Node {
    fn from(c: ChainRef) -> Self {
        match c {
            ChainRef::Evm(id) => Node::Id(id),
            ChainRef::NonEvm(n) => Node::Name(n.as_str().into()),
        }
    }
}

/// `POST /api/route/quote` and `/api/route/compare` (spec §2.5).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"fromChain": 8453, "toChain": 42161, "amount": "5000000", "fromToken": "USDC", "toToken": "USDC"}))]
pub struct RouteRequest {
    /// Source node.
    #[schema(example = 8453)]
    pub from_chain: Option<Node>,
    /// Destination node.
    #[schema(example = 42161)]
    pub to_chain: Option<Node>,
    /// Source-token smallest units, a decimal string.
    #[schema(value_type = String, pattern = "^[0-9]+$", example = "5000000")]
    pub amount: Option<Amount>,
    /// Symbol or contract address; omit for the native asset.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "USDC")]
    pub from_token: Option<String>,
    /// Symbol or contract address; omit for the native asset.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "USDC")]
    pub to_token: Option<String>,
    /// Recipient; defaults to `fromAddress`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_address: Option<String>,
    /// Quote origin; decides the member fee tier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_address: Option<String>,
    /// Slippage as a fraction, e.g. 0.005.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slippage: Option<f64>,
}

/// `permit2.permitted`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PermittedBody {
    /// Token contract.
    pub token: String,
    /// Amount, smallest units.
    #[schema(value_type = String)]
    pub amount: Amount,
}

/// The Permit2 `PermitTransferFrom` signature a `mode:"permit2"` execute
/// carries (spender = the relayer, `GET /api/route/chains` `relayer`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Permit2Body {
    /// Signer and owner of the tokens.
    pub owner: String,
    /// Token and amount.
    pub permitted: PermittedBody,
    /// Unordered nonce, decimal string (null in a body handed back to fill).
    pub nonce: Option<String>,
    /// Unix seconds, decimal string (null in a body handed back to fill).
    pub deadline: Option<String>,
    /// 65-byte or 64-byte signature, 0x-hex (null in a body to fill).
    pub signature: Option<String>,
}

/// `POST /api/route/execute` and `/api/route/preflight` (spec §2.7).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"fromChain": 8453, "toChain": 42161, "amount": "5000000", "fromToken": "USDC", "toToken": "USDC", "toAddress": "0x000000000000000000000000000000000000bEEF", "dryRun": true}))]
pub struct ExecuteRequest {
    /// The route.
    #[serde(flatten)]
    pub route: RouteRequest,
    /// `self` (default: the operator's own funds, needs the operator
    /// credential), `permit2` (the user's signed pull, spender = the
    /// relayer), or a router form: `permit2-witness`, `erc2612`, `intent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "permit2")]
    pub mode: Option<String>,
    /// The signature, when `mode` is `permit2`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permit2: Option<Permit2Body>,
    /// A rail to use (no failover to others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rail: Option<String>,
    /// Price lock: the least the recipient must receive.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub min_out: Option<Amount>,
    /// Price lock: a quote's `attestation` as returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub attestation: Option<serde_json::Value>,
    /// A guaranteed dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// `false`: a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<bool>,
    /// Router forms: the prepared intent (`POST /api/route/intent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "rt_0123456789abcdef0123")]
    pub intent_id: Option<String>,
    /// Router forms: the route terms exactly as signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<IntentBody>,
    /// Modes `intent` and `erc2612`: the router's `RelayOrder` signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<OrderBody>,
    /// An EIP-2612 permit: for Permit2 (mode `permit2-witness`, a first
    /// route without an approval) or for the router (mode `erc2612`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub erc2612: Option<Erc2612Body>,
}

/// The `RelayIntent` a router form signs (the Permit2 witness, or the
/// body of a `RelayOrder`); every number a decimal string.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntentBody {
    /// Destination address.
    pub recipient: String,
    /// Destination chain id (decimal) or node name.
    pub to_chain: String,
    /// Destination token address or symbol.
    pub to_token: String,
    /// Least delivered, destination smallest units.
    pub min_out: String,
    /// The rail.
    pub rail: String,
    /// keccak256 of the composed deposit call, 0x-hex.
    pub plan_hash: String,
    /// Most withheld (route fee and gas), source smallest units.
    pub fee_cap: String,
    /// Unix seconds.
    pub deadline: String,
}

/// A `RelayOrder` signature (modes `intent`, `erc2612`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OrderBody {
    /// Whose tokens move.
    pub owner: String,
    /// Token contract.
    pub token: String,
    /// Amount, smallest units.
    pub amount: String,
    /// Unordered nonce in the router's bitmap, decimal string.
    pub nonce: String,
    /// 0x-hex signature (null in a body to fill).
    pub signature: Option<String>,
}

/// An EIP-2612 permit signature.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Erc2612Body {
    /// Allowance granted, decimal string.
    pub value: String,
    /// Unix seconds, decimal string.
    pub deadline: String,
    /// 0x-hex 65-byte signature (null in a body to fill).
    pub signature: Option<String>,
}

/// A step of a plan: a route body, optionally naming its rail.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanStepRequest {
    /// The route.
    #[serde(flatten)]
    pub route: RouteRequest,
    /// The rail to use for this step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rail: Option<String>,
}

/// A plan's limits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanConstraints {
    /// Longest acceptable total duration, seconds.
    pub max_total_seconds: Option<u64>,
    /// Most fee units acceptable in total, decimal string.
    pub max_total_fee_units: Option<String>,
}

/// `POST /api/route/plan` (spec §2.14).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"steps": [{"fromChain": 8453, "toChain": 42161, "amount": "5000000", "fromToken": "USDC", "toToken": "USDC"}], "constraints": {"maxTotalSeconds": 3600}}))]
pub struct PlanRequest {
    /// 1 to 10 route bodies, priced in order.
    pub steps: Vec<PlanStepRequest>,
    /// Limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraints: Option<PlanConstraints>,
}

/// One source of a solve.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SolveSource {
    /// Source node.
    pub chain: Option<Node>,
    /// Source token.
    pub token: Option<String>,
    /// Amount, smallest units (else the request's `amount`).
    #[schema(value_type = Option<String>)]
    pub amount: Option<Amount>,
}

/// `POST /api/intent/solve` (spec §2.10).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"toChain": 42161, "toToken": "USDC", "from": [{"chain": 8453, "token": "USDC", "amount": "5000000"}], "goal": "max-output"}))]
pub struct SolveRequest {
    /// Destination node.
    pub to_chain: Option<Node>,
    /// Destination token.
    pub to_token: Option<String>,
    /// 1 to 10 sources.
    pub from: Vec<SolveSource>,
    /// `max-output` (default), `cheapest` or `fastest`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// Shared amount for sources without their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub amount: Option<Amount>,
    /// Recipient.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_address: Option<String>,
}

/// `POST /api/agent/do` (spec §4.2): a sentence, or the structured form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"intent": "send 5 USDC from base to arbitrum to 0x000000000000000000000000000000000000bEEF"}))]
pub struct AgentRequest {
    /// A sentence: `send <amount> <TOKEN> from <chain> to <chain> [to 0x…]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// Source node (structured form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_chain: Option<Node>,
    /// Destination node (structured form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_chain: Option<Node>,
    /// Token symbol or address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Whole tokens, decimal string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount_human: Option<String>,
    /// Smallest units.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub amount: Option<Amount>,
    /// Recipient.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_address: Option<String>,
    /// Sender (needed for a signRequest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_address: Option<String>,
}
