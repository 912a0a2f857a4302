//! `POST /api/messages/v2/handle/transfer` (spec §4.10): a name moves from
//! its owner to a receiver with two signatures — the owner's release and
//! the receiver's accept — and the move is appended to the witness log.
//! The name must be registered and owned by `from` (`NAME_NOT_FOUND`,
//! `NAME_NOT_OWNER`); a transfer's accept time must be later than the
//! name's latest entry (a replayed transfer is refused). The new owner
//! keeps the registration's expiry.
//!
//! The texts (EIP-191, lowercase addresses, no final newline):
//!
//! ```text
//! relay/messages/v2 handle release
//! name: alice
//! from: 0x…
//! to: 0x…
//! ts: 1764480000000
//! ```
//!
//! and the same with `handle accept` on the first line, signed by `to`.
//!
//! **A sale** (spec §8.2): both texts carry the price as one more line,
//! `price: 25.00 USD` (at least 1.00), and the transfer is paid by the
//! receiver's side with x402 — 402 with the invoice, then the payment; the
//! relayer settles it, moves the name, and pays the seller the price less
//! the finalize fee (2 %, at least 1 USD); a name that cannot move once
//! the payment settled is refunded in full ([`crate::sales`]).

use axum::{
    extract::State,
    http::HeaderMap,
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody};
use relay_feature::edge::JsonObject;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    outcome_error,
    sales::{delivered, sell, Ask, NameInvoice, Sold},
    service, Messaging,
};
use crate::{
    errors, mailbox,
    names::{fee_cents, Moved, Sale, MIN_SALE_CENTS},
    sales::NameOrder,
};
use relay_x402::orders::Order;

/// One side's signature.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Signed {
    /// When it was signed, ms.
    pub ts: u64,
    /// EIP-191 signature, `0x` and 65 bytes.
    pub sig: String,
}

/// A transfer.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferRequest {
    /// The name.
    pub name: String,
    /// Its owner.
    pub from: String,
    /// The receiver.
    pub to: String,
    /// The owner's release.
    pub release: Signed,
    /// The receiver's accept.
    pub accept: Signed,
    /// A sale's price, USD with at most two decimals (`25.00`, at least
    /// `1.00`), signed by both sides; absent for a gift.
    #[serde(default)]
    pub price_usd: Option<String>,
}

/// A transfer that landed.
#[derive(Debug, Serialize, ToSchema)]
pub struct Transferred {
    /// The name.
    pub name: String,
    /// Its new owner.
    pub owner: String,
    /// The witness entry.
    pub s: u64,
    /// A sale's paid order (`GET /api/relaynames/orders/{id}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
}

/// The text one side of a gift signs.
pub fn text(side: &str, name: &str, from: &str, to: &str, ts: u64) -> String {
    format!("relay/messages/v2 handle {side}\nname: {name}\nfrom: {from}\nto: {to}\nts: {ts}")
}

/// The text one side of `t` signs: a sale's ends with its price line.
pub fn signed_text(side: &str, t: &TransferRequest, ts: u64) -> String {
    let gift = text(side, &t.name, &t.from, &t.to, ts);
    match &t.price_usd {
        Some(price) => format!("{gift}\nprice: {price} USD"),
        None => gift,
    }
}

/// `price` (`25.00`, `25`, `25.5`) in cents: at least [`MIN_SALE_CENTS`],
/// at most a billion USD.
pub fn sale_cents(price: &str) -> Result<u64, ApiError> {
    let bad = || {
        ApiError::new(
            relay_errors::ErrorCode::InvalidField,
            format!("priceUsd: {price:?} is not a price of 1.00 to 1000000000.00 USD with at most two decimals"),
        )
        .field("priceUsd")
    };
    let (whole, part) = price.split_once('.').unwrap_or((price, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 10 || part.len() > 2 || !digits(whole) || !digits(part) {
        return Err(bad());
    }
    let cents = whole.parse::<u64>().map_err(|_| bad())? * 100
        + format!("{part:0<2}").parse::<u64>().map_err(|_| bad())?;
    match (MIN_SALE_CENTS..=100_000_000_000).contains(&cents) {
        true => Ok(cents),
        false => Err(bad()),
    }
}

fn check_side(
    side: &'static str,
    t: &TransferRequest,
    s: &Signed,
    signer: &str,
    now_ms: u64,
    skew: u64,
) -> Result<(), ApiError> {
    let bad = |why: String| {
        ApiError::new(errors::TransferSignatureInvalid, format!("{side}: {why}")).field(side)
    };
    if now_ms.abs_diff(s.ts) > skew {
        return Err(bad(format!(
            "ts is more than {skew} ms from the host's clock"
        )));
    }
    let got = mailbox::signer_of(&signed_text(side, t, s.ts), &s.sig)
        .map_err(|e| bad(format!("sig: {e}")))?;
    match mailbox::lower(&got) == signer {
        true => Ok(()),
        false => Err(bad(format!(
            "sig recovers to {}, not to {signer}",
            mailbox::lower(&got)
        ))),
    }
}

#[utoipa::path(post, path = "/api/messages/v2/handle/transfer", tag = "messages",
    summary = "Move a name: the owner's signed release and the receiver's signed accept; a sale (both signed priceUsd) is paid with x402 and the seller is paid the price less the 2 % (at least 1 USD) finalize fee",
    request_body = TransferRequest,
    params(
        relay_x402::http::PaymentHeaders,
    ),
    responses(
        (status = 200, description = "Moved; its witness entry (and, for a sale, the order, with X-PAYMENT-RESPONSE and PAYMENT-RESPONSE headers)", body = Transferred),
        (status = 402, description = "A sale without a valid payment: the x402 invoice (the v2 one in the PAYMENT-REQUIRED header)", body = NameInvoice),
        (status = "default", description = "A typed error (TRANSFER_SIGNATURE_INVALID, 404 NAME_NOT_FOUND, 403 NAME_NOT_OWNER, 409 NAME_REPLAYED / NAME_ORDER_REFUNDED / ORDER_PENDING / NAME_PAYMENT_UNAVAILABLE)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn transfer(
    State(m): State<Messaging>,
    headers: HeaderMap,
    body: JsonObject,
) -> Result<Response, ApiError> {
    let mut t: TransferRequest = body.decode()?;
    let svc = service(&m)?;
    let field = |f: &'static str| {
        move |e: mailbox::PublishError| {
            ApiError::new(relay_errors::ErrorCode::InvalidField, e.to_string()).field(f)
        }
    };
    t.from = mailbox::lower(&mailbox::address_field("from", &t.from).map_err(field("from"))?);
    t.to = mailbox::lower(&mailbox::address_field("to", &t.to).map_err(field("to"))?);
    let (now, skew) = (svc.now_ms(), svc.config().max_skew_ms);
    t.name = crate::names::normalize(&t.name)
        .map_err(|e| ApiError::new(errors::NameInvalid, e.to_string()).field("name"))?;
    let price = t.price_usd.as_deref().map(sale_cents).transpose()?;
    check_side("release", &t, &t.release, &t.from, now, skew)?;
    check_side("accept", &t, &t.accept, &t.to, now, skew)?;
    let moved = Moved {
        name: t.name.clone(),
        from: t.from.clone(),
        to: t.to.clone(),
        release: (t.release.ts, t.release.sig.to_ascii_lowercase()),
        accept: (t.accept.ts, t.accept.sig.to_ascii_lowercase()),
        sale: price.map(|price_cents| Sale {
            price_cents,
            fee_cents: fee_cents(price_cents),
            paid: None,
        }),
    };
    let refused = |e| outcome_error(e, errors::NameReplayed);
    let Some(sale) = moved.sale.clone() else {
        let record = svc.witness().transfer(&moved, now).await.map_err(refused)?;
        return Ok(Json(Transferred {
            name: record.name,
            owner: record.owner,
            s: record.s,
            order: None,
        })
        .into_response());
    };
    // what cannot move is refused before any money is asked for
    let precheck = async { svc.witness().movable(&moved, now).await.map_err(refused) };
    let ask = Ask {
        name: t.name.clone(),
        description: format!("the name {} sold by {} to {}", t.name, t.from, t.to),
        goods: NameOrder::Sale {
            transfer: moved.clone(),
        },
        cents: sale.price_cents,
        sale: Some((t.from.clone(), sale.fee_cents)),
        path: "/api/messages/v2/handle/transfer",
    };
    Ok(match sell(svc, &headers, ask, precheck).await? {
        Sold::Answer(resp) => resp,
        Sold::Done(order, replay) => {
            let s = order.delivered.as_deref().and_then(|s| s.parse().ok());
            let body = Transferred {
                name: t.name,
                owner: t.to,
                s: s.unwrap_or_default(),
                order: Some((*order).clone()),
            };
            delivered(body, &order, replay)
        }
    })
}
