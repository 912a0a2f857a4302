//! The route record and its states (spec §2.8, §3.1).

use relay_plugin_api::{Amount, ChainRef, ExecutionPlan, SourceMode};
use serde::{Deserialize, Serialize};

/// Route status values (spec §3.1), plus the internal `PENDING` a route
/// holds while its source leg is being executed (shown as `BRIDGING` with
/// stage `RECEIVING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RouteStatus {
    /// Accepted; source-leg steps still running.
    Pending,
    /// In flight.
    Bridging,
    /// Delivered.
    Done,
    /// Failed (with a typed reason; refunded where funds were pulled).
    Failed,
    /// Unfunded non-EVM lane: the relayer lacks float.
    FundsRequired,
    /// The user must send funds to a deposit address.
    AwaitingDeposit,
    /// A dry run.
    Dry,
}

impl RouteStatus {
    /// Whether nothing will change any more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RouteStatus::Done | RouteStatus::Failed | RouteStatus::FundsRequired | RouteStatus::Dry
        )
    }

    /// The wire name (spec §3.1); `PENDING` is reported as `BRIDGING`.
    pub fn public(self) -> &'static str {
        match self {
            RouteStatus::Pending | RouteStatus::Bridging => "BRIDGING",
            RouteStatus::Done => "DONE",
            RouteStatus::Failed => "FAILED",
            RouteStatus::FundsRequired => "FUNDS_REQUIRED",
            RouteStatus::AwaitingDeposit => "AWAITING_DEPOSIT",
            RouteStatus::Dry => "DRY",
        }
    }

    /// Every status a client sees, in lifecycle order.
    pub const PUBLIC: &'static [RouteStatus] = &[
        RouteStatus::Bridging,
        RouteStatus::Done,
        RouteStatus::Failed,
        RouteStatus::FundsRequired,
        RouteStatus::AwaitingDeposit,
        RouteStatus::Dry,
    ];

    /// What a client sees it mean (the concierge answers with it).
    pub fn meaning(self) -> &'static str {
        match self {
            RouteStatus::Pending | RouteStatus::Bridging => "in flight: the source leg is running or the transfer is on its way (stage says where); poll /api/route/status or follow /api/route/stream",
            RouteStatus::Done => "delivered: the recipient received the output on the destination chain (destTx names the transaction); terminal",
            RouteStatus::Failed => "ended without delivery: failure.code says why (GET /api/errors, failures); pulled funds are refunded; terminal",
            RouteStatus::FundsRequired => "refused before anything moved: the relayer lacks float for this unfunded (non-EVM) lane, so no transaction was sent and nothing was pulled (spec: 200 with status FUNDS_REQUIRED, no fake transaction); try another lane or later; terminal",
            RouteStatus::AwaitingDeposit => "waiting for the user to send funds to deposit.address (bitcoin and other deposit-address lanes); the route continues when the deposit confirms",
            RouteStatus::Dry => "a dry run: what would be sent (wouldSend), nothing signed or broadcast; kept an hour; terminal",
        }
    }

    /// The database name.
    pub fn as_str(self) -> &'static str {
        match self {
            RouteStatus::Pending => "PENDING",
            other => other.public(),
        }
    }
}

crate::code_table! {
    /// Why a live route ended `FAILED` (`failure.code` of the receipt).
    pub enum FailureCode {
        /// The host's policy refused a plan step.
        StepRefused => ("STEP_REFUSED", "the host's policy refused a step of the rail's plan (an undeclared contract, a payout to someone else, above the estimate); nothing of that step was signed"),
        /// A transaction reverted.
        TxReverted => ("TX_REVERTED", "a transaction of the route reverted on chain; pulled funds are refunded (less the relayer's gas)"),
        /// The upstream reported failure.
        UpstreamFailed => ("UPSTREAM_FAILED", "the bridge or aggregator reported the transfer failed; pulled funds are refunded"),
        /// The upstream refunded the relayer.
        RefundedByUpstream => ("REFUNDED_BY_UPSTREAM", "the upstream refunded the transfer; the sender is refunded"),
        /// No delivery before the tracking deadline.
        UpstreamTimeout => ("UPSTREAM_TIMEOUT", "no delivery seen within execution.track_timeout_ms; the upstream may still deliver, so nothing is refunded automatically: when the upstream may hold the funds (fundsMoved, no refundTx) the operator settles it; a route whose upstream never saw the user's deposit moved nothing"),
        /// Anything else (RPC, signing, store).
        ExecutionFailed => ("EXECUTION_FAILED", "the route could not be completed (a step the chain or the host refused before it was sent, or a transaction that can never mine); pulled funds are refunded. A transaction whose fate is not known yet never fails the route: it stays in flight until the chain tells"),
    }
}

/// Why a route failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// Machine-readable reason ([`FailureCode`], as its wire string).
    pub code: String,
    /// Detail.
    pub message: String,
    /// Whether source funds had moved (refund owed).
    pub funds_moved: bool,
    /// The refund transaction, once sent.
    pub refund_tx: Option<String>,
}

impl Failure {
    /// Whether a refund is owed and not yet sent (a crash between deciding
    /// and sending it).
    pub fn refund_due(&self) -> bool {
        self.funds_moved && self.refund_tx.is_none()
    }
}

/// Everything persisted about one route.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteRecord {
    /// `rt_…` (never `sbx_`: sandbox routes are never persisted).
    pub id: String,
    /// State.
    pub status: RouteStatus,
    /// Finer stage (`RECEIVING`, `SWAPPING`, `SENDING`, `COMPLETED`).
    pub stage: Option<String>,
    /// Rail that executes it.
    pub rail: String,
    /// Lane name within the rail.
    pub lane: String,
    /// Source node.
    pub from_chain: ChainRef,
    /// Destination node.
    pub to_chain: ChainRef,
    /// Source token symbol.
    pub from_token: String,
    /// Destination token symbol.
    pub to_token: String,
    /// Source amount.
    pub amount: Amount,
    /// Estimated delivery.
    pub estimated: Amount,
    /// Guaranteed minimum delivery.
    pub min_out: Amount,
    /// The relay's route fee, withheld from the token in flight.
    pub relay_fee: Amount,
    /// Relayer gas with markup, withheld from the token in flight.
    #[serde(default)]
    pub gas_fee: Amount,
    /// Who funds it.
    pub sender: String,
    /// Who receives.
    pub recipient: String,
    /// How funds reach the relayer.
    pub mode: SourceMode,
    /// The declarative plan the rail prepared.
    pub plan: ExecutionPlan,
    /// Index of the next plan step to run.
    pub next_step: usize,
    /// The rail's tracking reference.
    pub track_ref: Option<String>,
    /// Source transaction.
    pub src_tx: Option<String>,
    /// Destination transaction, once delivered.
    pub dest_tx: Option<String>,
    /// Why it failed.
    pub failure: Option<Failure>,
    /// Accepted at, epoch ms.
    pub created_ms: u64,
    /// The user's Permit2 signature (mode `permit2`), kept to pull the funds.
    #[serde(default)]
    pub permit: Option<crate::permit::SignedPermit>,
    /// The router authorisation (modes `permit2-witness`, `erc2612`,
    /// `intent`): the route's source leg is one router call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<crate::router::RouterAuth>,
    /// Rails ranked above the one executing that were passed over at
    /// execute (failover), with why.
    #[serde(default)]
    pub passed_over: Vec<String>,
}

#[cfg(feature = "test-utils")]
impl RouteRecord {
    /// A stored route as the executor writes one, created at
    /// `created_ms`: 5 USDC from 8453 to 42161 on the float lane, pending
    /// (other crates' tests).
    pub fn sample(id: &str, created_ms: u64) -> Self {
        use relay_plugin_api::{Amount, ChainRef, ExecutionPlan, SourceMode};
        let user = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
        RouteRecord {
            id: id.into(),
            status: RouteStatus::Pending,
            stage: Some("RECEIVING".into()),
            rail: "floatlane".into(),
            lane: "evm->evm".into(),
            from_chain: ChainRef::Evm(8453),
            to_chain: ChainRef::Evm(42161),
            from_token: "USDC".into(),
            to_token: "USDC".into(),
            amount: Amount::from_u128(5_000_000),
            estimated: Amount::from_u128(4_987_500),
            min_out: Amount::from_u128(4_987_500),
            relay_fee: Amount::from_u128(12_500),
            gas_fee: Amount::ZERO,
            sender: user.into(),
            recipient: user.into(),
            mode: SourceMode::Permit2,
            plan: ExecutionPlan::default(),
            next_step: 0,
            track_ref: None,
            src_tx: None,
            dest_tx: None,
            failure: None,
            created_ms,
            permit: None,
            passed_over: Vec::new(),
            router: None,
        }
    }
}
