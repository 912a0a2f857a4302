//! `RouteRequest` (spec §2.5): what quote, compare, improve, intent and
//! the route part of every execute send.

use relay_plugin_api::ChainRef;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Loose;

/// An EVM chain id (number or numeric string) or a non-EVM node name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum Node {
    /// EVM chain id.
    Id(u64),
    /// Numeric string or node name (`solana`, `stellar`, `bitcoin`, `tron`, `sui`).
    Name(String),
}

impl From<ChainRef> for Node {
    fn from(c: ChainRef) -> Self {
        match c {
            ChainRef::Evm(id) => Node::Id(id),
            ChainRef::NonEvm(n) => Node::Name(n.as_str().into()),
        }
    }
}

impl Node {
    /// The node as text (`8453`, `solana`), as the chain parser reads it.
    pub fn text(&self) -> String {
        match self {
            Node::Id(id) => id.to_string(),
            Node::Name(n) => n.clone(),
        }
    }
}

/// A fraction sent as a JSON number or a numeric string (`0.005`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Fraction {
    /// A JSON number.
    Number(f64),
    /// A numeric string; `None` when it is not a number.
    #[serde(deserialize_with = "numeric_text")]
    Text(Option<f64>),
}

impl Fraction {
    /// Its value, when it is a number.
    pub fn value(self) -> Option<f64> {
        match self {
            Fraction::Number(f) => Some(f),
            Fraction::Text(f) => f,
        }
    }
}

fn numeric_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let s = String::deserialize(d)?;
    Ok(s.trim().parse().ok())
}

/// `POST /api/route/quote` and `/api/route/compare` (spec §2.5).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"fromChain": 8453, "toChain": 42161, "amount": "5000000", "fromToken": "USDC", "toToken": "USDC"}))]
pub struct RouteRequest {
    /// Source node.
    #[schema(value_type = Option<Node>, example = 8453)]
    pub from_chain: Option<Loose<Node>>,
    /// Destination node.
    #[schema(value_type = Option<Node>, example = 42161)]
    pub to_chain: Option<Loose<Node>>,
    /// Source-token smallest units, a decimal string.
    #[schema(value_type = Option<String>, pattern = "^[0-9]+$", example = "5000000")]
    pub amount: Option<Loose<String>>,
    /// Symbol or contract address; omit for the native asset.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "USDC")]
    pub from_token: Option<String>,
    /// An alias of `fromToken` (read when `fromToken` is absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Symbol or contract address; omit for the native asset.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "USDC")]
    pub to_token: Option<String>,
    /// Recipient; defaults to `fromAddress`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_address: Option<String>,
    /// Quote origin; decides the member fee tier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_address: Option<String>,
    /// Slippage as a fraction, e.g. 0.005 (a number or a numeric string).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    pub slippage: Option<Fraction>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, WireError};
    use serde_json::json;

    #[test]
    fn a_full_route_request_decodes() {
        let r: RouteRequest = decode(&json!({
            "fromChain": 8453, "toChain": "arbitrum", "amount": "5000000", "token": "USDC",
            "fromAddress": "0xabc", "slippage": "0.003", "unknownField": 1
        }))
        .unwrap();
        assert_eq!(r.from_chain, Some(Loose::Typed(Node::Id(8453))));
        assert_eq!(
            r.to_chain,
            Some(Loose::Typed(Node::Name("arbitrum".into())))
        );
        assert_eq!(r.amount, Some(Loose::Typed("5000000".into())));
        assert_eq!((r.token.as_deref(), r.from_token), (Some("USDC"), None));
        assert_eq!(r.slippage.and_then(Fraction::value), Some(0.003));
    }

    #[test]
    fn fields_with_codes_of_their_own_are_kept_loose() {
        let r: RouteRequest =
            decode(&json!({"fromChain": [1], "toChain": -5, "amount": 5, "slippage": "x"}))
                .unwrap();
        assert_eq!(r.from_chain.unwrap().typed(), Err("[1]"));
        assert_eq!(r.to_chain.unwrap().typed(), Err("-5"));
        assert_eq!(r.amount.unwrap().typed(), Err("5"));
        assert_eq!(r.slippage.and_then(Fraction::value), None);
        let absent: RouteRequest = decode(&json!({"fromChain": null})).unwrap();
        assert_eq!(absent, RouteRequest::default());
    }

    #[test]
    fn a_wrongly_typed_field_is_invalid_by_name() {
        for field in ["fromToken", "toToken", "fromAddress", "toAddress", "token"] {
            let e = decode::<RouteRequest>(&json!({ field: 5 })).unwrap_err();
            assert!(matches!(e, WireError::Invalid { .. }), "{e:?}");
            assert_eq!(e.field(), Some(field));
        }
        let e = decode::<RouteRequest>(&json!({"slippage": true})).unwrap_err();
        assert_eq!(e.field(), Some("slippage"));
        let e = decode::<RouteRequest>(&json!("quote")).unwrap_err();
        assert!(matches!(e, WireError::Malformed(_)));
    }
}
