//! `GET /api/relaynames/quote` and `POST /api/relaynames/list` (spec
//! §4.10, §8.2): the name registry's adapter over [`crate::names`] and the
//! witness log.

use axum::{
    extract::State,
    http::HeaderMap,
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::edge::{JsonObject, QueryFields};
use serde::Serialize;
use utoipa::ToSchema;

use super::{
    number, outcome_error, query,
    sales::{sell, Ask, NameInvoice, Sold},
    service, store_error, Messaging,
};
use crate::{
    errors, mailbox,
    names::{self, Listing, NameRecord, NameState, Registration},
    sales::NameOrder,
};
use relay_x402::orders::Order;

/// A name's price and state.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NameQuote {
    /// The name, normalised.
    pub name: String,
    /// Where it stands now.
    pub state: NameState,
    /// Its owner, while registered or in grace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// When its registration ends (or ended), ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// When the owner's grace ends, ms (when expired).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace_ends_at: Option<u64>,
    /// When the premium window ends, ms (in it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub premium_ends_at: Option<u64>,
    /// The yearly price, USD.
    pub price_per_year_usd: String,
    /// Years quoted.
    pub years: u32,
    /// The premium now, USD.
    pub premium_usd: String,
    /// What registering it now costs, USD.
    pub total_usd: String,
    /// Whether it is free.
    pub free: bool,
}

#[utoipa::path(get, path = "/api/relaynames/quote", tag = "messages",
    summary = "A name's state and price: 3 characters 512 USD/yr, 4 characters 128, 5-6 characters 4, 7 or more free; 90-day owner grace after expiry, then a 21-day premium decaying from 10,000 USD",
    params(
        ("name" = String, Query, description = "The name (case folded; a-z, 0-9, '-')"),
        ("years" = Option<u32>, Query, description = "Years to quote, 1 to 10 (default 1)"),
    ),
    responses((status = 200, description = "The quote", body = NameQuote), (status = "default", description = "A typed error (NAME_INVALID)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn quote(
    State(m): State<Messaging>,
    q: QueryFields,
) -> Result<Json<NameQuote>, ApiError> {
    let q = query(q, &["name", "years"])?;
    let years = number(&q, "years", 1, 1..=u64::from(names::MAX_YEARS))? as u32;
    let raw = q
        .get("name")
        .ok_or_else(|| ApiError::new(ErrorCode::MissingField, "name: required").field("name"))?;
    let name = names::normalize(raw)
        .map_err(|e| ApiError::new(errors::NameInvalid, e.to_string()).field("name"))?;
    let svc = service(&m)?;
    let now = svc.now_ms();
    let record = svc.witness().name(&name).await.map_err(store_error)?;
    Ok(Json(quoted(name, record.as_ref(), years, now)))
}

fn quoted(name: String, record: Option<&NameRecord>, years: u32, now: u64) -> NameQuote {
    let state = names::state(record, now);
    let yearly = names::yearly_cents(&name);
    let premium = names::premium_cents(record, now);
    let total = names::price_cents(&name, record, years, now);
    let expired = record.filter(|r| r.expires <= now);
    let held = matches!(state, NameState::Registered | NameState::Grace);
    NameQuote {
        state,
        owner: record.filter(|_| held).map(|r| r.owner.clone()),
        expires_at: record
            .filter(|_| state != NameState::Available)
            .map(|r| r.expires),
        grace_ends_at: expired
            .filter(|_| held)
            .map(|r| r.expires + names::GRACE_MS),
        premium_ends_at: (state == NameState::Premium)
            .then(|| record.map(|r| r.expires + names::GRACE_MS + names::PREMIUM_MS))
            .flatten(),
        price_per_year_usd: names::usd(yearly),
        years,
        premium_usd: names::usd(premium),
        total_usd: names::usd(total),
        free: yearly == 0 && premium == 0,
        name,
    }
}

/// A registration that landed: its record, and the order that paid for
/// it (a priced name).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// The name's record.
    #[serde(flatten)]
    pub record: NameRecord,
    /// The paid order (`GET /api/relaynames/orders/{id}`), when it cost money.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
}

#[utoipa::path(post, path = "/api/relaynames/list", tag = "messages",
    summary = "Register (or renew) a name for its owner: {name, owner, years, ts, sig}, EIP-191-signed (the text GET /api/messages/v2/info documents); a priced name (3-6 characters, or a premium) is paid with x402 (402 with the invoice, then X-PAYMENT or PAYMENT-SIGNATURE); appended to the witness log with its payment",
    request_body = Listing,
    params(
        relay_x402::http::PaymentHeaders,
    ),
    responses(
        (status = 200, description = "Registered; its record and witness entry (and, when paid, the order, with X-PAYMENT-RESPONSE and PAYMENT-RESPONSE headers)", body = Listed),
        (status = 402, description = "A priced name without a valid payment: the x402 invoice (the v2 one in the PAYMENT-REQUIRED header)", body = NameInvoice),
        (status = "default", description = "A typed error (NAME_INVALID, NAME_SIGNATURE_INVALID, 409 NAME_TAKEN / NAME_CONFUSABLE / NAME_PAYMENT_UNAVAILABLE / NAME_CAP / NAME_ORDER_REFUNDED / ORDER_PENDING / PAYMENT_NONCE_USED)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn list(
    State(m): State<Messaging>,
    headers: HeaderMap,
    body: JsonObject,
) -> Result<Response, ApiError> {
    let mut l: Listing = body.decode()?;
    let svc = service(&m)?;
    l.name = names::normalize(&l.name)
        .map_err(|e| ApiError::new(errors::NameInvalid, e.to_string()).field("name"))?;
    let owner = mailbox::address_field("owner", &l.owner)
        .map_err(|e| ApiError::new(ErrorCode::InvalidField, e.to_string()).field("owner"))?;
    l.owner = mailbox::lower(&owner);
    if !(1..=names::MAX_YEARS).contains(&l.years) {
        return Err(ApiError::new(ErrorCode::InvalidField, "years: 1 to 10").field("years"));
    }
    let now = svc.now_ms();
    let bad = |why: String| ApiError::new(errors::NameSignatureInvalid, why).field("sig");
    if now.abs_diff(l.ts) > svc.config().max_skew_ms {
        return Err(bad(format!(
            "ts: more than {} ms from the host's clock",
            svc.config().max_skew_ms
        )));
    }
    let signer = mailbox::signer_of(&l.text(), &l.sig).map_err(|e| bad(format!("sig: {e}")))?;
    if signer != owner {
        return Err(bad(format!(
            "sig recovers to {}, not to the owner: sign exactly the listing text (normalised name, lowercase owner)",
            mailbox::lower(&signer)
        )));
    }
    let r = Registration {
        name: l.name,
        owner: l.owner,
        years: l.years,
        ts: l.ts,
        sig: l.sig.to_ascii_lowercase(),
        expires: 0,
        paid: None,
    };
    let refused = |e| outcome_error(e, errors::NameReplayed);
    let held = svc.witness().name(&r.name).await.map_err(store_error)?;
    let cents = names::price_cents(&r.name, held.as_ref(), r.years, now);
    if cents == 0 {
        let record = svc.witness().register(r, now).await.map_err(refused)?;
        return Ok(Json(Listed {
            record,
            order: None,
        })
        .into_response());
    }
    // what cannot be registered is refused before any money is asked for
    let priced = Registration {
        paid: Some(names::Paid {
            order: String::new(),
            cents,
            chain_id: 0,
            settle_tx: String::new(),
        }),
        ..r.clone()
    };
    let precheck = async {
        svc.witness()
            .admissible(&priced, now)
            .await
            .map_err(refused)
    };
    let name = r.name.clone();
    let ask = Ask {
        name: r.name.clone(),
        description: format!(
            "the name {} for {} year(s), owned by {}",
            r.name, r.years, r.owner
        ),
        goods: NameOrder::List {
            registration: r,
            cents,
        },
        cents,
        sale: None,
        path: "/api/relaynames/list",
    };
    Ok(match sell(svc, &headers, ask, precheck).await? {
        Sold::Answer(resp) => resp,
        Sold::Done(order, replay) => {
            let record = svc.witness().name(&name).await.map_err(store_error)?;
            let record = record.ok_or_else(|| {
                ApiError::new(
                    ErrorCode::StoreUnavailable,
                    "the registration is not readable yet; retry with the same x-idempotency-key",
                )
            })?;
            let body = Listed {
                record,
                order: Some((*order).clone()),
            };
            super::sales::delivered(body, &order, replay)
        }
    })
}
