//! The domain's refusals as `errorCode`s: the engine's request and
//! permit errors, the execute service's, and the quote fan-out's "no
//! route" — one mapping, used by the HTTP handlers and by the services'
//! own adapters (the yield account's legs, the primitives' runner) alike.

use relay_engine::{execute::Declined, quote::NoRoute, route::RequestError, EngineError};
use relay_execution::{execute::ExecuteError, simulate::WouldRevert};

use relay_admin::operator::OperatorError;
use relay_wire::WireError;

use crate::{ApiError, ErrorCode};

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Request(r) => r.into(),
            EngineError::Permit2(p) => {
                let code = match p {
                    relay_chain::permit2::Permit2Error::Rpc(_) => ErrorCode::RelayerUnavailable,
                    // one code per cause: the pull's simulation names it so too
                    relay_chain::permit2::Permit2Error::NonceUsed(_) => ErrorCode::Permit2NonceUsed,
                    _ => ErrorCode::Permit2Invalid,
                };
                ApiError::new(code, p.to_string())
            }
            EngineError::RelayerUnavailable(m) => ApiError::new(ErrorCode::RelayerUnavailable, m),
        }
    }
}

impl From<RequestError> for ApiError {
    fn from(e: RequestError) -> Self {
        let code = match &e {
            RequestError::Malformed(_) => ErrorCode::MalformedBody,
            RequestError::Missing { .. } => ErrorCode::MissingField,
            RequestError::UnknownChain { .. } => ErrorCode::UnknownChain,
            RequestError::UnknownToken { .. } => ErrorCode::UnknownToken,
            RequestError::InvalidAmount { .. } => ErrorCode::InvalidAmount,
            RequestError::InvalidAddress { .. } => ErrorCode::InvalidAddress,
            RequestError::Invalid { .. } => ErrorCode::InvalidField,
            RequestError::SameChainSameToken => ErrorCode::SameChainSameToken,
        };
        let mut err = ApiError::new(code, e.to_string()).suggest(e.suggestion());
        if let Some(f) = e.field() {
            err = err.field(f);
        }
        err
    }
}

/// A body that does not decode as a route or execute request: refused as
/// the engine refuses it ([`RequestError`]: `MISSING_FIELD` or
/// `INVALID_FIELD` naming the field by its path, `MALFORMED_BODY`).
impl From<WireError> for ApiError {
    fn from(e: WireError) -> Self {
        RequestError::from(e).into()
    }
}

impl From<ExecuteError> for ApiError {
    fn from(e: ExecuteError) -> Self {
        let message = e.to_string();
        match e {
            ExecuteError::OperatorAuthRequired => ApiError::new(ErrorCode::OperatorAuthRequired, message)
                .field("mode")
                .suggest("without the operator's credential send mode \"permit2\" with a Permit2 signature of your own funds (PermitTransferFrom for spender = the relayer; GET /api/gasless/info); the operator sends Authorization: Bearer <owner token>"),
            ExecuteError::Request(e) => e.into(),
            ExecuteError::AttestationInvalid(_) => {
                ApiError::new(ErrorCode::AttestationInvalid, message).field("attestation")
            }
            ExecuteError::RailNotServing(_) => {
                ApiError::new(ErrorCode::UnroutableLane, message).field("rail")
            }
            ExecuteError::Unroutable(m) => ApiError::new(ErrorCode::UnroutableLane, m)
                .suggest("see GET /api/route/chains for the lanes this host serves"),
            ExecuteError::NoRoute(why) => no_route(why),
            ExecuteError::Declined(d) => declined(d),
            ExecuteError::WouldRevert(w) => would_revert(&w, message),
            ExecuteError::RelayerUnavailable(m) => ApiError::new(ErrorCode::RelayerUnavailable, m),
            ExecuteError::Store(m) => ApiError::new(ErrorCode::StoreUnavailable, m),
            ExecuteError::IntentNotFound(_) => {
                ApiError::new(ErrorCode::IntentNotFound, message).field("intentId")
            }
            ExecuteError::IntentExpired(_) => ApiError::new(ErrorCode::IntentExpired, message)
                .field("intentId")
                .suggest("POST /api/route/intent again and sign the new terms"),
            ExecuteError::IntentMismatch { field, .. } => {
                ApiError::new(ErrorCode::IntentMismatch, message).field(field)
            }
            ExecuteError::Router(e) => router_error(e),
            ExecuteError::RouterUnavailable(m) => ApiError::new(ErrorCode::RouterUnavailable, m),
        }
    }
}

fn router_error(e: relay_chain::router::RouterError) -> ApiError {
    use relay_chain::router::RouterError as R;
    let message = e.to_string();
    let (code, field) = match e {
        R::Unsigned => (ErrorCode::SignatureInvalid, None),
        R::Signature { field, .. }
        | R::WrongSigner { field, .. }
        | R::ContractRefused { field, .. } => (ErrorCode::SignatureInvalid, Some(field)),
        R::Expired { field, .. } => (ErrorCode::SignatureExpired, Some(field)),
        R::NonceUsed { field, .. } => (ErrorCode::NonceUsed, Some(field)),
        R::PermitTooSmall { .. } => (ErrorCode::SignatureInvalid, Some("erc2612.value")),
        R::Read(_) => (ErrorCode::RelayerUnavailable, None),
    };
    let err = ApiError::new(code, message);
    match field {
        Some(f) => err.field(f),
        None => err,
    }
}

/// The error code of a transaction that would revert.
pub fn revert_code(w: &WouldRevert) -> ErrorCode {
    match w {
        WouldRevert::AllowanceMissing { .. } => ErrorCode::Permit2AllowanceMissing,
        WouldRevert::InsufficientBalance { .. } => ErrorCode::InsufficientBalance,
        WouldRevert::NonceUsed(_) => ErrorCode::Permit2NonceUsed,
        WouldRevert::CallReverts { .. } => ErrorCode::RailCallReverts,
    }
}

fn would_revert(w: &WouldRevert, message: String) -> ApiError {
    let err = ApiError::new(revert_code(w), message);
    match w {
        WouldRevert::AllowanceMissing { .. } => err.field("permit2").suggest(
            "the owner approves Permit2 for the token once (one approve transaction), then sends the same request",
        ),
        WouldRevert::InsufficientBalance { .. } => err.field("amount"),
        WouldRevert::NonceUsed(_) => err
            .field("permit2.nonce")
            .suggest("sign a new permit with an unused nonce"),
        WouldRevert::CallReverts { .. } => err,
    }
}

fn declined(d: Declined) -> ApiError {
    let code = match &d {
        Declined::QuoteOnly(_) => ErrorCode::QuoteOnly,
        Declined::PriceMoved { .. } => ErrorCode::PriceMoved,
        Declined::FundsRequired { .. } | Declined::Failed(_) => ErrorCode::RailsUnavailable,
        Declined::Refused { .. } => ErrorCode::InvalidField,
        Declined::Amount(_) => ErrorCode::AmountOutOfRange,
    };
    let err = ApiError::new(code, d.to_string());
    match d {
        Declined::Refused { field: Some(f), .. } => err.field(f).suggest(
            "every rail that serves the lane refuses this field: fix it and send the request again",
        ),
        Declined::Amount(_) => err
            .field("amount")
            .suggest("try a larger amount (fees) or a smaller one (capacity), or another rail"),
        Declined::PriceMoved {
            fresh: Some(q),
            min,
            quoted_at_ms,
            ..
        } => err
            .fresh_quote(serde_json::json!({
                "rail": q.rail, "lane": q.lane, "amountIn": q.amount_in,
                "amountOut": q.amount_out, "minOut": q.min_out,
                "lockedMinOut": min, "quotedAt": quoted_at_ms,
            }))
            .suggest("quote again: the fresh quote no longer meets the locked minOut"),
        _ => err,
    }
}

/// Why a quote found no route, as the refusal a client gets.
pub fn no_route(why: Option<NoRoute>) -> ApiError {
    match why {
        Some(e @ NoRoute::AmountOutOfRange(_)) => {
            ApiError::new(ErrorCode::AmountOutOfRange, e.to_string())
                .field("amount")
                .suggest("try a larger amount (fees) or a smaller one (capacity)")
        }
        Some(e @ NoRoute::Unroutable(_)) => ApiError::new(ErrorCode::UnroutableLane, e.to_string())
            .suggest("see GET /api/route/chains for the lanes and assets this host routes"),
        Some(e) => ApiError::new(ErrorCode::RailsUnavailable, e.to_string()),
        None => ApiError::new(ErrorCode::RailsUnavailable, "no rail could quote"),
    }
}

impl From<OperatorError> for ApiError {
    fn from(e: OperatorError) -> Self {
        let msg = e.to_string();
        match e {
            OperatorError::UnknownRail(_) => {
                ApiError::new(ErrorCode::UnknownRail, msg).field("rail")
            }
            OperatorError::UnknownLane { .. } => {
                ApiError::new(ErrorCode::UnknownRail, msg).field("lane")
            }
            OperatorError::Store(_) | OperatorError::State(_) => {
                ApiError::new(ErrorCode::StoreUnavailable, msg)
            }
        }
    }
}

impl From<relay_engine::plan::Unusable> for ApiError {
    /// A quote with no usable answer.
    fn from(u: relay_engine::plan::Unusable) -> Self {
        use relay_engine::plan::Unusable;
        match u {
            Unusable::RailNotServing(_) => {
                ApiError::new(ErrorCode::UnroutableLane, u.to_string()).field("rail")
            }
            Unusable::QuoteOnly(_) => ApiError::new(ErrorCode::QuoteOnly, u.to_string()),
            Unusable::NoRoute(n) => crate::no_route(Some(n)),
        }
    }
}
