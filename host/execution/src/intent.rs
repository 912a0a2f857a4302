//! Preparing a router intent (`POST /api/route/intent`): quote, pick the
//! rail that prepares (as execute would), fold its source leg into one
//! router call ([`super::compose`]), fix the terms the user will sign — a
//! [`RelayIntent`] whose `planHash` commits to that exact call — keep the
//! prepared route until its deadline, and hand back, for each signature
//! form, the EIP-712 typed data to sign and the execute body to POST.
//!
//! The forms ([`IntentAnswer::forms`]):
//! - `permit2-witness`: one Permit2 `PermitWitnessTransferFrom` (spender =
//!   the router, witness = the intent). When the owner has not approved
//!   Permit2 for the amount, an EIP-2612 `Permit` for Permit2 comes first
//!   (both are signatures: a wallet with no native gas completes its first
//!   route);
//! - `erc2612`: an EIP-2612 `Permit` for the router, then the router's own
//!   `RelayOrder` (domain `{RelayRouter, 3.1, chainId, router}`);
//! - `intent`: the `RelayOrder` alone, for an owner who already approved
//!   the router.
//!
//! Nothing is signed or sent here; only the prepared route is stored.
//!
//! **Caps** (issue 40: a stranger prepared 300 intents naming a victim and
//! held its nonces 1…300). Each open intent holds its owner's Permit2 and
//! router nonces reserved until its deadline, and a stored route. So:
//! - per owner, at most `limits.intent_nonces_per_owner` (64) low nonces
//!   are held per bitmap; past it an intent is handed a random 64-bit
//!   nonce (a fresh bitmap word: ~17k gas more for that route) — nobody
//!   can push an owner's low nonces more than the cap up, nor lock the
//!   owner out, and two intents of this host — of any of its replicas:
//!   each nonce is held in the store too — never share a nonce (the later
//!   route's router call would revert on chain, at the relayer's
//!   expense);
//! - per requester (the caller's IP, as the rate limiter counts it), at
//!   most `limits.intents_per_ip` (16) open intents
//!   ([`ExecuteService::admit_intent`]; off with `limits.enabled = false`):
//!   past it the API answers 429 `RATE_LIMITED` naming the cap, with
//!   `retryAfterMs` until the oldest lapses (a quote with `fromAddress`
//!   serves no intent then, and says why in `intentNote`).

use alloy::primitives::{Address, U256};
use relay_chain::{
    router::{self, CheckContext},
    typed::{self, Domain},
};
use relay_engine::{execute::choose, request::ExecuteAsk, submit::token_ref};
use relay_plugin_api::SourceMode;
use relay_types::{RelayIntent, RouteRecord, RouterAuth, SignedPermit};
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::{
    collections::{BTreeMap, HashMap},
    sync::{Mutex, MutexGuard},
};
use utoipa::ToSchema;

use super::{
    compose::compose,
    execute::{ExecuteError, ExecuteService, QuoteSource},
    steps::StepPolicy,
};

/// One signature form of a prepared intent.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignForm {
    /// The execute `mode`.
    pub mode: String,
    /// Whether the owner can use it now (false: `why`).
    pub usable: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// EIP-712 typed data to sign, in order (`eth_signTypedData_v4` JSON).
    #[schema(value_type = Vec<Object>)]
    pub sign: Vec<Value>,
    /// The body field each signature goes into, in the same order.
    pub fill: Vec<String>,
    /// Where to POST the body.
    pub submit_to: String,
    /// The execute body, signatures null.
    #[schema(value_type = Object)]
    pub submit_body: Value,
}

/// The signature forms of a prepared intent.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Forms {
    /// Permit2 witness transfer (+ EIP-2612 for Permit2 when needed).
    pub permit2_witness: SignForm,
    /// EIP-2612 for the router + `RelayOrder`.
    pub erc2612: SignForm,
    /// `RelayOrder` alone (the router is approved already).
    pub intent: SignForm,
}

/// `POST /api/route/intent`: a prepared router intent.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntentAnswer {
    /// The prepared route; the execute body's `intentId` and, once
    /// executed, the route id.
    pub intent_id: String,
    /// The source chain.
    pub chain_id: u64,
    /// The `RelayRouter` there.
    pub router: String,
    /// Whose tokens move.
    pub owner: String,
    /// The source token.
    pub token: String,
    /// Amount pulled, source smallest units.
    pub amount: String,
    /// The rail that carries it.
    pub rail: String,
    /// Its lane.
    pub lane: String,
    /// Estimated delivery, destination smallest units.
    pub estimated: String,
    /// Withheld by the router (route fee + gas), to `feeRecipient`.
    pub fee: String,
    /// Where the fee goes.
    pub fee_recipient: String,
    /// The terms every form signs.
    #[schema(value_type = Object)]
    pub intent: Value,
    /// The composed deposit call `intent.planHash` commits to.
    #[schema(value_type = Object)]
    pub deposit: Value,
    /// The witness type string Permit2 is given.
    pub witness_type_string: String,
    /// Until when it can be executed, unix seconds.
    pub expires_at: u64,
    /// The owner's allowances now: `{permit2, router}`.
    #[schema(value_type = Object)]
    pub allowances: Value,
    /// The signature forms.
    pub forms: Forms,
    /// How to use it.
    pub note: String,
}

const SUBMIT_TO: &str = "/api/route/execute";

fn unavailable(why: impl Into<String>) -> ExecuteError {
    ExecuteError::RouterUnavailable(why.into())
}

/// What the prepared intent's forms are built from.
struct Prepared {
    record: RouteRecord,
    auth: RouterAuth,
    chain_id: u64,
    owner: Address,
    token: Address,
    /// For the Permit2 witness.
    permit2_nonce: U256,
    /// For the router's `RelayOrder`.
    router_nonce: U256,
}

impl ExecuteService {
    /// Prepares a router intent (module docs).
    #[tracing::instrument(skip_all)]
    pub async fn prepare_intent(
        &self,
        quotes: &impl QuoteSource,
        ask: ExecuteAsk,
    ) -> Result<IntentAnswer, ExecuteError> {
        self.router_parties(&ask)?;
        let outcome = quotes.quote(&ask.route).await?;
        self.prepare_from(&outcome, ask).await
    }

    /// Prepares a router intent from a quote already made (the quote
    /// endpoint serves one beside its price; module docs).
    pub async fn prepare_from(
        &self,
        outcome: &relay_engine::quote::QuoteOutcome,
        mut ask: ExecuteAsk,
    ) -> Result<IntentAnswer, ExecuteError> {
        ask.mode = SourceMode::Permit2;
        let (chain_id, router, token, owner, relayer) = self.router_parties(&ask)?;
        if outcome.best().is_none() {
            return Err(ExecuteError::NoRoute(outcome.no_route()));
        }
        let id = self.route_id(false);
        let accepted = choose(
            self.d.rails.as_ref(),
            outcome,
            &ask,
            &id,
            &relayer.to_string(),
            self.d.clock.as_ref(),
        )
        .await
        .map_err(ExecuteError::Declined)?;
        let mut record = self.record(&ask, id, &accepted);
        let snap = self.d.rails.snapshot();
        let policy = StepPolicy::of_rail(
            &snap,
            &self.d.config,
            &record.rail,
            (relayer, self.permit2()?),
        );
        let composed = compose(&record.plan, &policy)
            .map_err(|e| unavailable(format!("rail {}: {e}", record.rail)))?;
        let fee = record.relay_fee.0.saturating_add(record.gas_fee.0);
        let deadline = self.d.clock.now_secs() + self.d.config.execution.intent_ttl_secs;
        let intent = RelayIntent {
            recipient: record.recipient.clone(),
            to_chain: record.to_chain.to_string(),
            to_token: token_ref(&ask.to_token),
            min_out: record.min_out.0,
            rail: record.rail.clone(),
            plan_hash: router::plan_hash(&composed.deposit),
            fee_cap: fee,
            deadline: U256::from(deadline),
        };
        let auth = RouterAuth {
            router,
            intent,
            deposit: composed.deposit,
            fee,
            fee_recipient: relayer,
            form: None,
        };
        record.router = Some(auth.clone());
        self.d
            .store
            .put_intent(&record, deadline * 1000)
            .await
            .map_err(|e| ExecuteError::Store(e.to_string()))?;
        let permit2 = self.permit2()?;
        let (permit2_nonce, router_nonce) = tokio::join!(
            self.fresh_nonce(chain_id, permit2, owner, &record.id),
            self.fresh_nonce(chain_id, router, owner, &record.id),
        );
        let p = Prepared {
            permit2_nonce,
            router_nonce,
            record,
            auth,
            chain_id,
            owner,
            token,
        };
        self.answer(p).await
    }

    /// The source chain, its router, the token, the owner and the relayer
    /// of a router route, or why there is none.
    fn router_parties(
        &self,
        ask: &ExecuteAsk,
    ) -> Result<(u64, Address, Address, Address, Address), ExecuteError> {
        let chain_id = ask
            .from_chain
            .evm_id()
            .ok_or_else(|| unavailable("the router runs on EVM source chains only"))?;
        let router: Address = self
            .d
            .config
            .router(chain_id)
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| {
                unavailable(format!(
                    "no RelayRouter is configured on chain {chain_id}: use mode permit2"
                ))
            })?;
        let token: Address = ask
            .from_token
            .address
            .as_deref()
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| {
                unavailable("the router pulls ERC-20 tokens only (fromToken is native)")
            })?;
        let owner: Address = ask
            .route
            .from_address
            .as_deref()
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| {
                ExecuteError::Request(
                    relay_engine::route::RequestError::Missing {
                        field: "fromAddress".into(),
                    }
                    .into(),
                )
            })?;
        let relayer = self
            .d
            .relayer
            .as_ref()
            .map(|r| r.address())
            .ok_or_else(|| {
                ExecuteError::RelayerUnavailable(
                    "this host has no relayer key (RELAY_RELAYER_KEY)".into(),
                )
            })?;
        Ok((chain_id, router, token, owner, relayer))
    }

    /// The owner's lowest nonce on `contract` (Permit2's bitmap or the
    /// router's) that is unused on chain and not handed to another intent
    /// of this host still open, so consecutive routes share a bitmap word
    /// (a warm write, not a fresh slot, ~17k gas less). The search starts
    /// at the lowest word this host has not seen full (bits never clear)
    /// and reads at most [`NONCE_WORDS_READ`] words; a random 64-bit nonce
    /// when those are taken or unreadable. Each nonce handed out is also
    /// held in the store ([`ExecuteService::hold_shared`]), so replicas
    /// never hand out one nonce twice either.
    async fn fresh_nonce(&self, chain: u64, contract: Address, owner: Address, id: &str) -> U256 {
        let until = self.d.clock.now_ms() + self.d.config.execution.intent_ttl_secs * 1000;
        let cap = self.d.config.limits.intent_nonces_per_owner;
        let key = (chain, contract, owner);
        let first = self.reserved.first_open_word(key);
        // past the cap no word is read: a random nonce below, never a held one
        let under_cap = self.reserved.held(key, self.d.clock.now_ms()) < cap;
        let words = if under_cap { NONCE_WORDS_READ } else { 0 };
        'words: for word in first..first.saturating_add(words) {
            let Ok(bitmap) = self
                .d
                .reader
                .nonce_bitmap(chain, contract, owner, U256::from(word))
                .await
            else {
                break;
            };
            while let Some(n) =
                self.reserved
                    .take(key, word, bitmap, (self.d.clock.now_ms(), until))
            {
                match self.hold_shared(key, n, id, until).await {
                    Some(true) => return n,
                    // another replica's open intent holds it: the next bit
                    Some(false) => continue,
                    None => break 'words,
                }
            }
        }
        let mut h = Sha256::new();
        h.update(id.as_bytes());
        h.update(self.d.clock.now_ms().to_be_bytes());
        let d = h.finalize();
        U256::from(u64::from_be_bytes(d[..8].try_into().expect("8 bytes")))
    }

    /// Holds nonce `n` of `key` for intent `id` in the store until `until`
    /// (a place of kind `intent-nonce`, one per nonce), so that no other
    /// replica's intent is handed it: two would each pass their checks
    /// while neither is mined, and the later transaction would revert on
    /// chain at the relayer's expense. `Some(false)` when another intent
    /// holds it; `None` when the store does not answer (the caller falls
    /// back to a random nonce).
    async fn hold_shared(&self, key: NonceOwner, n: U256, id: &str, until: u64) -> Option<bool> {
        let (chain, contract, owner) = key;
        let nonce = format!("{chain}:{contract:#x}:{owner:#x}:{n}");
        let place = format!("{id}:{contract:#x}");
        let now = self.d.clock.now_ms();
        match self
            .d
            .store
            .take_place(("intent-nonce", &nonce, &place), (now, until), 1)
            .await
        {
            Ok(held) => Some(held.is_ok()),
            Err(e) => {
                tracing::warn!(error = %e, "an intent's nonce could not be held in the store; a random one instead");
                None
            }
        }
    }

    /// Whether `requester` (the caller's IP, as the rate limiter counts
    /// it) may open one more intent now: under `limits.intents_per_ip`
    /// open (not lapsed) intents, or the cap it reached. With `[limits]
    /// backend = "store"` the place is taken in the store at once (every
    /// replica counts the requester's intents together) and given back by
    /// [`ExecuteService::intent_settled`] when no intent is made; a store
    /// that cannot be reached admits (and says so in the log). Always
    /// admitted when `limits.enabled` is false.
    pub async fn admit_intent(&self, requester: &str) -> Result<IntentPlace, IntentCapReached> {
        let limits = &self.d.config.limits;
        if !limits.enabled {
            return Ok(IntentPlace(None));
        }
        let cap = limits.intents_per_ip;
        let now = self.d.clock.now_ms();
        if limits.backend == relay_config::LimitsBackend::Store {
            let id = format!("place_{}", self.route_id(false));
            let until = now + self.d.config.execution.intent_ttl_secs * 1000;
            let who = ("intent", requester, id.as_str());
            return match self.d.store.take_place(who, (now, until), cap).await {
                Ok(Ok(())) => Ok(IntentPlace(Some(id))),
                Ok(Err(full)) => Err(IntentCapReached {
                    cap,
                    retry_after_ms: full.frees_at.saturating_sub(now).max(1),
                }),
                Err(e) => {
                    tracing::warn!(error = %e, "the intents cap could not be counted in the store; admitted");
                    Ok(IntentPlace(None))
                }
            };
        }
        let mut open = self.reserved.requesters();
        open.retain(|_, lapses| {
            lapses.retain(|l| *l > now);
            !lapses.is_empty()
        });
        let Some(lapses) = open.get(requester).filter(|l| l.len() >= cap) else {
            return Ok(IntentPlace(None));
        };
        let oldest = lapses.iter().min().copied().unwrap_or(now);
        Err(IntentCapReached {
            cap,
            retry_after_ms: oldest.saturating_sub(now).max(1),
        })
    }

    /// After [`ExecuteService::admit_intent`]: counts the intent
    /// `requester` opened until its deadline (`opened`), or gives its
    /// place back (none was made).
    pub async fn intent_settled(&self, requester: &str, place: IntentPlace, opened: bool) {
        if let Some(id) = place.0 {
            if !opened {
                if let Err(e) = self.d.store.drop_place(&id).await {
                    tracing::warn!(error = %e, "an intent's place was not given back; it lapses with the intent's deadline");
                }
            }
            return;
        }
        if !opened || !self.d.config.limits.enabled {
            return;
        }
        let until = self.d.clock.now_ms() + self.d.config.execution.intent_ttl_secs * 1000;
        self.reserved
            .requesters()
            .entry(requester.to_string())
            .or_default()
            .push(until);
    }

    async fn answer(&self, p: Prepared) -> Result<IntentAnswer, ExecuteError> {
        let permit2 = self.permit2()?;
        let cx = CheckContext {
            reader: &self.d.reader,
            chain_id: p.chain_id,
            permit2,
            now_secs: self.d.clock.now_secs(),
        };
        let amount = p.record.amount.0;
        let (to_permit2, to_router, eip2612) = tokio::join!(
            self.d
                .reader
                .allowance(p.chain_id, p.token, p.owner, permit2),
            self.d
                .reader
                .allowance(p.chain_id, p.token, p.owner, p.auth.router),
            router::token_eip712(cx, p.token, p.owner),
        );
        let to_permit2 = to_permit2.unwrap_or_default();
        let to_router = to_router.unwrap_or_default();
        let eip2612 = eip2612.map_err(|e| e.to_string());
        let forms = Forms {
            permit2_witness: witness_form(&p, permit2, to_permit2 >= amount, &eip2612),
            erc2612: order_form(&p, Some(&eip2612)),
            intent: {
                let mut f = order_form(&p, None);
                if to_router < amount {
                    f.usable = false;
                    f.why = Some(format!("the owner allows the router {to_router}, less than {amount}: use erc2612 or permit2-witness"));
                }
                f
            },
        };
        let r = &p.record;
        Ok(IntentAnswer {
            intent_id: r.id.clone(),
            chain_id: p.chain_id,
            router: p.auth.router.to_checksum(None),
            owner: p.owner.to_checksum(None),
            token: p.token.to_checksum(None),
            amount: amount.to_string(),
            rail: r.rail.clone(),
            lane: r.lane.clone(),
            estimated: r.estimated.to_string(),
            fee: p.auth.fee.to_string(),
            fee_recipient: p.auth.fee_recipient.to_checksum(None),
            intent: intent_body(&p.auth.intent),
            deposit: json!({
                "target": p.auth.deposit.target.to_checksum(None),
                "spender": p.auth.deposit.spender.to_checksum(None),
                "value": p.auth.deposit.value.to_string(),
                "data": p.auth.deposit.data.to_string(),
            }),
            witness_type_string: router::WITNESS_TYPE_STRING.into(),
            expires_at: p.auth.intent.deadline.saturating_to(),
            allowances: json!({"permit2": to_permit2.to_string(), "router": to_router.to_string()}),
            forms,
            note: "pick a usable form; sign each entry of `sign` in order with eth_signTypedData_v4 (uint256 values are decimal strings), put each signature at the matching `fill` path of `submitBody`, and POST it to `submitTo` before `expiresAt`; the host runs exactly the deposit call `intent.planHash` commits to, in one router transaction".into(),
        })
    }
}

fn intent_body(i: &RelayIntent) -> Value {
    json!({
        "recipient": i.recipient,
        "toChain": i.to_chain,
        "toToken": i.to_token,
        "minOut": i.min_out.to_string(),
        "rail": i.rail,
        "planHash": i.plan_hash.to_string(),
        "feeCap": i.fee_cap.to_string(),
        "deadline": i.deadline.to_string(),
    })
}

/// The execute body shared by every form, signatures to fill.
fn base_body(p: &Prepared, mode: &str) -> Value {
    let r = &p.record;
    json!({
        "fromChain": p.chain_id,
        "toChain": r.to_chain,
        "fromToken": p.token.to_checksum(None),
        "toToken": p.auth.intent.to_token,
        "amount": r.amount.to_string(),
        "fromAddress": p.owner.to_checksum(None),
        "toAddress": r.recipient,
        "rail": r.rail,
        "mode": mode,
        "live": true,
        "intentId": r.id,
        "intent": intent_body(&p.auth.intent),
    })
}

fn erc2612_body(p: &Prepared) -> Value {
    json!({"value": p.record.amount.to_string(), "deadline": p.auth.intent.deadline.to_string(), "signature": null})
}

fn witness_form(
    p: &Prepared,
    permit2: Address,
    approved: bool,
    eip2612: &Result<(Domain, U256), String>,
) -> SignForm {
    let signed = SignedPermit {
        owner: p.owner,
        token: p.token,
        amount: p.record.amount.0,
        nonce: p.permit2_nonce,
        deadline: p.auth.intent.deadline,
        signature: Default::default(),
    };
    let domain = Domain {
        name: "Permit2".into(),
        version: None,
        chain_id: p.chain_id,
        verifying_contract: permit2,
    };
    let mut body = base_body(p, "permit2-witness");
    body["permit2"] = json!({
        "owner": p.owner.to_checksum(None),
        "permitted": {"token": p.token.to_checksum(None), "amount": p.record.amount.to_string()},
        "nonce": p.permit2_nonce.to_string(),
        "deadline": p.auth.intent.deadline.to_string(),
        "signature": null,
    });
    let mut form = SignForm {
        mode: "permit2-witness".into(),
        usable: true,
        why: None,
        sign: Vec::new(),
        fill: Vec::new(),
        submit_to: SUBMIT_TO.into(),
        submit_body: Value::Null,
    };
    if !approved {
        match eip2612 {
            Ok((token_domain, nonce)) => {
                let deadline = p.auth.intent.deadline;
                form.sign.push(typed::permit(
                    token_domain,
                    (p.owner, permit2),
                    p.record.amount.0,
                    *nonce,
                    deadline,
                ));
                form.fill.push("erc2612.signature".into());
                body["erc2612"] = erc2612_body(p);
            }
            Err(e) => {
                form.usable = false;
                form.why = Some(format!("the owner has not approved Permit2 and the token takes no EIP-2612 permit ({e}): approve Permit2 once"));
            }
        }
    }
    form.sign.push(typed::witness(
        &domain,
        &signed,
        p.auth.router,
        &p.auth.intent,
    ));
    form.fill.push("permit2.signature".into());
    form.submit_body = body;
    form
}

/// `intent` (no permit) or `erc2612` (with the token's domain).
fn order_form(p: &Prepared, eip2612: Option<&Result<(Domain, U256), String>>) -> SignForm {
    let mode = if eip2612.is_some() {
        "erc2612"
    } else {
        "intent"
    };
    let domain = Domain {
        name: router::DOMAIN_NAME.into(),
        version: Some(router::DOMAIN_VERSION.into()),
        chain_id: p.chain_id,
        verifying_contract: p.auth.router,
    };
    let mut body = base_body(p, mode);
    body["order"] = json!({
        "owner": p.owner.to_checksum(None),
        "token": p.token.to_checksum(None),
        "amount": p.record.amount.to_string(),
        "nonce": p.router_nonce.to_string(),
        "signature": null,
    });
    let mut form = SignForm {
        mode: mode.into(),
        usable: true,
        why: None,
        sign: Vec::new(),
        fill: Vec::new(),
        submit_to: SUBMIT_TO.into(),
        submit_body: Value::Null,
    };
    match eip2612 {
        Some(Ok((token_domain, nonce))) => {
            let deadline = p.auth.intent.deadline;
            form.sign.push(typed::permit(
                token_domain,
                (p.owner, p.auth.router),
                p.record.amount.0,
                *nonce,
                deadline,
            ));
            form.fill.push("erc2612.signature".into());
            body["erc2612"] = erc2612_body(p);
        }
        Some(Err(e)) => {
            form.usable = false;
            form.why = Some(format!("the token takes no EIP-2612 permit: {e}"));
        }
        None => {}
    }
    let key = (p.owner, p.token, p.record.amount.0, p.router_nonce);
    form.sign.push(typed::order(&domain, key, &p.auth.intent));
    form.fill.push("order.signature".into());
    form.submit_body = body;
    form
}

/// Bitmap words [`ExecuteService::fresh_nonce`] reads at most for one
/// intent (one `eth_call` each; one when the owner's open word is known).
const NONCE_WORDS_READ: u64 = 4;

/// The place an admitted intent holds in the store's count (none: counted
/// in this process).
#[derive(Debug)]
#[must_use = "settle it: ExecuteService::intent_settled"]
pub struct IntentPlace(Option<String>);

/// A requester holds its cap of open intents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("this address holds {cap} open router intents, the most one address may (limits.intents_per_ip): execute or let one lapse (retryAfterMs)")]
pub struct IntentCapReached {
    /// The cap.
    pub cap: usize,
    /// Until the oldest open intent lapses, ms.
    pub retry_after_ms: u64,
}

/// Nonces handed to prepared intents that are still open, per (chain,
/// bitmap contract, owner), with when each lapses (epoch ms), and each
/// owner's lowest bitmap word not seen full on chain. An owner stays in the
/// map while it holds a reservation or has a full word; filling a word
/// costs its owner a transaction, so the map does not grow cheaply. Also
/// when each requester's open intents lapse (a requester stays while it
/// has one; at most `limits.intents_per_ip` each).
#[derive(Debug, Default)]
pub(crate) struct Reserved {
    owners: Mutex<HashMap<NonceOwner, OwnerNonces>>,
    requesters: Mutex<HashMap<String, Vec<u64>>>,
}

/// (chain, bitmap contract, owner).
type NonceOwner = (u64, Address, Address);
/// Reserved nonces and when each lapses, epoch ms.
type Lapses = BTreeMap<U256, u64>;

/// One owner's reservations on one bitmap, and where its search starts.
#[derive(Debug, Default)]
struct OwnerNonces {
    /// Reserved nonces.
    held: Lapses,
    /// Every word below this one was full on chain when read (a used
    /// nonce is never cleared), so the search starts here.
    first_open_word: u64,
}

impl Reserved {
    /// The lowest word of `key`'s bitmap not seen full on chain.
    fn first_open_word(&self, key: NonceOwner) -> u64 {
        let all = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        all.get(&key).map_or(0, |o| o.first_open_word)
    }

    fn requesters(&self) -> MutexGuard<'_, HashMap<String, Vec<u64>>> {
        self.requesters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many nonces `key` holds reserved at `now`.
    fn held(&self, key: NonceOwner, now: u64) -> usize {
        let all = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        all.get(&key)
            .map_or(0, |o| o.held.values().filter(|l| **l > now).count())
    }

    /// The lowest nonce of bitmap `word` that is clear on chain and not
    /// reserved, now reserved until `until` (`(now, until)` in epoch ms).
    /// A word full on chain moves `key`'s search past it.
    fn take(
        &self,
        key: NonceOwner,
        word: u64,
        bitmap: U256,
        (now, until): (u64, u64),
    ) -> Option<U256> {
        let mut all = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|_, owner| {
            owner.held.retain(|_, lapses| *lapses > now);
            !owner.held.is_empty() || owner.first_open_word > 0
        });
        let owner = all.entry(key).or_default();
        if bitmap == U256::MAX {
            owner.first_open_word = owner.first_open_word.max(word.saturating_add(1));
            return None;
        }
        let n = (0..256usize)
            .filter(|bit| !bitmap.bit(*bit))
            .map(|bit| U256::from(word) * U256::from(256) + U256::from(bit))
            .find(|n| !owner.held.contains_key(n))?;
        owner.held.insert(n, until);
        Some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_nonces_skip_used_bits_and_each_other_until_they_lapse() {
        let r = Reserved::default();
        let key = (8453, Address::repeat_byte(2), Address::repeat_byte(1));
        let used = U256::from(0b1011u8);
        let take = |now| r.take(key, 0, used, (now, now + 100));
        assert_eq!(
            take(0),
            Some(U256::from(2)),
            "bits 0, 1 and 3 are used on chain"
        );
        assert_eq!(take(0), Some(U256::from(4)), "2 is handed out");
        assert_eq!(take(200), Some(U256::from(2)), "the reservations lapsed");
        assert_eq!(r.take(key, 1, U256::MAX, (200, 300)), None, "a full word");
    }

    #[test]
    fn reservations_are_counted_per_owner_until_they_lapse() {
        let r = Reserved::default();
        let key = (8453, Address::repeat_byte(2), Address::repeat_byte(1));
        // A stranger prepares three intents naming the owner: 0, 1, 2 held.
        for n in 0..3u8 {
            assert_eq!(r.take(key, 0, U256::ZERO, (0, 100)), Some(U256::from(n)));
        }
        assert_eq!(r.held(key, 50), 3, "the cap compares with this");
        assert_eq!(r.held(key, 100), 0, "lapsed");
        let other = (8453, Address::repeat_byte(2), Address::repeat_byte(9));
        assert_eq!(r.held(other, 0), 0, "per owner");
    }

    #[test]
    fn the_search_starts_past_words_seen_full_and_not_past_reserved_ones() {
        let r = Reserved::default();
        let key = (8453, Address::repeat_byte(2), Address::repeat_byte(1));
        assert_eq!(r.first_open_word(key), 0);
        assert_eq!(r.take(key, 0, U256::MAX, (0, 100)), None);
        assert_eq!(r.take(key, 1, U256::MAX, (0, 100)), None);
        assert_eq!(r.first_open_word(key), 2, "words 0 and 1 are full");
        // A word seen full earlier than the search's start moves nothing.
        assert_eq!(r.take(key, 0, U256::MAX, (0, 100)), None);
        assert_eq!(r.first_open_word(key), 2);
        // A word whose free bits are all reserved is not full on chain: a
        // reservation lapses, the search must come back to it.
        let one_free = U256::MAX ^ U256::from(1u8);
        assert_eq!(r.take(key, 2, one_free, (0, 100)), Some(U256::from(512)));
        assert_eq!(r.take(key, 2, one_free, (0, 100)), None);
        assert_eq!(r.first_open_word(key), 2);
        // The start outlives every reservation lapsing.
        assert_eq!(r.take(key, 2, one_free, (200, 300)), Some(U256::from(512)));
        assert_eq!(r.first_open_word(key), 2);
        let other = (8453, Address::repeat_byte(3), Address::repeat_byte(1));
        assert_eq!(r.first_open_word(other), 0, "per bitmap contract");
    }
}
