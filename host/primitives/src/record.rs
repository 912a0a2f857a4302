//! The records and their requests (spec §2.12): the checks of a decoded
//! request body (`relay_wire`'s [`ScheduleRequest`], [`ConditionalRequest`],
//! [`BatchRequest`]) with the field named in every refusal, the stored
//! form, and the views the API answers. A route inside a record is kept as
//! the caller sent it (the API checks it as a RouteRequest before it gets
//! here).

use crate::{
    price::Usd,
    time::{next_due, parse_time},
    Invalid,
};
use relay_wire::{
    BatchRequest, ConditionalRequest, Loose, RouteBody, Scalar, ScheduleRequest, WhenRequest,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Most legs of a batch (spec §8.2).
pub const MAX_LEGS: usize = 20;
/// Least `everySeconds` (spec §8.2).
pub const MIN_EVERY_SECS: u64 = 10;
/// Most `everySeconds`: one year.
pub const MAX_EVERY_SECS: u64 = 365 * 24 * 3_600;
/// Most runs of a schedule (spec §8.2).
pub const MAX_COUNT: u64 = 1_000;
/// How far in the past a schedule's `at` may be (one hour).
pub const MAX_AT_PAST_SECS: u64 = 3_600;

/// What every record's `note` says (spec §4.4).
pub const NOTE: &str = "gated: a run moves funds only when the host runs with PRIMITIVES_LIVE=1 and the record has live:true (with the owner's authority); otherwise every run is simulated and logs wouldExecute. A 200 does not mean anything settled: read runs[]";

/// Who authorised a live record to move funds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Authority {
    /// The operator's owner token at creation: runs execute as `mode:self`.
    Owner,
}

/// Authorities named in requests that are not served yet.
pub const UNSUPPORTED_AUTHORITIES: &[&str] = &["session", "permit2"];

/// A schedule as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    /// The route each run executes (a RouteRequest).
    pub route: Value,
    /// Seconds between runs (`None`: one-shot).
    pub every_seconds: Option<u64>,
    /// The first run, epoch seconds.
    pub at: u64,
    /// Runs in all.
    pub count: u64,
    /// Whether runs may move funds (with the gate).
    pub live: bool,
    /// Who authorised a live record.
    pub authority: Option<Authority>,
    /// Epoch seconds.
    pub created_at: u64,
    /// SHA-256 of the record's cancel token ([`crate::cancel`]); `None` for
    /// a record stored before cancel tokens (only the owner cancels it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_hash: Option<String>,
}

impl Schedule {
    /// When run `done + 1` is due, epoch ms.
    pub fn due_ms(&self, done: u64) -> u64 {
        next_due(self.at.saturating_mul(1000), self.every_seconds, done)
    }
}

/// A conditional's trigger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum When {
    /// The pair's price is strictly above `value`.
    PriceAbove {
        /// `<ASSET>/USD`.
        asset: String,
        /// Decimal USD.
        value: String,
    },
    /// The pair's price is strictly below `value`.
    PriceBelow {
        /// `<ASSET>/USD`.
        asset: String,
        /// Decimal USD.
        value: String,
    },
    /// Epoch seconds `at` has passed.
    TimeAfter {
        /// Epoch seconds.
        at: u64,
    },
}

/// A conditional as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conditional {
    /// The route it executes once triggered.
    pub route: Value,
    /// The trigger.
    pub when: When,
    /// Whether the run may move funds (with the gate).
    pub live: bool,
    /// Who authorised a live record.
    pub authority: Option<Authority>,
    /// Disarmed (`expired`) at this time if not triggered, epoch seconds.
    pub expires_at: u64,
    /// Epoch seconds.
    pub created_at: u64,
    /// SHA-256 of the record's cancel token ([`crate::cancel`]); `None` for
    /// a record stored before cancel tokens (only the owner cancels it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_hash: Option<String>,
}

/// One planned leg of a batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Leg {
    /// 0-based.
    pub index: usize,
    /// The leg's RouteRequest as sent.
    #[schema(value_type = Object)]
    pub route: Value,
    /// The engine's plan of the leg, as `POST /api/route/plan` prices a
    /// step: `{rail, estOut, feeUnits, durationSec, token, lane}`.
    #[schema(value_type = Object)]
    pub plan: Value,
}

/// A batch as stored (and answered).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Batch {
    /// `batch_…`.
    pub id: String,
    /// `planned`; once run (`POST /api/route/batch/{id}/run`) `running`,
    /// then `completed` (every leg executed or simulated), `partial` (some
    /// legs failed) or `failed` (every leg failed).
    pub status: String,
    /// Whether the caller asked for a live batch.
    pub live: bool,
    /// Who authorised a live batch.
    pub authority: Option<Authority>,
    /// The legs, planned.
    pub legs: Vec<Leg>,
    /// About the plan (a leg no rail can carry now; how a live batch runs).
    pub warnings: Vec<String>,
    /// Epoch seconds.
    pub created_at: u64,
    /// That a 200 does not mean anything settled.
    pub note: String,
    /// Once run, one entry per leg run: `{index, seq, key, status
    /// (executed, failed or simulated), ok, simulated, routeId?,
    /// routeStatus?, error?, errorCode?, wouldExecute?, at}`.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub runs: Vec<Value>,
}

/// The answer of a DELETE.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Cancelled {
    /// The record.
    pub id: String,
    /// `cancelled`.
    pub status: String,
}

/// `live` (default false).
pub fn live(v: Option<&Loose<bool>>) -> Result<bool, Invalid> {
    match v.map(Loose::typed) {
        None => Ok(false),
        Some(Ok(b)) => Ok(*b),
        Some(Err(_)) => Err(Invalid::new("live", "must be true or false")),
    }
}

/// `authority` (a string; default `owner`). Only `owner` is served.
pub fn authority(v: Option<&Loose<String>>) -> Result<Option<String>, Invalid> {
    match v.map(Loose::typed) {
        None => Ok(None),
        Some(Ok(s)) => Ok(Some(s.clone())),
        Some(Err(_)) => Err(Invalid::new("authority", "must be a string (\"owner\")")),
    }
}

/// `route`: required, an object, kept as sent.
pub fn route(v: Option<&Loose<RouteBody>>) -> Result<Value, Invalid> {
    match v.map(Loose::typed) {
        None => Err(Invalid::missing("route")),
        Some(Ok(route)) => Ok(Value::Object(route.clone())),
        Some(Err(_)) => Err(Invalid::new("route", "must be an object")),
    }
}

fn uint(v: Option<&Loose<u64>>, name: &str) -> Result<Option<u64>, Invalid> {
    v.map(|v| {
        v.typed()
            .copied()
            .map_err(|_| Invalid::new(name, "must be a non-negative integer"))
    })
    .transpose()
}

fn time(v: Option<&Loose<Scalar>>, name: &str) -> Result<Option<u64>, Invalid> {
    v.map(|v| parse_time(v).map_err(|why| Invalid::new(name, why)))
        .transpose()
}

impl Schedule {
    /// A schedule of `route` (already checked by the API) from the other
    /// fields of its request: `everySeconds`, `at`, `count`, `live`; `now`
    /// in epoch seconds.
    pub fn from_request(r: &ScheduleRequest, route: Value, now: u64) -> Result<Self, Invalid> {
        let every = uint(r.every_seconds.as_ref(), "everySeconds")?;
        if let Some(e) = every {
            if !(MIN_EVERY_SECS..=MAX_EVERY_SECS).contains(&e) {
                return Err(Invalid::new(
                    "everySeconds",
                    format!("must be {MIN_EVERY_SECS} to {MAX_EVERY_SECS} seconds"),
                ));
            }
        }
        let at = time(r.at.as_ref(), "at")?.unwrap_or(now);
        if at.saturating_add(MAX_AT_PAST_SECS) < now {
            // missed runs are caught up one per tick: a start far in the past
            // would fire a burst of them at once
            return Err(Invalid::new("at", "is more than an hour in the past"));
        }
        let count = uint(r.count.as_ref(), "count")?.unwrap_or(1);
        if !(1..=MAX_COUNT).contains(&count) {
            return Err(Invalid::new("count", format!("must be 1 to {MAX_COUNT}")));
        }
        if every.is_none() && count > 1 {
            return Err(Invalid::new(
                "count",
                "more than one run needs everySeconds (omit everySeconds only for a one-shot)",
            ));
        }
        Ok(Schedule {
            route,
            every_seconds: every,
            at,
            count,
            live: live(r.live.as_ref())?,
            authority: None,
            created_at: now,
            cancel_hash: None,
        })
    }
}

fn price_value(when: &WhenRequest) -> Result<String, Invalid> {
    let (name, v) = match (&when.value, &when.price) {
        (Some(v), _) => ("when.value", v),
        (None, Some(v)) => ("when.price", v),
        (None, None) => return Err(Invalid::missing("when.value")),
    };
    let text = match v.typed() {
        Ok(Scalar::Text(s)) => s.clone(),
        Ok(Scalar::Number(n)) => n.to_string(),
        Err(_) => return Err(Invalid::new(name, "must be a decimal USD price")),
    };
    let usd = Usd::parse(&text).map_err(|why| Invalid::new(name, why))?;
    Ok(usd.to_string())
}

fn asset(when: &WhenRequest) -> Result<String, Invalid> {
    let a = match when.asset.as_ref().map(Loose::typed) {
        None => return Err(Invalid::missing("when.asset")),
        Some(Ok(s)) => s.trim().to_ascii_uppercase(),
        Some(Err(_)) => {
            return Err(Invalid::new(
                "when.asset",
                "must be a pair like \"ETH/USD\"",
            ))
        }
    };
    let ok = a.strip_suffix("/USD").is_some_and(|base| {
        !base.is_empty() && base.len() <= 16 && base.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    if !ok {
        return Err(Invalid::new(
            "when.asset",
            format!("{a:?} must be a pair of form <ASSET>/USD, e.g. ETH/USD"),
        ));
    }
    Ok(a)
}

impl When {
    /// A conditional's `when`: required, an object.
    pub fn from_request(v: Option<&Loose<WhenRequest>>) -> Result<Self, Invalid> {
        let when = v
            .ok_or_else(|| Invalid::missing("when"))?
            .typed()
            .map_err(|_| Invalid::new("when", "must be an object"))?;
        let kind = match when.kind.as_ref().map(Loose::typed) {
            None => return Err(Invalid::missing("when.type")),
            Some(Ok(s)) => s.as_str(),
            Some(Err(_)) => return Err(Invalid::new("when.type", "must be a string")),
        };
        match kind {
            "priceAbove" => Ok(When::PriceAbove {
                asset: asset(when)?,
                value: price_value(when)?,
            }),
            "priceBelow" => Ok(When::PriceBelow {
                asset: asset(when)?,
                value: price_value(when)?,
            }),
            "timeAfter" => {
                let (name, v) = match (&when.at, &when.value) {
                    (Some(v), _) => ("when.at", v),
                    (None, Some(v)) => ("when.value", v),
                    (None, None) => return Err(Invalid::missing("when.at")),
                };
                let at = parse_time(v).map_err(|why| Invalid::new(name, why))?;
                Ok(When::TimeAfter { at })
            }
            other => Err(Invalid::new(
                "when.type",
                format!("{other:?} is not one of priceAbove, priceBelow, timeAfter"),
            )),
        }
    }
}

impl Conditional {
    /// A conditional of `route` (already checked by the API) from the
    /// other fields of its request: `when`, `live`, `expiresAt` (default
    /// `now + ttl_secs`); `now` in epoch seconds.
    pub fn from_request(
        r: &ConditionalRequest,
        route: Value,
        now: u64,
        ttl_secs: u64,
    ) -> Result<Self, Invalid> {
        let when = When::from_request(r.when.as_ref())?;
        let expires_at = time(r.expires_at.as_ref(), "expiresAt")?
            .unwrap_or_else(|| now.saturating_add(ttl_secs));
        if expires_at <= now {
            return Err(Invalid::new("expiresAt", "must be in the future"));
        }
        Ok(Conditional {
            route,
            when,
            live: live(r.live.as_ref())?,
            authority: None,
            expires_at,
            created_at: now,
            cancel_hash: None,
        })
    }
}

/// `routes` of a batch: 1 to 20 objects, each with `toAddress`.
pub fn legs(r: &BatchRequest) -> Result<&[Value], Invalid> {
    let legs = match r.routes.as_ref().map(Loose::typed) {
        None => return Err(Invalid::missing("routes")),
        Some(Ok(a)) => a,
        Some(Err(_)) => return Err(Invalid::new("routes", "must be an array of route requests")),
    };
    if legs.is_empty() || legs.len() > MAX_LEGS {
        return Err(Invalid::new(
            "routes",
            format!("{} legs given; 1 to {MAX_LEGS} are accepted", legs.len()),
        ));
    }
    for (i, leg) in legs.iter().enumerate() {
        let Some(o) = leg.as_object() else {
            return Err(Invalid::new(format!("routes[{i}]"), "must be an object"));
        };
        if o.get("toAddress").is_none_or(Value::is_null) {
            return Err(Invalid::missing(format!("routes[{i}].toAddress")));
        }
    }
    Ok(legs)
}

/// A schedule as answered.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleView {
    /// `sched_…`.
    pub id: String,
    /// `active`, `completed` (no run left) or `cancelled`.
    pub status: String,
    /// Whether runs are still to come.
    pub active: bool,
    /// The route each run executes.
    #[schema(value_type = Object)]
    pub route: Value,
    /// Seconds between runs (absent: one-shot).
    pub every_seconds: Option<u64>,
    /// The first run, epoch seconds.
    pub at: u64,
    /// Runs in all.
    pub count: u64,
    /// Runs still to come.
    pub remaining: u64,
    /// Whether runs may move funds (with the host's gate).
    pub live: bool,
    /// Who authorised a live record.
    pub authority: Option<Authority>,
    /// When the next run is due, epoch seconds (absent when none is).
    pub next_run_at: Option<u64>,
    /// Epoch seconds.
    pub created_at: u64,
    /// The runs so far (`{seq, at, key, simulated, wouldExecute | routeId, ok, error?}`).
    #[schema(value_type = Vec<Object>)]
    pub runs: Vec<Value>,
    /// The record's cancel token (`pct_…`), in the create answer only: send
    /// it as `x-cancel-token` to DELETE the record without the owner's
    /// credential. It is stored hashed and never shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_token: Option<String>,
    /// That a 200 does not mean anything settled.
    pub note: String,
}

/// A conditional as answered.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConditionalView {
    /// `cond_…`.
    pub id: String,
    /// `armed`, `triggered`, `executed`, `failed`, `expired` or `cancelled`.
    pub status: String,
    /// The route it executes once triggered.
    #[schema(value_type = Object)]
    pub route: Value,
    /// The trigger (`{type, asset, value}` or `{type, at}`).
    #[schema(value_type = Object)]
    pub when: Value,
    /// Whether the run may move funds (with the host's gate).
    pub live: bool,
    /// Who authorised a live record.
    pub authority: Option<Authority>,
    /// Expires unless triggered by then, epoch seconds.
    pub expires_at: u64,
    /// Epoch seconds.
    pub created_at: u64,
    /// What happened (`{seq, at, event, …}`).
    #[schema(value_type = Vec<Object>)]
    pub runs: Vec<Value>,
    /// The record's cancel token (`pct_…`), in the create answer only: send
    /// it as `x-cancel-token` to DELETE the record without the owner's
    /// credential. It is stored hashed and never shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_token: Option<String>,
    /// That a 200 does not mean anything settled.
    pub note: String,
}

/// A schedule's view from its record, state and runs.
pub fn schedule_view(
    id: &str,
    s: Schedule,
    status: &str,
    (done, next_ms): (u64, Option<u64>),
    runs: Vec<Value>,
) -> ScheduleView {
    ScheduleView {
        id: id.into(),
        status: status.into(),
        active: status == "active",
        remaining: s.count.saturating_sub(done),
        next_run_at: next_ms.filter(|_| status == "active").map(|ms| ms / 1000),
        route: s.route,
        every_seconds: s.every_seconds,
        at: s.at,
        count: s.count,
        live: s.live,
        authority: s.authority,
        created_at: s.created_at,
        runs,
        cancel_token: None,
        note: NOTE.into(),
    }
}

/// A conditional's view from its record, state and runs.
pub fn conditional_view(
    id: &str,
    c: Conditional,
    status: &str,
    runs: Vec<Value>,
) -> ConditionalView {
    ConditionalView {
        id: id.into(),
        status: status.into(),
        when: serde_json::to_value(&c.when).unwrap_or_default(),
        route: c.route,
        live: c.live,
        authority: c.authority,
        expires_at: c.expires_at,
        created_at: c.created_at,
        runs,
        cancel_token: None,
        note: NOTE.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A schedule request body as the API reads it: decoded, then checked.
    fn schedule(v: Value, now: u64) -> Result<Schedule, Invalid> {
        Schedule::from_request(&relay_wire::decode(&v).unwrap(), json!({}), now)
    }

    fn conditional(v: Value, now: u64, ttl: u64) -> Result<Conditional, Invalid> {
        Conditional::from_request(&relay_wire::decode(&v).unwrap(), json!({}), now, ttl)
    }

    /// How many legs a batch request body has, or why it has none.
    fn batch(v: Value) -> Result<usize, Invalid> {
        legs(&relay_wire::decode(&v).unwrap()).map(<[Value]>::len)
    }

    fn schedule_err(v: Value) -> String {
        schedule(v, 1_000).unwrap_err().field
    }

    #[test]
    fn schedule_bounds_name_the_field() {
        assert_eq!(
            schedule_err(json!({"everySeconds": 9, "count": 2})),
            "everySeconds"
        );
        assert_eq!(
            schedule_err(json!({"everySeconds": 10, "count": 0})),
            "count"
        );
        assert_eq!(
            schedule_err(json!({"everySeconds": 10, "count": 1001})),
            "count"
        );
        assert_eq!(schedule_err(json!({"count": 2})), "count");
        assert_eq!(schedule_err(json!({"at": "soon"})), "at");
        assert_eq!(schedule_err(json!({"live": "yes"})), "live");
        assert_eq!(schedule_err(json!({"everySeconds": -10})), "everySeconds");
        let past = schedule(json!({"at": 1}), 10_000);
        assert_eq!(past.unwrap_err().field, "at", "a burst of missed runs");
        let s = schedule(json!({"everySeconds": 10, "count": 3}), 1_000).unwrap();
        assert_eq!((s.at, s.count, s.live), (1_000, 3, false));
        assert_eq!(
            [s.due_ms(0), s.due_ms(1), s.due_ms(2)],
            [1_000_000, 1_010_000, 1_020_000]
        );
        let iso = json!({"at": "2026-11-29T10:00:00Z"});
        let one = schedule(iso, 1_795_946_400 + 3_600).unwrap();
        assert_eq!(
            (one.at, one.count, one.every_seconds),
            (1_795_946_400, 1, None)
        );
    }

    #[test]
    fn conditions_parse_prices_as_decimals() {
        let c = |w: Value| conditional(json!({ "when": w }), 100, 50);
        let when = c(json!({"type": "priceBelow", "asset": "eth/usd", "value": 2999.5}))
            .unwrap()
            .when;
        assert_eq!(
            when,
            When::PriceBelow {
                asset: "ETH/USD".into(),
                value: "2999.5".into()
            }
        );
        let when = c(json!({"type": "priceAbove", "asset": "BTC/USD", "price": "70000"}))
            .unwrap()
            .when;
        assert!(matches!(when, When::PriceAbove { .. }));
        let t = c(json!({"type": "timeAfter", "at": 500})).unwrap();
        assert_eq!((t.when, t.expires_at), (When::TimeAfter { at: 500 }, 150));
        for (w, f) in [
            (
                json!({"type": "priceBelow", "asset": "ETH/USD"}),
                "when.value",
            ),
            (json!({"type": "priceBelow", "value": "1"}), "when.asset"),
            (
                json!({"type": "priceBelow", "asset": "ETH", "value": "1"}),
                "when.asset",
            ),
            (
                json!({"type": "priceBelow", "asset": "ETH/USD", "value": "-1"}),
                "when.value",
            ),
            (
                json!({"type": "priceBelow", "asset": "ETH/USD", "value": [1]}),
                "when.value",
            ),
            (json!({"type": "timeAfter"}), "when.at"),
            (json!({"type": "sometime"}), "when.type"),
            (json!({}), "when.type"),
            (json!(7), "when"),
            (json!([null, null, null, null, null]), "when"),
            (Value::Null, "when"),
        ] {
            assert_eq!(c(w.clone()).map(|_| ()).unwrap_err().field, f, "{w}");
        }
        let past = conditional(
            json!({"when": {"type": "timeAfter", "at": 1}, "expiresAt": 99}),
            100,
            50,
        );
        assert_eq!(past.unwrap_err().field, "expiresAt");
    }

    #[test]
    fn batch_legs_are_bounded_and_need_to_address() {
        let leg = json!({"fromChain": 1, "toAddress": "0xabc"});
        let n_legs = |n: usize| json!({"routes": vec![leg.clone(); n]});
        assert_eq!(batch(n_legs(20)), Ok(20));
        assert_eq!(batch(n_legs(21)).unwrap_err().field, "routes");
        assert_eq!(batch(n_legs(0)).unwrap_err().field, "routes");
        assert_eq!(batch(json!({})).unwrap_err().field, "routes");
        assert_eq!(batch(json!({"routes": "all"})).unwrap_err().field, "routes");
        let no_to = json!({"routes": [leg, {"fromChain": 1, "toAddress": null}]});
        let e = batch(no_to).unwrap_err();
        assert_eq!((e.field.as_str(), e.missing), ("routes[1].toAddress", true));
    }
}
