//! [`PlanBuilder`]: the common plan shapes, step by step, with the amounts
//! the host expects already filled in.
//!
//! Every builder method takes its amounts from [`PrepareRequest::quote`]
//! (`amount_in`, what the rail carries after the relayer kept its fees), its
//! chain from the request's source, and skips what the source mode rules
//! out, so a rail states only what is specific to it:
//!
//! ```
//! # use relay_plugin_api::{Amount, ChainRef, PrepareRequest, RailQuote, SourceMode};
//! # use relay_rail_sdk::{plan::PlanBuilder, EvmCall};
//! # fn quote() -> RailQuote { serde_json::from_value(serde_json::json!({
//! #   "rail": "acme", "lane": "evm->evm", "amountIn": "990000", "amountOut": "989000",
//! #   "minOut": "989000", "fees": [], "gas": null, "durationSec": 60,
//! #   "quoteOnlyReason": null, "upstreamRef": null, "expiresAtMs": 0, "detail": {}
//! # })).unwrap() }
//! # let req = PrepareRequest {
//! #     route_id: "rt_1".into(), quote: quote(),
//! #     from_chain: ChainRef::Evm(8453), to_chain: ChainRef::Evm(42161),
//! #     from_token_address: Some("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into()),
//! #     to_token_address: None, sender: "0x1111111111111111111111111111111111111111".into(),
//! #     recipient: "0x2222222222222222222222222222222222222222".into(),
//! #     relayer: "0x3333333333333333333333333333333333333333".into(), mode: SourceMode::Permit2,
//! # };
//! let bridge = "0x4444444444444444444444444444444444444444";
//! let plan = PlanBuilder::new(&req)
//!     .pull()?                       // Permit2 pull (only when the user signed)
//!     .approve(bridge)?              // approve the bridge for quote.amount_in
//!     .call(EvmCall::new(bridge, "0xdeadbeef"))
//!     .await_upstream(&req.route_id) // wait for delivery
//!     .build();
//! assert_eq!(plan.steps.len(), 4);
//! # Ok::<(), relay_plugin_api::RailError>(())
//! ```

use relay_plugin_api::{Amount, ExecutionPlan, PlanAction, PrepareRequest, RailError, SourceMode};

use super::EvmCall;
use crate::lane::{is_evm_address, is_native_placeholder};

/// Builds an [`ExecutionPlan`] for one accepted quote.
#[derive(Debug)]
pub struct PlanBuilder<'a> {
    req: &'a PrepareRequest,
    token: Option<String>,
    steps: Vec<PlanAction>,
    track_ref: Option<String>,
}

impl<'a> PlanBuilder<'a> {
    /// An empty plan for `req`.
    pub fn new(req: &'a PrepareRequest) -> Self {
        let token = req
            .from_token_address
            .clone()
            .filter(|t| !is_native_placeholder(t));
        Self {
            req,
            token,
            steps: Vec::with_capacity(4),
            track_ref: None,
        }
    }

    /// Pulls and approves `token` instead of the request's source token
    /// (one the rail resolved and checked itself, e.g. from configuration).
    pub fn with_source_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The source token's contract, if the source is an ERC-20 (not the
    /// native asset, not a non-EVM node).
    pub fn source_token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// **Inventory intake**: when the user signed ([`SourceMode::Permit2`]),
    /// a Permit2 pull of the source token into the relayer (the host pulls
    /// the whole signed amount and keeps its fees; `quote.amount_in` is
    /// left). In `mode: self` the relayer already holds the funds and
    /// nothing is added. A Permit2 source without a token contract is an
    /// `InvalidInput` naming `fromToken`.
    pub fn pull(mut self) -> Result<Self, RailError> {
        if self.req.mode == SourceMode::Operator {
            return Ok(self);
        }
        let token = self.token.clone().ok_or_else(|| {
            RailError::invalid(
                "fromToken",
                "a Permit2 pull needs a token contract, not the native asset",
            )
        })?;
        self.steps.push(PlanAction::Permit2Pull {
            chain: self.req.from_chain,
            token,
            amount: self.req.quote.amount_in,
        });
        Ok(self)
    }

    /// Lets `spender` spend the source token for `quote.amount_in` (the
    /// host approves without limit when the relayer's allowance is below
    /// it). Nothing for a native-asset source. `spender` must be an EVM
    /// address the manifest declares on the source chain.
    pub fn approve(mut self, spender: &str) -> Result<Self, RailError> {
        let Some(token) = self.token.clone() else {
            return Ok(self);
        };
        if !is_evm_address(spender) {
            return Err(RailError::invalid("spender", "not an EVM address"));
        }
        self.steps.push(PlanAction::Approve {
            chain: self.req.from_chain,
            token,
            spender: spender.to_string(),
            amount: self.req.quote.amount_in,
        });
        Ok(self)
    }

    /// Calls a contract on the source chain from the relayer (a deposit).
    pub fn call(self, call: EvmCall) -> Self {
        let chain = self.req.from_chain;
        self.push(PlanAction::ContractCall {
            chain,
            to: call.to,
            data: call.data,
            value: call.value,
            gas_limit: call.gas_limit,
        })
    }

    /// **Deposit instruction**: the user sends `quote.amount_in` of `asset`
    /// to `address` on the source node themselves (a deposit channel);
    /// shown until `expires_at_ms`.
    pub fn deposit_instruction(
        self,
        address: impl Into<String>,
        asset: impl Into<String>,
        expires_at_ms: Option<u64>,
    ) -> Self {
        let (node, amount) = (self.req.from_chain, self.req.quote.amount_in);
        self.push(PlanAction::DepositInstruction {
            node,
            address: address.into(),
            asset: asset.into(),
            amount,
            expires_at_ms,
        })
    }

    /// **Await upstream**: the host polls `track` with `reference` until
    /// delivery (or, when `track` says the upstream has no status API,
    /// watches the destination chain for the payout itself).
    pub fn await_upstream(self, reference: impl Into<String>) -> Self {
        self.push(PlanAction::AwaitUpstream {
            reference: reference.into(),
        })
    }

    /// Pays `amount` of `token` on the destination chain from the relayer's
    /// own inventory to the route's recipient (at most `quote.amount_out`).
    pub fn payout(self, token: impl Into<String>, amount: Amount) -> Self {
        let (chain, to) = (self.req.to_chain, self.req.recipient.clone());
        self.push(PlanAction::InventoryPayout {
            chain,
            token: token.into(),
            to,
            amount,
        })
    }

    /// The reference `track` receives (it takes precedence over the
    /// `AwaitUpstream` steps' own).
    pub fn track_ref(mut self, reference: impl Into<String>) -> Self {
        self.track_ref = Some(reference.into());
        self
    }

    /// The plan.
    pub fn build(self) -> ExecutionPlan {
        ExecutionPlan {
            steps: self.steps,
            track_ref: self.track_ref,
        }
    }

    fn push(mut self, action: PlanAction) -> Self {
        self.steps.push(action);
        self
    }
}
