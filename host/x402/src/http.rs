//! x402 at the HTTP edge, for every paying endpoint: the payment header a
//! request carries, the resource URL an invoice names, the 402 answer
//! (the v1 invoice body, the v2 `PAYMENT-REQUIRED` header), the receipt
//! headers of a settled payment, and the `errorCode` of a refused payment.
//! The x402 feature ([`feature`]) serves no route of its own: it lists
//! x402's `errorCode`s in the host's catalogue once.

use axum::{
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use relay_chain::eip3009::PaymentError;
use relay_errors::ErrorCode;
use relay_feature::Feature;
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;

use crate::{
    checkout::CheckoutError, errors, orders::OrderError, payment_response_header, PAYMENT_REQUIRED,
    PAYMENT_RESPONSE, PAYMENT_SIGNATURE, X_PAYMENT, X_PAYMENT_RESPONSE,
};

/// x402 (spec §4.8), as the host registers it: its `errorCode`s.
pub const fn feature<S>() -> Feature<S>
where
    S: Clone + Send + Sync + 'static,
{
    Feature {
        name: "x402",
        home: "host/x402",
        spec: "§4.8",
        section: None,
        routes: no_routes::<S>,
        limits: &[],
        errors: errors::ALL,
        start: None,
    }
}

fn no_routes<S: Clone + Send + Sync + 'static>(_: &S) -> OpenApiRouter<S> {
    OpenApiRouter::new()
}

/// The headers a paying endpoint reads, as its OpenAPI operation lists
/// them (`params(PaymentHeaders)`).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Header)]
pub struct PaymentHeaders {
    /// x402 v1 payment: base64 JSON {x402Version:1, scheme:"exact",
    /// network, payload:{signature, authorization}} (EIP-3009).
    #[serde(rename = "x-payment")]
    pub x_payment: Option<String>,
    /// x402 v2 payment: base64 JSON {x402Version:2, accepted, payload}.
    #[serde(rename = "payment-signature")]
    pub payment_signature: Option<String>,
    /// A repeat answers the first paid request; nothing is charged twice.
    #[serde(rename = "x-idempotency-key")]
    pub x_idempotency_key: Option<String>,
}

/// The request's payment (`PAYMENT-SIGNATURE` v2, else `X-PAYMENT` v1).
pub fn payment_header(headers: &HeaderMap) -> Option<&str> {
    [PAYMENT_SIGNATURE, X_PAYMENT]
        .iter()
        .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
}

/// The absolute URL of `path` on the host the request named (an
/// invoice's `resource`).
pub fn resource_url(headers: &HeaderMap, path: &str) -> String {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}{path}")
}

/// 402 with `body` (the v1 invoice) and `v2` as `PAYMENT-REQUIRED`.
pub fn invoice<B: Serialize>(body: B, v2: &str) -> Response {
    let mut resp = (StatusCode::PAYMENT_REQUIRED, Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(v2) {
        resp.headers_mut().insert(PAYMENT_REQUIRED, v);
    }
    resp
}

/// `resp` with the settlement receipt under both versions' names.
pub fn with_receipt(
    mut resp: Response,
    success: bool,
    (tx, network, payer): (&str, &str, &str),
) -> Response {
    let receipt = payment_response_header(success, tx, network, payer);
    if let Ok(v) = HeaderValue::from_str(&receipt) {
        for name in [X_PAYMENT_RESPONSE, PAYMENT_RESPONSE] {
            resp.headers_mut().insert(name, v.clone());
        }
    }
    resp
}

/// The `errorCode` of a refused payment.
pub fn payment_code(e: &CheckoutError) -> ErrorCode {
    match e {
        CheckoutError::Malformed(_) => errors::PaymentInvalid,
        CheckoutError::Payment(p) => match p {
            PaymentError::Underpaid { .. } => errors::PaymentInsufficient,
            PaymentError::OutsideWindow { .. } => errors::PaymentExpired,
            PaymentError::NonceUsed(_) => errors::PaymentNonceUsed,
            PaymentError::Unfunded(_) => errors::PaymentUnfunded,
            _ => errors::PaymentInvalid,
        },
        CheckoutError::Chain(_) => errors::PaymentChainUnavailable,
    }
}

/// The `errorCode` of an order that was refused or could not go on.
pub fn order_code(e: &OrderError) -> ErrorCode {
    match e {
        OrderError::Checkout(c) => payment_code(c),
        OrderError::Held(_) => errors::OrderPending,
        OrderError::InFlight => ErrorCode::IdempotencyInFlight,
        OrderError::KeyReused => ErrorCode::IdempotencyMismatch,
        OrderError::RelayerUnavailable(_) => ErrorCode::RelayerUnavailable,
        OrderError::Chain(_) | OrderError::Delivery(_) => errors::PaymentChainUnavailable,
        OrderError::Store(_) => ErrorCode::StoreUnavailable,
    }
}
