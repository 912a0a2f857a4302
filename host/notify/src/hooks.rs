//! Registering webhooks and reading their state (spec §4.5, §6.1, §6.3):
//! completion hooks on a route (`POST /api/hooks`) and event
//! subscriptions (`POST /api/events/subscribe`). Every URL is checked on
//! its face here ([`crate::ssrf::check_url`]) and again, against DNS, at
//! each delivery.
//!
//! States: a completion hook is `pending` until its one delivery ends,
//! then `delivered` or `failed` (retries exhausted, about a day). A
//! subscription is `active` until unsubscribed (`cancelled`).
//!
//! **Who may hook a route.** A route's hooks are limited
//! (`notify.max_hooks_per_route`), so a stranger must not be able to fill
//! them: a completion hook is registered only with the route's own proof
//! ([`HookProof`]) — the operator's owner credential, or an EIP-191
//! signature by the route's sender (the address whose signature or funds
//! started it) of [`hook_text`]. The adapter checks the signature (the
//! key types live there) and hands the verdict in; this module refuses
//! anything else before it counts or stores a hook.

use std::sync::Arc;

use relay_config::NotifyConfig;
use relay_store::{AttemptRow, Delivery, HookRow, HookStore, StoreError};
use relay_types::clock::SharedClock;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::{
    ssrf::{check_url, OutboundPolicy, UrlRefused},
    subscribe::Subscription,
};

/// The kind of place an active subscription holds for its caller.
const SUBSCRIPTION_PLACE: &str = "subscription";

/// The longest secret accepted.
pub const MAX_SECRET_LEN: usize = 256;

/// Why a hook request is refused.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The URL may not receive webhooks.
    #[error("url: {0}")]
    Url(#[from] UrlRefused),
    /// No route has that id.
    #[error("routeId: unknown route id {0:?}")]
    UnknownRoute(String),
    /// The route is a dry run: it never completes.
    #[error("routeId: {0:?} is a dry run; it moves nothing and never completes, so no webhook would fire")]
    DryRun(String),
    /// The caller holds as many active subscriptions as allowed.
    #[error("this caller holds {max} active event subscriptions, the most one caller may (notify.max_subscriptions_per_caller): cancel one first")]
    TooManySubscriptions {
        /// The limit.
        max: u32,
    },
    /// The route has as many hooks as allowed.
    #[error("routeId: route {route:?} already has {max} webhooks")]
    TooMany {
        /// The route.
        route: String,
        /// The limit.
        max: u32,
    },
    /// A field is malformed.
    #[error("{field}: {why}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong.
        why: String,
    },
    /// No proof that the caller may hook the route came.
    #[error("signature: hooking route {0:?} needs its sender's signature of relay-hook:v1:route=<routeId>:url=<url> (EIP-191) or the owner's credential")]
    ProofRequired(String),
    /// The proof sent does not prove the route's sender (why).
    #[error("signature: {0}")]
    ProofInvalid(String),
    /// No webhook has that id.
    #[error("no webhook has id {0:?}")]
    UnknownHook(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

impl HookError {
    /// The request field at fault, if one is.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            HookError::Url(_) => Some("url"),
            HookError::UnknownRoute(_) | HookError::DryRun(_) | HookError::TooMany { .. } => {
                Some("routeId")
            }
            HookError::Field { field, .. } => Some(field),
            HookError::ProofRequired(_) | HookError::ProofInvalid(_) => Some("signature"),
            HookError::UnknownHook(_)
            | HookError::Store(_)
            | HookError::TooManySubscriptions { .. } => None,
        }
    }
}

/// What the caller knows of the route a hook is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteKnown {
    /// A live route in the store.
    Live,
    /// A sandbox route of this replica.
    Sandbox,
    /// A dry run.
    Dry,
    /// No such route.
    Unknown,
}

/// What proves the caller may hook a route (module docs), as the adapter
/// found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookProof {
    /// The operator's owner credential.
    Operator,
    /// A signature of [`hook_text`] that recovers to the route's sender.
    Sender,
    /// Nothing was sent.
    Missing,
    /// What was sent proves nothing (why).
    Invalid(String),
}

/// The text the route's sender signs (EIP-191 personal message) to hook
/// `route_id` with `url` (as sent, trimmed).
pub fn hook_text(route_id: &str, url: &str) -> String {
    format!("relay-hook:v1:route={route_id}:url={}", url.trim())
}

/// `POST /api/hooks` (spec §2.13 HookRegistered).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookRegistered {
    /// `wh_…`.
    pub id: String,
    /// The route.
    pub route_id: String,
    /// Where the completion event goes.
    pub url: String,
    /// `pending`.
    pub status: String,
    /// Whether deliveries are signed (a secret was given).
    pub signed: bool,
    /// What happens next.
    pub note: String,
}

/// One attempt of a delivery.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptView {
    /// 1-based.
    pub attempt: u32,
    /// Epoch ms.
    pub at: u64,
    /// The receiver's HTTP status.
    pub status_code: Option<u16>,
    /// Why it failed.
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: u64,
}

/// One logical delivery (its id is every attempt's `webhook-id`).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryView {
    /// The `webhook-id`.
    pub id: String,
    /// The event.
    pub event: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    /// Attempts made.
    pub attempts: u32,
    /// The last attempt's HTTP status.
    pub last_status: Option<u16>,
    /// The last attempt's error.
    pub last_error: Option<String>,
    /// When the last attempt was made (epoch ms).
    pub last_attempt_at: Option<u64>,
    /// When the next attempt is due (epoch ms), while pending.
    pub next_attempt_at: Option<u64>,
    /// When it was delivered or given up (epoch ms).
    pub done_at: Option<u64>,
    /// The body every attempt sends.
    #[schema(value_type = Object)]
    pub payload: Value,
    /// Every attempt, oldest first.
    pub history: Vec<AttemptView>,
}

/// `GET /api/hooks/{id}`: a webhook's state.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookView {
    /// `wh_…`.
    pub id: String,
    /// `route`, `price` or `balance`.
    pub kind: String,
    /// The route of a completion hook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route_id: Option<String>,
    /// A subscription's parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub subscription: Option<Value>,
    /// Where deliveries go.
    pub url: String,
    /// `pending`, `delivered`, `failed` (completion hooks); `active`,
    /// `cancelled` (subscriptions).
    pub status: String,
    /// Whether deliveries are signed.
    pub signed: bool,
    /// Attempts of the latest delivery.
    pub attempts: u32,
    /// The latest delivery's last HTTP status.
    pub last_status: Option<u16>,
    /// The latest delivery's next attempt (epoch ms), while pending.
    pub next_attempt_at: Option<u64>,
    /// A subscription watcher's last observation: the balance (smallest
    /// units) a balance webhook compares with, or `hit` / `clear` for a
    /// price threshold; `null` before the first observation.
    pub observed: Option<String>,
    /// Deliveries, newest first (at most 20).
    pub deliveries: Vec<DeliveryView>,
    /// Created (epoch ms).
    pub created: u64,
    /// What the state means.
    pub note: String,
}

/// Registers hooks and answers their state (module docs).
#[derive(Clone, Debug)]
pub struct HookService {
    pub(crate) store: Arc<dyn HookStore>,
    pub(crate) policy: OutboundPolicy,
    pub(crate) config: NotifyConfig,
    pub(crate) clock: SharedClock,
}

/// A fresh `wh_` id.
pub(crate) fn hook_id() -> String {
    format!("wh_{}", hex::encode(rand::random::<[u8; 12]>()))
}

pub(crate) fn check_secret(secret: Option<&str>) -> Result<Option<String>, HookError> {
    let Some(s) = secret else { return Ok(None) };
    if s.is_empty() || s.len() > MAX_SECRET_LEN || s.chars().any(char::is_control) {
        return Err(HookError::Field {
            field: "secret",
            why: format!("1 to {MAX_SECRET_LEN} printable characters"),
        });
    }
    let std_form = s.strip_prefix("whsec_");
    if std_form.is_some_and(|b64| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .is_err()
    }) {
        return Err(HookError::Field {
            field: "secret",
            why: "a whsec_ secret is base64 after the prefix (Standard Webhooks); send valid base64 or a secret without the prefix".into(),
        });
    }
    Ok(Some(s.to_string()))
}

impl HookService {
    /// A service over `store`.
    pub fn new(store: Arc<dyn HookStore>, config: &NotifyConfig, clock: SharedClock) -> Self {
        HookService {
            store,
            policy: OutboundPolicy::from_config(config),
            config: config.clone(),
            clock,
        }
    }

    /// Registers a completion hook on `route_id` (what the caller found of
    /// it: `known`; what proves the caller may hook it: `proof`). Nothing
    /// is counted or stored for a caller without the route's proof.
    #[tracing::instrument(skip_all, fields(route = route_id))]
    pub async fn register(
        &self,
        route_id: &str,
        url: &str,
        secret: Option<&str>,
        (known, proof): (RouteKnown, HookProof),
    ) -> Result<HookRegistered, HookError> {
        let target = check_url(url, &self.policy)?;
        let secret = check_secret(secret)?;
        match known {
            RouteKnown::Unknown => return Err(HookError::UnknownRoute(route_id.into())),
            RouteKnown::Dry => return Err(HookError::DryRun(route_id.into())),
            RouteKnown::Live | RouteKnown::Sandbox => {}
        }
        match proof {
            HookProof::Operator | HookProof::Sender => {}
            HookProof::Missing => return Err(HookError::ProofRequired(route_id.into())),
            HookProof::Invalid(why) => return Err(HookError::ProofInvalid(why)),
        }
        let max = self.config.max_hooks_per_route;
        if self.store.hooks_on_route(route_id).await? >= u64::from(max) {
            return Err(HookError::TooMany {
                route: route_id.into(),
                max,
            });
        }
        let now = self.clock.now_ms();
        let row = HookRow {
            id: hook_id(),
            kind: "route".into(),
            route_id: Some(route_id.into()),
            url: target.url().to_string(),
            secret,
            spec: None,
            watch_state: None,
            status: "pending".into(),
            created_ms: now,
            updated_ms: now,
        };
        self.store.put_hook(&row).await?;
        Ok(HookRegistered {
            signed: row.secret.is_some(),
            note: registered_note(known),
            id: row.id,
            route_id: route_id.into(),
            url: row.url,
            status: row.status,
        })
    }

    /// A hook's state and deliveries.
    pub async fn view(&self, id: &str) -> Result<HookView, HookError> {
        let hook = self
            .store
            .hook(id)
            .await?
            .ok_or_else(|| HookError::UnknownHook(id.into()))?;
        let mut deliveries = Vec::new();
        for d in self.store.deliveries_of(id, 20).await? {
            let history = self.store.attempts_of(&d.id).await?;
            deliveries.push(delivery_view(d, history));
        }
        let latest = deliveries.first();
        Ok(HookView {
            attempts: latest.map_or(0, |d| d.attempts),
            last_status: latest.and_then(|d| d.last_status),
            next_attempt_at: latest.and_then(|d| d.next_attempt_at),
            note: status_note(&hook),
            subscription: hook
                .spec
                .as_deref()
                .and_then(|s| serde_json::from_str(s).ok()),
            signed: hook.secret.is_some(),
            observed: hook.watch_state,
            id: hook.id,
            kind: hook.kind,
            route_id: hook.route_id,
            url: hook.url,
            status: hook.status,
            deliveries,
            created: hook.created_ms,
        })
    }

    /// Records a subscription (validated by [`Subscription::parse`]) for
    /// `caller` (its IP, as the rate limiter counts it), who may hold
    /// `notify.max_subscriptions_per_caller` active ones — counted in the
    /// store, so across every replica on it.
    pub async fn subscribe(
        &self,
        sub: Subscription,
        (url, secret): (&str, Option<&str>),
        caller: &str,
    ) -> Result<HookView, HookError> {
        let target = check_url(url, &self.policy)?;
        let secret = check_secret(secret)?;
        let now = self.clock.now_ms();
        let id = hook_id();
        let max = self.config.max_subscriptions_per_caller;
        let who = (SUBSCRIPTION_PLACE, caller, id.as_str());
        // held until cancelled: a subscription does not lapse
        let window = (now, i64::MAX as u64);
        if self
            .store
            .take_place(who, window, max as usize)
            .await?
            .is_err()
        {
            return Err(HookError::TooManySubscriptions { max });
        }
        let row = HookRow {
            id: id.clone(),
            kind: sub.kind().into(),
            route_id: None,
            url: target.url().to_string(),
            secret,
            spec: Some(serde_json::to_string(&sub).expect("a subscription serialises")),
            watch_state: None,
            status: "active".into(),
            created_ms: now,
            updated_ms: now,
        };
        if let Err(e) = self.store.put_hook(&row).await {
            self.give_back(&id).await;
            return Err(e.into());
        }
        self.view(&row.id).await
    }

    /// Gives a subscription's place back.
    async fn give_back(&self, id: &str) {
        if let Err(e) = self.store.drop_place(id).await {
            tracing::warn!(hook = %id, error = %e, "a subscription's place was not given back");
        }
    }

    /// Ends a subscription; deliveries already made keep going.
    pub async fn unsubscribe(&self, id: &str) -> Result<HookView, HookError> {
        let hook = self
            .store
            .hook(id)
            .await?
            .filter(|h| h.kind != "route")
            .ok_or_else(|| HookError::UnknownHook(id.into()))?;
        self.store
            .move_hook(&hook.id, "active", "cancelled", self.clock.now_ms())
            .await?;
        self.give_back(&hook.id).await;
        self.view(id).await
    }
}

fn registered_note(known: RouteKnown) -> String {
    let sandbox = match known {
        RouteKnown::Sandbox => {
            " This is a sandbox route: the payload says sandbox:true and nothing moved."
        }
        _ => "",
    };
    format!(
        "When the route reaches DONE or FAILED the host POSTs {{event, routeId, status, destTx, srcTx, ts, sandbox}} to url, once per event (webhook-id), retrying with exponential back-off for about a day until the receiver answers 2xx. With a secret, verify x-relay-signature (sha256=<hex HMAC-SHA256 of the raw body>) or the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature). Follow it at GET /api/hooks/{{id}}.{sandbox}"
    )
}

fn status_note(h: &HookRow) -> String {
    match (h.kind.as_str(), h.status.as_str()) {
        ("route", "pending") => {
            "waiting for the route to reach DONE or FAILED, or retrying its delivery".into()
        }
        ("route", "delivered") => "the receiver answered 2xx".into(),
        ("route", "failed") => {
            "every attempt failed (about a day of retries); the event was not delivered".into()
        }
        (_, "active") => "watching; each event is delivered at least once".into(),
        _ => "cancelled: no new events".into(),
    }
}

fn delivery_view(d: Delivery, history: Vec<AttemptRow>) -> DeliveryView {
    DeliveryView {
        next_attempt_at: (d.status == "pending").then_some(d.next_ms),
        payload: serde_json::from_str(&d.payload).unwrap_or(Value::Null),
        history: history
            .into_iter()
            .map(|a| AttemptView {
                attempt: a.attempt,
                at: a.at_ms,
                status_code: a.status_code,
                error: a.error,
                duration_ms: a.duration_ms,
            })
            .collect(),
        id: d.id,
        event: d.event,
        status: d.status,
        attempts: d.attempts,
        last_status: d.last_status,
        last_error: d.last_error,
        last_attempt_at: d.last_ms,
        done_at: d.done_ms,
    }
}
