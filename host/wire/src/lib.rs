//! The wire: request bodies as clients send them, one serde DTO per body
//! (camelCase, `Deserialize` + `ToSchema`), so the OpenAPI document and the
//! parser read one schema. A body is decoded once, at the edge
//! ([`decode`]): a missing field is [`WireError::Missing`], a wrongly typed
//! one [`WireError::Invalid`], each naming its JSON path
//! (`permit2.permitted.amount`, `policy.perTxCap`); a body that is not an
//! object is [`WireError::Malformed`].
//!
//! The domain crates convert these DTOs into their typed requests (the
//! engine's `RouteAsk` and `ExecuteAsk`: chains served, tokens resolved,
//! addresses checked) and never see a `serde_json::Value` or a camelCase
//! name. This crate holds no domain logic and depends on no domain crate:
//! the engine also hands these bodies back, ready to POST (solve,
//! `agent/do`).
//!
//! Fields whose wrong type has a code of its own (a chain is
//! `UNKNOWN_CHAIN`, an amount `INVALID_AMOUNT`) are carried as [`Loose`],
//! so the domain decides and names the code, as it always has. The
//! session-issue and route-primitive bodies carry every checked field so
//! ([`Loose`], [`Scalar`] for a number-or-string): the accounts and
//! primitives domains refuse each in their own words and order; serde
//! refuses only what is structural (an unknown field where they are
//! refused, a nested body that is not an object).

mod decode;
mod execute;
pub mod keys;
mod loose;
pub mod notify;
mod primitives;
mod route;
mod routing;
mod scalar;
mod session;
pub mod solve;

pub use decode::{decode, WireError};
pub use execute::{
    AttestationBody, Erc2612Body, ExecuteFields, ExecuteRequest, IntentBody, OrderBody,
    Permit2Body, PermittedBody,
};
pub use keys::KeyCreateRequest;
pub use loose::Loose;
pub use notify::{
    BalanceSubscribeRequest, HookRegisterRequest, PriceSubscribeRequest, SubscribeRequest,
};
pub use primitives::{BatchRequest, ConditionalRequest, RouteBody, ScheduleRequest, WhenRequest};
pub use route::{Fraction, Node, RouteRequest};
pub use routing::{
    AgentRequest, PlanConstraints, PlanRequest, PlanStepRequest, SolveRequest, SolveSource,
};
pub use scalar::Scalar;
pub use session::{SessionIssueRequest, SessionPolicyRequest, SessionRevokeRequest};
