//! The RouteReceipt (spec §2.8): what execute, status and stream return,
//! typed.

use relay_plugin_api::{ChainRef, PlanAction};
use relay_types::{Failure, RouteRecord};

use crate::execute::Executed;
use serde::Serialize;
use utoipa::ToSchema;

/// The source side of a receipt.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ReceiptFrom {
    /// Source node (EVM chain id or node name).
    #[schema(value_type = relay_wire::Node)]
    pub chain: ChainRef,
    /// Token symbol.
    pub token: String,
    /// Amount, smallest units.
    pub amount: String,
}

/// The destination side of a receipt.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ReceiptTo {
    /// Destination node (EVM chain id or node name).
    #[schema(value_type = relay_wire::Node)]
    pub chain: ChainRef,
    /// Token symbol.
    pub token: String,
    /// Recipient.
    pub recipient: String,
    /// Guaranteed minimum.
    pub min: String,
    /// Estimated delivery.
    pub estimated: String,
}

/// The deposit the user must make (`AWAITING_DEPOSIT`).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Deposit {
    /// The node the deposit is made on.
    #[schema(value_type = relay_wire::Node)]
    pub node: ChainRef,
    /// Where to send.
    pub address: String,
    /// What.
    pub asset: String,
    /// How much, smallest units.
    pub amount: String,
    /// Until when, epoch ms.
    pub expires_at: Option<u64>,
}

/// The upstream's own view of a live route, re-checked on a status read.
///
/// When the rail's upstream has no status API (contract 1.1), the host
/// watches the destination chain itself: `state` is `WATCHING_DESTINATION`
/// and `watch` says what it looks for and how far it has scanned; the route
/// stays `BRIDGING` until a payout is found (`DONE`, its `destTx`) or the
/// track timeout. A destination that cannot be watched (a native asset, a
/// non-EVM chain) shows `NO_STATUS_API`, `message` saying why: such a route
/// waits until the track timeout.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamView {
    /// The upstream's state (`PENDING`, `BRIDGING`, `DONE`, `FAILED`,
    /// `REFUNDED`), or the host's own: `WATCHING_DESTINATION`,
    /// `NO_STATUS_API`.
    #[schema(example = "WATCHING_DESTINATION")]
    pub state: String,
    /// Its stage.
    pub stage: Option<String>,
    /// Its destination transaction.
    pub dest_tx: Option<String>,
    /// Its message.
    pub message: Option<String>,
    /// When it was asked, epoch ms.
    pub checked_ms: u64,
    /// The host's watch of the destination chain (`WATCHING_DESTINATION`),
    /// once it began.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchView>,
}

/// What the host watches the destination chain for, and how far it got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WatchView {
    /// Destination EVM chain id.
    pub chain: u64,
    /// The destination token's address.
    pub token: String,
    /// The recipient the payout must reach.
    pub recipient: String,
    /// The least `Transfer` value that counts (the route's `minOut`).
    pub min_out: String,
    /// The first block watched.
    pub from_block: u64,
    /// The last block scanned (none yet: absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scanned_to: Option<u64>,
}

impl UpstreamView {
    /// The view of a `track` answer, asked at `checked_ms`.
    pub fn of(st: &relay_plugin_api::TrackStatus, checked_ms: u64) -> Self {
        let state = serde_json::to_value(st.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        UpstreamView {
            state,
            stage: st.stage.clone(),
            dest_tx: st.dest_tx.clone(),
            message: st.message.clone(),
            checked_ms,
            watch: None,
        }
    }

    /// Whether the upstream reports delivery.
    pub fn delivered(&self) -> bool {
        self.state == "DONE"
    }
}

impl From<&relay_store::DestWatch> for WatchView {
    fn from(w: &relay_store::DestWatch) -> Self {
        WatchView {
            chain: w.chain,
            token: w.token.clone(),
            recipient: w.recipient.clone(),
            min_out: w.min_out.clone(),
            from_block: w.from_block,
            scanned_to: (w.next_block > w.from_block).then(|| w.next_block - 1),
        }
    }
}

/// Spec §2.8 RouteReceipt.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteReceipt {
    /// `rt_…` or `sbx_…`.
    pub id: String,
    /// `BRIDGING`, `DONE`, `FAILED`, `FUNDS_REQUIRED`, `AWAITING_DEPOSIT`, `DRY`.
    pub status: String,
    /// Always true: the caller paid no gas.
    pub gasless: bool,
    /// A sandbox route (nothing moves).
    pub sandbox: bool,
    /// The executing rail.
    pub bridge: String,
    /// The same.
    pub aggregator: String,
    /// Route fee, source units.
    pub relay_fee: String,
    /// Relayer gas with markup, source units.
    pub gas_fee: String,
    /// What the rail carries, source units.
    pub bridged: String,
    /// Source side.
    pub from: ReceiptFrom,
    /// Destination side.
    pub to: ReceiptTo,
    /// Source transaction.
    pub src_tx: Option<String>,
    /// Destination transaction, once delivered.
    pub dest_tx: Option<String>,
    /// `RECEIVING`, `SWAPPING`, `SENDING`, `COMPLETED`.
    pub stage: Option<String>,
    /// Seconds since it was accepted.
    pub elapsed_sec: f64,
    /// Where to read it again.
    pub track: String,
    /// Why it failed (`{code, message, fundsMoved, refundTx}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub failure: Option<Failure>,
    /// Rails ranked above it that were passed over, with why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failover: Option<Vec<String>>,
    /// The deposit to make.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deposit: Option<Deposit>,
    /// The upstream's view (status reads of live routes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamView>,
    /// Dry runs: false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broadcast: Option<bool>,
    /// Dry runs: the plan's steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub would_send: Option<Vec<PlanAction>>,
    /// A remark.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Renders a route as the spec's RouteReceipt. `elapsed_sec` is measured by
/// the caller (live routes from `created_ms`, sandbox routes from their timer).
pub fn receipt(r: &RouteRecord, sandbox: bool, elapsed_sec: f64) -> RouteReceipt {
    RouteReceipt {
        id: r.id.clone(),
        status: r.status.public().into(),
        gasless: true,
        sandbox,
        bridge: r.rail.clone(),
        aggregator: r.rail.clone(),
        relay_fee: r.relay_fee.to_string(),
        gas_fee: r.gas_fee.to_string(),
        bridged: r
            .amount
            .saturating_sub(r.relay_fee)
            .saturating_sub(r.gas_fee)
            .to_string(),
        from: ReceiptFrom {
            chain: r.from_chain,
            token: r.from_token.clone(),
            amount: r.amount.to_string(),
        },
        to: ReceiptTo {
            chain: r.to_chain,
            token: r.to_token.clone(),
            recipient: r.recipient.clone(),
            min: r.min_out.to_string(),
            estimated: r.estimated.to_string(),
        },
        src_tx: r.src_tx.clone(),
        dest_tx: r.dest_tx.clone(),
        stage: r.stage.clone(),
        elapsed_sec: (elapsed_sec * 10.0).round() / 10.0,
        track: format!("/api/route/status?id={}", r.id),
        failure: r.failure.clone(),
        failover: (!r.passed_over.is_empty()).then(|| r.passed_over.clone()),
        deposit: deposit(r),
        upstream: None,
        broadcast: None,
        would_send: None,
        note: sandbox
            .then(|| "sandbox: nothing is signed or moved; stages advance on a timer".into()),
    }
}

/// The receipt of a dry run (spec §2.8: `status: DRY`, `broadcast:false`,
/// `wouldSend` = the plan's steps): what execute answered and what its
/// `track` reads while the record is kept.
pub fn dry_receipt(r: &RouteRecord, elapsed_sec: f64) -> RouteReceipt {
    RouteReceipt {
        broadcast: Some(false),
        would_send: Some(r.plan.steps.clone()),
        ..receipt(r, false, elapsed_sec)
    }
}

/// The deposit the user must make (AWAITING_DEPOSIT routes).
fn deposit(r: &RouteRecord) -> Option<Deposit> {
    r.plan.steps.iter().find_map(|s| match s {
        PlanAction::DepositInstruction {
            node,
            address,
            asset,
            amount,
            expires_at_ms,
        } => Some(Deposit {
            node: *node,
            address: address.clone(),
            asset: asset.clone(),
            amount: amount.to_string(),
            expires_at: *expires_at_ms,
        }),
        _ => None,
    })
}

/// What a passed rehearsal's receipt says.
pub const REHEARSAL_NOTE: &str = "rehearsal (x-relay-rehearse): every check of a live execute passed; nothing was stored, signed or sent, no nonce or idempotency key was spent, and this id names no route — the same request without the header starts it";

/// The RouteReceipt of what became of the execute.
pub fn of_executed(done: &Executed) -> RouteReceipt {
    match done {
        Executed::Live(r) => receipt(r, false, 0.0),
        Executed::Sandbox(r) => receipt(r, true, 0.0),
        Executed::Dry(r) => dry_receipt(r, 0.0),
        Executed::Rehearsed(r) => RouteReceipt {
            broadcast: Some(false),
            note: Some(REHEARSAL_NOTE.into()),
            ..receipt(r, false, 0.0)
        },
        Executed::FundsRequired {
            record,
            sandbox,
            note,
        } => RouteReceipt {
            note: Some(note.clone()),
            ..receipt(record, *sandbox, 0.0)
        },
    }
}
