//! The other routing bodies: plan (spec §2.14), solve (spec §2.10) and
//! `agent/do` (spec §4.2).

use relay_plugin_api::Amount;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{Node, RouteRequest};

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
