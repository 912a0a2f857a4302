//! A session's policy: checked once, at issue (every bad field a typed
//! refusal naming it), then applied to every route the session asks for.
//! The API decodes the issue body into `relay_wire::SessionIssueRequest`
//! (an unknown field, or a `policy` that is not an object, refused there
//! by path); [`IssueAsk::from_request`] checks it field by field, in the
//! order listed here.
//!
//! - `chains`: EVM chain ids this host serves **with a `RelayRouter`**
//!   (session routes are router routes); a route's `fromChain` and
//!   `toChain` must both be listed.
//! - `tokens`: symbols or addresses of tokens configured on at least one
//!   listed chain; a route's `fromToken` and `toToken` must both match an
//!   entry (by symbol or address). The caps count smallest units, so every
//!   listed token must have the same decimals (USDC with USDT, not with
//!   WBTC).
//! - `recipients`: EVM addresses; a route's `toAddress` must be one.
//! - `perTxCap`, `rolling24hCap`: positive decimal strings of smallest
//!   units of the source token, `perTxCap ≤ rolling24hCap`. A route's
//!   `amount` (what leaves the session's address, fees included) is at
//!   most `perTxCap`, and the amounts of the last 24 hours with it at most
//!   `rolling24hCap`.
//! - `expiresAt`: unix **seconds** (like a signature's deadline), in the
//!   future and at most `sessions.max_ttl_secs` ahead (30 days by default).

use std::collections::BTreeSet;

use alloy::primitives::{Address, U256};
use relay_config::HostConfig;
use relay_wire::{Loose, Scalar, SessionIssueRequest, SessionPolicyRequest, WireError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{CapExceeded, CapKind, SessionError};

/// The most entries a policy list may hold.
pub const MAX_LIST: usize = 64;
/// The longest label.
pub const MAX_LABEL: usize = 128;

/// A session's policy (module docs), as stored and answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    /// EVM chain ids routes may leave from and go to.
    pub chains: Vec<u64>,
    /// Tokens routes may move (symbols upper-cased, addresses checksummed).
    pub tokens: Vec<String>,
    /// Addresses routes may pay (checksummed).
    pub recipients: Vec<String>,
    /// The most one route may take, source smallest units.
    pub per_tx_cap: String,
    /// The most the routes of any 24 hours may take together.
    #[serde(rename = "rolling24hCap")]
    pub rolling_24h_cap: String,
    /// When the session expires, unix seconds.
    pub expires_at: u64,
}

/// What a route asks for, in the terms a policy speaks (the runner parses
/// the request: [`super::SessionRunner::parse`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteTerms {
    /// The source chain's id (`None`: not an EVM chain).
    pub from_chain: Option<u64>,
    /// The destination chain's id (`None`: not an EVM chain).
    pub to_chain: Option<u64>,
    /// The destination as the request named it.
    pub to_chain_name: String,
    /// The source token.
    pub from_token: TokenTerm,
    /// The destination token.
    pub to_token: TokenTerm,
    /// `toAddress`.
    pub recipient: String,
    /// Source smallest units.
    pub amount: U256,
}

/// A token as resolved on its chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenTerm {
    /// Its symbol.
    pub symbol: String,
    /// Its contract (none for a native asset).
    pub address: Option<String>,
}

/// A parsed `POST /api/session/issue` body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IssueAsk {
    /// The owner's label.
    pub label: Option<String>,
    /// The policy.
    pub policy: Policy,
    /// Where unspent funds go on revoke or expiry.
    pub refund_to: Address,
}

fn invalid(field: impl Into<String>, why: impl Into<String>) -> SessionError {
    SessionError::Field {
        field: field.into(),
        why: why.into(),
    }
}

fn missing(field: &str) -> SessionError {
    SessionError::Missing {
        field: field.into(),
    }
}

/// An issue body that does not decode (an unknown field, a policy that is
/// not an object) is refused naming the field by its path.
impl From<WireError> for SessionError {
    fn from(e: WireError) -> Self {
        match e {
            WireError::Malformed(why) => invalid("body", why),
            WireError::Missing { field } => SessionError::Missing { field },
            WireError::Invalid { field, why } => SessionError::Field { field, why },
        }
    }
}

/// An EVM address, checksummed.
fn address(v: &Loose<String>, field: &str) -> Result<Address, SessionError> {
    let s = v
        .typed()
        .map_err(|_| invalid(field, "must be a 0x-prefixed 20-byte address"))?;
    let hex = s.trim().strip_prefix("0x").unwrap_or("");
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid(
            field,
            format!("{:?} is not a 0x-prefixed 20-byte address", clip(s)),
        ));
    }
    s.trim()
        .parse()
        .map_err(|_| invalid(field, format!("{:?} is not an address", clip(s))))
}

fn clip(s: &str) -> String {
    s.chars().take(48).collect()
}

/// A positive integer of smallest units: a decimal string (or a JSON
/// integer).
fn units(v: Option<&Loose<Scalar>>, field: &str) -> Result<U256, SessionError> {
    let text = match v.map(Loose::typed) {
        None => return Err(missing(field)),
        Some(Ok(Scalar::Text(s))) => s.trim().to_string(),
        Some(Ok(Scalar::Number(n))) if n.is_u64() => n.to_string(),
        Some(_) => return Err(invalid(field, "must be a decimal string of smallest units")),
    };
    let digits = !text.is_empty() && text.len() <= 60 && text.bytes().all(|b| b.is_ascii_digit());
    let value = digits
        .then(|| U256::from_str_radix(&text, 10).ok())
        .flatten()
        .ok_or_else(|| {
            invalid(
                field,
                format!(
                    "{:?} is not a decimal integer of smallest units (\"5000000\" is 5 USDC)",
                    clip(&text)
                ),
            )
        })?;
    if value.is_zero() {
        return Err(invalid(field, "must be greater than 0"));
    }
    Ok(value)
}

/// A non-empty array of at most [`MAX_LIST`] entries.
fn list<'a, T>(v: Option<&'a Loose<Vec<T>>>, name: &str) -> Result<&'a [T], SessionError> {
    let field = format!("policy.{name}");
    match v.map(Loose::typed) {
        None => Err(missing(&field)),
        Some(Ok(a)) if a.is_empty() => Err(invalid(field, "must list at least one entry")),
        Some(Ok(a)) if a.len() > MAX_LIST => Err(invalid(
            field,
            format!("lists more than {MAX_LIST} entries"),
        )),
        Some(Ok(a)) => Ok(a),
        Some(Err(_)) => Err(invalid(field, "must be an array")),
    }
}

impl IssueAsk {
    /// Checks a decoded issue body (module docs); `now_ms` is the clock.
    pub fn from_request(
        r: &SessionIssueRequest,
        config: &HostConfig,
        now_ms: u64,
    ) -> Result<Self, SessionError> {
        let label = match r.label.as_ref().map(Loose::typed) {
            None => None,
            Some(Ok(s)) if s.chars().count() <= MAX_LABEL => Some(s.clone()),
            Some(_) => {
                return Err(invalid(
                    "label",
                    format!("must be a string of at most {MAX_LABEL} characters"),
                ))
            }
        };
        let refund_to = address(
            r.refund_to.as_ref().ok_or_else(|| missing("refundTo"))?,
            "refundTo",
        )?;
        let p = r.policy.as_ref().ok_or_else(|| missing("policy"))?;
        Ok(IssueAsk {
            label,
            policy: Policy::from_request(p, config, now_ms)?,
            refund_to,
        })
    }
}

impl Policy {
    /// Checks a decoded `policy` (module docs), in the order its fields
    /// are listed there; `now_ms` is the clock.
    pub fn from_request(
        p: &SessionPolicyRequest,
        config: &HostConfig,
        now_ms: u64,
    ) -> Result<Self, SessionError> {
        let chains = chains(p, config)?;
        let tokens = tokens(p, config, &chains)?;
        let mut recipients = Vec::new();
        for (i, v) in list(p.recipients.as_ref(), "recipients")?
            .iter()
            .enumerate()
        {
            let a = address(v, &format!("policy.recipients[{i}]"))?.to_checksum(None);
            if !recipients.contains(&a) {
                recipients.push(a);
            }
        }
        let per_tx = units(p.per_tx_cap.as_ref(), "policy.perTxCap")?;
        let rolling = units(p.rolling_24h_cap.as_ref(), "policy.rolling24hCap")?;
        if per_tx > rolling {
            return Err(invalid(
                "policy.perTxCap",
                format!("{per_tx} is above rolling24hCap {rolling}"),
            ));
        }
        let max_ttl = config.sessions.max_ttl_secs;
        let expires_at = expires_at(p.expires_at.as_ref(), now_ms / 1000, max_ttl)?;
        Ok(Policy {
            chains,
            tokens,
            recipients,
            per_tx_cap: per_tx.to_string(),
            rolling_24h_cap: rolling.to_string(),
            expires_at,
        })
    }
}

fn chains(p: &SessionPolicyRequest, config: &HostConfig) -> Result<Vec<u64>, SessionError> {
    let mut out = Vec::new();
    for (i, v) in list(p.chains.as_ref(), "chains")?.iter().enumerate() {
        let field = format!("policy.chains[{i}]");
        let id = v
            .typed()
            .ok()
            .and_then(Scalar::whole)
            .ok_or_else(|| invalid(&field, "must be an EVM chain id"))?;
        if !config.chain_ids().contains(&id) {
            return Err(invalid(
                field,
                format!("chain {id} is not an EVM chain this host serves (GET /api/route/chains)"),
            ));
        }
        if config.router(id).is_none() {
            return Err(invalid(
                field,
                format!("chain {id} has no RelayRouter configured; session routes go through it"),
            ));
        }
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

fn tokens(
    p: &SessionPolicyRequest,
    config: &HostConfig,
    chains: &[u64],
) -> Result<Vec<String>, SessionError> {
    let mut out = Vec::new();
    let mut decimals = BTreeSet::new();
    for (i, v) in list(p.tokens.as_ref(), "tokens")?.iter().enumerate() {
        let field = format!("policy.tokens[{i}]");
        let raw = v
            .typed()
            .ok()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid(&field, "must be a token symbol or address"))?;
        let is_address = raw.starts_with("0x") || raw.starts_with("0X");
        let entry = match is_address {
            true => address(v, &field)?.to_checksum(None),
            false => raw.to_ascii_uppercase(),
        };
        let found: Vec<u8> = configured(config, chains)
            .filter(|(sym, addr, _)| {
                sym.eq_ignore_ascii_case(&entry) || addr.eq_ignore_ascii_case(&entry)
            })
            .map(|(_, _, d)| d)
            .collect();
        if found.is_empty() {
            return Err(invalid(
                field,
                format!("{entry:?} is not a token configured on the policy's chains"),
            ));
        }
        decimals.extend(found);
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    if decimals.len() > 1 {
        return Err(invalid(
            "policy.tokens",
            format!("the tokens have different decimals ({decimals:?}): caps count smallest units, so a session's tokens must share decimals"),
        ));
    }
    Ok(out)
}

/// (symbol, address, decimals) of every token configured on `chains`.
fn configured<'a>(
    config: &'a HostConfig,
    chains: &'a [u64],
) -> impl Iterator<Item = (&'a str, &'a str, u8)> + 'a {
    chains
        .iter()
        .filter_map(|c| config.chains.get(&c.to_string()))
        .flat_map(|c| c.tokens.iter())
        .map(|(sym, t)| (sym.as_str(), t.address.as_str(), t.decimals))
}

fn expires_at(v: Option<&Loose<Scalar>>, now_secs: u64, max_ttl: u64) -> Result<u64, SessionError> {
    const FIELD: &str = "policy.expiresAt";
    let secs = v
        .ok_or_else(|| missing(FIELD))?
        .typed()
        .ok()
        .and_then(Scalar::whole)
        .ok_or_else(|| invalid(FIELD, "must be unix seconds (an integer)"))?;
    if secs >= 100_000_000_000 {
        return Err(invalid(
            FIELD,
            format!("{secs} looks like milliseconds; send unix seconds"),
        ));
    }
    if secs <= now_secs {
        return Err(invalid(
            FIELD,
            format!("{secs} is not in the future (now {now_secs})"),
        ));
    }
    if secs > now_secs + max_ttl {
        return Err(invalid(
            FIELD,
            format!("{secs} is more than sessions.max_ttl_secs ({max_ttl} s) ahead"),
        ));
    }
    Ok(secs)
}

impl Policy {
    /// The caps: (per transaction, rolling 24 h).
    pub fn caps(&self) -> (U256, U256) {
        let parse = |s: &str| U256::from_str_radix(s, 10).unwrap_or(U256::ZERO);
        (parse(&self.per_tx_cap), parse(&self.rolling_24h_cap))
    }

    fn allows_token(&self, t: &TokenTerm) -> bool {
        self.tokens.iter().any(|e| {
            e.eq_ignore_ascii_case(&t.symbol)
                || t.address
                    .as_deref()
                    .is_some_and(|a| a.eq_ignore_ascii_case(e))
        })
    }

    /// Whether the route is within the policy's allowlists and per-route
    /// cap (the rolling cap is the store's: it needs the window).
    pub fn check(&self, r: &RouteTerms) -> Result<(), SessionError> {
        let refuse = |field: &'static str, why: String| SessionError::Policy { field, why };
        let chain_ok = |c: Option<u64>| c.is_some_and(|c| self.chains.contains(&c));
        if !chain_ok(r.from_chain) {
            return Err(refuse(
                "fromChain",
                format!(
                    "the source chain is not one of the session's chains {:?}",
                    self.chains
                ),
            ));
        }
        if !chain_ok(r.to_chain) {
            return Err(refuse(
                "toChain",
                format!(
                    "{} is not one of the session's chains {:?}",
                    r.to_chain_name, self.chains
                ),
            ));
        }
        if !self.allows_token(&r.from_token) {
            return Err(refuse(
                "fromToken",
                format!(
                    "{} is not one of the session's tokens {:?}",
                    r.from_token.symbol, self.tokens
                ),
            ));
        }
        if !self.allows_token(&r.to_token) {
            return Err(refuse(
                "toToken",
                format!(
                    "{} is not one of the session's tokens {:?}",
                    r.to_token.symbol, self.tokens
                ),
            ));
        }
        if !self
            .recipients
            .iter()
            .any(|a| a.eq_ignore_ascii_case(&r.recipient))
        {
            return Err(refuse(
                "toAddress",
                format!("{} is not one of the session's recipients", r.recipient),
            ));
        }
        let (per_tx, rolling) = self.caps();
        if r.amount > per_tx {
            return Err(SessionError::Cap(Box::new(CapExceeded {
                kind: CapKind::PerTx,
                amount: r.amount,
                per_tx_cap: per_tx,
                rolling_24h_cap: rolling,
                spent: None,
                room_at_ms: None,
                retry_after_ms: None,
            })));
        }
        Ok(())
    }

    /// `(chain, token)` of every balance a sweep returns: each listed
    /// token configured on each listed chain.
    pub fn sweep_targets(&self, config: &HostConfig) -> Vec<(u64, Address)> {
        let mut out = Vec::new();
        for &c in &self.chains {
            for (sym, addr, _) in configured(config, std::slice::from_ref(&c)) {
                let listed = self
                    .tokens
                    .iter()
                    .any(|e| e.eq_ignore_ascii_case(sym) || e.eq_ignore_ascii_case(addr));
                if let (true, Ok(a)) = (listed, addr.parse::<Address>()) {
                    if !out.contains(&(c, a)) {
                        out.push((c, a));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_config::{ChainConfig, TokenConfig};
    use serde_json::{json, Value};

    /// An issue body as the API reads it: decoded, then checked.
    fn parse_issue(b: &Value, config: &HostConfig, now_ms: u64) -> Result<IssueAsk, SessionError> {
        IssueAsk::from_request(&relay_wire::decode(b)?, config, now_ms)
    }

    const USDC: &str = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

    fn config() -> HostConfig {
        let mut c = HostConfig::default();
        for (id, router) in [("8453", true), ("42161", true), ("10", false)] {
            let tokens = [
                ("USDC", USDC, 6),
                ("USDT", "0x0000000000000000000000000000000000000007", 6),
                ("WBTC", "0x0000000000000000000000000000000000000008", 8),
            ]
            .into_iter()
            .map(|(s, a, d)| {
                (
                    s.to_string(),
                    TokenConfig {
                        address: a.into(),
                        decimals: d,
                    },
                )
            })
            .collect();
            c.chains.insert(
                id.into(),
                ChainConfig {
                    rpc: vec!["http://127.0.0.1:1".into()],
                    tokens,
                    router: router.then(|| "0x0000000000000000000000000000000000000009".into()),
                    ..Default::default()
                },
            );
        }
        c
    }

    const NOW_MS: u64 = 1_700_000_000_000;

    fn body() -> Value {
        json!({
            "label": "agent",
            "refundTo": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
            "policy": {
                "chains": [8453, 42161], "tokens": ["usdc", USDC.to_lowercase()],
                "recipients": ["0x70997970c51812dc3a010c7d01b50e0d17dc79c8"],
                "perTxCap": "2000000", "rolling24hCap": "5000000", "expiresAt": NOW_MS / 1000 + 3600,
            },
        })
    }

    fn refused(edit: impl FnOnce(&mut Value)) -> (String, String) {
        let mut b = body();
        edit(&mut b);
        match parse_issue(&b, &config(), NOW_MS).unwrap_err() {
            SessionError::Field { field, why } => (field, why),
            SessionError::Missing { field } => (field, "missing".into()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_good_policy_is_normalised() {
        let ask = parse_issue(&body(), &config(), NOW_MS).unwrap();
        assert_eq!(
            ask.policy.tokens,
            vec!["USDC".to_string(), USDC.to_string()]
        );
        assert_eq!(
            ask.policy.recipients,
            vec!["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"]
        );
        assert_eq!(
            ask.policy.caps(),
            (U256::from(2_000_000u64), U256::from(5_000_000u64))
        );
        let json = serde_json::to_value(&ask.policy).unwrap();
        assert_eq!(json["rolling24hCap"], "5000000");
        assert_eq!(json["perTxCap"], "2000000");
    }

    #[test]
    fn every_bad_field_is_named() {
        // (the field named, where in the body, the value put there; Null removes it)
        let cases = [
            ("refundTo", "/refundTo", json!("0x123")),
            ("refundTo", "/refundTo", Value::Null),
            ("policy", "/policy", json!([])),
            ("policy.chains", "/policy/chains", json!([])),
            ("policy.chains[1]", "/policy/chains", json!([8453, 999])),
            ("policy.chains[0]", "/policy/chains", json!([10])),
            ("policy.tokens[0]", "/policy/tokens", json!(["DOGE"])),
            ("policy.tokens", "/policy/tokens", json!(["USDC", "WBTC"])),
            ("policy.recipients[0]", "/policy/recipients", json!(["bob"])),
            ("policy.perTxCap", "/policy/perTxCap", json!("0")),
            ("policy.perTxCap", "/policy/perTxCap", json!("1.5")),
            ("policy.perTxCap", "/policy/perTxCap", json!("6000000")),
            ("policy.rolling24hCap", "/policy/rolling24hCap", json!(-5)),
            (
                "policy.expiresAt",
                "/policy/expiresAt",
                json!(NOW_MS / 1000 - 1),
            ),
            (
                "policy.expiresAt",
                "/policy/expiresAt",
                json!(NOW_MS + 3_600_000),
            ),
            (
                "policy.expiresAt",
                "/policy/expiresAt",
                json!(NOW_MS / 1000 + 31 * 86_400),
            ),
            ("policy.caps", "/policy/caps", json!(1)),
            ("label", "/label", json!(7)),
        ];
        for (want, at, value) in cases {
            let (field, why) = refused(|b| {
                let (parent, key) = at.rsplit_once('/').unwrap();
                let obj = b.pointer_mut(parent).unwrap().as_object_mut().unwrap();
                match value {
                    Value::Null => obj.remove(key),
                    v => obj.insert(key.to_string(), v),
                };
            });
            assert_eq!(field, want, "{why}");
        }
    }

    fn route() -> RouteTerms {
        RouteTerms {
            from_chain: Some(8453),
            to_chain: Some(42161),
            to_chain_name: "42161".into(),
            from_token: TokenTerm {
                symbol: "USDC".into(),
                address: Some(USDC.into()),
            },
            to_token: TokenTerm {
                symbol: "USDC".into(),
                address: Some(USDC.into()),
            },
            recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into(),
            amount: U256::from(2_000_000u64),
        }
    }

    #[test]
    fn routes_outside_the_policy_are_refused_naming_the_field() {
        let p = parse_issue(&body(), &config(), NOW_MS).unwrap().policy;
        assert!(p.check(&route()).is_ok());
        let field = |edit: &dyn Fn(&mut RouteTerms)| {
            let mut r = route();
            edit(&mut r);
            match p.check(&r).unwrap_err() {
                SessionError::Policy { field, .. } => field.to_string(),
                SessionError::Cap(c) => format!("cap:{:?}", c.kind),
                e => panic!("{e:?}"),
            }
        };
        assert_eq!(field(&|r| r.from_chain = Some(10)), "fromChain");
        assert_eq!(field(&|r| r.to_chain = None), "toChain");
        assert_eq!(
            field(&|r| r.from_token = TokenTerm {
                symbol: "USDT".into(),
                address: Some("0x0000000000000000000000000000000000000007".into())
            }),
            "fromToken"
        );
        assert_eq!(
            field(&|r| r.to_token = TokenTerm {
                symbol: "ETH".into(),
                address: None
            }),
            "toToken"
        );
        assert_eq!(
            field(&|r| r.recipient = "0x0000000000000000000000000000000000000001".into()),
            "toAddress"
        );
        assert_eq!(field(&|r| r.amount = U256::from(2_000_001u64)), "cap:PerTx");
    }

    #[test]
    fn a_sweep_returns_each_listed_token_on_each_listed_chain() {
        let p = parse_issue(&body(), &config(), NOW_MS).unwrap().policy;
        let usdc: Address = USDC.parse().unwrap();
        assert_eq!(
            p.sweep_targets(&config()),
            vec![(8453, usdc), (42161, usdc)]
        );
    }
}
