//! `ExecuteRequest` (spec §2.7): a RouteRequest plus how the route is
//! paid for and run — the mode, a Permit2 or router signature, a rail, a
//! price lock, the dry-run flags.

use relay_plugin_api::Amount;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::{decode, RouteRequest, WireError};

/// `permit2.permitted`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PermittedBody {
    /// Token contract.
    pub token: String,
    /// Amount, smallest units.
    #[schema(value_type = String)]
    pub amount: Amount,
}

/// The Permit2 `PermitTransferFrom` signature a `mode:"permit2"` execute
/// carries (spender = the relayer, `GET /api/route/chains` `relayer`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Permit2Body {
    /// Signer and owner of the tokens.
    pub owner: String,
    /// Token and amount.
    pub permitted: PermittedBody,
    /// Unordered nonce, decimal string (null in a body handed back to fill).
    pub nonce: Option<String>,
    /// Unix seconds, decimal string (null in a body handed back to fill).
    pub deadline: Option<String>,
    /// 65-byte or 64-byte signature, 0x-hex (null in a body to fill).
    pub signature: Option<String>,
}

/// A quote's `attestation`, as the quote returned it: a price lock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AttestationBody {
    /// The signed terms, exactly as returned.
    #[schema(value_type = Object)]
    pub terms: Value,
    /// The Merkle proof of a quote signed in a batch (32-byte 0x-hex
    /// hashes); omitted for a quote signed alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Vec<String>>,
    /// The relayer's signature.
    pub signature: String,
}

/// The `RelayIntent` a router form signs (the Permit2 witness, or the
/// body of a `RelayOrder`); every number a decimal string.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntentBody {
    /// Destination address.
    pub recipient: String,
    /// Destination chain id (decimal) or node name.
    pub to_chain: String,
    /// Destination token address or symbol.
    pub to_token: String,
    /// Least delivered, destination smallest units.
    pub min_out: String,
    /// The rail.
    pub rail: String,
    /// keccak256 of the composed deposit call, 0x-hex.
    pub plan_hash: String,
    /// Most withheld (route fee and gas), source smallest units.
    pub fee_cap: String,
    /// Unix seconds.
    pub deadline: String,
}

/// A `RelayOrder` signature (modes `intent`, `erc2612`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OrderBody {
    /// Whose tokens move.
    pub owner: String,
    /// Token contract.
    pub token: String,
    /// Amount, smallest units.
    pub amount: String,
    /// Unordered nonce in the router's bitmap, decimal string.
    pub nonce: String,
    /// 0x-hex signature (null in a body to fill).
    pub signature: Option<String>,
}

/// An EIP-2612 permit signature.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Erc2612Body {
    /// Allowance granted, decimal string.
    pub value: String,
    /// Unix seconds, decimal string.
    pub deadline: String,
    /// 0x-hex 65-byte signature (null in a body to fill).
    pub signature: Option<String>,
}

/// The execute part of an [`ExecuteRequest`]: everything but the route.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteFields {
    /// `self` (default: the operator's own funds, needs the operator
    /// credential), `permit2` (the user's signed pull, spender = the
    /// relayer), or a router form: `permit2-witness`, `erc2612`, `intent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "permit2")]
    pub mode: Option<String>,
    /// The signature, when `mode` is `permit2` or `permit2-witness`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permit2: Option<Permit2Body>,
    /// A rail to use (no failover to others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rail: Option<String>,
    /// Price lock: the least the recipient must receive, smallest units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_out: Option<String>,
    /// Price lock: a quote's `attestation` as returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attestation: Option<AttestationBody>,
    /// A guaranteed dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// `false`: a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<bool>,
    /// Router forms: the prepared intent (`POST /api/route/intent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "rt_0123456789abcdef0123")]
    pub intent_id: Option<String>,
    /// Router forms: the route terms exactly as signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<IntentBody>,
    /// Modes `intent` and `erc2612`: the router's `RelayOrder` signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<OrderBody>,
    /// An EIP-2612 permit: for Permit2 (mode `permit2-witness`, a first
    /// route without an approval) or for the router (mode `erc2612`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub erc2612: Option<Erc2612Body>,
}

/// `POST /api/route/execute` and `/api/route/preflight` (spec §2.7): one
/// JSON object holding the route's fields and the execute's. Decode it
/// with [`ExecuteRequest::decode`], which names a bad field by its path
/// in either part.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({"fromChain": 8453, "toChain": 42161, "amount": "5000000", "fromToken": "USDC", "toToken": "USDC", "toAddress": "0x000000000000000000000000000000000000bEEF", "dryRun": true}))]
pub struct ExecuteRequest {
    /// The route.
    #[serde(flatten)]
    pub route: RouteRequest,
    /// How it is paid for and run.
    #[serde(flatten)]
    pub execute: ExecuteFields,
}

impl ExecuteRequest {
    /// Decodes an execute body: the route part first, then the rest, each
    /// ignoring the other's fields (serde's `flatten` would lose the path
    /// of a bad field).
    pub fn decode(body: &Value) -> Result<Self, WireError> {
        Ok(ExecuteRequest {
            route: decode(body)?,
            execute: decode(body)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn signed() -> Value {
        json!({
            "fromChain": 8453, "toChain": 42161, "amount": "5000000", "fromToken": "USDC",
            "mode": "permit2", "dryRun": true,
            "permit2": {"owner": "0xabc", "permitted": {"token": "0xdef", "amount": "5000000"},
                        "nonce": "7", "deadline": "1900000000", "signature": "0x01"},
            "attestation": {"terms": {"rail": "x"}, "signature": "0x02"}
        })
    }

    #[test]
    fn a_signed_execute_decodes_into_its_two_parts() {
        let r = ExecuteRequest::decode(&signed()).unwrap();
        assert!(r.route.amount.is_some());
        assert_eq!(r.execute.mode.as_deref(), Some("permit2"));
        assert_eq!(r.execute.dry_run, Some(true));
        let p = r.execute.permit2.unwrap();
        assert_eq!(
            (p.nonce.as_deref(), p.permitted.amount),
            (Some("7"), Amount::from_u128(5_000_000))
        );
        assert_eq!(r.execute.attestation.unwrap().proof, None);
    }

    #[test]
    fn a_missing_nested_field_is_named_by_its_path() {
        for (path, pointer) in [
            ("permit2.owner", "/permit2/owner"),
            ("permit2.permitted.token", "/permit2/permitted/token"),
            ("attestation.terms", "/attestation/terms"),
            ("attestation.signature", "/attestation/signature"),
        ] {
            let mut v = signed();
            let (parent, leaf) = pointer.rsplit_once('/').unwrap();
            v.pointer_mut(parent)
                .unwrap()
                .as_object_mut()
                .unwrap()
                .remove(leaf);
            let e = ExecuteRequest::decode(&v).unwrap_err();
            assert_eq!(e, WireError::Missing { field: path.into() });
        }
    }

    #[test]
    fn a_wrongly_typed_nested_field_is_invalid_by_its_path() {
        for (path, pointer, value) in [
            (
                "permit2.permitted.amount",
                "/permit2/permitted/amount",
                json!("1.5"),
            ),
            ("permit2.nonce", "/permit2/nonce", json!(7)),
            ("mode", "/mode", json!(1)),
            ("dryRun", "/dryRun", json!("yes")),
            ("minOut", "/minOut", json!(5)),
            ("fromToken", "/fromToken", json!(["USDC"])),
        ] {
            let mut v = signed();
            let (parent, leaf) = pointer.rsplit_once('/').unwrap();
            let parent = v.pointer_mut(parent).unwrap().as_object_mut().unwrap();
            parent.insert(leaf.into(), value.clone());
            let e = ExecuteRequest::decode(&v).unwrap_err();
            assert!(matches!(e, WireError::Invalid { .. }), "{path}: {e:?}");
            assert_eq!(e.field(), Some(path), "{value}");
        }
    }

    #[test]
    fn a_body_handed_back_serialises_without_empty_fields() {
        let body = ExecuteRequest {
            execute: ExecuteFields {
                dry_run: Some(true),
                ..ExecuteFields::default()
            },
            ..ExecuteRequest::default()
        };
        let v = serde_json::to_value(body).unwrap();
        assert_eq!(
            v,
            json!({"fromChain": null, "toChain": null, "amount": null, "dryRun": true})
        );
    }
}
