//! `POST /api/hooks` (spec §4.8): a completion webhook, and
//! `POST /api/events/subscribe`: a price or balance subscription, as the
//! caller sends them. Unknown fields are refused (named, with the allowed
//! ones listed); every field is kept as sent ([`Loose`], [`Scalar`]) so the
//! notify feature refuses a missing, blank or wrongly typed one with the
//! words it always used.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{Loose, Scalar};

/// `POST /api/hooks`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"routeId": "rt_0123456789abcdef0123", "url": "https://example.com/relay-hook", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "signature": "0x…: the route's sender's EIP-191 signature of relay-hook:v1:route=<routeId>:url=<url>"}))]
pub struct HookRegisterRequest {
    /// The route (`rt_…`, or a sandbox route's id).
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub route_id: Option<Loose<String>>,
    /// Where the completion is delivered: an `https` URL (private and
    /// loopback addresses refused).
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub url: Option<Loose<String>>,
    /// The signing secret (`whsec_…`); deliveries are signed when given.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub secret: Option<Loose<String>>,
    /// The route sender's EIP-191 signature of
    /// `relay-hook:v1:route=<routeId>:url=<url>`; not needed with the
    /// owner's token.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub signature: Option<Loose<String>>,
}

/// `POST /api/events/subscribe` with `type: "price"`: a webhook when
/// `asset` crosses a USD threshold (exactly one of `above`, `below`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"type": "price", "asset": "ETH", "above": "4000", "url": "https://example.com/relay-events"}))]
pub struct PriceSubscribeRequest {
    /// `price`.
    #[serde(default, rename = "type")]
    #[schema(value_type = String, required = true, example = "price")]
    pub kind: Option<Loose<String>>,
    /// The asset (`ETH`, `BTC`, … as `GET /api/pricefeeds` lists them).
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub asset: Option<Loose<String>>,
    /// USD threshold crossed upwards (a decimal string).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub above: Option<Loose<String>>,
    /// USD threshold crossed downwards (a decimal string).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub below: Option<Loose<String>>,
    /// Where events are delivered: an `https` URL.
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub url: Option<Loose<String>>,
    /// The signing secret (`whsec_…`).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub secret: Option<Loose<String>>,
}

/// `POST /api/events/subscribe` with `type: "balance"`: a webhook when an
/// address's ERC-20 balance changes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"type": "balance", "chainId": 8453, "token": "USDC", "address": "0x000000000000000000000000000000000000bEEF", "url": "https://example.com/relay-events", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}))]
pub struct BalanceSubscribeRequest {
    /// `balance`.
    #[serde(default, rename = "type")]
    #[schema(value_type = String, required = true, example = "balance")]
    pub kind: Option<Loose<String>>,
    /// The EVM chain id (a number, or a string of one).
    #[serde(default)]
    #[schema(value_type = u64, required = true)]
    pub chain_id: Option<Loose<Scalar>>,
    /// The ERC-20 token: a symbol this host serves on the chain, or its
    /// address.
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub token: Option<Loose<String>>,
    /// The address whose balance is watched.
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub address: Option<Loose<String>>,
    /// Where events are delivered: an `https` URL.
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub url: Option<Loose<String>>,
    /// The signing secret (`whsec_…`).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub secret: Option<Loose<String>>,
}

/// `POST /api/events/subscribe`: the body by its `type` (the schema of the
/// request; the feature reads `type` first, then decodes the matching one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum SubscribeRequest {
    /// `type: "price"`.
    Price(PriceSubscribeRequest),
    /// `type: "balance"`.
    Balance(BalanceSubscribeRequest),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;
    use serde_json::json;

    #[test]
    fn each_subscription_type_allows_its_own_fields_only() {
        let p: PriceSubscribeRequest =
            decode(&json!({"type": "price", "asset": "ETH", "above": "1", "url": "u"})).unwrap();
        assert_eq!(p.asset, Some(Loose::Typed("ETH".into())));
        let b: BalanceSubscribeRequest =
            decode(&json!({"type": "balance", "chainId": "8453", "token": "USDC"})).unwrap();
        assert_eq!(b.chain_id, Some(Loose::Typed(Scalar::Text("8453".into()))));
        let e =
            decode::<PriceSubscribeRequest>(&json!({"type": "price", "chainId": 1})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "chainId: unknown field (allowed: type, asset, above, below, url, secret)"
        );
        let e = decode::<BalanceSubscribeRequest>(&json!({"type": "balance", "asset": "ETH"}))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "asset: unknown field (allowed: type, chainId, token, address, url, secret)"
        );
    }

    #[test]
    fn a_hook_body_keeps_every_field_as_sent() {
        let r: HookRegisterRequest =
            decode(&json!({"routeId": "rt_1", "url": 5, "secret": null})).unwrap();
        assert_eq!(r.route_id, Some(Loose::Typed("rt_1".into())));
        assert_eq!(r.url, Some(Loose::Other("5".into())));
        assert_eq!((r.secret, r.signature), (None, None));
        let e = decode::<HookRegisterRequest>(&json!({"routeId": "rt_1", "uri": "x"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "uri: unknown field (allowed: routeId, url, secret, signature)"
        );
    }
}
