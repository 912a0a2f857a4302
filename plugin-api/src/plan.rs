//! Execution plans: declarative actions the host checks, signs and sends.
//!
//! A rail never signs. It describes what must happen; the host checks every
//! action against its policy (declared contracts, the route's recipient and
//! estimate, the relayer as the only spender) before its own signer acts,
//! and decides some amounts itself: each [`PlanAction`] variant says what
//! the host really does with it.
//!
//! [`ExecutionPlan`] says how the host runs a plan.

use serde::{Deserialize, Serialize};

use crate::{Amount, ChainRef, RailQuote};

/// How the source funds reach the relayer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceMode {
    /// `mode: self`: the operator moves its own funds, which the relayer
    /// already holds. The plan has no [`PlanAction::Permit2Pull`] (there is
    /// no signature to pull with: such a step fails the route).
    #[serde(rename = "self")]
    Operator,
    /// The user signed: a Permit2 transfer (`mode: permit2`) or one of the
    /// router forms (`permit2-witness`, `erc2612`, `intent`), which a rail
    /// cannot tell apart. The plan starts the source leg with a
    /// [`PlanAction::Permit2Pull`].
    Permit2,
}

/// What the engine asks a rail once a quote is accepted.
///
/// `prepare` also runs for sandbox and dry-run executes and for prepared
/// router intents (`POST /api/route/intent`), so it may be asked about
/// routes that never run: it must not commit anything upstream that costs
/// money.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrepareRequest {
    /// The route id the host assigned (`rt_…`; `sbx_…` in the sandbox).
    pub route_id: String,
    /// This rail's answer for the amount it will carry, fetched just
    /// before `prepare` (or the pricing answer itself when the amounts
    /// agree). On an EVM source the relayer keeps the route fee and its gas
    /// fee (with markup, in source units) out of the signed amount, so
    /// `quote.amount_in` is the signed amount less both; on a leg the
    /// relayer never holds (a deposit on a non-EVM source) it is the whole
    /// amount. Deposit `quote.amount_in`; `quote.amount_out` becomes the
    /// route's estimate, the most an [`PlanAction::InventoryPayout`] may pay.
    pub quote: RailQuote,
    /// The source chain.
    pub from_chain: ChainRef,
    /// The destination chain.
    pub to_chain: ChainRef,
    /// The source token address (none for a native asset or a non-EVM
    /// node).
    pub from_token_address: Option<String>,
    /// The destination token address (none for a native asset or a
    /// non-EVM node).
    pub to_token_address: Option<String>,
    /// Who funds the route: the Permit2 owner; a refund goes back here.
    pub sender: String,
    /// Who receives on the destination; the only address an
    /// [`PlanAction::InventoryPayout`] may pay.
    pub recipient: String,
    /// The relayer's address: the only spender, the Permit2 pull's
    /// destination and the sender of every transaction of the plan (so the
    /// depositor an upstream sees and refunds).
    pub relayer: String,
    /// How funds reach the relayer.
    pub mode: SourceMode,
}

/// One declarative step. Each variant's docs say what the host does with
/// it; fields the host overrides are marked as such.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "action",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum PlanAction {
    /// Pull the route's source funds from the sender to the relayer with
    /// the user's Permit2 signature (the host holds it; the rail never sees
    /// it). Only in [`SourceMode::Permit2`]: without a signature the route
    /// fails.
    ///
    /// The host always pulls the **whole signed amount** (what the user's
    /// permit names), whatever `amount` says, and keeps the route fee and
    /// its gas fee out of it; what is left for the steps after it is
    /// [`PrepareRequest::quote`]`.amount_in`. Once the pull has run, the
    /// route is `BRIDGING` and any failure refunds the sender (see
    /// [`ExecutionPlan`]).
    Permit2Pull {
        /// The source chain (EVM); a refund is paid on it.
        chain: ChainRef,
        /// The source token's address; a refund is paid in it.
        token: String,
        /// Informational (conventionally `quote.amount_in`): the host pulls
        /// the signed amount.
        amount: Amount,
    },
    /// Let `spender` spend the relayer's `token`.
    ///
    /// The host sends an **unlimited** approval (`type(uint256).max`), and
    /// only when the relayer's current allowance to `spender` is below
    /// `amount`; otherwise the step sends nothing. Routes running at once
    /// share the relayer's allowance: an exact approval for one would
    /// overwrite another's before its call consumed it. Through the
    /// `RelayRouter` the router approves exactly the carried amount instead
    /// and resets it after the call.
    Approve {
        /// Chain (EVM).
        chain: ChainRef,
        /// Token address.
        token: String,
        /// Spender: a contract the manifest declares on `chain`, or one the
        /// operator allows (`[rails.<id>] contracts`); any other refuses
        /// the route (`STEP_REFUSED`) before anything is sent.
        spender: String,
        /// The allowance the following call needs (normally
        /// `quote.amount_in`): the host approves only below it.
        amount: Amount,
    },
    /// Call a contract with calldata, from the relayer.
    ///
    /// Before any [`PlanAction::AwaitUpstream`] (a deposit), its hash
    /// becomes the route's `srcTx` (`BRIDGING`, stage `SENDING`); after one
    /// (a follow-up such as CCTP's `receiveMessage`), its hash becomes the
    /// route's track reference, which the next `track` receives.
    ContractCall {
        /// Chain (EVM).
        chain: ChainRef,
        /// Target: a contract the manifest declares on `chain`, or one the
        /// operator allows (`[rails.<id>] contracts`); any other refuses
        /// the route (`STEP_REFUSED`) before anything is sent.
        to: String,
        /// Calldata, 0x-hex.
        data: String,
        /// Native value, wei, paid from the relayer's own balance. The host
        /// charges nothing for it: a rail whose call needs value prices it
        /// into its quote.
        value: Amount,
        /// The transaction's gas limit; `None`: 600,000 (400,000 for the
        /// call inside a `RelayRouter` transaction). The gas the user is
        /// charged is the quote's [`crate::GasEstimate`], not this.
        gas_limit: Option<u64>,
    },
    /// Pay `amount` of `token` from the relayer's own inventory to `to`
    /// (the float lane's delivery); its hash becomes the route's `destTx`.
    InventoryPayout {
        /// Chain (EVM).
        chain: ChainRef,
        /// Token address.
        token: String,
        /// Recipient: must be the route's recipient, or the host refuses
        /// the route (`STEP_REFUSED`).
        to: String,
        /// Amount: at most the route's estimate (the `amount_out` of
        /// [`PrepareRequest::quote`]), or the host refuses the route.
        amount: Amount,
    },
    /// The user must send funds to an address themselves (a non-EVM source
    /// leg, e.g. a deposit channel).
    ///
    /// The host sends nothing: the route becomes `AWAITING_DEPOSIT` (stage
    /// `RECEIVING`) and its receipt shows `deposit {node, address, asset,
    /// amount, expiresAt}`. Follow it with a [`PlanAction::AwaitUpstream`]
    /// whose `track` answers `PENDING` until the deposit is seen (the route
    /// stays `AWAITING_DEPOSIT`), then `BRIDGING`. A plan that starts with
    /// it spends none of the operator's funds (no owner token is needed),
    /// and on a non-EVM source the relayer keeps no fees: the rail carries
    /// the whole amount.
    DepositInstruction {
        /// Node the deposit is made on.
        node: ChainRef,
        /// Deposit address.
        address: String,
        /// Asset symbol.
        asset: String,
        /// Amount expected.
        amount: Amount,
        /// Deposit expiry, epoch ms: shown to the user, not enforced by the
        /// host (`track` reports what the upstream does after it).
        expires_at_ms: Option<u64>,
    },
    /// Wait for the upstream to report delivery, polling the rail's `track`
    /// every `execution.track_interval_ms` (2 s by default).
    ///
    /// `DONE` finishes the step (`destTx` from the answer); `FAILED` and
    /// `REFUNDED` fail the route; follow-up actions are run next, then the
    /// wait goes on; an error asks again. With no terminal answer
    /// `execution.track_timeout_ms` after the route was created (6 hours by
    /// default) the route fails `UPSTREAM_TIMEOUT`: [`crate::Rail::track`]
    /// says what to answer when the upstream has no status API.
    AwaitUpstream {
        /// Upstream reference to track, used when the route has no track
        /// reference of its own ([`ExecutionPlan::track_ref`] comes first).
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
///
/// # How the host runs a plan
///
/// - **In order, durably.** Steps run one at a time; each transaction is
///   journaled before and after it is sent, and a restarted host resumes at
///   the first unfinished step. Every transaction is simulated from the
///   relayer at the pending block before it is first signed: one that would
///   revert is never sent and the route fails `STEP_REFUSED`.
/// - **Done.** When the last step finishes the route is `DONE` (stage
///   `COMPLETED`). A plan that should end at the upstream's delivery ends
///   with [`PlanAction::AwaitUpstream`]; without it the route is `DONE` as
///   soon as its last transaction mines, which is right only when that
///   transaction is the delivery (the float lane's payout).
/// - **Amounts.** Plan for [`PrepareRequest::quote`], the rail's answer for
///   the amount it carries (the signed amount less what the relayer keeps):
///   deposit `quote.amount_in`, pay out at most `quote.amount_out`.
/// - **Failure and refund.** When a step fails, or `track` reports
///   `FAILED`/`REFUNDED`, or the wait times out, after a
///   [`PlanAction::Permit2Pull`] ran, the host pays the sender back the
///   signed amount less the route's gas fee (the route fee is not charged)
///   from the relayer's inventory, in the pull's token on the pull's chain,
///   and the route ends `FAILED` with `failure {code, refundTx}` — whatever
///   the steps after the pull did with the funds. A transaction whose fate
///   is unknown is not refunded automatically; the route is left to the
///   operator. With no pull (`mode: self`, a user deposit) nothing is
///   refunded.
/// - **The router forms** (`permit2-witness`, `erc2612`, `intent`). The
///   rail sees [`SourceMode::Permit2`] and plans as usual; the host folds
///   the leading `Permit2Pull`, an `Approve` of the pulled token and a
///   `ContractCall` on the same chain into one `RelayRouter` transaction
///   that pulls the signed amount, keeps the route fee and gas, approves
///   the spender (the `Approve`'s, else the call's target) for exactly the
///   rest, makes the call with the plan's calldata and resets the approval.
///   A pull followed by anything else becomes an *intake*: the router sends
///   the rest to the relayer. The target and spender are checked against
///   the manifest as for a plain plan.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionPlan {
    /// Steps, in order.
    pub steps: Vec<PlanAction>,
    /// Reference for `track` (upstream route id, message hash); it takes
    /// precedence over the `AwaitUpstream` steps' `reference`, and a
    /// follow-up `ContractCall` replaces it with its transaction hash.
    pub track_ref: Option<String>,
}
