//! The RouteReceipt (spec §2.8): what execute, status and stream return.

use relay_types::RouteRecord;
use serde_json::{json, Value};

/// Renders a route as the spec's RouteReceipt. `elapsed_sec` is measured by
/// the caller (live routes from `created_ms`, sandbox routes from their timer).
pub fn receipt(r: &RouteRecord, sandbox: bool, elapsed_sec: f64) -> Value {
    let mut v = json!({
        "id": r.id,
        "status": r.status.public(),
        "gasless": true,
        "sandbox": sandbox,
        "bridge": r.rail,
        "aggregator": r.rail,
        "relayFee": r.relay_fee.to_string(),
        "gasFee": r.gas_fee.to_string(),
        "bridged": r.amount.saturating_sub(r.relay_fee).saturating_sub(r.gas_fee).to_string(),
        "from": {"chain": r.from_chain, "token": r.from_token, "amount": r.amount.to_string()},
        "to": {
            "chain": r.to_chain,
            "token": r.to_token,
            "recipient": r.recipient,
            "min": r.min_out.to_string(),
            "estimated": r.estimated.to_string(),
        },
        "srcTx": r.src_tx,
        "destTx": r.dest_tx,
        "stage": r.stage,
        "elapsedSec": (elapsed_sec * 10.0).round() / 10.0,
        "track": format!("/api/route/status?id={}", r.id),
    });
    if let Some(f) = &r.failure {
        v["failure"] = json!(f);
    }
    if !r.passed_over.is_empty() {
        v["failover"] = json!(r.passed_over);
    }
    if let Some(d) = deposit(r) {
        v["deposit"] = d;
    }
    if sandbox {
        v["note"] = json!("sandbox: nothing is signed or moved; stages advance on a timer");
    }
    v
}

/// The deposit the user must make (AWAITING_DEPOSIT routes).
fn deposit(r: &RouteRecord) -> Option<Value> {
    r.plan.steps.iter().find_map(|s| match s {
        relay_plugin_api::PlanAction::DepositInstruction {
            node,
            address,
            asset,
            amount,
            expires_at_ms,
        } => Some(json!({
            "node": node,
            "address": address,
            "asset": asset,
            "amount": amount.to_string(),
            "expiresAt": expires_at_ms,
        })),
        _ => None,
    })
}
