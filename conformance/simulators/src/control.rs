//! Devnet control endpoints shared by every simulator: read the simulated
//! ledgers (`GET /simulator/ledger?node&address&asset`).

use std::{collections::HashMap, sync::Arc};

use axum::{
    extract::{Query, State},
    routing::get,
    Json, Router,
};
use serde_json::{json, Value};

use crate::ledger::Ledger;

async fn ledger(
    State(l): State<Arc<Ledger>>,
    Query(q): Query<HashMap<String, String>>,
) -> Json<Value> {
    let get = |k: &str| q.get(k).map(String::as_str).unwrap_or_default();
    Json(json!({
        "simulated": true,
        "node": get("node"),
        "address": get("address"),
        "asset": get("asset"),
        "balance": l.balance(get("node"), get("address"), get("asset")).to_string(),
        "history": l.history(),
    }))
}

/// `GET /simulator/ledger`.
pub fn routes(l: Arc<Ledger>) -> Router {
    Router::new()
        .route("/simulator/ledger", get(ledger))
        .with_state(l)
}
