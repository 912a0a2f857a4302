//! The RouteReceipt (spec §2.8): what execute, status and stream return,
//! typed.

use relay_plugin_api::{ChainRef, PlanAction};
use relay_types::{Failure, RouteRecord};
use serde::Serialize;
use utoipa::ToSchema;

/// The source side of a receipt.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ReceiptFrom {
    /// Source node (EVM chain id or node name).
    #[schema(value_type = relay_engine::wire::Node)]
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
    #[schema(value_type = relay_engine::wire::Node)]
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
    #[schema(value_type = relay_engine::wire::Node)]
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
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamView {
    /// The upstream's state (`PENDING`, `DONE`, `FAILED`, `REFUNDED`).
    #[schema(value_type = String)]
    pub state: relay_plugin_api::TrackState,
    /// Its stage.
    pub stage: Option<String>,
    /// Its destination transaction.
    pub dest_tx: Option<String>,
    /// Its message.
    pub message: Option<String>,
    /// When it was asked, epoch ms.
    pub checked_ms: u64,
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
