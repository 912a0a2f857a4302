//! Parsing an execute request at the edge (spec §2.5, §2.7): the route part
//! is a RouteRequest ([`parse_route`], shared with quote and compare); the
//! execute part (mode, Permit2 signature, rail, price lock, dry run) is
//! parsed here. Every problem is a typed 4xx that names the field; nothing
//! moves on a request that failed validation.

use alloy::primitives::B256;
use relay_plugin_api::{Amount, ChainRef, ExecutionPlan, PlanAction, SourceMode, Token};
use serde_json::Value;

use super::{
    attest::{Presented, QuoteTerms},
    error::EngineError,
    route::{parse_route, RequestError, RouteAsk},
};
use relay_chain::{
    permit2::{self, Expected, SignedPermit},
    reader::ChainReader,
};
use relay_config::HostConfig;
use relay_types::{RelayIntent, RouterForm, TokenPermit};

/// A checked execute request.
#[derive(Clone, Debug)]
pub struct ExecuteAsk {
    /// The route part, as quote and compare read it.
    pub route: RouteAsk,
    /// Source node.
    pub from_chain: ChainRef,
    /// Destination node.
    pub to_chain: ChainRef,
    /// Source token.
    pub from_token: Token,
    /// Destination token.
    pub to_token: Token,
    /// Amount, smallest units.
    pub amount: Amount,
    /// Who funds the route.
    pub sender: String,
    /// Who receives.
    pub recipient: String,
    /// How funds reach the relayer.
    pub mode: SourceMode,
    /// The Permit2 signature (mode permit2).
    pub permit: Option<SignedPermit>,
    /// A rail the caller asks for.
    pub rail: Option<String>,
    /// Price lock: the least the recipient must receive.
    pub min_out: Option<Amount>,
    /// Price lock: a quote's signed terms and signature.
    pub attestation: Option<Presented>,
    /// `dryRun: true`: a dry run whatever the rail.
    pub dry_run: bool,
    /// `live`, when given. Spec §4.2: `live:false` is a dry run; omitting
    /// it means a dry run on the float lane and non-EVM legs, while an
    /// EVM-to-EVM bridge route broadcasts ([`ExecuteAsk::is_dry`]).
    pub live: Option<bool>,
    /// A router form (`permit2-witness`, `erc2612`, `intent`).
    pub router: Option<RouterAsk>,
}

/// What a router-form execute carries: the prepared intent it executes,
/// the terms exactly as signed, and the signatures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouterAsk {
    /// `intentId`: the prepared route.
    pub intent_id: String,
    /// `intent`: the signed terms.
    pub intent: RelayIntent,
    /// The signatures.
    pub form: RouterForm,
}

impl ExecuteAsk {
    /// Whether the relayer would fund this route from its own float, so
    /// only the operator may ask for it: `mode: self` (whatever `rail` it
    /// names), unless the route starts with the user's own deposit. With
    /// the rail's `plan` that is read from its first step; before there is
    /// one, a self-mode route from an EVM chain (where the relayer holds
    /// and sends the source leg) is taken to, and a non-EVM source (a
    /// deposit the user makes) is not.
    pub fn spends_operator_funds(&self, plan: Option<&ExecutionPlan>) -> bool {
        if self.mode != SourceMode::Operator {
            return false;
        }
        match plan {
            Some(p) => !matches!(p.steps.first(), Some(PlanAction::DepositInstruction { .. })),
            None => self.from_chain.evm_id().is_some(),
        }
    }

    /// Whether this execute is a dry run on a rail of `role`.
    pub fn is_dry(&self, role: relay_plugin_api::RailRole) -> bool {
        let non_evm = self.from_chain.evm_id().is_none() || self.to_chain.evm_id().is_none();
        let dry_by_default = non_evm || role == relay_plugin_api::RailRole::FloatLane;
        self.dry_run || self.live == Some(false) || (self.live.is_none() && dry_by_default)
    }
}

fn invalid(field: &'static str, why: impl std::fmt::Display) -> RequestError {
    RequestError::Invalid {
        field,
        why: why.to_string(),
    }
}

fn missing(field: &'static str) -> RequestError {
    RequestError::Missing { field }
}

fn amount(v: &Value, field: &'static str) -> Result<Option<Amount>, RequestError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s.parse().map(Some).map_err(|e| invalid(field, e)),
        Some(_) => Err(invalid(field, "must be a decimal string of smallest units")),
    }
}

fn string<'a>(v: &'a Value, field: &'static str) -> Result<Option<&'a str>, RequestError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

fn evm_address(s: &str, field: &'static str) -> Result<alloy::primitives::Address, RequestError> {
    s.parse().map_err(|_| RequestError::InvalidAddress {
        field,
        why: format!("{s:?} is not a 0x address"),
    })
}

/// The string at `path` inside `permit2`, named `field` in errors.
fn permit_str<'a>(
    p: &'a Value,
    path: &[&str],
    field: &'static str,
) -> Result<&'a str, RequestError> {
    let mut cur = p;
    for k in path {
        cur = cur.get(k).ok_or_else(|| missing(field))?;
    }
    cur.as_str()
        .ok_or_else(|| invalid(field, "must be a string"))
}

fn permit_num(
    p: &Value,
    path: &[&str],
    field: &'static str,
) -> Result<alloy::primitives::U256, RequestError> {
    permit_str(p, path, field)?
        .parse()
        .map_err(|_| invalid(field, "must be a decimal integer"))
}

fn permit(v: &Value) -> Result<SignedPermit, RequestError> {
    let p = v.get("permit2").ok_or_else(|| missing("permit2"))?;
    Ok(SignedPermit {
        owner: evm_address(permit_str(p, &["owner"], "permit2.owner")?, "permit2.owner")?,
        token: evm_address(
            permit_str(p, &["permitted", "token"], "permit2.permitted.token")?,
            "permit2.permitted.token",
        )?,
        amount: permit_num(p, &["permitted", "amount"], "permit2.permitted.amount")?,
        nonce: permit_num(p, &["nonce"], "permit2.nonce")?,
        deadline: permit_num(p, &["deadline"], "permit2.deadline")?,
        signature: permit_str(p, &["signature"], "permit2.signature")?
            .parse()
            .map_err(|_| invalid("permit2.signature", "must be 0x-hex"))?,
    })
}

/// The attestation of an earlier quote: `{terms, proof, signature}` as the
/// quote returned it (`proof` may be omitted for a quote signed alone).
fn attestation(v: &Value) -> Result<Option<Presented>, RequestError> {
    let Some(a) = v.get("attestation").filter(|a| !a.is_null()) else {
        return Ok(None);
    };
    let terms = a
        .get("terms")
        .ok_or_else(|| missing("attestation.terms"))
        .and_then(|t| {
            serde_json::from_value::<QuoteTerms>(t.clone())
                .map_err(|e| invalid("attestation.terms", e))
        })?;
    let sig = a
        .get("signature")
        .and_then(Value::as_str)
        .ok_or_else(|| missing("attestation.signature"))?;
    let proof = match a.get("proof").filter(|p| !p.is_null()) {
        None => Vec::new(),
        Some(p) => serde_json::from_value::<Vec<B256>>(p.clone()).map_err(|_| {
            invalid(
                "attestation.proof",
                "must be an array of 32-byte 0x-hex hashes",
            )
        })?,
    };
    Ok(Some(Presented {
        terms,
        proof,
        signature: sig.to_string(),
    }))
}

/// Parses an ExecuteRequest body.
pub fn parse_execute(v: &Value, config: &HostConfig) -> Result<ExecuteAsk, RequestError> {
    let route = parse_route(v, config)?;
    let mode_name = string(v, "mode")?.unwrap_or("self");
    let router = match mode_name {
        "self" | "permit2" => None,
        "permit2-witness" | "erc2612" | "intent" => Some(router_ask(v, mode_name)?),
        other => return Err(invalid("mode", format!("{other:?} is not one of {MODES}"))),
    };
    let mode = match mode_name {
        "self" => SourceMode::Operator,
        _ => SourceMode::Permit2,
    };
    let permit = (mode_name == "permit2").then(|| permit(v)).transpose()?;
    let sender = match (&permit, &router, &route.from_address) {
        (Some(p), _, _) => p.owner.to_string(),
        (None, Some(r), _) => r.form.owner().to_string(),
        (None, None, Some(a)) => a.clone(),
        (None, None, None) => config.relayer.clone().unwrap_or_default(),
    };
    let recipient = match &route.recipient {
        Some(r) => r.clone(),
        None if super::address::same_family(route.from_chain, route.to_chain) => sender.clone(),
        None => return Err(missing("toAddress")),
    };
    let flag = |k: &str| v.get(k).and_then(Value::as_bool);
    Ok(ExecuteAsk {
        from_chain: route.from_chain,
        to_chain: route.to_chain,
        from_token: route.from_token.clone(),
        to_token: route.to_token.clone(),
        amount: route.amount,
        sender,
        recipient,
        mode,
        permit,
        rail: string(v, "rail")?.map(str::to_string),
        min_out: amount(v, "minOut")?,
        attestation: attestation(v)?,
        dry_run: flag("dryRun") == Some(true),
        live: flag("live"),
        router,
        route,
    })
}

/// The execute modes.
pub const MODES: &str = "self, permit2, permit2-witness, erc2612, intent";

fn u256_at(
    p: &Value,
    path: &[&str],
    field: &'static str,
) -> Result<alloy::primitives::U256, RequestError> {
    permit_num(p, path, field)
}

fn bytes_at(
    p: &Value,
    path: &[&str],
    field: &'static str,
) -> Result<alloy::primitives::Bytes, RequestError> {
    permit_str(p, path, field)?
        .parse()
        .map_err(|_| invalid(field, "must be 0x-hex"))
}

/// The signed `intent` object.
fn signed_intent(v: &Value) -> Result<RelayIntent, RequestError> {
    let i = v.get("intent").ok_or_else(|| missing("intent"))?;
    let text = |k: &str, field| permit_str(i, &[k], field).map(str::to_string);
    Ok(RelayIntent {
        recipient: text("recipient", "intent.recipient")?,
        to_chain: text("toChain", "intent.toChain")?,
        to_token: text("toToken", "intent.toToken")?,
        min_out: u256_at(i, &["minOut"], "intent.minOut")?,
        rail: text("rail", "intent.rail")?,
        plan_hash: permit_str(i, &["planHash"], "intent.planHash")?
            .parse()
            .map_err(|_| invalid("intent.planHash", "must be 0x-hex of 32 bytes"))?,
        fee_cap: u256_at(i, &["feeCap"], "intent.feeCap")?,
        deadline: u256_at(i, &["deadline"], "intent.deadline")?,
    })
}

/// The optional (or, for `erc2612`, required) `erc2612` permit.
fn token_permit(v: &Value, required: bool) -> Result<Option<TokenPermit>, RequestError> {
    let Some(p) = v.get("erc2612").filter(|p| !p.is_null()) else {
        return if required {
            Err(missing("erc2612"))
        } else {
            Ok(None)
        };
    };
    Ok(Some(TokenPermit {
        value: u256_at(p, &["value"], "erc2612.value")?,
        deadline: u256_at(p, &["deadline"], "erc2612.deadline")?,
        signature: bytes_at(p, &["signature"], "erc2612.signature")?,
    }))
}

/// A router form's intent id, signed terms and signatures.
fn router_ask(v: &Value, mode: &str) -> Result<RouterAsk, RequestError> {
    let intent_id = string(v, "intentId")?
        .ok_or_else(|| missing("intentId"))?
        .to_string();
    let form = if mode == "permit2-witness" {
        RouterForm::Permit2Witness {
            permit: permit(v)?,
            token_permit: token_permit(v, false)?,
        }
    } else {
        let o = v.get("order").ok_or_else(|| missing("order"))?;
        RouterForm::Order {
            owner: evm_address(permit_str(o, &["owner"], "order.owner")?, "order.owner")?,
            token: evm_address(permit_str(o, &["token"], "order.token")?, "order.token")?,
            amount: u256_at(o, &["amount"], "order.amount")?,
            nonce: u256_at(o, &["nonce"], "order.nonce")?,
            signature: bytes_at(o, &["signature"], "order.signature")?,
            token_permit: token_permit(v, mode == "erc2612")?,
        }
    };
    Ok(RouterAsk {
        intent_id,
        intent: signed_intent(v)?,
        form,
    })
}
/// Verifies the request's Permit2 signature off-chain and its nonce on
/// chain (through the reader's failover provider), before anything is
/// broadcast. `spender` is the relayer the signature must name.
pub async fn verify_permit(
    reader: &ChainReader,
    config: &HostConfig,
    spender: alloy::primitives::Address,
    ask: &ExecuteAsk,
    now_secs: u64,
) -> Result<(), EngineError> {
    let Some(p) = &ask.permit else { return Ok(()) };
    let chain_id = ask
        .from_chain
        .evm_id()
        .ok_or_else(|| invalid("fromChain", "permit2 needs an EVM source chain"))?;
    let token = ask.from_token.address.as_deref().unwrap_or_default();
    let expected = Expected {
        chain_id,
        permit2: config
            .permit2
            .parse()
            .map_err(|_| EngineError::RelayerUnavailable("bad permit2 address in config".into()))?,
        spender,
        token: evm_address(token, "fromToken")?,
        amount: ask.amount.0,
        now_secs,
    };
    permit2::verify_offline(p, &expected)?;
    let unused = reader
        .permit2_nonce_unused(chain_id, expected.permit2, p.owner, p.nonce)
        .await
        .map_err(|e| EngineError::RelayerUnavailable(format!("cannot read Permit2 nonces: {e}")))?;
    if !unused {
        return Err(permit2::Permit2Error::NonceUsed(p.nonce).into());
    }
    Ok(())
}
