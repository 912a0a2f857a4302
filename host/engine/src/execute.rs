//! Execution's choice of route (spec §4.2 "Execute notes"): walk the
//! quote's ranking in net-output order and take the first rail that
//! re-prices the amount it will really carry and prepares a plan; a rail
//! that errs is skipped (failover) while nothing has moved yet.
//!
//! What a rail carries: the relayer holds an EVM source leg, so it keeps
//! the route fee and its gas (with markup) out of the token in flight and
//! asks the rail to move the rest ([`carried`]). A leg the relayer never
//! holds (a deposit channel on a non-EVM source) carries the whole amount.
//!
//! Firm execution from fast quotes: an answer the quote book served
//! ([`super::quotebook`], `cached`) is never executed as is — the rail is
//! re-quoted live for the carried amount, and the route proceeds only if
//! that fresh output meets the locked minimum (`minOut`, the attestation's);
//! otherwise execution fails over down the ranking, and when no rail meets
//! it answers [`Declined::PriceMoved`] with the best fresh quote. So no
//! route executes a price older than the book's staleness bound.
//!
//! A rail that refuses the request itself (`InvalidInput`: a field it
//! names, such as a refund address its chain cannot use) is skipped too;
//! when every rail that was asked refused it so, the route is the caller's
//! to fix and execution answers [`Declined::Refused`] (a typed 4xx), never
//! the "every rail failed" of an outage.
//!
//! The engine never names a rail: order, prices and plans come from the
//! loaded rails' own answers.

use std::sync::Arc;

use relay_plugin_api::{
    Amount, ExecutionPlan, PrepareRequest, QuoteRequest, RailErrorKind, RailQuote,
};

use super::{
    fees::Conversion,
    quote::{Priced, QuoteOutcome},
    request::ExecuteAsk,
};
use relay_runtime::{rails::RailSet, CallError, LoadedRail};
use relay_types::Clock;

/// A rail that accepted the route.
#[derive(Debug)]
pub struct Accepted {
    /// The rail.
    pub rail: Arc<LoadedRail>,
    /// Its lane.
    pub lane: String,
    /// Its answer for the carried amount.
    pub quote: RailQuote,
    /// Its plan.
    pub plan: ExecutionPlan,
    /// Route fee kept by the relayer, source units.
    pub route_fee: Amount,
    /// Relayer gas (with markup) kept by the relayer, source units.
    pub gas_fee: Amount,
    /// Rails tried before it, with why they were passed over.
    pub passed: Vec<(String, String)>,
}

/// Why no rail accepted the route.
#[derive(Debug, thiserror::Error)]
pub enum Declined {
    /// Every answering lane is quote-only.
    #[error("quote-only: {0}")]
    QuoteOnly(String),
    /// A rail would carry it but the relayer lacks float there (spec §3.1).
    #[error("{message}")]
    FundsRequired {
        /// The rail.
        rail: String,
        /// Its lane.
        lane: String,
        /// The rail's reason.
        message: String,
    },
    /// Nothing delivers at least the locked minimum.
    #[error("the best route now delivers {best}, below the locked minimum {min}")]
    PriceMoved {
        /// Best delivery now.
        best: Amount,
        /// The lock.
        min: Amount,
        /// The fresh live quote behind `best`.
        fresh: Option<Box<RailQuote>>,
        /// When it was quoted, epoch ms.
        quoted_at_ms: u64,
    },
    /// Every rail asked refused the request itself: the caller's mistake.
    #[error("{message}")]
    Refused {
        /// The request field the rails name (`fromAddress`, …), when one does.
        field: Option<String>,
        /// Each rail's reason.
        message: String,
    },
    /// Every rail asked refused the amount (too small for its fees, or
    /// above its capacity): the caller's to change.
    #[error("no rail asked can carry this amount: {0}")]
    Amount(String),
    /// Every rail failed.
    #[error("every rail failed: {0}")]
    Failed(String),
}

impl Declined {
    /// [`Declined::Refused`] from the rails' `InvalidInput` messages
    /// (`field: why`), each with its rail.
    fn refused(refusals: &[(String, String)]) -> Self {
        let field = refusals
            .iter()
            .filter_map(|(_, m)| m.split_once(": ").map(|(f, _)| f))
            .find(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'))
            .map(str::to_string);
        let message = refusals
            .iter()
            .map(|(rail, m)| format!("{rail}: {m}"))
            .collect::<Vec<_>>()
            .join("; ");
        Declined::Refused { field, message }
    }
}

/// What the relayer withholds: `(route fee, gas fee)` in source units, or
/// nothing when it never holds the source leg.
pub fn withheld(ask: &ExecuteAsk, p: &Priced) -> (Amount, Amount) {
    if ask.from_chain.evm_id().is_none() {
        return (Amount::ZERO, Amount::ZERO);
    }
    let q = &p.quote;
    let back =
        Conversion::between(&ask.from_token, &ask.to_token, q.amount_in, q.amount_out).inverse();
    (p.route_fee, back.apply(p.deductions.gas_fee))
}

/// The amount the rail moves once the relayer kept its fees.
pub fn carried(ask: &ExecuteAsk, p: &Priced) -> Amount {
    let (route, gas) = withheld(ask, p);
    ask.amount.saturating_sub(route).saturating_sub(gas)
}

/// Where execution finds a loaded rail by id: the host's [`RailSet`], or a
/// fixed set (tests of the failover policy need no plugin loader).
pub trait RailLookup {
    /// The rail loaded under `id` now.
    fn rail(&self, id: &str) -> Option<Arc<LoadedRail>>;
}

impl RailLookup for RailSet {
    fn rail(&self, id: &str) -> Option<Arc<LoadedRail>> {
        self.snapshot().get(id).cloned()
    }
}

impl RailLookup for std::collections::HashMap<String, Arc<LoadedRail>> {
    fn rail(&self, id: &str) -> Option<Arc<LoadedRail>> {
        self.get(id).cloned()
    }
}

/// Walks `outcome`'s ranking and returns the first rail that prepares.
#[tracing::instrument(skip_all, fields(rails = outcome.results.len()))]
pub async fn choose(
    rails: &impl RailLookup,
    outcome: &QuoteOutcome,
    ask: &ExecuteAsk,
    route_id: &str,
    relayer: &str,
    clock: &dyn Clock,
) -> Result<Accepted, Declined> {
    // Rails that did not answer are reported whoever executes.
    let mut passed: Vec<(String, String)> = outcome
        .results
        .iter()
        .filter_map(|r| Some((r.rail.clone(), r.outcome.as_ref().err()?.to_string())))
        .collect();
    let mut funds: Option<Declined> = None;
    let mut quote_only = Vec::new();
    let mut best_below: Option<RailQuote> = None;
    let mut attempted = 0;
    let mut refusals: Vec<(String, String)> = Vec::new();
    for r in &outcome.results {
        let Ok(priced) = &r.outcome else { continue };
        if ask.rail.as_deref().is_some_and(|want| want != r.rail) {
            continue;
        }
        if let Some(reason) = &r.quote_only {
            quote_only.push(format!("{}: {reason}", r.rail));
            continue;
        }
        let Some(rail) = rails.rail(&r.rail) else {
            passed.push((r.rail.clone(), "unloaded since the quote".into()));
            continue;
        };
        let member = outcome.membership.member;
        attempted += 1;
        let live = (priced, member, r.cached);
        match attempt(&rail, ask, live, route_id, relayer).await {
            Ok(mut a) => {
                if let Some(min) = ask.min_out.filter(|m| a.quote.amount_out < *m) {
                    if best_below
                        .as_ref()
                        .is_none_or(|b| b.amount_out < a.quote.amount_out)
                    {
                        best_below = Some(a.quote.clone());
                    }
                    passed.push((r.rail.clone(), format!("delivers below minOut {min}")));
                    continue;
                }
                a.lane = r.lane.clone();
                a.passed = std::mem::take(&mut passed);
                return Ok(a);
            }
            Err(Attempt::FundsRequired(message)) => {
                funds.get_or_insert(Declined::FundsRequired {
                    rail: r.rail.clone(),
                    lane: r.lane.clone(),
                    message: message.clone(),
                });
                passed.push((r.rail.clone(), message));
            }
            Err(Attempt::Refused(why)) => {
                tracing::info!(rail = %r.rail, reason = %why, "the rail refuses the request");
                refusals.push((r.rail.clone(), why.clone()));
                passed.push((
                    r.rail.clone(),
                    format!("{:?}: {why}", RailErrorKind::InvalidInput),
                ));
            }
            Err(Attempt::Failed(why)) => {
                tracing::info!(rail = %r.rail, reason = %why, "failing over");
                passed.push((r.rail.clone(), why));
            }
        }
    }
    if let (Some(best), Some(min)) = (best_below, ask.min_out) {
        return Err(Declined::PriceMoved {
            best: best.amount_out,
            min,
            fresh: Some(Box::new(best)),
            quoted_at_ms: clock.now_ms(),
        });
    }
    if let Some(f) = funds {
        return Err(f);
    }
    if !quote_only.is_empty() && attempted == 0 {
        return Err(Declined::QuoteOnly(quote_only.join("; ")));
    }
    if attempted > 0 && refusals.len() == attempted {
        return Err(Declined::refused(&refusals));
    }
    let why: Vec<String> = passed.iter().map(|(r, w)| format!("{r}: {w}")).collect();
    if attempted == 0 && amount_refused_everywhere(outcome, ask) {
        // Every rail asked refused the amount (fees swallow it, or it is
        // above capacity): the caller's to change, not an outage to retry.
        return Err(Declined::Amount(why.join("; ")));
    }
    Err(Declined::Failed(why.join("; ")))
}

/// Whether every rail asked (the one `ask` names, else all) refused the
/// amount itself.
fn amount_refused_everywhere(outcome: &QuoteOutcome, ask: &ExecuteAsk) -> bool {
    let mut asked = outcome
        .results
        .iter()
        .filter(|r| ask.rail.as_deref().is_none_or(|want| want == r.rail))
        .peekable();
    asked.peek().is_some()
        && asked.all(|r| {
            r.outcome
                .as_ref()
                .err()
                .is_some_and(|s| s.is_amount_problem())
        })
}

enum Attempt {
    FundsRequired(String),
    /// The rail refused the request itself (`InvalidInput`).
    Refused(String),
    Failed(String),
}

fn attempt_error(e: CallError) -> Attempt {
    let e = e.to_rail_error();
    match e.kind {
        RailErrorKind::FundsRequired => Attempt::FundsRequired(e.message),
        RailErrorKind::InvalidInput => Attempt::Refused(e.message),
        _ => Attempt::Failed(format!("{:?}: {}", e.kind, e.message)),
    }
}

/// Re-prices the carried amount on one rail (always live when the ranked
/// answer came from the quote book) and asks it for a plan.
async fn attempt(
    rail: &Arc<LoadedRail>,
    ask: &ExecuteAsk,
    (priced, member, cached): (&Priced, bool, bool),
    route_id: &str,
    relayer: &str,
) -> Result<Accepted, Attempt> {
    let (route_fee, gas_fee) = withheld(ask, priced);
    let amount = carried(ask, priced);
    if amount.is_zero() {
        return Err(Attempt::Failed("fees take the whole amount".into()));
    }
    let quote = if amount == priced.quote.amount_in && !cached {
        priced.quote.clone()
    } else {
        rail.quote(QuoteRequest {
            from_chain: ask.from_chain,
            to_chain: ask.to_chain,
            from_token: ask.from_token.clone(),
            to_token: ask.to_token.clone(),
            amount,
            from_address: Some(ask.sender.clone()),
            to_address: Some(ask.recipient.clone()),
            slippage_bps: ask.route.slippage_bps,
            member,
        })
        .await
        .map_err(attempt_error)?
    };
    let plan = rail
        .prepare(PrepareRequest {
            route_id: route_id.to_string(),
            quote: quote.clone(),
            from_chain: ask.from_chain,
            to_chain: ask.to_chain,
            from_token_address: ask.from_token.address.clone(),
            to_token_address: ask.to_token.address.clone(),
            sender: ask.sender.clone(),
            recipient: ask.recipient.clone(),
            relayer: relayer.to_string(),
            mode: ask.mode,
        })
        .await
        .map_err(attempt_error)?;
    Ok(Accepted {
        rail: rail.clone(),
        lane: String::new(),
        quote,
        plan,
        route_fee,
        gas_fee,
        passed: Vec::new(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use std::{collections::HashMap, sync::Arc, time::Duration};

    use relay_capabilities::{CallCapabilities, CapabilityBroker, RailPolicy};
    use relay_config::CapabilityConfig;
    use relay_plugin_api::{
        Amount, ChainRef, ExecutionPlan, PlanAction, RailError, RailErrorKind, RailManifest,
        RailQuote, RailRole, SourceMode, Token, Version,
    };
    use relay_runtime::{
        BackendError, CallLimits, LoadedRail, Packaging, PluginBackend, RailCall, RailReply,
    };
    use relay_types::SystemClock;

    use super::*;
    use crate::{
        fees::{Deductions, Net, Tier},
        membership::Membership,
        quote::{GasBill, Priced, QuoteOutcome, RailResult, Silence},
        request::ExecuteAsk,
        route::RouteAsk,
    };

    /// A rail whose `prepare` answers with `prepare` (a plan, or an error).
    struct FakeRail {
        prepare: Result<ExecutionPlan, RailErrorKind>,
    }

    #[async_trait::async_trait]
    impl PluginBackend for FakeRail {
        fn packaging(&self) -> Packaging {
            Packaging::Native
        }

        async fn call(
            &self,
            call: RailCall,
            _caps: Arc<CallCapabilities>,
        ) -> Result<RailReply, BackendError> {
            match (call, &self.prepare) {
                (RailCall::Prepare(_), Ok(plan)) => Ok(RailReply::Plan(plan.clone())),
                (RailCall::Prepare(_), Err(kind)) => {
                    Err(RailError::new(*kind, "upstream refused").into())
                }
                (other, _) => Err(BackendError::Contract(format!(
                    "{} not faked",
                    other.method()
                ))),
            }
        }
    }

    fn manifest(id: &str) -> RailManifest {
        RailManifest {
            id: id.into(),
            name: id.into(),
            version: Version::new(1, 0, 0),
            contract_version: Version::new(1, 0, 0),
            role: RailRole::Aggregator,
            coverage: Vec::new(),
            egress: Vec::new(),
            rpc_chains: Vec::new(),
            contracts: Vec::new(),
            upstream: None,
        }
    }

    /// A rail `id` whose `prepare` answers `prepare` (every other call is
    /// refused); the engine's tests share it.
    pub(crate) fn loaded(
        id: &str,
        prepare: Result<ExecutionPlan, RailErrorKind>,
    ) -> Arc<LoadedRail> {
        let limits = CallLimits {
            timeout: Duration::from_secs(2),
            grace: Duration::from_millis(100),
            backoff_base: Duration::from_millis(10),
            backoff_max: Duration::from_millis(10),
        };
        Arc::new(LoadedRail::new(
            manifest(id),
            Arc::new(FakeRail { prepare }),
            Arc::new(RailPolicy::default()),
            Arc::new(CapabilityBroker::new(&CapabilityConfig::default())),
            limits,
        ))
    }

    fn usdc() -> Token {
        Token {
            symbol: "USDC".into(),
            address: Some("0x0000000000000000000000000000000000000001".into()),
            decimals: 6,
        }
    }

    fn ask() -> ExecuteAsk {
        let route = RouteAsk {
            from_chain: ChainRef::Evm(8453),
            to_chain: ChainRef::Evm(42161),
            from_token: usdc(),
            to_token: usdc(),
            amount: Amount::from_u128(5_000_000),
            from_address: None,
            recipient: None,
            slippage_bps: 50,
        };
        ExecuteAsk {
            from_chain: route.from_chain,
            to_chain: route.to_chain,
            from_token: route.from_token.clone(),
            to_token: route.to_token.clone(),
            amount: route.amount,
            sender: "0x00000000000000000000000000000000000000aa".into(),
            recipient: "0x00000000000000000000000000000000000000bb".into(),
            mode: SourceMode::Operator,
            permit: None,
            rail: None,
            min_out: None,
            attestation: None,
            dry_run: false,
            live: Some(true),
            router: None,
            route,
        }
    }

    /// A priced answer of `rail` delivering `out` for the whole amount.
    fn priced(rail: &str, out: u128) -> RailResult {
        let quote = RailQuote {
            rail: rail.into(),
            lane: "evm->evm".into(),
            amount_in: Amount::from_u128(5_000_000),
            amount_out: Amount::from_u128(out),
            min_out: Amount::from_u128(out),
            fees: Vec::new(),
            gas: None,
            duration_sec: 60,
            quote_only_reason: None,
            upstream_ref: None,
            expires_at_ms: u64::MAX,
            detail: serde_json::json!({}).into(),
        };
        RailResult {
            rail: rail.into(),
            role: RailRole::Aggregator,
            lane: "evm->evm".into(),
            upstream: None,
            quote_only: None,
            quoted_at_ms: Some(1),
            cached: false,
            outcome: Ok(Priced {
                quote,
                route_fee: Amount::ZERO,
                deductions: Deductions::default(),
                gas: GasBill::default(),
                net: Net {
                    estimated: Amount::from_u128(out),
                    min: Amount::from_u128(out),
                },
            }),
        }
    }

    fn silent(rail: &str) -> RailResult {
        RailResult {
            outcome: Err(Silence::Deadline(8_000)),
            ..priced(rail, 0)
        }
    }

    fn outcome(results: Vec<RailResult>) -> QuoteOutcome {
        QuoteOutcome {
            ask: ask().route,
            membership: Membership::default(),
            tier: Tier {
                route_fee_bps: 0,
                gas_markup_bps: 0,
            },
            results,
            deadline_ms: 8_000,
            resting: Vec::new(),
        }
    }

    fn plan() -> ExecutionPlan {
        ExecutionPlan {
            steps: vec![PlanAction::AwaitUpstream {
                reference: "x".into(),
            }],
            track_ref: None,
        }
    }

    #[tokio::test]
    async fn execute_fails_over_from_a_winner_that_cannot_prepare_to_the_next_ranked_rail() {
        let rails: HashMap<String, Arc<LoadedRail>> = [
            (
                "lifi".to_string(),
                loaded("lifi", Err(RailErrorKind::Upstream)),
            ),
            ("squid".to_string(), loaded("squid", Ok(plan()))),
            ("bungee".to_string(), loaded("bungee", Ok(plan()))),
        ]
        .into();
        let o = outcome(vec![
            priced("lifi", 4_990_000),
            priced("squid", 4_980_000),
            priced("bungee", 4_970_000),
        ]);
        let a = choose(&rails, &o, &ask(), "rt_x", "0xrelayer", &SystemClock)
            .await
            .unwrap();
        assert_eq!(a.rail.id(), "squid", "the next ranked rail, not the last");
        assert_eq!(a.passed.len(), 1);
        assert_eq!(a.passed[0].0, "lifi");
    }

    #[tokio::test]
    async fn a_rail_that_did_not_answer_is_reported_not_beaten_and_never_chosen() {
        let rails: HashMap<String, Arc<LoadedRail>> = [
            ("lifi".to_string(), loaded("lifi", Ok(plan()))),
            ("squid".to_string(), loaded("squid", Ok(plan()))),
        ]
        .into();
        let o = outcome(vec![priced("squid", 4_980_000), silent("lifi")]);
        let a = choose(&rails, &o, &ask(), "rt_x", "0xrelayer", &SystemClock)
            .await
            .unwrap();
        assert_eq!(a.rail.id(), "squid");
        let (rail, why) = &a.passed[0];
        assert_eq!(rail, "lifi");
        assert!(why.contains("8000"), "reported as not answering: {why}");
    }

    #[tokio::test]
    async fn when_every_rail_fails_the_refusal_lists_each_reason() {
        let rails: HashMap<String, Arc<LoadedRail>> = [
            (
                "lifi".to_string(),
                loaded("lifi", Err(RailErrorKind::Upstream)),
            ),
            (
                "squid".to_string(),
                loaded("squid", Err(RailErrorKind::UpstreamTimeout)),
            ),
        ]
        .into();
        let o = outcome(vec![priced("lifi", 4_990_000), priced("squid", 4_980_000)]);
        match choose(&rails, &o, &ask(), "rt_x", "0xrelayer", &SystemClock).await {
            Err(Declined::Failed(why)) => {
                assert!(why.contains("lifi") && why.contains("squid"), "{why}");
            }
            other => panic!("expected every rail failed, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn when_every_rail_refuses_the_request_it_is_the_callers_to_fix() {
        let refusing = |kinds: [RailErrorKind; 2]| -> HashMap<String, Arc<LoadedRail>> {
            [("lifi", kinds[0]), ("squid", kinds[1])]
                .map(|(id, k)| (id.to_string(), loaded(id, Err(k))))
                .into()
        };
        let o = outcome(vec![priced("lifi", 4_990_000), priced("squid", 4_980_000)]);
        let both = refusing([RailErrorKind::InvalidInput, RailErrorKind::InvalidInput]);
        match choose(&both, &o, &ask(), "rt_x", "0xrelayer", &SystemClock).await {
            Err(Declined::Refused { message, .. }) => {
                assert!(
                    message.contains("lifi") && message.contains("squid"),
                    "{message}"
                );
            }
            other => panic!("expected the caller's mistake, got {other:?}"),
        }
        let one = refusing([RailErrorKind::InvalidInput, RailErrorKind::Upstream]);
        assert!(
            matches!(
                choose(&one, &o, &ask(), "rt_x", "0xrelayer", &SystemClock).await,
                Err(Declined::Failed(_))
            ),
            "a rail that failed otherwise might carry it later"
        );
        let named = Declined::refused(&[
            ("btc".into(), "fromAddress: needs a bitcoin address".into()),
            ("other".into(), "no field here".into()),
        ]);
        match named {
            Declined::Refused { field, .. } => assert_eq!(field.as_deref(), Some("fromAddress")),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_price_below_the_lock_is_never_executed() {
        let rails: HashMap<String, Arc<LoadedRail>> =
            [("lifi".to_string(), loaded("lifi", Ok(plan())))].into();
        let o = outcome(vec![priced("lifi", 4_990_000)]);
        let mut locked = ask();
        locked.min_out = Some(Amount::from_u128(4_995_000));
        match choose(&rails, &o, &locked, "rt_x", "0xrelayer", &SystemClock).await {
            Err(Declined::PriceMoved { .. }) => {}
            other => panic!("expected PRICE_MOVED, got {other:?}"),
        }
    }
}
