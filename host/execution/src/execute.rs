//! Execute orchestration (spec §2.7, §2.8, §3.1), behind any adapter (the
//! HTTP API today): given a parsed [`ExecuteAsk`], lock the price, verify
//! the Permit2 signature off chain, quote, pick the best rail that
//! prepares, then — sandbox, dry run, or live — answer what became of it
//! ([`Executed`]). Every refusal is an [`ExecuteError`] the adapter maps
//! onto its own error codes.
//!
//! Before a live route exists (nothing is persisted, nothing is signed):
//! - **Operator authority.** A route the relayer funds from its own float
//!   ([`ExecuteAsk::spends_operator_funds`]: `mode: self`, whatever `rail`
//!   it names) needs the operator's credential
//!   ([`ExecuteRequest::operator`]); without it
//!   [`ExecuteError::OperatorAuthRequired`]. Sandbox and dry runs move
//!   nothing and need none.
//! - **Simulation.** The route's first transaction (the Permit2 pull, or
//!   the relayer's own first transaction in self mode) is simulated at the
//!   pending block ([`super::simulate`]); a revert is
//!   [`ExecuteError::WouldRevert`] naming the cause, and the relayer spends
//!   no gas. Later steps are simulated by the executor right before it
//!   signs them.
//!
//! Live routes are persisted (tagged with the idempotency key) before
//! anything is broadcast and handed to the executor. Dry runs are kept in
//! memory for an hour ([`Sandbox::keep_dry`]) so their `track` answers.

use std::{
    future::Future,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
};

use alloy::primitives::Address;
use relay_chain::{permit2::Permit2Error, reader::ChainReader};
use relay_config::HostConfig;
use relay_engine::{
    answer::CompareResult,
    attest,
    execute::{choose, Accepted, Declined},
    quote::{NoRoute, QuoteOutcome},
    request::{verify_permit, ExecuteAsk},
    route::RouteAsk,
    EngineError,
};
use relay_plugin_api::{Amount, PlanAction, RailRole};
use relay_runtime::rails::RailSet;
use relay_store::Store;
use relay_types::{clock::SharedClock, permit::SignedPermit, RouteRecord, RouteStatus};
use sha2::{Digest, Sha256};

use super::{
    executor::Executor,
    relayer::Relayer,
    sandbox::Sandbox,
    simulate::{check_call, check_pull, Pull, SimulateError, WouldRevert},
    steps::{call_for, pull_call, StepPolicy},
};

/// Where execute gets its quote (the adapter's quote path: candidates from
/// the live mesh, the engine's fan-out).
pub trait QuoteSource: Send + Sync {
    /// Quotes the route part of an execute on every applicable rail.
    fn quote(
        &self,
        ask: &RouteAsk,
    ) -> impl Future<Output = Result<QuoteOutcome, ExecuteError>> + Send;
}

/// One execute.
#[derive(Clone, Debug)]
pub struct ExecuteRequest {
    /// The parsed request.
    pub ask: ExecuteAsk,
    /// `x-relay-sandbox: 1`: an `sbx_` route on a timer, nothing signed.
    pub sandbox: bool,
    /// The idempotency key the live route is recorded under.
    pub idempotency_key: Option<String>,
    /// Whether the caller proved operator authority (the owner token).
    pub operator: bool,
    /// `x-relay-rehearse: 1` (spec §5.4): every check a live execute runs
    /// (parsing, signatures, nonces, simulation, limits, authorisation),
    /// then [`Executed::Rehearsed`] — nothing stored, signed or sent.
    pub rehearse: bool,
}

/// What became of an execute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Executed {
    /// A live route, persisted and handed to the executor (its state when
    /// read back).
    Live(RouteRecord),
    /// A sandbox route, in memory, on a timer.
    Sandbox(RouteRecord),
    /// A dry run (`DRY`): what would be sent, kept in memory for an hour.
    Dry(RouteRecord),
    /// A rehearsal that passed every check: the route a live execute would
    /// have started, neither stored nor sent.
    Rehearsed(RouteRecord),
    /// The rail would carry it but the relayer lacks float there (spec
    /// §3.1): recorded `FUNDS_REQUIRED`, nothing sent.
    FundsRequired {
        /// The record.
        record: RouteRecord,
        /// Whether it is a sandbox route.
        sandbox: bool,
        /// The rail's reason.
        note: String,
    },
}

impl Executed {
    /// The route's record.
    pub fn record(&self) -> &RouteRecord {
        match self {
            Executed::Live(r)
            | Executed::Sandbox(r)
            | Executed::Dry(r)
            | Executed::Rehearsed(r) => r,
            Executed::FundsRequired { record, .. } => record,
        }
    }
}

/// Why an execute was refused; nothing was persisted or signed.
#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    /// The route would spend the operator's own funds and the caller did
    /// not prove operator authority.
    #[error("mode \"self\" (the default) spends the operator's own funds and needs the operator's credential (Authorization: Bearer <owner token>); a client without it sends mode \"permit2\" with a Permit2 signature of its own funds")]
    OperatorAuthRequired,
    /// The request or its Permit2 signature is refused.
    #[error(transparent)]
    Request(#[from] EngineError),
    /// The quote attestation given as a price lock does not hold.
    #[error("attestation: {0}")]
    AttestationInvalid(String),
    /// The named rail does not serve the lane now.
    #[error("rail {0:?} does not serve this lane now (not installed, disabled, or its lane switched off)")]
    RailNotServing(String),
    /// No rail serves the lane.
    #[error("{0}")]
    Unroutable(String),
    /// No rail answered the quote with a price.
    #[error("no rail could quote")]
    NoRoute(Option<NoRoute>),
    /// No rail accepted the route.
    #[error(transparent)]
    Declined(Declined),
    /// The route's first transaction would revert.
    #[error(transparent)]
    WouldRevert(#[from] WouldRevert),
    /// This host cannot sign or read the chain for the route now.
    #[error("{0}")]
    RelayerUnavailable(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(String),
    /// No prepared intent has the body's `intentId`.
    #[error("intentId: no prepared intent {0:?} (prepare one with POST /api/route/intent)")]
    IntentNotFound(String),
    /// The prepared intent's deadline passed.
    #[error("intentId: the prepared intent {0:?} has expired")]
    IntentExpired(String),
    /// The body differs from the prepared intent.
    #[error("{field}: differs from the prepared intent: {why}")]
    IntentMismatch {
        /// The body field.
        field: String,
        /// What the prepared intent has.
        why: String,
    },
    /// A router-form signature does not authorise the route.
    #[error(transparent)]
    Router(#[from] relay_chain::router::RouterError),
    /// The router cannot carry this route.
    #[error("{0}")]
    RouterUnavailable(String),
}

impl From<SimulateError> for ExecuteError {
    fn from(e: SimulateError) -> Self {
        match e {
            SimulateError::Reverts(r) => ExecuteError::WouldRevert(r),
            SimulateError::Unavailable(e) => ExecuteError::RelayerUnavailable(e.to_string()),
        }
    }
}

/// What the service works with.
#[derive(Clone, Debug)]
pub struct ExecuteDeps {
    /// Host configuration.
    pub config: Arc<HostConfig>,
    /// Installed rails.
    pub rails: Arc<RailSet>,
    /// The store.
    pub store: Store,
    /// Chain reads and simulations.
    pub reader: Arc<ChainReader>,
    /// In-memory sandbox and dry-run records.
    pub sandbox: Arc<Sandbox>,
    /// The relayer (absent without a key).
    pub relayer: Option<Arc<Relayer>>,
    /// Runs live routes (absent without a key).
    pub executor: Option<Arc<Executor>>,
    /// The clock.
    pub clock: SharedClock,
}

/// Runs executes (module docs).
#[derive(Debug)]
pub struct ExecuteService {
    pub(crate) d: ExecuteDeps,
    /// Route ids: a per-process seed and a sequence number.
    seed: u64,
    seq: AtomicU64,
    /// Nonces handed to open prepared intents.
    pub(crate) reserved: super::intent::Reserved,
}

impl ExecuteService {
    /// A service over `deps`.
    pub fn new(deps: ExecuteDeps) -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(deps.clock.now_ms());
        ExecuteService {
            d: deps,
            seed: h.finish(),
            seq: AtomicU64::new(0),
            reserved: Default::default(),
        }
    }

    /// Runs one execute (module docs).
    pub async fn execute(
        &self,
        quotes: &impl QuoteSource,
        req: ExecuteRequest,
    ) -> Result<Executed, ExecuteError> {
        self.execute_as(quotes, req, None).await
    }

    /// [`ExecuteService::execute`] under route id `id` when given: a
    /// caller that derives the id from its own record (a yield-account
    /// spend's delivery) finds the route it started after a crash instead
    /// of starting a second one.
    #[tracing::instrument(skip_all, fields(route, mode = ?req.ask.mode, sandbox = req.sandbox))]
    pub async fn execute_as(
        &self,
        quotes: &impl QuoteSource,
        req: ExecuteRequest,
        id: Option<String>,
    ) -> Result<Executed, ExecuteError> {
        let ExecuteRequest {
            mut ask,
            sandbox,
            idempotency_key,
            operator,
            rehearse,
        } = req;
        let rehearse = rehearse && !sandbox;
        if let Some(signed) = ask.router.clone().filter(|_| !sandbox) {
            let key = idempotency_key.as_deref().filter(|_| !rehearse);
            return self.execute_router(&ask, &signed, key, rehearse).await;
        }
        ask.min_out = self.price_lock(&ask)?;
        let maybe_live = !sandbox && !ask.dry_run && ask.live != Some(false);
        let claimed = match (&ask.permit, maybe_live && !rehearse) {
            (Some(p), true) => Some(self.permit_route_id(&ask, p)?),
            _ => None,
        };
        if let Some(id) = &claimed {
            let terms = (ask.permit.as_ref(), Terms::of_ask(&ask));
            if let Some(done) = self.signed_before(id, terms).await? {
                return Ok(done);
            }
        }
        // A dry run checks the signature exactly as a live execute does:
        // its answer must never vouch for a permit the live route refuses.
        if !sandbox && ask.permit.is_some() {
            self.verify_permit(&ask).await?;
        }
        let outcome = quotes.quote(&ask.route).await?;
        if let Some(want) = ask.rail.as_deref() {
            if !outcome.results.iter().any(|r| r.rail == want) {
                return Err(match outcome.named_rail_resting(want) {
                    Some(resting) => ExecuteError::NoRoute(Some(resting)),
                    None => ExecuteError::RailNotServing(want.to_string()),
                });
            }
        }
        if outcome.best().is_none() {
            return Err(ExecuteError::NoRoute(outcome.no_route()));
        }
        let permit_claims = id.is_none() && claimed.is_some();
        let id = id.or(claimed).unwrap_or_else(|| self.route_id(sandbox));
        tracing::Span::current().record("route", id.as_str());
        let relayer = self.relayer_address().map(|a| a.to_string());
        let relayer = relayer.unwrap_or_default();
        let rails: &RailSet = &self.d.rails;
        let clock = self.d.clock.as_ref();
        let accepted = match choose(rails, &outcome, &ask, &id, &relayer, clock).await {
            Ok(a) => a,
            Err(Declined::FundsRequired {
                rail,
                lane,
                message,
            }) => {
                let dry = self.role_of(&rail).is_some_and(|role| ask.is_dry(role));
                if !sandbox && !dry && ask.spends_operator_funds(None) && !operator {
                    return Err(ExecuteError::OperatorAuthRequired);
                }
                // nothing is pulled: the record must not hold the permit's
                // claim (a retry once the lane is funded runs the route)
                let id = if permit_claims {
                    self.route_id(false)
                } else {
                    id
                };
                return self
                    .funds_required(&ask, id, (rail, lane), message, sandbox || dry || rehearse)
                    .await;
            }
            Err(d) => return Err(ExecuteError::Declined(d)),
        };
        let dry = ask.is_dry(accepted.rail.manifest().role);
        let record = self.record(&ask, id, &accepted);
        if sandbox {
            return Ok(Executed::Sandbox(self.d.sandbox.start(record)));
        }
        if dry {
            // a dry run never takes the signed permit's route id
            let record = RouteRecord {
                id: self.route_id(false),
                ..record
            };
            return Ok(Executed::Dry(self.d.sandbox.keep_dry(record)));
        }
        if ask.spends_operator_funds(Some(&record.plan)) && !operator {
            return Err(ExecuteError::OperatorAuthRequired);
        }
        self.first_transaction(&ask, &record).await?;
        if rehearse {
            return Ok(Executed::Rehearsed(record));
        }
        let decision = CompareResult::of(&self.d.config.quote, &ask.route, &outcome);
        let started = self.start_live(record, idempotency_key.as_deref()).await?;
        self.keep_decision(started.record(), &decision).await;
        Ok(started)
    }

    /// Keeps the ranking route `r` was chosen from (`/api/route/why`); a
    /// failure to keep it is logged, never fails the route.
    async fn keep_decision(&self, r: &RouteRecord, decision: &CompareResult) {
        let body = serde_json::to_string(decision).unwrap_or_default();
        if let Err(e) = self.d.store.put_decision(&r.id, &body).await {
            tracing::warn!(route = %r.id, error = %e, "route decision not kept");
        }
    }

    pub(crate) fn relayer_address(&self) -> Option<Address> {
        let signing = self.d.relayer.as_ref().map(|r| r.address());
        signing.or_else(|| self.d.config.relayer.as_deref()?.parse().ok())
    }

    pub(crate) fn permit2(&self) -> Result<Address, ExecuteError> {
        self.d
            .config
            .permit2
            .parse()
            .map_err(|_| ExecuteError::RelayerUnavailable("bad permit2 address in config".into()))
    }

    fn role_of(&self, rail: &str) -> Option<RailRole> {
        Some(self.d.rails.snapshot().get(rail)?.manifest().role)
    }

    /// A fresh route id: `sbx_` in the sandbox, `rt_` otherwise.
    pub(crate) fn route_id(&self, sandbox: bool) -> String {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut h = Sha256::new();
        h.update(self.seed.to_be_bytes());
        h.update(seq.to_be_bytes());
        h.update(self.d.clock.now_ms().to_be_bytes());
        let prefix = if sandbox { "sbx_" } else { "rt_" };
        format!("{prefix}{}", hex::encode(&h.finalize()[..10]))
    }

    /// The route id of a live execute carrying Permit2 permit `p`: one per
    /// (chain, owner, nonce), the unit Permit2 spends once. Every copy of
    /// the same signed request claims this id in the store
    /// ([`relay_store::Store::insert_route_once`]); one wins, the others answer
    /// its route.
    fn permit_route_id(&self, ask: &ExecuteAsk, p: &SignedPermit) -> Result<String, ExecuteError> {
        let chain = ask.from_chain.evm_id().ok_or_else(|| {
            EngineError::Request(relay_engine::route::RequestError::Invalid {
                field: "fromChain".into(),
                why: "permit2 needs an EVM source chain".into(),
            })
        })?;
        let mut h = Sha256::new();
        h.update(format!(
            "relay-permit2-route:{chain}:{:#x}:{}",
            p.owner, p.nonce
        ));
        Ok(format!("rt_{}", hex::encode(&h.finalize()[..10])))
    }

    /// The route a signed request already started under `id`: the same
    /// permit for the same destination answers its route (a retry, or a
    /// copy sent at once); another permit with the same owner and nonce,
    /// or the same one sent elsewhere, is the nonce spent.
    async fn signed_before(
        &self,
        id: &str,
        (permit, terms): (Option<&SignedPermit>, Terms<'_>),
    ) -> Result<Option<Executed>, ExecuteError> {
        let existing = self
            .d
            .store
            .get_route(id)
            .await
            .map_err(|e| ExecuteError::Store(e.to_string()))?;
        let Some((r, _)) = existing else {
            return Ok(None);
        };
        match (&r.permit, permit) {
            (Some(had), Some(p)) if had == p && Terms::of_record(&r).same(&terms) => {
                Ok(Some(Executed::Live(r)))
            }
            (_, Some(p)) => Err(EngineError::from(Permit2Error::NonceUsed(p.nonce)).into()),
            _ => Ok(None),
        }
    }

    /// Verifies the ask's Permit2 signature (off chain, then its nonce on
    /// chain) for this host's relayer as spender.
    pub async fn verify_permit(&self, ask: &ExecuteAsk) -> Result<(), ExecuteError> {
        let relayer = self.d.relayer.as_ref().ok_or_else(|| {
            ExecuteError::RelayerUnavailable("this host has no relayer key".into())
        })?;
        let now = self.d.clock.now_secs();
        verify_permit(&self.d.reader, &self.d.config, relayer.address(), ask, now).await?;
        Ok(())
    }

    /// Simulates the Permit2 pull of the ask's signed permit, as the
    /// executor would sign it (execute and preflight share this check).
    /// `Ok` when there is no permit.
    pub async fn simulate_pull(&self, ask: &ExecuteAsk) -> Result<(), ExecuteError> {
        let Some(permit) = &ask.permit else {
            return Ok(());
        };
        let chain = ask.from_chain.evm_id().ok_or_else(|| {
            EngineError::Request(relay_engine::route::RequestError::Invalid {
                field: "fromChain".into(),
                why: "permit2 needs an EVM source chain".into(),
            })
        })?;
        let relayer = self.d.relayer.as_ref().ok_or_else(|| {
            ExecuteError::RelayerUnavailable("this host has no relayer key".into())
        })?;
        let policy = StepPolicy {
            manifest: None,
            operator: None,
            relayer: relayer.address(),
            permit2: self.permit2()?,
        };
        let call = pull_call(permit, &policy, ask.amount.0);
        let pull = Pull {
            chain,
            relayer: policy.relayer,
            permit,
            call: &call,
        };
        Ok(check_pull(&self.d.reader, &pull).await?)
    }

    /// Simulates the route's first transaction before the route exists: the
    /// Permit2 pull, or the relayer's own first transaction. A route that
    /// starts by waiting (a deposit, the upstream) sends nothing yet; a
    /// step the host's policy refuses is left to the executor to refuse.
    async fn first_transaction(
        &self,
        ask: &ExecuteAsk,
        r: &RouteRecord,
    ) -> Result<(), ExecuteError> {
        let Some(step) = r.plan.steps.first() else {
            return Ok(());
        };
        if matches!(step, PlanAction::Permit2Pull { .. }) {
            return self.simulate_pull(ask).await;
        }
        let Some(relayer) = self.d.relayer.as_ref() else {
            return Ok(());
        };
        let snap = self.d.rails.snapshot();
        let policy = StepPolicy::of_rail(
            &snap,
            &self.d.config,
            &r.rail,
            (relayer.address(), self.permit2()?),
        );
        let Ok(Some((chain, call))) = call_for(step, r, &policy) else {
            return Ok(());
        };
        Ok(check_call(&self.d.reader, chain, policy.relayer, &call, "plan step 0").await?)
    }

    /// The minimum the recipient must get: the stricter of `minOut` and a
    /// verified attestation's `minOut` (which must be for this very route).
    fn price_lock(&self, ask: &ExecuteAsk) -> Result<Option<Amount>, ExecuteError> {
        let Some(attest::Presented {
            terms,
            proof,
            signature,
        }) = &ask.attestation
        else {
            return Ok(ask.min_out);
        };
        let bad = ExecuteError::AttestationInvalid;
        let signer = self
            .d
            .relayer
            .as_ref()
            .map(|r| r.address())
            .ok_or_else(|| bad("this host has no relayer key to check it against".into()))?;
        attest::verify(terms, proof, signature, signer, self.d.clock.now_ms())
            .map_err(|e| bad(e.to_string()))?;
        let same_token = |a: &str, t: &relay_plugin_api::Token| {
            t.address
                .as_deref()
                .unwrap_or(&t.symbol)
                .eq_ignore_ascii_case(a)
        };
        let matches = terms.from_chain == ask.from_chain
            && terms.to_chain == ask.to_chain
            && terms.amount == ask.amount
            && same_token(&terms.from_token, &ask.from_token)
            && same_token(&terms.to_token, &ask.to_token);
        if !matches {
            return Err(bad(
                "the attested quote is for another route or amount".into()
            ));
        }
        Ok(Some(
            ask.min_out.map_or(terms.min_out, |m| m.max(terms.min_out)),
        ))
    }

    /// The record of an accepted route.
    pub(crate) fn record(&self, ask: &ExecuteAsk, id: String, a: &Accepted) -> RouteRecord {
        let min_out = ask
            .min_out
            .map_or(a.quote.min_out, |m| a.quote.min_out.max(m));
        // A route that starts with the user's deposit waits for it.
        let status = match a.plan.steps.first() {
            Some(PlanAction::DepositInstruction { .. }) => RouteStatus::AwaitingDeposit,
            _ => RouteStatus::Pending,
        };
        RouteRecord {
            status,
            stage: Some("RECEIVING".into()),
            rail: a.rail.id().to_string(),
            lane: a.lane.clone(),
            estimated: a.quote.amount_out,
            min_out,
            relay_fee: a.route_fee,
            gas_fee: a.gas_fee,
            plan: a.plan.clone(),
            track_ref: a.plan.track_ref.clone(),
            permit: ask.permit.clone(),
            passed_over: a.passed.iter().map(|(r, w)| format!("{r}: {w}")).collect(),
            ..self.bare_record(ask, id)
        }
    }

    /// A record of `ask` with nothing priced or planned yet.
    fn bare_record(&self, ask: &ExecuteAsk, id: String) -> RouteRecord {
        RouteRecord {
            id,
            status: RouteStatus::Pending,
            stage: None,
            rail: String::new(),
            lane: String::new(),
            from_chain: ask.from_chain,
            to_chain: ask.to_chain,
            from_token: ask.from_token.symbol.clone(),
            to_token: ask.to_token.symbol.clone(),
            amount: ask.amount,
            estimated: Amount::ZERO,
            min_out: Amount::ZERO,
            relay_fee: Amount::ZERO,
            gas_fee: Amount::ZERO,
            sender: ask.sender.clone(),
            recipient: ask.recipient.clone(),
            mode: ask.mode,
            plan: Default::default(),
            next_step: 0,
            track_ref: None,
            src_tx: None,
            dest_tx: None,
            failure: None,
            created_ms: self.d.clock.now_ms(),
            permit: None,
            passed_over: Vec::new(),
            router: None,
        }
    }

    /// An unfunded lane (spec §3.1): the route is recorded as
    /// FUNDS_REQUIRED (in memory when nothing could move: sandbox or dry),
    /// nothing is sent and no transaction is invented.
    async fn funds_required(
        &self,
        ask: &ExecuteAsk,
        id: String,
        (rail, lane): (String, String),
        message: String,
        in_memory: bool,
    ) -> Result<Executed, ExecuteError> {
        let mut r = RouteRecord {
            status: RouteStatus::FundsRequired,
            rail,
            lane,
            ..self.bare_record(ask, id)
        };
        let sandbox = r.id.starts_with("sbx_");
        if in_memory {
            r = self.d.sandbox.start(r);
        } else {
            self.d
                .store
                .insert_route(&r)
                .await
                .map_err(|e| ExecuteError::Store(e.to_string()))?;
        }
        Ok(Executed::FundsRequired {
            record: r,
            sandbox,
            note: format!("the relayer lacks float for this lane: {message}"),
        })
    }

    /// Persists a live route before anything is broadcast and hands it to
    /// the executor.
    pub(crate) async fn start_live(
        &self,
        record: RouteRecord,
        key: Option<&str>,
    ) -> Result<Executed, ExecuteError> {
        let executor = self.d.executor.clone().ok_or_else(|| {
            ExecuteError::RelayerUnavailable(
                "this host has no relayer key (RELAY_RELAYER_KEY)".into(),
            )
        })?;
        let store_err = |e: relay_store::StoreError| ExecuteError::Store(e.to_string());
        let id = record.id.clone();
        let claimed = self
            .d
            .store
            .insert_route_once(&record, key)
            .await
            .map_err(store_err)?;
        if !claimed {
            // a copy of the same signed request claimed the route first
            tracing::info!(route = %id, "signed request already claimed; answering its route");
            let terms = (record.permit.as_ref(), Terms::of_record(&record));
            if let Some(answer) = self.signed_before(&id, terms).await? {
                return Ok(answer);
            }
        } else {
            tokio::spawn(async move {
                if let Err(e) = executor.run(&record.id).await {
                    tracing::error!(route = %record.id, error = %e, "route execution stopped");
                }
            });
        }
        let (r, _) = self
            .d
            .store
            .get_route(&id)
            .await
            .map_err(store_err)?
            .ok_or_else(|| ExecuteError::Store("route vanished".into()))?;
        Ok(Executed::Live(r))
    }
}

/// Where a signed request sends the money: the same permit answers the
/// same route only for the same destination.
#[derive(Clone, Copy, Debug)]
struct Terms<'a> {
    to_chain: relay_plugin_api::ChainRef,
    to_token: &'a str,
    recipient: &'a str,
}

impl<'a> Terms<'a> {
    fn of_ask(a: &'a ExecuteAsk) -> Self {
        Terms {
            to_chain: a.to_chain,
            to_token: &a.to_token.symbol,
            recipient: &a.recipient,
        }
    }

    /// The same destination (addresses and symbols in any case).
    fn same(&self, o: &Terms<'_>) -> bool {
        self.to_chain == o.to_chain
            && self.to_token.eq_ignore_ascii_case(o.to_token)
            && self.recipient.eq_ignore_ascii_case(o.recipient)
    }

    fn of_record(r: &'a RouteRecord) -> Self {
        Terms {
            to_chain: r.to_chain,
            to_token: &r.to_token,
            recipient: &r.recipient,
        }
    }
}
