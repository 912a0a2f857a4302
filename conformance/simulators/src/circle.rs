//! Circle attestation service simulator, following Circle's CCTP v2 API
//! (developers.circle.com, "GET /v2/messages/{sourceDomainId}"):
//! `?transactionHash=0x…` → `{"messages": [{"message", "eventNonce",
//! "attestation", "status": "pending_confirmations" | "complete", …}]}`;
//! 404 `{"code": 404, "message": "Not Found"}` while the transaction is not
//! known. It signs each `MessageSent` message of the transaction with the
//! devnet attester key, so `receiveMessage` on the destination mints.

use std::{collections::HashMap, sync::Arc};

use alloy::{
    primitives::B256,
    providers::{DynProvider, Provider},
};
use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
    Json, Router,
};
use relay_devnet::{
    contracts::{attest_cctp_message, MessageTransmitter},
    keys, Devnet,
};
use serde_json::{json, Value};

use crate::faults::Faults;

/// Per CCTP domain: the chain's provider and message transmitter.
#[derive(Clone)]
pub struct Circle {
    domains: Arc<HashMap<u32, (DynProvider, alloy::primitives::Address)>>,
    /// Faults.
    pub faults: Arc<Faults>,
}

impl Circle {
    /// Serves every CCTP chain of `devnet`.
    pub fn new(devnet: &Devnet, faults: Arc<Faults>) -> Self {
        let domains = devnet
            .chains()
            .iter()
            .filter_map(|c| {
                c.deployment
                    .cctp
                    .as_ref()
                    .map(|x| (x.domain, (c.provider(), x.message_transmitter)))
            })
            .collect();
        Circle {
            domains: Arc::new(domains),
            faults,
        }
    }
}

fn not_found() -> (StatusCode, Value) {
    (
        StatusCode::NOT_FOUND,
        json!({"code": 404, "message": "Not Found"}),
    )
}

/// `GET /v2/messages/{sourceDomainId}`.
pub fn routes(s: Circle) -> Router {
    Router::new()
        .route("/v2/messages/{domain}", get(messages))
        .with_state(s)
}

async fn messages(
    State(s): State<Circle>,
    Path(domain): Path<u32>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(r) = s
        .faults
        .intercept((
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"code": 500, "message": "Internal Server Error"}),
        ))
        .await
    {
        return r;
    }
    let nf = || {
        let (c, b) = not_found();
        (c, Json(b)).into_response()
    };
    let (Some((provider, transmitter)), Some(tx)) = (
        s.domains.get(&domain),
        q.get("transactionHash")
            .and_then(|h| h.parse::<B256>().ok()),
    ) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"code": 400, "message": "Invalid domain or transactionHash"})),
        )
            .into_response();
    };
    let Ok(Some(receipt)) = provider.get_transaction_receipt(tx).await else {
        return nf();
    };
    let messages: Vec<Value> = receipt
        .inner
        .logs()
        .iter()
        .filter(|l| l.address() == *transmitter)
        .filter_map(|l| l.log_decode::<MessageTransmitter::MessageSent>().ok())
        .map(|l| {
            let message = l.inner.data.message.to_vec();
            let nonce = message.get(12..44).map(hex::encode).unwrap_or_default();
            json!({
                "message": format!("0x{}", hex::encode(&message)),
                "eventNonce": format!("0x{nonce}"),
                "attestation": format!("0x{}", hex::encode(attest_cctp_message(&keys::attester(), &message))),
                "status": "complete",
                "cctpVersion": 2,
            })
        })
        .collect();
    if messages.is_empty() {
        return nf();
    }
    Json(json!({ "messages": messages })).into_response()
}
