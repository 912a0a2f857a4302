//! Executing a route authorised through the `RelayRouter` (modes
//! `permit2-witness`, `erc2612`, `intent`): the client signed the terms of
//! a prepared intent ([`super::intent`]); execute runs exactly that plan.
//!
//! Before anything exists or is sent, in order — each refusal typed:
//! 1. the prepared intent is found and unexpired
//!    ([`ExecuteError::IntentNotFound`], [`ExecuteError::IntentExpired`]);
//! 2. the body matches it field by field — route (`toAddress`, `toChain`,
//!    tokens, amount, owner) and the signed `intent` (recipient, toChain,
//!    toToken, minOut, rail, planHash, feeCap, deadline) —
//!    ([`ExecuteError::IntentMismatch`] naming the field);
//! 3. every signature is checked off chain (signer or ERC-1271, chain,
//!    deadline, nonce, low-s: [`relay_chain::router::verify`]);
//! 4. the router call is simulated at the pending block from the relayer.
//!
//! A second execute of an intent that already became a route answers that
//! route (the same signature never runs twice).

use alloy::primitives::Address;
use relay_chain::{
    router::{self, CheckContext, RouterError},
    sender::Call,
};
use relay_engine::request::{ExecuteAsk, RouterAsk};
use relay_plugin_api::Token;
use relay_types::{RouteRecord, RouterAuth, RouterForm};

use super::{
    compose::{compose, Composed},
    execute::{ExecuteError, ExecuteService, Executed},
    executor::ExecError,
    simulate::{check_router, SimulateError},
    steps::StepPolicy,
};

/// Gas of the router's own work: the pull, the fee transfer, the checks.
const ROUTER_GAS: u64 = 200_000;

/// The router transaction of a composed route.
pub fn router_call(auth: &RouterAuth, composed: &Composed) -> Result<Call, RouterError> {
    Ok(Call {
        to: auth.router,
        data: router::calldata(auth)?.into(),
        value: auth.deposit.value,
        gas_limit: ROUTER_GAS + composed.call_gas,
    })
}

fn mismatch(field: &str, prepared: impl std::fmt::Display) -> ExecuteError {
    ExecuteError::IntentMismatch {
        field: field.to_string(),
        why: format!("the prepared intent has {prepared}"),
    }
}

fn token_matches(body: &Token, prepared: &str) -> bool {
    body.address
        .as_deref()
        .unwrap_or(&body.symbol)
        .eq_ignore_ascii_case(prepared)
        || body.symbol.eq_ignore_ascii_case(prepared)
}

/// Step 2 of the module docs: the body against the prepared route.
fn check_matches(
    ask: &ExecuteAsk,
    r: &RouteRecord,
    auth: &RouterAuth,
    signed: &RouterAsk,
) -> Result<(), ExecuteError> {
    let same_addr = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    if ask.from_chain != r.from_chain {
        return Err(mismatch("fromChain", r.from_chain));
    }
    if ask.to_chain != r.to_chain {
        return Err(mismatch("toChain", r.to_chain));
    }
    if ask.amount != r.amount {
        return Err(mismatch("amount", r.amount));
    }
    if !token_matches(&ask.from_token, &r.from_token) {
        return Err(mismatch("fromToken", &r.from_token));
    }
    if !token_matches(&ask.to_token, &auth.intent.to_token) {
        return Err(mismatch("toToken", &auth.intent.to_token));
    }
    if !same_addr(&ask.recipient, &r.recipient) {
        return Err(mismatch("toAddress", &r.recipient));
    }
    if !same_addr(&signed.form.owner().to_string(), &r.sender) {
        return Err(mismatch("owner", &r.sender));
    }
    if let Some(rail) = ask.rail.as_deref().filter(|x| *x != r.rail) {
        return Err(mismatch("rail", format!("{} (not {rail})", r.rail)));
    }
    check_intent(&signed.intent, &auth.intent)?;
    check_form(&signed.form, r)
}

/// The signed terms must be the prepared terms, field by field.
fn check_intent(
    got: &relay_types::RelayIntent,
    want: &relay_types::RelayIntent,
) -> Result<(), ExecuteError> {
    let fields = |i| match serde_json::to_value(i) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => Default::default(),
    };
    let (got, want) = (fields(got), fields(want));
    match want.iter().find(|(k, v)| got.get(*k) != Some(*v)) {
        Some((k, v)) => Err(ExecuteError::IntentMismatch {
            field: format!("intent.{k}"),
            why: format!("the prepared intent has {v}"),
        }),
        None => Ok(()),
    }
}

/// The signed token and amount must be the route's.
fn check_form(form: &RouterForm, r: &RouteRecord) -> Result<(), ExecuteError> {
    let (token, amount, token_field, amount_field) = match form {
        RouterForm::Permit2Witness { permit, .. } => (
            permit.token,
            permit.amount,
            "permit2.permitted.token",
            "permit2.permitted.amount",
        ),
        RouterForm::Order { token, amount, .. } => (*token, *amount, "order.token", "order.amount"),
    };
    let pulled = r.plan.steps.iter().find_map(|s| match s {
        relay_plugin_api::PlanAction::Permit2Pull { token, .. } => token.parse::<Address>().ok(),
        _ => None,
    });
    if pulled.is_some_and(|t| t != token) {
        return Err(mismatch(token_field, pulled.unwrap_or_default()));
    }
    if amount != r.amount.0 {
        return Err(mismatch(amount_field, r.amount));
    }
    Ok(())
}

impl ExecuteService {
    /// Runs a router-form execute (module docs).
    #[tracing::instrument(skip_all, fields(intent = %signed.intent_id, mode = signed.form.mode()))]
    pub(crate) async fn execute_router(
        &self,
        ask: &ExecuteAsk,
        signed: &RouterAsk,
        key: Option<&str>,
        rehearse: bool,
    ) -> Result<Executed, ExecuteError> {
        let store_err = |e: relay_store::StoreError| ExecuteError::Store(e.to_string());
        let (mut r, expires_ms) = self
            .d
            .store
            .get_intent(&signed.intent_id)
            .await
            .map_err(store_err)?
            .ok_or_else(|| ExecuteError::IntentNotFound(signed.intent_id.clone()))?;
        let auth = r
            .router
            .clone()
            .ok_or_else(|| ExecuteError::IntentNotFound(signed.intent_id.clone()))?;
        check_matches(ask, &r, &auth, signed)?;
        if let Some((existing, _)) = self.d.store.get_route(&r.id).await.map_err(store_err)? {
            return Ok(Executed::Live(existing));
        }
        if expires_ms <= self.d.clock.now_ms() {
            return Err(ExecuteError::IntentExpired(signed.intent_id.clone()));
        }
        let auth = RouterAuth {
            form: Some(signed.form.clone()),
            ..auth
        };
        let chain_id = r.from_chain.evm_id().ok_or_else(|| {
            ExecuteError::RouterUnavailable("a router route needs an EVM source".into())
        })?;
        let cx = CheckContext {
            reader: &self.d.reader,
            chain_id,
            permit2: self.permit2()?,
            now_secs: self.d.clock.now_secs(),
        };
        router::verify(cx, &auth).await?;
        r.router = Some(auth);
        self.simulate_router(&r).await?;
        if ask.dry_run || ask.live == Some(false) {
            return Ok(Executed::Dry(self.d.sandbox.keep_dry(r)));
        }
        if rehearse {
            return Ok(Executed::Rehearsed(r));
        }
        self.start_live(r, key).await
    }

    /// Simulates the route's router call from the relayer.
    async fn simulate_router(&self, r: &RouteRecord) -> Result<(), ExecuteError> {
        let relayer = self.d.relayer.as_ref().ok_or_else(|| {
            ExecuteError::RelayerUnavailable(
                "this host has no relayer key (RELAY_RELAYER_KEY)".into(),
            )
        })?;
        let auth = r
            .router
            .as_ref()
            .ok_or(ExecuteError::Router(RouterError::Unsigned))?;
        let snap = self.d.rails.snapshot();
        let policy = StepPolicy::of_rail(
            &snap,
            &self.d.config,
            &r.rail,
            (relayer.address(), self.permit2()?),
        );
        let composed = compose(&r.plan, &policy)
            .map_err(|e| ExecuteError::RouterUnavailable(e.to_string()))?;
        let call = router_call(auth, &composed)?;
        let owner = auth
            .form
            .as_ref()
            .map(RouterForm::owner)
            .unwrap_or_default();
        check_router(
            &self.d.reader,
            composed.chain,
            relayer.address(),
            &call,
            owner,
        )
        .await
        .map_err(|e| match e {
            SimulateError::Reverts(w) => ExecuteError::WouldRevert(w),
            SimulateError::Unavailable(e) => ExecuteError::RelayerUnavailable(e.to_string()),
        })
    }
}

/// What the executor sends for a router route's pull step: the composed
/// router call and how many plan steps it replaces.
pub(crate) fn executor_call(
    r: &RouteRecord,
    policy: &StepPolicy<'_>,
) -> Result<(u64, Call, usize), ExecError> {
    let auth = r
        .router
        .as_ref()
        .ok_or_else(|| ExecError::BadStep("no router authorisation on the route".into()))?;
    let composed = compose(&r.plan, policy)?;
    if router::plan_hash(&composed.deposit) != auth.intent.plan_hash {
        return Err(ExecError::Refused(
            "the plan no longer hashes to the signed planHash".into(),
        ));
    }
    let call = router_call(auth, &composed).map_err(|e| ExecError::BadStep(e.to_string()))?;
    Ok((composed.chain, call, composed.span.len()))
}
