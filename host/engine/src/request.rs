//! Checking an execute request at the edge (spec §2.5, §2.7): the body is
//! decoded by `relay_wire` ([`ExecuteRequest::decode`]); its route part is
//! a RouteRequest ([`RouteAsk::from_request`], shared with quote and
//! compare); the execute part (mode, Permit2 signature, rail, price lock,
//! dry run) is checked here ([`ExecuteAsk::from_request`]). Every problem
//! is a typed 4xx that names the field; nothing moves on a request that
//! failed validation.

use alloy::primitives::B256;
use relay_plugin_api::{Amount, ChainRef, ExecutionPlan, PlanAction, SourceMode, Token};
use relay_wire::{
    AttestationBody, Erc2612Body, ExecuteFields, ExecuteRequest, IntentBody, OrderBody, Permit2Body,
};
use serde::Deserialize;

use super::{
    attest::{Presented, QuoteTerms},
    error::EngineError,
    route::{RequestError, RouteAsk},
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
        field: field.into(),
        why: why.to_string(),
    }
}

fn missing(field: &'static str) -> RequestError {
    RequestError::Missing {
        field: field.into(),
    }
}

/// A field the DTO lets be null (a body handed back to fill) but an
/// execute needs.
fn required<'a>(v: &'a Option<String>, field: &'static str) -> Result<&'a str, RequestError> {
    v.as_deref().ok_or_else(|| missing(field))
}

fn evm_address(s: &str, field: &'static str) -> Result<alloy::primitives::Address, RequestError> {
    s.parse().map_err(|_| RequestError::InvalidAddress {
        field: field.into(),
        why: format!("{s:?} is not a 0x address"),
    })
}

fn u256(s: &str, field: &'static str) -> Result<alloy::primitives::U256, RequestError> {
    s.parse()
        .map_err(|_| invalid(field, "must be a decimal integer"))
}

fn bytes(s: &str, field: &'static str) -> Result<alloy::primitives::Bytes, RequestError> {
    s.parse().map_err(|_| invalid(field, "must be 0x-hex"))
}

fn permit(p: Option<&Permit2Body>) -> Result<SignedPermit, RequestError> {
    let p = p.ok_or_else(|| missing("permit2"))?;
    Ok(SignedPermit {
        owner: evm_address(&p.owner, "permit2.owner")?,
        token: evm_address(&p.permitted.token, "permit2.permitted.token")?,
        amount: p.permitted.amount.0,
        nonce: u256(required(&p.nonce, "permit2.nonce")?, "permit2.nonce")?,
        deadline: u256(
            required(&p.deadline, "permit2.deadline")?,
            "permit2.deadline",
        )?,
        signature: required(&p.signature, "permit2.signature")?
            .parse()
            .map_err(|_| invalid("permit2.signature", "must be 0x-hex"))?,
    })
}

/// The attestation of an earlier quote: `{terms, proof, signature}` as the
/// quote returned it (`proof` may be omitted for a quote signed alone).
fn attestation(a: Option<&AttestationBody>) -> Result<Option<Presented>, RequestError> {
    let Some(a) = a else { return Ok(None) };
    let terms = QuoteTerms::deserialize(&a.terms).map_err(|e| invalid("attestation.terms", e))?;
    let proof = a
        .proof
        .iter()
        .flatten()
        .map(|h| h.parse::<B256>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| {
            invalid(
                "attestation.proof",
                "must be an array of 32-byte 0x-hex hashes",
            )
        })?;
    Ok(Some(Presented {
        terms,
        proof,
        signature: a.signature.clone(),
    }))
}

impl ExecuteAsk {
    /// Checks a decoded ExecuteRequest: its route part as quote reads it
    /// ([`RouteAsk::from_request`]), then the mode and its signatures.
    pub fn from_request(r: &ExecuteRequest, config: &HostConfig) -> Result<Self, RequestError> {
        let route = RouteAsk::from_request(&r.route, config)?;
        let x = &r.execute;
        let mode_name = x.mode.as_deref().unwrap_or("self");
        let router = match mode_name {
            "self" | "permit2" => None,
            "permit2-witness" | "erc2612" | "intent" => Some(router_ask(x, mode_name)?),
            other => return Err(invalid("mode", format!("{other:?} is not one of {MODES}"))),
        };
        let mode = match mode_name {
            "self" => SourceMode::Operator,
            _ => SourceMode::Permit2,
        };
        let permit = (mode_name == "permit2")
            .then(|| permit(x.permit2.as_ref()))
            .transpose()?;
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
        let min_out = x.min_out.as_deref().map(str::parse::<Amount>);
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
            rail: x.rail.clone(),
            min_out: min_out.transpose().map_err(|e| invalid("minOut", e))?,
            attestation: attestation(x.attestation.as_ref())?,
            dry_run: x.dry_run == Some(true),
            live: x.live,
            router,
            route,
        })
    }
}

/// The execute modes.
pub const MODES: &str = "self, permit2, permit2-witness, erc2612, intent";

/// The signed `intent` object.
fn signed_intent(i: Option<&IntentBody>) -> Result<RelayIntent, RequestError> {
    let i = i.ok_or_else(|| missing("intent"))?;
    Ok(RelayIntent {
        recipient: i.recipient.clone(),
        to_chain: i.to_chain.clone(),
        to_token: i.to_token.clone(),
        min_out: u256(&i.min_out, "intent.minOut")?,
        rail: i.rail.clone(),
        plan_hash: i
            .plan_hash
            .parse()
            .map_err(|_| invalid("intent.planHash", "must be 0x-hex of 32 bytes"))?,
        fee_cap: u256(&i.fee_cap, "intent.feeCap")?,
        deadline: u256(&i.deadline, "intent.deadline")?,
    })
}

/// The optional (or, for `erc2612`, required) `erc2612` permit.
fn token_permit(
    p: Option<&Erc2612Body>,
    required_here: bool,
) -> Result<Option<TokenPermit>, RequestError> {
    let Some(p) = p else {
        return match required_here {
            true => Err(missing("erc2612")),
            false => Ok(None),
        };
    };
    Ok(Some(TokenPermit {
        value: u256(&p.value, "erc2612.value")?,
        deadline: u256(&p.deadline, "erc2612.deadline")?,
        signature: bytes(
            required(&p.signature, "erc2612.signature")?,
            "erc2612.signature",
        )?,
    }))
}

/// A `RelayOrder` signature (modes `intent`, `erc2612`).
fn order(x: &ExecuteFields, mode: &str) -> Result<RouterForm, RequestError> {
    let o: &OrderBody = x.order.as_ref().ok_or_else(|| missing("order"))?;
    Ok(RouterForm::Order {
        owner: evm_address(&o.owner, "order.owner")?,
        token: evm_address(&o.token, "order.token")?,
        amount: u256(&o.amount, "order.amount")?,
        nonce: u256(&o.nonce, "order.nonce")?,
        signature: bytes(
            required(&o.signature, "order.signature")?,
            "order.signature",
        )?,
        token_permit: token_permit(x.erc2612.as_ref(), mode == "erc2612")?,
    })
}

/// A router form's intent id, signed terms and signatures.
fn router_ask(x: &ExecuteFields, mode: &str) -> Result<RouterAsk, RequestError> {
    let intent_id = x.intent_id.clone().ok_or_else(|| missing("intentId"))?;
    let form = match mode {
        "permit2-witness" => RouterForm::Permit2Witness {
            permit: permit(x.permit2.as_ref())?,
            token_permit: token_permit(x.erc2612.as_ref(), false)?,
        },
        _ => order(x, mode)?,
    };
    Ok(RouterAsk {
        intent_id,
        intent: signed_intent(x.intent.as_ref())?,
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
