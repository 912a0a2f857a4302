//! `POST /api/hooks` (spec §4.8): a completion webhook as the caller sends
//! it. Unknown fields are refused (named, with the allowed ones listed);
//! every field is kept as sent ([`Loose`]) so the notify feature refuses a
//! missing, blank or wrongly typed one with the words it always used.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Loose;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;
    use serde_json::json;

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
