//! `POST /api/session/issue` (spec §4.5): a session's label, policy and
//! refund address as the owner sends them. Unknown fields are refused
//! (named, with the allowed ones listed); every other field is kept as
//! sent ([`Loose`], [`Scalar`]) so the accounts domain refuses each with
//! the words it always used.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{Loose, Scalar};

/// `policy`: what the session's routes may do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"chains": [8453, 42161], "tokens": ["USDC"], "recipients": ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"], "perTxCap": "2000000", "rolling24hCap": "5000000", "expiresAt": 1893456000}))]
pub struct SessionPolicyRequest {
    /// EVM chain ids (each with a `RelayRouter`) routes may leave from and
    /// go to; 1 to 64.
    #[schema(value_type = Vec<u64>)]
    pub chains: Option<Loose<Vec<Loose<Scalar>>>>,
    /// Symbols or addresses of tokens routes may move, all of the same
    /// decimals; 1 to 64.
    #[schema(value_type = Vec<String>)]
    pub tokens: Option<Loose<Vec<Loose<String>>>>,
    /// EVM addresses routes may pay; 1 to 64.
    #[schema(value_type = Vec<String>)]
    pub recipients: Option<Loose<Vec<Loose<String>>>>,
    /// The most one route may take, source smallest units (a decimal
    /// string), at most `rolling24hCap`.
    #[schema(value_type = String, pattern = "^[0-9]+$", example = "2000000")]
    pub per_tx_cap: Option<Loose<Scalar>>,
    /// The most the routes of any 24 hours may take together.
    #[serde(rename = "rolling24hCap")]
    #[schema(value_type = String, pattern = "^[0-9]+$", example = "5000000")]
    pub rolling_24h_cap: Option<Loose<Scalar>>,
    /// When the session expires: unix seconds, in the future and at most
    /// `sessions.max_ttl_secs` ahead.
    #[schema(value_type = u64, example = 1893456000)]
    pub expires_at: Option<Loose<Scalar>>,
}

/// `POST /api/session/issue`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"label": "pricing agent", "refundTo": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "policy": {"chains": [8453, 42161], "tokens": ["USDC"], "recipients": ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"], "perTxCap": "2000000", "rolling24hCap": "5000000", "expiresAt": 1893456000}}))]
pub struct SessionIssueRequest {
    /// The owner's label, at most 128 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub label: Option<Loose<String>>,
    /// The policy.
    #[serde(default, deserialize_with = "crate::loose::object")]
    #[schema(required = true)]
    pub policy: Option<SessionPolicyRequest>,
    /// Where unspent funds go on revoke or expiry: an EVM address. Absent
    /// is `None`; `null` is kept (as `Other("null")`): it is no address.
    #[serde(default, deserialize_with = "crate::loose::present")]
    #[schema(value_type = String, required = true)]
    pub refund_to: Option<Loose<String>>,
}

/// `POST /api/session/revoke`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"id": "ses_0123456789abcdef01234567"}))]
pub struct SessionRevokeRequest {
    /// The session's id (`ses_…`). Absent is `None`; `null` is kept (as
    /// `Other("null")`) for the domain to refuse as missing.
    #[serde(default, deserialize_with = "crate::loose::present")]
    #[schema(value_type = String, required = true)]
    pub id: Option<Loose<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, WireError};
    use serde_json::{json, Value};

    fn body() -> Value {
        json!({
            "label": "agent", "refundTo": "0xabc",
            "policy": {"chains": [8453, "42161"], "tokens": ["usdc"], "recipients": ["0xabc"],
                       "perTxCap": "2000000", "rolling24hCap": 5000000, "expiresAt": 1900000000},
        })
    }

    #[test]
    fn a_revoke_body_keeps_its_id_as_sent_and_names_unknown_fields() {
        let r: SessionRevokeRequest = decode(&json!({"id": "ses_1"})).unwrap();
        assert_eq!(r.id, Some(Loose::Typed("ses_1".into())));
        let r: SessionRevokeRequest = decode(&json!({"id": 7})).unwrap();
        assert_eq!(r.id, Some(Loose::Other("7".into())));
        let r: SessionRevokeRequest = decode(&json!({})).unwrap();
        assert_eq!(r.id, None);
        let e = decode::<SessionRevokeRequest>(&json!({"id": "ses_1", "ids": []})).unwrap_err();
        assert_eq!(e.to_string(), "ids: unknown field (allowed: id)");
    }

    #[test]
    fn an_issue_body_decodes_with_every_field_as_sent() {
        let r: SessionIssueRequest = decode(&body()).unwrap();
        assert_eq!(r.label, Some(Loose::Typed("agent".into())));
        assert_eq!(r.refund_to, Some(Loose::Typed("0xabc".into())));
        let p = r.policy.unwrap();
        let chains = p.chains.unwrap();
        let chains: Vec<_> = chains.typed().unwrap().iter().map(Loose::typed).collect();
        assert_eq!(
            chains,
            [Ok(&Scalar::from(8453)), Ok(&Scalar::from("42161"))]
        );
        assert_eq!(
            p.rolling_24h_cap,
            Some(Loose::Typed(Scalar::from(5_000_000)))
        );
    }

    #[test]
    fn wrong_types_are_kept_for_the_domain_to_name() {
        let r: SessionIssueRequest = decode(&json!({
            "label": 7, "refundTo": null,
            "policy": {"chains": 8453, "tokens": [1], "perTxCap": -5, "expiresAt": null},
        }))
        .unwrap();
        assert_eq!(r.label.unwrap().typed(), Err("7"));
        assert_eq!(
            r.refund_to.unwrap().typed(),
            Err("null"),
            "null is not absent"
        );
        let p = r.policy.unwrap();
        assert_eq!(p.chains.unwrap().typed(), Err("8453"));
        assert_eq!(p.tokens.unwrap().typed().unwrap()[0].typed(), Err("1"));
        assert_eq!(p.per_tx_cap.unwrap().typed().unwrap().whole(), None);
        assert_eq!((p.recipients, p.expires_at), (None, None));
        let absent: SessionIssueRequest = decode(&json!({"policy": null})).unwrap();
        assert_eq!(absent, SessionIssueRequest::default());
    }

    #[test]
    fn unknown_fields_are_named_with_the_allowed_ones() {
        let e = decode::<SessionIssueRequest>(&json!({"policy": {}, "owner": "me"})).unwrap_err();
        assert_eq!(
            e,
            WireError::Invalid {
                field: "owner".into(),
                why: "unknown field (allowed: label, policy, refundTo)".into()
            }
        );
        let mut b = body();
        b["policy"]["caps"] = json!(1);
        let e = decode::<SessionIssueRequest>(&b).unwrap_err();
        assert_eq!(e.field(), Some("policy.caps"));
        assert_eq!(
            e.to_string(),
            "policy.caps: unknown field (allowed: chains, tokens, recipients, perTxCap, rolling24hCap, expiresAt)"
        );
    }

    #[test]
    fn a_policy_that_is_not_an_object_is_named() {
        let six = json!([null, null, null, null, null, null]);
        for policy in [json!([]), six, json!("all"), json!(5)] {
            let e = decode::<SessionIssueRequest>(&json!({ "policy": policy })).unwrap_err();
            assert!(matches!(e, WireError::Invalid { .. }), "{e:?}");
            assert_eq!(e.field(), Some("policy"), "{policy}");
            assert_eq!(e.to_string(), "policy: must be an object");
        }
    }
}
