//! The catalogue (spec §7): one `errorCode` per row, one status code, one
//! blame — the core's here, each feature's in its own home — and the
//! answer every adapter gives, [`ApiError`].

use http::StatusCode;
use relay_engine::preflight::{BlockerCode, WarningCode};
use relay_types::route::FailureCode;

/// One `errorCode`: its wire string, status, retryability, meaning and
/// blame. A feature declares its own with [`error_codes!`](crate::error_codes).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CodeSpec {
    /// The wire string.
    pub wire: &'static str,
    /// The HTTP status it is answered with.
    pub status: StatusCode,
    /// Whether the same request may succeed later.
    pub retryable: bool,
    /// What it means and what to do about it.
    pub meaning: &'static str,
    /// Whose doing it describes.
    pub blame: Blame,
}

/// A machine-readable error code (`errorCode`). Clients branch on these,
/// never on the wording. The core's are associated constants
/// (`ErrorCode::InvalidField`); a feature's live in its own home.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorCode(&'static CodeSpec);

impl ErrorCode {
    /// The code `spec` describes.
    pub const fn new(spec: &'static CodeSpec) -> Self {
        ErrorCode(spec)
    }

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        self.0.wire
    }

    /// The HTTP status it is answered with.
    pub fn status(self) -> StatusCode {
        self.0.status
    }

    /// Whether the same request may succeed later.
    pub fn retryable(self) -> bool {
        self.0.retryable
    }

    /// What it means and what to do about it.
    pub fn meaning(self) -> &'static str {
        self.0.meaning
    }

    /// Whose doing it describes (the table's last column).
    pub fn blame(self) -> Blame {
        self.0.blame
    }

    /// Whether its status and retryability are what its blame says: a
    /// caller's mistake is a 4xx that is never retryable, a state of
    /// things a 4xx, a host failure a 5xx, and every code says which.
    pub fn consistent(self) -> bool {
        let class = self.status().as_u16() / 100;
        match self.blame() {
            Blame::Input => class == 4 && !self.retryable(),
            Blame::State => class == 4,
            Blame::Host => class == 5,
            Blame::Unclassified => false,
        }
    }
}

/// Declares `errorCode`s from one table: each row a constant
/// `Name => ("WIRE", STATUS, retryable, "meaning", Blame)`, and `$set`, the
/// list of them (what a feature's descriptor names, so the catalogue
/// served at `/api/errors` can never miss one). In an `impl ErrorCode`
/// block (the core's) or a module (a feature's).
#[macro_export]
macro_rules! error_codes {
    // the core's, inside `impl ErrorCode`: the list names `Self::…`
    (impl $set:ident; $($(#[$doc:meta])* $name:ident => $row:tt,)*) => {
        $($crate::error_codes!(@one pub, $(#[$doc])* $name => $row);)*
        /// Every code of this table, in order.
        pub const $set: &'static [$crate::ErrorCode] = &[$(Self::$name,)*];
    };
    // a feature's, in its module
    ($vis:vis $set:ident; $($(#[$doc:meta])* $name:ident => $row:tt,)*) => {
        $($crate::error_codes!(@one $vis, $(#[$doc])* $name => $row);)*
        /// Every code of this table, in order.
        $vis const $set: &'static [$crate::ErrorCode] = &[$($name,)*];
    };
    (@one $vis:vis, $(#[$doc:meta])* $name:ident => ($wire:literal, $status:ident, $retry:literal, $meaning:literal $(, $blame:ident)?)) => {
        $(#[$doc])*
        #[allow(non_upper_case_globals)]
        $vis const $name: $crate::ErrorCode = $crate::ErrorCode::new(&$crate::CodeSpec {
            wire: $wire,
            status: $crate::StatusCode::$status,
            retryable: $retry,
            meaning: $meaning,
            blame: $crate::error_codes!(@blame $($blame)?),
        });
    };
    (@blame) => { $crate::Blame::Unclassified };
    (@blame $b:ident) => { $crate::Blame::$b };
}

/// Whose doing an `errorCode` describes — what decides its status and
/// retryability (checked for every code by this module's tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Blame {
    /// The caller's request: a field, a signature, a credential, a body.
    /// Only a changed request succeeds: always a 4xx, never retryable.
    Input,
    /// The request is sound but the state of things refuses it now (a
    /// limit reached, a price moved, a record finished, a first request
    /// still running): a 4xx, retryable when time alone can clear it.
    State,
    /// The host or something it depends on failed: a 5xx.
    Host,
    /// A row that names none (a new code): the tests refuse it.
    Unclassified,
}

impl ErrorCode {
    crate::error_codes! { impl CORE;
    /// No such path or method.
    NotFound => ("NOT_FOUND", NOT_FOUND, false, "no such path or method", Input),
    /// The store failed.
    StoreUnavailable => ("STORE_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "the database is unreachable; retry", Host),
    /// No route with that id (spec §7: 404 `unknown route id`).
    UnknownRoute => ("UNKNOWN_ROUTE", NOT_FOUND, false, "no route has that id (sandbox routes are kept one hour)", Input),
    /// A required field or parameter is missing (the message names it).
    MissingField => ("MISSING_FIELD", BAD_REQUEST, false, "a required field or parameter is missing; the message names it", Input),
    /// A field has an invalid value (the message names it).
    InvalidField => ("INVALID_FIELD", BAD_REQUEST, false, "a field has an invalid value; the message names it and why", Input),
    /// The body is not JSON of the expected shape.
    MalformedBody => ("MALFORMED_BODY", BAD_REQUEST, false, "the body is not a JSON object", Input),
    /// Same chain and same token: nothing to do.
    SameChainSameToken => ("SAME_CHAIN_SAME_TOKEN", BAD_REQUEST, false, "fromChain equals toChain and the tokens are equal: nothing to move", Input),
    /// No loaded, enabled, healthy rail serves the lane.
    UnroutableLane => ("UNROUTABLE_LANE", NOT_FOUND, false, "no enabled, healthy rail executes this lane and asset", State),
    /// The Permit2 signature does not authorise this route (the message names the field).
    Permit2Invalid => ("PERMIT2_INVALID", BAD_REQUEST, false, "the Permit2 signature does not authorise this route (signer, spender = relayer, chain, deadline, token, amount, low-s, unused nonce); the message names the field", Input),
    /// The host has no relayer key, or no sender for the chain.
    RelayerUnavailable => ("RELAYER_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "this host cannot sign for the chain right now", Host),
    /// Every applicable rail failed to quote or plan.
    RailsUnavailable => ("RAILS_UNAVAILABLE", BAD_GATEWAY, true, "every applicable rail failed to quote or plan; the message lists why", Host),
    /// The shared rate-limit store cannot be reached (closed).
    RateLimitsUnavailable => ("RATE_LIMITS_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "the shared rate-limit store ([limits] backend = \"store\") cannot be reached and the operator chose to refuse what cannot be counted (on_backend_failure = \"closed\"); retry", Host),
    /// The idempotency key was used with another body.
    IdempotencyMismatch => ("IDEMPOTENCY_KEY_REUSED", UNPROCESSABLE_ENTITY, false, "x-idempotency-key was already used with a different body", Input),
    /// The idempotency key's first request is still executing.
    IdempotencyInFlight => ("IDEMPOTENCY_IN_FLIGHT", CONFLICT, true, "the first request with this x-idempotency-key is still executing; retry to get its response", State),
    /// A chain or node is not one this host serves (the message names the field).
    UnknownChain => ("UNKNOWN_CHAIN", BAD_REQUEST, false, "fromChain/toChain is not an EVM chain id, numeric string or node name this host serves", Input),
    /// A token is neither a symbol nor an address this host knows on that chain.
    UnknownToken => ("UNKNOWN_TOKEN", BAD_REQUEST, false, "fromToken/toToken is not a symbol or contract address known on that chain; omit it for the native asset", Input),
    /// An amount is not a positive decimal string of smallest units.
    InvalidAmount => ("INVALID_AMOUNT", BAD_REQUEST, false, "amount must be a positive decimal string of the token's smallest units (\"5000000\" is 5 USDC), below 10^15 whole tokens", Input),
    /// An address is not valid for its chain.
    InvalidAddress => ("INVALID_ADDRESS", BAD_REQUEST, false, "fromAddress/toAddress (or a token address) is not a valid address on its chain", Input),
    /// The body is larger than the endpoint accepts.
    BodyTooLarge => ("BODY_TOO_LARGE", PAYLOAD_TOO_LARGE, false, "the request body is larger than http.body_limit_bytes (64 KiB by default)", Input),
    /// Every applicable rail refused the amount.
    AmountOutOfRange => ("AMOUNT_OUT_OF_RANGE", UNPROCESSABLE_ENTITY, false, "every applicable rail refused this amount (too small to cover fees, or above what it can carry now); the message lists why", Input),
    /// Too many requests from this client to this endpoint this minute.
    RateLimited => ("RATE_LIMITED", TOO_MANY_REQUESTS, true, "the per-minute limit of this endpoint was reached for this IP (or issued x-relay-key); retry after retryAfterMs", State),
    /// A JSON object in the body repeats a key (the message and `field` name it).
    DuplicateKey => ("DUPLICATE_KEY", BAD_REQUEST, false, "a JSON object in the body repeats a key; `field` names it (keys are never last-wins)", Input),
    /// The request's headers are larger than `http.header_limit_bytes` or more than 100.
    HeadersTooLarge => ("HEADERS_TOO_LARGE", REQUEST_HEADER_FIELDS_TOO_LARGE, false, "the request's header block is larger than http.header_limit_bytes (16 KiB by default) or has more than 100 headers; send fewer or smaller headers", Input),
    /// The request target is longer than the host reads.
    UriTooLong => ("URI_TOO_LONG", URI_TOO_LONG, false, "the path and query are longer than http.uri_limit_bytes (8 KiB by default); send the fields in a POST body", Input),
    /// A body that is not declared `application/json`.
    UnsupportedMediaType => ("UNSUPPORTED_MEDIA_TYPE", UNSUPPORTED_MEDIA_TYPE, false, "a request body must be sent with content-type: application/json (charset optional)", Input),
    /// The request's body did not arrive in time.
    RequestTimeout => ("REQUEST_TIMEOUT", REQUEST_TIMEOUT, true, "the request body did not arrive within http.body_read_timeout_ms (10 s by default)", State),
    /// The host did not answer in time.
    HandlerTimeout => ("HANDLER_TIMEOUT", SERVICE_UNAVAILABLE, true, "the host did not answer within http.request_timeout_ms (30 s by default); retry (an execute with the same x-idempotency-key never moves funds twice)", Host),
    /// The host failed unexpectedly (a bug; the `x-request-id` names it in the logs).
    Internal => ("INTERNAL", INTERNAL_SERVER_ERROR, true, "the host failed unexpectedly; report the x-request-id of the response", Host),
    /// The quote attestation given as a price lock does not hold.
    AttestationInvalid => ("ATTESTATION_INVALID", BAD_REQUEST, false, "attestation: not signed by this relayer, expired, or for another route; quote again", Input),
    /// The price moved below the lock (`minOut` or the attestation's minimum).
    PriceMoved => ("PRICE_MOVED", CONFLICT, true, "no route delivers the locked minimum any more; quote again", State),
    /// Every rail for the lane only quotes it.
    QuoteOnly => ("QUOTE_ONLY", UNPROCESSABLE_ENTITY, false, "this lane is priced for comparison but never executed here; the message gives quoteOnlyReason", State),
    /// The route would spend the operator's own funds and no valid owner token was sent.
    OperatorAuthRequired => ("OPERATOR_AUTH_REQUIRED", UNAUTHORIZED, false, "mode self (the default) spends the operator's own funds and needs Authorization: Bearer <owner token>; a client without it sends mode permit2 with a Permit2 signature of its own funds. The owner's session calls (issue, revoke, list) need the same token", Input),
    /// The simulated Permit2 pull reverts: the owner's allowance to Permit2 is below the amount.
    Permit2AllowanceMissing => ("PERMIT2_ALLOWANCE_MISSING", UNPROCESSABLE_ENTITY, false, "the owner has not approved Permit2 for the amount, so the pull would revert; nothing was sent: approve Permit2 for the token once, then retry", State),
    /// The simulated Permit2 pull reverts: the owner holds less than the amount.
    InsufficientBalance => ("INSUFFICIENT_BALANCE", UNPROCESSABLE_ENTITY, false, "the owner holds less than the amount, so the pull would revert; nothing was sent", State),
    /// The simulated Permit2 pull reverts: the permit's nonce is spent.
    Permit2NonceUsed => ("PERMIT2_NONCE_USED", CONFLICT, false, "the permit's nonce is already used on chain, so the pull would revert; nothing was sent: sign a new permit with an unused nonce", Input),
    /// The route's first transaction reverts when simulated.
    RailCallReverts => ("RAIL_CALL_REVERTS", UNPROCESSABLE_ENTITY, false, "the route's first transaction reverts when simulated at the pending block; nothing was sent; the message gives the revert reason", Input),
    /// No prepared intent has that id.
    IntentNotFound => ("INTENT_NOT_FOUND", NOT_FOUND, false, "no prepared intent has that intentId (prepared intents are kept until their deadline, execution.intent_ttl_secs): POST /api/route/intent again and sign what it returns", Input),
    /// The prepared intent's deadline passed.
    IntentExpired => ("INTENT_EXPIRED", UNPROCESSABLE_ENTITY, false, "the prepared intent's deadline has passed; nothing was sent: POST /api/route/intent again and sign the new terms", Input),
    /// The body differs from the prepared, signed intent.
    IntentMismatch => ("INTENT_MISMATCH", UNPROCESSABLE_ENTITY, false, "the body's route (toAddress, toChain, tokens, amount, rail, owner) or its signed intent differs from the prepared intent; nothing was sent; the message names the field", Input),
    /// A router-form signature does not authorise the route.
    SignatureInvalid => ("SIGNATURE_INVALID", BAD_REQUEST, false, "a router-form signature (permit2, order or erc2612) does not recover to the owner for this chain, contract and terms, is malformed or high-s, or the owner's ERC-1271 isValidSignature refuses it; nothing was sent; the message names the field", Input),
    /// A signature's deadline passed.
    SignatureExpired => ("SIGNATURE_EXPIRED", BAD_REQUEST, false, "a signature's deadline (permit2.deadline, intent.deadline or erc2612.deadline) is not in the future; nothing was sent: sign again", Input),
    /// A nonce is spent.
    NonceUsed => ("NONCE_USED", CONFLICT, false, "the signature's nonce (Permit2's bitmap, the router's bitmap, or the token's EIP-2612 counter) is already used; nothing was sent: prepare and sign again", Input),
    /// No router on the source chain.
    RouterUnavailable => ("ROUTER_UNAVAILABLE", UNPROCESSABLE_ENTITY, false, "no RelayRouter is configured on the source chain (GET /api/gasless/info, gaslessChains[*].router): use mode permit2 there", Input),
    /// A private-lane tool was called on the hosted, read-only tool endpoint.
    PrivateLaneRequired => ("PRIVATE_LANE_REQUIRED", MISDIRECTED_REQUEST, false, "the hosted MCP tool endpoint (/mcp) is public and read-only: a tool that signs, moves funds or starts a route (execute, session_execute, agent_do) runs only through the local tool server; agentFix says how: run `relay mcp --url <host>` (stdio) and call the tool there", Input),
    /// A question for the concierge is missing, empty or too long.
    InvalidQuestion => ("INVALID_QUESTION", BAD_REQUEST, false, "POST /api/ask needs {\"question\": \"…\"}: a non-empty string of at most 500 characters", Input),
    /// The operator dashboard (`/admin`) or its API was asked without the owner credential.
    AdminAuthRequired => ("ADMIN_AUTH_REQUIRED", UNAUTHORIZED, false, "the operator dashboard and /admin/api/* need the owner token: sign in at /admin (a login cookie) or send Authorization: Bearer <owner token>", Input),
    /// A dashboard change signed in by cookie came without its CSRF token.
    CsrfInvalid => ("CSRF_INVALID", FORBIDDEN, false, "a change made with the dashboard's login cookie must carry the page's CSRF token in x-relay-csrf; reload /admin", Input),
    /// No installed rail has that id, or the rail declares no such lane.
    UnknownRail => ("UNKNOWN_RAIL", NOT_FOUND, false, "no installed rail has that id, or the rail declares no such lane; the message lists its lanes (GET /admin/api/snapshot lists rails and lanes)", Input),
    }
}

/// One `errorCode` of the catalogue.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorEntry {
    /// The code.
    pub error_code: &'static str,
    /// The HTTP status it is answered with.
    pub status: u16,
    /// Whether the same request may succeed later.
    pub retryable: bool,
    /// What it means and what to do about it.
    pub meaning: &'static str,
}

/// `GET /api/errors`: every table, generated from its enum.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Catalogue {
    /// Every `errorCode` a failed request answers with.
    pub errors: Vec<ErrorEntry>,
    /// How many.
    pub count: usize,
    /// Preflight `blockers[].code` (`{code, meaning}`).
    #[schema(value_type = Vec<Object>)]
    pub blockers: Vec<relay_types::codes::CodeEntry>,
    /// Preflight `warnings[].code`.
    #[schema(value_type = Vec<Object>)]
    pub warnings: Vec<relay_types::codes::CodeEntry>,
    /// `failure.code` of a route that ended FAILED.
    #[schema(value_type = Vec<Object>)]
    pub failures: Vec<relay_types::codes::CodeEntry>,
    /// How to read it.
    pub note: &'static str,
}

/// The catalogue served at `GET /api/errors` of a host answering with
/// `codes` (the core's and its features'): every table, generated.
pub fn catalogue(codes: &[ErrorCode]) -> Catalogue {
    let errors: Vec<ErrorEntry> = codes
        .iter()
        .map(|c| ErrorEntry {
            error_code: c.as_str(),
            status: c.status().as_u16(),
            retryable: c.retryable(),
            meaning: c.meaning(),
        })
        .collect();
    Catalogue {
        count: errors.len(),
        errors,
        blockers: BlockerCode::catalogue(),
        warnings: WarningCode::catalogue(),
        failures: FailureCode::catalogue(),
        note: "errors: every errorCode a failed request answers with (HTTP status, retryable); blockers and warnings: preflight's blockers[].code and warnings[].code (200, decision NO_GO); failures: failure.code of a route that ended FAILED",
    }
}

/// Every failure's body (spec §7). Branch on `errorCode`, never on wording.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// What went wrong, for people.
    pub error: String,
    /// The machine-readable code (`GET /api/errors`).
    pub error_code: String,
    /// Whether the same request may succeed later.
    pub retryable: bool,
    /// The request field at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_action: Option<String>,
    /// When a retry can succeed, ms from now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// The host's signature over this refusal (4xx answers; added at the
    /// edge, [`crate::refusal`]): check it with `POST /api/refusal/verify`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<crate::refusal::Refusal>,
    /// `PRICE_MOVED`: the fresh live quote that no longer meets the lock
    /// (`{rail, amountIn, amountOut, minOut, quotedAt}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub fresh_quote: Option<serde_json::Value>,
}

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    /// Code.
    pub code: ErrorCode,
    /// Message.
    pub message: String,
    /// The request field at fault, when one is.
    pub field: Option<String>,
    /// What the client should do about it.
    pub suggested_action: Option<String>,
    /// When a retry can succeed, ms from now.
    pub retry_after_ms: Option<u64>,
    /// The fresh quote a `PRICE_MOVED` carries (boxed: errors stay small).
    pub fresh_quote: Option<Box<serde_json::Value>>,
}

impl ApiError {
    /// A new error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            field: None,
            suggested_action: None,
            retry_after_ms: None,
            fresh_quote: None,
        }
    }

    /// Names the request field at fault.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Adds a suggested action.
    pub fn suggest(mut self, action: impl Into<String>) -> Self {
        self.suggested_action = Some(action.into());
        self
    }

    /// Says when a retry can succeed.
    pub fn retry_after_ms(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    /// Carries the fresh quote of a `PRICE_MOVED`.
    pub fn fresh_quote(mut self, quote: serde_json::Value) -> Self {
        self.fresh_quote = Some(Box::new(quote));
        self
    }

    /// The JSON body.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: self.message.clone(),
            error_code: self.code.as_str().into(),
            retryable: self.code.retryable(),
            field: self.field.clone(),
            suggested_action: self.suggested_action.clone(),
            retry_after_ms: self.retry_after_ms,
            refusal: None,
            fresh_quote: self.fresh_quote.as_deref().cloned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code of a catalogue entry, by its wire string.
    fn code_of(wire: &str) -> ErrorCode {
        *ErrorCode::CORE
            .iter()
            .find(|c| c.as_str() == wire)
            .unwrap_or_else(|| panic!("{wire} is served but not in the table"))
    }

    #[test]
    fn every_served_code_answers_as_its_blame_says() {
        let served = catalogue(ErrorCode::CORE).errors;
        assert_eq!(served.len(), ErrorCode::CORE.len());
        let mut wrong = Vec::new();
        for e in &served {
            let class = |s: u16| s / 100;
            let ok = match code_of(e.error_code).blame() {
                Blame::Input => class(e.status) == 4 && !e.retryable,
                Blame::State => class(e.status) == 4,
                Blame::Host => class(e.status) == 5,
                Blame::Unclassified => false,
            };
            if !ok {
                let blame = code_of(e.error_code).blame();
                wrong.push(format!(
                    "{} ({}, retryable {}, {blame:?})",
                    e.error_code, e.status, e.retryable
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "a caller's mistake is a 4xx that is never retryable, a state of things a 4xx, a host failure a 5xx, and every code says which it is: {wrong:#?}"
        );
    }

    #[test]
    fn the_mistakes_of_issue_40_are_the_callers() {
        for c in [
            ErrorCode::InvalidField,
            ErrorCode::InvalidAddress,
            ErrorCode::AmountOutOfRange,
        ] {
            assert_eq!(c.blame(), Blame::Input, "{c:?}");
        }
        assert_eq!(ErrorCode::RailsUnavailable.blame(), Blame::Host);
    }
}
