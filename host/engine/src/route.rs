//! A RouteRequest (spec §2.5) turned into typed values once, at the edge:
//! parse, don't validate. The body is decoded by `relay_wire` (a wrongly
//! typed field named by its path); [`RouteAsk::from_request`] checks it
//! against the host's chains and tokens. Quote and compare (body or query
//! string) share it; every problem is a [`RequestError`] naming its field.
//!
//! Rules beyond the spec's table (documented here because the spec does not
//! show them):
//! - `token` is an alias of `fromToken`.
//! - `toToken` omitted means the source token's symbol when the destination
//!   knows it, otherwise the destination's native asset; `fromToken`
//!   omitted means the source's native asset.
//! - `amount` is a JSON string of decimal digits (smallest units), > 0 and
//!   below 10^15 whole source tokens: `amount < 10^(decimals + 15)` (the
//!   native asset of an EVM chain has 18 decimals), so 2^256 − 1 is refused
//!   with `INVALID_AMOUNT` rather than priced.
//! - `slippage` is a fraction in [0, 0.5] (number or numeric string),
//!   rounded to whole basis points; omitted means `quote.default_slippage_bps`.
//! - `toAddress` defaults to `fromAddress` when both nodes share an address
//!   format.

use super::{address, tokens};
use relay_config::HostConfig;
use relay_plugin_api::{Amount, ChainRef, Token};
use relay_wire::{Fraction, Loose, Node, RouteRequest, WireError};
use std::borrow::Cow;

/// A checked RouteRequest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteAsk {
    /// Source node.
    pub from_chain: ChainRef,
    /// Destination node.
    pub to_chain: ChainRef,
    /// Source token.
    pub from_token: Token,
    /// Destination token.
    pub to_token: Token,
    /// Amount, source smallest units.
    pub amount: Amount,
    /// Who sends (decides the member tier); anonymous when absent.
    pub from_address: Option<String>,
    /// Who receives, when known.
    pub recipient: Option<String>,
    /// Slippage tolerance, bps.
    pub slippage_bps: u32,
}

/// Why a RouteRequest is not usable. Each variant but the first and last
/// names its field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// Not a JSON object.
    #[error("{0}")]
    Malformed(String),
    /// A required field is absent.
    #[error("{field}: required")]
    Missing {
        /// The field.
        field: Cow<'static, str>,
    },
    /// Not a node this host serves.
    #[error("{field}: {why}")]
    UnknownChain {
        /// The field.
        field: Cow<'static, str>,
        /// Why.
        why: String,
    },
    /// Not a token known on its chain.
    #[error("{field}: {why}")]
    UnknownToken {
        /// The field.
        field: Cow<'static, str>,
        /// Why.
        why: String,
    },
    /// Not a positive decimal string of smallest units.
    #[error("{field}: {why}")]
    InvalidAmount {
        /// The field.
        field: Cow<'static, str>,
        /// Why.
        why: String,
    },
    /// Not an address on its chain.
    #[error("{field}: {why}")]
    InvalidAddress {
        /// The field.
        field: Cow<'static, str>,
        /// Why.
        why: String,
    },
    /// Any other bad value.
    #[error("{field}: {why}")]
    Invalid {
        /// The field.
        field: Cow<'static, str>,
        /// Why.
        why: String,
    },
    /// Same chain and same token.
    #[error("fromChain equals toChain and fromToken equals toToken: nothing to move")]
    SameChainSameToken,
}

impl RequestError {
    /// The field at fault.
    pub fn field(&self) -> Option<&str> {
        match self {
            RequestError::Malformed(_) | RequestError::SameChainSameToken => None,
            RequestError::Missing { field }
            | RequestError::UnknownChain { field, .. }
            | RequestError::UnknownToken { field, .. }
            | RequestError::InvalidAmount { field, .. }
            | RequestError::InvalidAddress { field, .. }
            | RequestError::Invalid { field, .. } => Some(field),
        }
    }

    /// What the client should do about it.
    pub fn suggestion(&self) -> &'static str {
        match self {
            RequestError::Malformed(_) => "send a JSON object with fromChain, toChain and amount",
            RequestError::Missing { .. } => "add the field named in `field`",
            RequestError::UnknownChain { .. } => {
                "use an EVM chain id from GET /api/route/chains or a non-EVM node name"
            }
            RequestError::UnknownToken { .. } => {
                "use a symbol (USDC, USDT …) or contract address on that chain, or omit it for the native asset"
            }
            RequestError::InvalidAmount { .. } => {
                "send amount as a string of decimal digits in smallest units, e.g. \"5000000\" for 5 USDC"
            }
            RequestError::InvalidAddress { .. } => "send an address in the destination chain's own format",
            RequestError::Invalid { .. } => "fix the field named in `field`",
            RequestError::SameChainSameToken => {
                "change toChain, or choose a different toToken for a same-chain swap"
            }
        }
    }
}

impl From<(&'static str, tokens::LookupError)> for RequestError {
    fn from((field, e): (&'static str, tokens::LookupError)) -> Self {
        let field = field.into();
        match e {
            tokens::LookupError::UnknownChain(why) => RequestError::UnknownChain { field, why },
            tokens::LookupError::UnknownToken(why) => RequestError::UnknownToken { field, why },
            tokens::LookupError::InvalidAddress(why) => RequestError::InvalidAddress { field, why },
        }
    }
}

fn invalid(field: &'static str, why: impl Into<String>) -> RequestError {
    RequestError::Invalid {
        field: field.into(),
        why: why.into(),
    }
}

fn chain(
    raw: Option<&Loose<Node>>,
    config: &HostConfig,
    field: &'static str,
) -> Result<ChainRef, RequestError> {
    let node = raw
        .ok_or(RequestError::Missing {
            field: field.into(),
        })?
        .typed()
        .map_err(|_| RequestError::UnknownChain {
            field: field.into(),
            why: "must be an integer chain id or a node name".into(),
        })?;
    tokens::parse_chain(&node.text())
        .and_then(|c| tokens::served(config, c))
        .map_err(|e| (field, e).into())
}

fn amount(raw: Option<&Loose<String>>) -> Result<Amount, RequestError> {
    let field = "amount";
    let bad = |why: String| RequestError::InvalidAmount {
        field: field.into(),
        why,
    };
    let raw = raw
        .ok_or(RequestError::Missing {
            field: field.into(),
        })?
        .typed()
        .map_err(|other| bad(format!("must be a string of decimal digits, got {other}")))?;
    let a: Amount = raw.parse().map_err(|e| bad(format!("{e}")))?;
    if a.is_zero() {
        return Err(bad("must be greater than zero".into()));
    }
    Ok(a)
}

fn slippage_bps(raw: Option<Fraction>, default: u32) -> Result<u32, RequestError> {
    let Some(f) = raw else { return Ok(default) };
    match f.value() {
        Some(f) if (0.0..=0.5).contains(&f) => Ok((f * 10_000.0).round() as u32),
        _ => Err(invalid(
            "slippage",
            "must be a fraction between 0 and 0.5, e.g. 0.005",
        )),
    }
}

fn party(
    raw: Option<&str>,
    field: &'static str,
    chain: ChainRef,
) -> Result<Option<String>, RequestError> {
    let Some(raw) = raw.map(str::trim) else {
        return Ok(None);
    };
    address::check(chain, raw).map_err(|why| RequestError::InvalidAddress {
        field: field.into(),
        why: format!("{:?} on {chain}: {why}", tokens::clip(raw)),
    })?;
    Ok(Some(address::normalize(chain, raw)))
}

impl From<WireError> for RequestError {
    fn from(e: WireError) -> Self {
        match e {
            WireError::Malformed(why) => RequestError::Malformed(why),
            WireError::Missing { field } => RequestError::Missing {
                field: field.into(),
            },
            WireError::Invalid { field, why } => RequestError::Invalid {
                field: field.into(),
                why,
            },
        }
    }
}

impl RouteAsk {
    /// Checks a decoded RouteRequest against the host's chains and tokens.
    pub fn from_request(r: &RouteRequest, config: &HostConfig) -> Result<Self, RequestError> {
        let from_chain = chain(r.from_chain.as_ref(), config, "fromChain")?;
        let to_chain = chain(r.to_chain.as_ref(), config, "toChain")?;
        let amount = amount(r.amount.as_ref())?;
        let from_raw = r.from_token.as_deref().or(r.token.as_deref());
        let from_token =
            tokens::resolve(config, from_chain, from_raw).map_err(|e| ("fromToken", e))?;
        tokens::check_maximum(&from_token, &amount).map_err(|why| RequestError::InvalidAmount {
            field: "amount".into(),
            why,
        })?;
        let to_raw = r.to_token.as_deref().or_else(|| {
            tokens::has_symbol(config, to_chain, &from_token.symbol)
                .then_some(from_token.symbol.as_str())
        });
        let to_token = tokens::resolve(config, to_chain, to_raw).map_err(|e| ("toToken", e))?;
        if from_chain == to_chain && from_token == to_token {
            return Err(RequestError::SameChainSameToken);
        }
        let from_address = party(r.from_address.as_deref(), "fromAddress", from_chain)?;
        let to_address = party(r.to_address.as_deref(), "toAddress", to_chain)?;
        let recipient = to_address.or_else(|| {
            from_address
                .clone()
                .filter(|_| address::same_family(from_chain, to_chain))
        });
        Ok(RouteAsk {
            from_chain,
            to_chain,
            from_token,
            to_token,
            amount,
            from_address,
            recipient,
            slippage_bps: slippage_bps(r.slippage, config.quote.default_slippage_bps)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_config::{ChainConfig, TokenConfig};
    use serde_json::{json, Value};

    fn config() -> HostConfig {
        let mut c = HostConfig::default();
        for (id, addr) in [
            ("8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
            ("42161", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
        ] {
            let mut chain = ChainConfig::default();
            chain.tokens.insert(
                "USDC".into(),
                TokenConfig {
                    address: addr.into(),
                    decimals: 6,
                },
            );
            c.chains.insert(id.into(), chain);
        }
        c
    }

    fn parse(v: Value) -> Result<RouteAsk, RequestError> {
        let r: RouteRequest = relay_wire::decode(&v)?;
        RouteAsk::from_request(&r, &config())
    }

    #[test]
    fn a_full_request_parses_once_into_typed_values() {
        let a = parse(json!({
            "fromChain": 8453, "toChain": "42161", "amount": "5000000", "token": "usdc",
            "fromAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "slippage": 0.003
        }))
        .unwrap();
        assert_eq!(
            (a.from_chain, a.to_chain),
            (ChainRef::Evm(8453), ChainRef::Evm(42161))
        );
        assert_eq!(a.to_token.symbol, "USDC");
        assert_eq!(a.amount, Amount::from_u128(5_000_000));
        assert_eq!(a.slippage_bps, 30);
        assert_eq!(a.recipient, a.from_address);
        let lower = parse(json!({
            "fromChain": 8453, "toChain": 42161, "amount": "1", "fromToken": "USDC",
            "toAddress": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
        }))
        .unwrap();
        assert_eq!(
            lower.recipient, a.from_address,
            "EVM addresses are checksummed"
        );
    }

    #[test]
    fn every_bad_field_is_named_with_its_kind() {
        let base = json!({"fromChain": 8453, "toChain": 42161, "amount": "1", "fromToken": "USDC"});
        let cases: Vec<(&str, Value, &str)> = vec![
            ("fromChain", Value::Null, "Missing"),
            ("toChain", json!("dogechain"), "UnknownChain"),
            ("toChain", json!(10), "UnknownChain"),
            ("toChain", json!([1]), "UnknownChain"),
            ("amount", json!("1.5"), "InvalidAmount"),
            ("amount", json!("0"), "InvalidAmount"),
            ("amount", json!(5), "InvalidAmount"),
            ("amount", json!("1000000000000000000000"), "InvalidAmount"),
            ("fromToken", json!("DOGE"), "UnknownToken"),
            ("fromToken", json!("0x12"), "InvalidAddress"),
            ("toAddress", json!("0x12"), "InvalidAddress"),
            ("slippage", json!(2), "Invalid"),
            ("slippage", json!(true), "Invalid"),
        ];
        for (field, value, kind) in cases {
            let mut v = base.clone();
            v[field] = value.clone();
            let e = parse(v).unwrap_err();
            assert!(format!("{e:?}").starts_with(kind), "{field}={value}: {e:?}");
            assert_eq!(e.field(), Some(field), "{field}={value}");
        }
        assert!(matches!(parse(json!([1])), Err(RequestError::Malformed(_))));
        let same =
            json!({"fromChain": 8453, "toChain": "base", "amount": "1", "fromToken": "USDC"});
        assert_eq!(parse(same), Err(RequestError::SameChainSameToken));
    }
}
