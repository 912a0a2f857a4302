//! The paying side of `POST /api/relaynames/list` and `POST
//! /api/messages/v2/handle/transfer` ([`crate::sales`]), and `GET
//! /api/relaynames/orders/{id}`: without a payment a priced name or a sale
//! answers 402 with the x402 invoice (the v1 body, the v2
//! `PAYMENT-REQUIRED` header); with one, the order runs and the answer
//! carries the settlement receipt (`X-PAYMENT-RESPONSE`,
//! `PAYMENT-RESPONSE`). A repeat with the same `x-idempotency-key` answers
//! the finished order again, marked `Idempotent-Replayed: true`.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody};
use relay_x402::{
    decode_payment, errors as pay,
    http::{invoice, order_code, payment_header, resource_url, with_receipt},
    orders::{NewOrder, Order, OrderError, Payout, DONE, FAILED, REFUNDED, REFUSED},
    payment_required_header, Requirement,
};
use serde::Serialize;
use utoipa::ToSchema;

use super::{service, Messaging};
use crate::{errors, names, sales::NameOrder, MessagingService};

/// The 402 answer: the x402 v1 invoice and what it is for.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NameInvoice {
    /// 1 (v2's invoice is the `PAYMENT-REQUIRED` header).
    pub x402_version: u8,
    /// What is missing or wrong with the payment.
    pub error: String,
    /// `PAYMENT_REQUIRED`, `PAYMENT_INVALID`, `PAYMENT_INSUFFICIENT`,
    /// `PAYMENT_EXPIRED` or `PAYMENT_UNFUNDED`.
    pub error_code: String,
    /// Always false: pay, then retry.
    pub retryable: bool,
    /// The accepted payments.
    pub accepts: Vec<Requirement>,
    /// The price, USD.
    pub price_usd: String,
    /// A sale's finalize fee, USD (the seller is paid the rest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_usd: Option<String>,
}

/// What is sold, and for how much.
pub(super) struct Ask {
    /// The order's goods.
    pub goods: NameOrder,
    /// The name it holds while open.
    pub name: String,
    /// The price, USD cents.
    pub cents: u64,
    /// A sale's seller and fee, cents (paid the price less the fee).
    pub sale: Option<(String, u64)>,
    /// The endpoint (the invoice's resource).
    pub path: &'static str,
    /// What the invoice says is paid for.
    pub description: String,
}

/// How a paid request ended.
pub(super) enum Sold {
    /// Delivered (and paid out): the order, and whether it is a replay.
    Done(Box<Order>, bool),
    /// A 402 (the invoice) or another finished answer.
    Answer(Response),
}

fn no_payments() -> ApiError {
    ApiError::new(
        errors::NamePaymentUnavailable,
        "this costs money and this host takes no payment for names ([messaging.names] payment_chain is 0); names of 7 or more characters are free",
    )
}

/// Runs the paid side of `ask`: a repeated idempotency key's finished
/// order, else `precheck` (what cannot be delivered is refused before any
/// money is asked for), the invoice, the order, its answer.
pub(super) async fn sell(
    svc: &MessagingService,
    headers: &HeaderMap,
    ask: Ask,
    precheck: impl std::future::Future<Output = Result<(), ApiError>>,
) -> Result<Sold, ApiError> {
    let till = svc.sales().ok_or_else(no_payments)?;
    let error = |e: OrderError| ApiError::new(order_code(&e), e.to_string());
    let key = relay_feature::edge::idempotency_key(headers);
    let checkout = till.checkout();
    let amount = checkout.of_cents(ask.cents);
    let resource = resource_url(headers, ask.path);
    let terms = Terms {
        requirement: checkout.requirement(amount, &resource, ask.description.clone()),
        chain: checkout.chain_id,
        price_usd: names::usd(ask.cents),
        fee_usd: ask.sale.as_ref().map(|(_, fee)| names::usd(*fee)),
    };
    if let Some(k) = &key {
        if let Some(order) = till.by_key(k).await.map_err(error)? {
            return finished(order, true, &terms);
        }
    }
    precheck.await?;
    let Some(header) = payment_header(headers) else {
        let e = ApiError::new(
            pay::PaymentRequired,
            "payment required: pay one of accepts[]",
        );
        return Ok(Sold::Answer(terms.invoice(e)));
    };
    let payment = match decode_payment(header) {
        Ok(p) => p,
        Err(e) => {
            let e = ApiError::new(pay::PaymentInvalid, format!("payment: {e}"));
            return Ok(Sold::Answer(terms.invoice(e)));
        }
    };
    let payout = ask.sale.map(|(seller, fee)| Payout {
        to: seller,
        amount: checkout.of_cents(ask.cents - fee).to_string(),
    });
    let new = NewOrder {
        goods: serde_json::to_value(&ask.goods).expect("an order serializes"),
        hold: Some(format!("name:{}", ask.name)),
        amount,
        payout,
    };
    match till.place(new, &payment, key.as_deref()).await {
        Ok(order) => finished(order, false, &terms),
        Err(e) => {
            let e = error(e);
            match e.code.status() == StatusCode::PAYMENT_REQUIRED {
                true => Ok(Sold::Answer(terms.invoice(e))),
                false => Err(e),
            }
        }
    }
}

/// An invoice's terms.
struct Terms {
    requirement: Requirement,
    chain: u64,
    price_usd: String,
    fee_usd: Option<String>,
}

impl Terms {
    /// 402: the invoice, with `e` as its error.
    fn invoice(&self, e: ApiError) -> Response {
        let v2 = payment_required_header(&self.requirement, self.chain, &e.message);
        let body = NameInvoice {
            x402_version: 1,
            error: e.message,
            error_code: e.code.as_str().into(),
            retryable: false,
            accepts: vec![self.requirement.clone()],
            price_usd: self.price_usd.clone(),
            fee_usd: self.fee_usd.clone(),
        };
        invoice(body, &v2)
    }
}

/// The answer of a finished (or still open) order.
fn finished(order: Order, replay: bool, terms: &Terms) -> Result<Sold, ApiError> {
    let why = order.error.clone().unwrap_or_default();
    match order.state.as_str() {
        DONE => Ok(Sold::Done(Box::new(order), replay)),
        REFUNDED => Err(ApiError::new(
            errors::NameOrderRefunded,
            format!(
                "order {}: {why}; refunded in transaction {}",
                order.id,
                order.refund_tx.as_deref().unwrap_or("?")
            ),
        )),
        // refused before settling: a name taken meanwhile, or a seller who
        // no longer holds it (the message says which)
        REFUSED => {
            let sale = order.goods["kind"] == "sale";
            let code = if sale { errors::NameNotOwner } else { errors::NameTaken };
            Err(ApiError::new(code, format!("order {}: {why}", order.id)))
        }
        FAILED => Ok(Sold::Answer(terms.invoice(ApiError::new(
            pay::PaymentUnfunded,
            format!("order {}: {why}", order.id),
        )))),
        _ => Err(ApiError::new(
            pay::PaymentChainUnavailable,
            format!(
                "order {} is {}: a step has no known outcome yet; retry with the same x-idempotency-key, or GET /api/relaynames/orders/{}",
                order.id, order.state, order.id
            ),
        )),
    }
}

/// `body` answered for a delivered `order`, with its settlement receipt
/// (and marked as a replay when it is one).
pub(super) fn delivered<B: Serialize>(body: B, order: &Order, replay: bool) -> Response {
    let tx = order.settle_tx.as_deref().unwrap_or_default();
    let receipt = (tx, order.network.as_str(), order.payer.as_str());
    let mut resp = with_receipt(Json(body).into_response(), true, receipt);
    if replay {
        let v = HeaderValue::from_static("true");
        resp.headers_mut().insert(relay_feature::once::REPLAYED, v);
    }
    resp
}

#[utoipa::path(get, path = "/api/relaynames/orders/{id}", tag = "messages",
    summary = "A paid name order (a priced registration or a sale): its state (ACCEPTED, SETTLED, DELIVERED, DONE, REFUNDING, REFUNDED, FAILED) and transactions",
    params(("id" = String, Path, description = "The order (or_…), as a paid answer's `order.id`")),
    responses((status = 200, description = "The order", body = Order), (status = "default", description = "A typed error (404 NAME_ORDER_NOT_FOUND, 409 NAME_PAYMENT_UNAVAILABLE)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn order(
    State(m): State<Messaging>,
    Path(id): Path<String>,
) -> Result<Json<Order>, ApiError> {
    let till = service(&m)?.sales().ok_or_else(no_payments)?;
    let not_found = || ApiError::new(errors::NameOrderNotFound, format!("no name order {id}"));
    if !id.starts_with("or_") || id.len() > 64 {
        return Err(not_found());
    }
    match till.order(&id).await {
        Ok(Some(o)) => Ok(Json(o)),
        Ok(None) => Err(not_found()),
        Err(e) => Err(ApiError::new(order_code(&e), e.to_string())),
    }
}
