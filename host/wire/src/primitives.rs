//! The route primitives' bodies (spec §2.12, §4.4): `POST
//! /api/route/batch`, `/api/route/schedule` and `/api/route/conditional`.
//! A route inside them is kept exactly as the caller sent it (it is stored
//! and answered so, and each run sends it); every other field is kept as
//! sent ([`Loose`], [`Scalar`]) so the primitives domain refuses each with
//! the words it always used. Unknown fields are ignored, as they always
//! were.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::{Loose, Scalar};

/// A route of a primitive: a RouteRequest with `toAddress` (as execute
/// reads it: `rail`, a price lock …), kept as sent.
pub type RouteBody = Map<String, Value>;

/// `POST /api/route/batch`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"routes": [
    {"fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC", "amount": "1000000", "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"},
    {"fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC", "amount": "2500000", "toAddress": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"}],
    "live": false}))]
pub struct BatchRequest {
    /// 1 to 20 legs, each a RouteRequest with `toAddress`.
    #[schema(value_type = Vec<Object>, required = true)]
    pub routes: Option<Loose<Vec<Value>>>,
    /// Whether its run may move funds (with the host's gate and the
    /// owner's credential); default false.
    #[schema(value_type = Option<bool>)]
    pub live: Option<Loose<bool>>,
    /// Who authorises a live batch: `owner` (the default; the one served).
    #[schema(value_type = Option<String>)]
    pub authority: Option<Loose<String>>,
}

/// `POST /api/route/schedule`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({
    "route": {"fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC", "amount": "1000000", "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"},
    "everySeconds": 3600, "count": 24, "at": "2026-12-01T09:00:00Z", "live": false}))]
pub struct ScheduleRequest {
    /// The route each run executes.
    #[schema(value_type = Object, required = true)]
    pub route: Option<Loose<RouteBody>>,
    /// Seconds between runs, 10 to one year (omit for a one-shot).
    #[schema(value_type = Option<u64>)]
    pub every_seconds: Option<Loose<u64>>,
    /// The first run: epoch seconds or ISO-8601 (default now; at most an
    /// hour in the past).
    #[schema(value_type = Option<String>)]
    pub at: Option<Loose<Scalar>>,
    /// Runs in all, 1 to 1000 (default 1).
    #[schema(value_type = Option<u64>)]
    pub count: Option<Loose<u64>>,
    /// Whether runs may move funds (with the host's gate and the owner's
    /// credential); default false.
    #[schema(value_type = Option<bool>)]
    pub live: Option<Loose<bool>>,
    /// Who authorises a live schedule: `owner` (the default; the one served).
    #[schema(value_type = Option<String>)]
    pub authority: Option<Loose<String>>,
}

/// A conditional's `when`: `{type: "priceAbove" | "priceBelow", asset,
/// value}` (`price` accepted for `value`) or `{type: "timeAfter", at}`
/// (`value` accepted for `at`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WhenRequest {
    /// `priceAbove`, `priceBelow` or `timeAfter`.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub kind: Option<Loose<String>>,
    /// The pair, `<ASSET>/USD`.
    #[schema(value_type = Option<String>, example = "ETH/USD")]
    pub asset: Option<Loose<String>>,
    /// A decimal USD price (number or string), or for `timeAfter` the time.
    #[schema(value_type = Option<String>, example = "2500")]
    pub value: Option<Loose<Scalar>>,
    /// `value`'s other name for a price.
    #[schema(value_type = Option<String>)]
    pub price: Option<Loose<Scalar>>,
    /// `timeAfter`: epoch seconds or ISO-8601.
    #[schema(value_type = Option<String>)]
    pub at: Option<Loose<Scalar>>,
}

/// `POST /api/route/conditional`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({
    "route": {"fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC", "amount": "1000000", "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"},
    "when": {"type": "priceBelow", "asset": "ETH/USD", "value": "2500"}, "live": false}))]
pub struct ConditionalRequest {
    /// The route it executes once triggered.
    #[schema(value_type = Object, required = true)]
    pub route: Option<Loose<RouteBody>>,
    /// The trigger.
    #[serde(default, deserialize_with = "crate::loose::loose_object")]
    #[schema(value_type = WhenRequest, required = true)]
    pub when: Option<Loose<WhenRequest>>,
    /// Disarmed unless triggered by then: epoch seconds or ISO-8601
    /// (default `primitives.conditional_ttl_secs` from now).
    #[schema(value_type = Option<String>)]
    pub expires_at: Option<Loose<Scalar>>,
    /// Whether the run may move funds (with the host's gate and the
    /// owner's credential); default false.
    #[schema(value_type = Option<bool>)]
    pub live: Option<Loose<bool>>,
    /// Who authorises a live conditional: `owner` (the default; the one
    /// served).
    #[schema(value_type = Option<String>)]
    pub authority: Option<Loose<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;
    use serde_json::json;

    #[test]
    fn a_schedule_body_keeps_its_route_as_sent() {
        let route = json!({"fromChain": 8453, "toAddress": "0xabc", "rail": "lifi", "x": [1]});
        let r: ScheduleRequest = decode(&json!({
            "route": route, "everySeconds": 60, "count": "3", "at": "2026-12-01T09:00:00Z",
            "live": true, "unknown": 1
        }))
        .unwrap();
        assert_eq!(
            r.route.unwrap().typed().cloned().map(Value::Object),
            Ok(route)
        );
        assert_eq!(r.every_seconds, Some(Loose::Typed(60)));
        assert_eq!(r.count.unwrap().typed(), Err("\"3\""));
        assert_eq!(
            r.at,
            Some(Loose::Typed(Scalar::from("2026-12-01T09:00:00Z")))
        );
        assert_eq!(r.live, Some(Loose::Typed(true)));
    }

    #[test]
    fn no_field_of_an_object_fails_to_decode() {
        let r: ScheduleRequest = decode(&json!({
            "route": [1], "everySeconds": -10, "at": true, "live": "yes", "authority": 7
        }))
        .unwrap();
        assert_eq!(r.route.unwrap().typed(), Err("[1]"));
        assert_eq!(r.every_seconds.unwrap().typed(), Err("-10"));
        assert_eq!(r.at.unwrap().typed(), Err("true"));
        assert_eq!(r.live.unwrap().typed(), Err("\"yes\""));
        assert_eq!(r.authority.unwrap().typed(), Err("7"));
        let b: BatchRequest = decode(&json!({"routes": {"a": 1}})).unwrap();
        assert_eq!(b.routes.unwrap().typed(), Err("{\"a\":1}"));
        let nulls: ConditionalRequest = decode(&json!({"route": null, "when": null})).unwrap();
        assert_eq!(nulls, ConditionalRequest::default());
    }

    #[test]
    fn a_when_is_read_only_from_an_object() {
        let when = |w: Value| {
            decode::<ConditionalRequest>(&json!({ "when": w }))
                .unwrap()
                .when
                .unwrap()
        };
        let w = when(json!({"type": "priceBelow", "asset": "ETH/USD", "value": 2999.5}));
        let w = w.typed().unwrap();
        assert_eq!(w.kind, Some(Loose::Typed("priceBelow".into())));
        assert!(matches!(w.value, Some(Loose::Typed(Scalar::Number(_)))));
        let five = json!([null, null, null, null, null]);
        for other in [five, json!(7), json!("soon")] {
            assert!(when(other.clone()).typed().is_err(), "{other}");
        }
        assert_eq!(when(json!([1, 2])).typed(), Err("[1,2]"));
    }
}
