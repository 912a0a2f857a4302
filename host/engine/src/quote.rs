//! Best-of-N quoting (spec §2.6, §4.2, §4.3; DESIGN "The engine").
//!
//! 1. **Applicable rails** = active rails whose manifest covers (from, to,
//!    asset) on configured chains ∩ enabled by the operator ∩ healthy (health
//!    report up, not quarantined). A lane whose operator switch
//!    (`executeReady`) is off is left out; a lane the manifest marks not
//!    executable is priced and marked quote-only.
//! 2. The sender's **membership** decides the fee tier (and is passed to the
//!    rails, which price their own member tiers).
//! 3. Every applicable rail is asked **concurrently under one deadline**
//!    (`quote.deadline_ms`). A rail that errs or misses the deadline is
//!    reported as not answering, with its reason.
//! 4. Each answer is **netted** the same way ([`super::fees`]): route fee,
//!    relayer gas (the rail's own estimate plus the host's Permit2 pull on
//!    an EVM source, priced by `eth_gasPrice` of the chain it is spent on)
//!    with markup, and rail fees not yet deducted.
//! 5. Answers are **ranked** by net output ([`super::rank`]).
//!
//! The engine never names a rail: everything comes from the loaded
//! plugins' manifests and answers.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::Duration,
};

use alloy::primitives::U256;
use relay_plugin_api::{Amount, QuoteRequest, RailErrorKind, RailQuote, RailRole, Token};

use futures::{
    future::Either,
    stream::{FuturesUnordered, StreamExt},
};

use super::{
    alarm,
    compare::TtlCache,
    fees::{self, Conversion, Deductions, FeeSchedule, GasSpend, Net, Tier},
    gasbook::GasBook,
    inflight::{self, Turn},
    membership::{self, Membership},
    mesh::MeshInputs,
    oracle::{self, PriceBook},
    quotebook::{self, QuoteBook},
    rank,
    rates::Rates,
    route::RouteAsk,
};
use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_runtime::LoadedRail;

/// A rail the engine will ask.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The rail.
    pub rail: Arc<LoadedRail>,
    /// The lane of its manifest that covers the request.
    pub lane: String,
    /// Why the lane is priced but never executed, when it is.
    pub quote_only: Option<String>,
}

/// The applicable rails for `ask` (coverage ∩ operator ∩ health).
pub fn candidates(i: &MeshInputs<'_>, ask: &RouteAsk) -> Vec<Candidate> {
    // The mesh's own tests (`MeshInputs::lanes`) for this one pair: both
    // ends configured, the rail enabled, its lane covering the pair.
    if !i.node_usable(&ask.from_chain) || !i.node_usable(&ask.to_chain) {
        return Vec::new();
    }
    let asset = ask.from_token.symbol.as_str();
    i.snap
        .active()
        .filter(|r| {
            i.state.rail_enabled(r.id()) && i.health.rail_up(r.id()) && r.quarantined().is_none()
        })
        .filter_map(|r| {
            let cov = r
                .manifest()
                .lane_for(&ask.from_chain, &ask.to_chain, asset)?;
            let quote_only = if !cov.executable {
                Some(
                    cov.quote_only_reason
                        .clone()
                        .unwrap_or_else(|| "this lane is quote-only".into()),
                )
            } else if !i
                .state
                .lane_execute_ready(r.id(), &cov.lane, cov.executable)
            {
                // The operator switched the lane off: out of quotes and
                // execute until switched on again.
                return None;
            } else {
                // A lane the rail reports not ready (no float, upstream
                // down) stays a candidate: its prepare answers
                // FUNDS_REQUIRED, or execute fails over.
                None
            };
            Some(Candidate {
                rail: r.clone(),
                lane: cov.lane.clone(),
                quote_only,
            })
        })
        .collect()
}

/// The rails that serve `ask`'s lane — enabled, the lane executable and
/// switched on — but are out of [`candidates`] for now, each with why (its
/// health check fails, or it is quarantined): a request naming one of
/// them meets a rail that is unavailable, not a lane it does not route,
/// and asking again may help.
pub fn resting(i: &MeshInputs<'_>, ask: &RouteAsk) -> Vec<(String, String)> {
    if !i.node_usable(&ask.from_chain) || !i.node_usable(&ask.to_chain) {
        return Vec::new();
    }
    let asset = ask.from_token.symbol.as_str();
    i.snap
        .active()
        .filter(|r| i.state.rail_enabled(r.id()))
        .filter_map(|r| {
            let cov = r
                .manifest()
                .lane_for(&ask.from_chain, &ask.to_chain, asset)?;
            let on = cov.executable && i.state.lane_execute_ready(r.id(), &cov.lane, true);
            let why = match (r.quarantined(), i.health.rail_up(r.id())) {
                _ if !on => return None,
                (Some(q), _) => format!("quarantined: {q}"),
                (None, false) => "its health check fails".to_string(),
                (None, true) => return None,
            };
            Some((r.id().to_string(), why))
        })
        .collect()
}

/// Why a rail has no usable price.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum Silence {
    /// The rail answered with an error (or faulted).
    #[error("{message}")]
    Failed {
        /// What kind.
        kind: RailErrorKind,
        /// Its message.
        message: String,
        /// Whether asking again may help.
        retryable: bool,
    },
    /// The rail missed the fan-out deadline.
    #[error("did not answer within the {0} ms deadline")]
    Deadline(u64),
    /// A cold fan-out answered without the rail at its soft deadline
    /// ([`super::latency`]); its answer goes to the quote book.
    #[error("late: not answered by the {0} ms soft deadline (its answer goes to the quote book)")]
    Late(u64),
    /// The quote book holds no answer of the rail within the staleness
    /// bound ([`super::quotebook`]).
    #[error("no answer within the last {0} ms (the quote book's staleness bound)")]
    Stale(u64),
    /// The answer could not be priced (gas price or token price missing).
    #[error("could not be priced: {0}")]
    Unpriced(String),
    /// Fees swallow the whole output.
    #[error("fees of {fees} reach the output {out}: amount too small for this rail")]
    Unviable {
        /// The rail's output.
        out: Amount,
        /// Everything deducted.
        fees: Amount,
    },
}

impl Silence {
    /// A stable machine-readable reason.
    pub fn code(&self) -> String {
        match self {
            Silence::Failed { kind, .. } => format!("{kind:?}"),
            Silence::Deadline(_) => "DEADLINE".into(),
            Silence::Late(_) => "LATE".into(),
            Silence::Stale(_) => "STALE".into(),
            Silence::Unpriced(_) => "UNPRICED".into(),
            Silence::Unviable { .. } => "FEES_EXCEED_OUTPUT".into(),
        }
    }

    /// Whether the rail answered that it has no route for this transfer.
    pub fn is_unrouted(&self) -> bool {
        matches!(
            self,
            Silence::Failed {
                kind: RailErrorKind::UnsupportedLane,
                ..
            }
        )
    }

    /// Whether the amount, not the rail, is the problem.
    pub fn is_amount_problem(&self) -> bool {
        matches!(
            self,
            Silence::Unviable { .. }
                | Silence::Failed {
                    kind: RailErrorKind::AmountOutOfRange,
                    ..
                }
        )
    }
}

/// Relayer gas of one answer: units per chain and what it was priced at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GasBill {
    /// Chain id → (units, gas price wei).
    pub chains: BTreeMap<u64, (u64, U256)>,
    /// Markup applied, bps.
    pub markup_bps: u32,
    /// The charge in the destination token.
    pub fee: Amount,
}

/// A netted answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Priced {
    /// The rail's own answer.
    pub quote: RailQuote,
    /// The route fee in source units.
    pub route_fee: Amount,
    /// Everything deducted, destination units.
    pub deductions: Deductions,
    /// Relayer gas.
    pub gas: GasBill,
    /// What arrives.
    pub net: Net,
}

/// One rail's place in a quote.
#[derive(Clone, Debug)]
pub struct RailResult {
    /// Rail id.
    pub rail: String,
    /// Its role.
    pub role: RailRole,
    /// Its covering lane.
    pub lane: String,
    /// Its upstream, if it names one.
    pub upstream: Option<String>,
    /// Why it is quote-only, if it is.
    pub quote_only: Option<String>,
    /// Its netted answer, or why there is none.
    pub outcome: Result<Priced, Silence>,
    /// When the rail's answer was quoted, epoch ms (none when it did not
    /// answer).
    pub quoted_at_ms: Option<u64>,
    /// Whether the answer came from the quote book.
    pub cached: bool,
}

impl RailResult {
    fn rank_key(&self) -> rank::RankKey<'_> {
        let ok = self.outcome.as_ref().ok();
        rank::RankKey {
            net: ok.map(|p| p.net.estimated),
            duration_sec: ok.map_or(u32::MAX, |p| p.quote.duration_sec),
            rail: &self.rail,
        }
    }
}

/// A ranked quote.
#[derive(Clone, Debug)]
pub struct QuoteOutcome {
    /// The request.
    pub ask: RouteAsk,
    /// The sender's membership.
    pub membership: Membership,
    /// The tier charged.
    pub tier: Tier,
    /// Every applicable rail, in ranking order.
    pub results: Vec<RailResult>,
    /// The fan-out deadline, ms.
    pub deadline_ms: u64,
    /// Rails that serve the lane but are out for now, with why
    /// ([`resting`]); set by the caller that found the candidates.
    pub resting: Vec<(String, String)>,
}

/// Why a quote has no route at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoRoute {
    /// Every rail refused the amount (too small for fees, above capacity).
    #[error("no rail can carry this amount: {0}")]
    AmountOutOfRange(String),
    /// Every rail answered that it has no route for this pair (the lane is
    /// covered, this token pair or direction is not).
    #[error("no rail routes this transfer: {0}")]
    Unroutable(String),
    /// Every rail failed to answer.
    #[error("no rail could quote: {0}")]
    Unavailable(String),
}

impl QuoteOutcome {
    /// Why rail `id`, absent from the results, is out for now, when it
    /// serves the lane ([`resting`]).
    pub fn resting_reason(&self, id: &str) -> Option<&str> {
        self.resting
            .iter()
            .find(|(rail, _)| rail == id)
            .map(|(_, why)| why.as_str())
    }

    /// What answers a request naming rail `want`, absent from the
    /// results: unavailable for now when it serves the lane but rests
    /// (retryable), else `None` (it does not serve the lane).
    pub fn named_rail_resting(&self, want: &str) -> Option<NoRoute> {
        self.resting_reason(want).map(|why| {
            NoRoute::Unavailable(format!(
                "rail {want:?} serves this lane but is unavailable now ({why}); ask again shortly, or name no rail"
            ))
        })
    }

    /// The winner and its price.
    pub fn best(&self) -> Option<(&RailResult, &Priced)> {
        let r = self.results.first()?;
        r.outcome.as_ref().ok().map(|p| (r, p))
    }

    /// How many rails answered with a viable price.
    pub fn answered(&self) -> usize {
        self.results.iter().filter(|r| r.outcome.is_ok()).count()
    }

    /// Why there is no winner, when there is none.
    pub fn no_route(&self) -> Option<NoRoute> {
        if self.best().is_some() {
            return None;
        }
        let silences: Vec<&Silence> = self
            .results
            .iter()
            .filter_map(|r| r.outcome.as_ref().err())
            .collect();
        let reasons = self
            .results
            .iter()
            .filter_map(|r| r.outcome.as_ref().err().map(|e| format!("{}: {e}", r.rail)))
            .collect::<Vec<_>>()
            .join("; ");
        Some(if silences.iter().all(|s| s.is_amount_problem()) {
            NoRoute::AmountOutOfRange(reasons)
        } else if silences
            .iter()
            .all(|s| s.is_unrouted() || s.is_amount_problem())
        {
            NoRoute::Unroutable(reasons)
        } else {
            NoRoute::Unavailable(reasons)
        })
    }
}

/// The quoting service: chain reads, the fee schedule, the deadline, the
/// quote book.
#[derive(Debug)]
pub struct Quoter {
    config: Arc<HostConfig>,
    reader: Arc<ChainReader>,
    schedule: FeeSchedule,
    prices: Arc<PriceBook>,
    book: Arc<QuoteBook>,
    /// `eth_gasPrice` by chain ([`super::gasbook`]).
    gas: GasBook,
    /// Membership by sender, read at most every [`MEMBERSHIP_TTL`].
    members: TtlCache<Membership>,
}

/// How long a sender's membership check is reused.
pub const MEMBERSHIP_TTL: Duration = Duration::from_secs(10);

/// Gas prices by chain id, or why one could not be read.
type GasPrices = BTreeMap<u64, Result<U256, String>>;

/// One answer of the fan-out: the rail's quote (or why not), when it was
/// quoted, whether it was served from an earlier call (the book, or
/// another request's fan-out) rather than asked for this request.
pub type Answer = (Result<RailQuote, Silence>, Option<u64>, bool);

/// A live fan-out's answers by rail id, as its followers are served them
/// ([`super::inflight`]).
pub type LiveAnswers = Vec<(String, Answer)>;

/// The rail request for `ask`.
fn request(ask: &RouteAsk, member: bool) -> QuoteRequest {
    QuoteRequest {
        from_chain: ask.from_chain,
        to_chain: ask.to_chain,
        from_token: ask.from_token.clone(),
        to_token: ask.to_token.clone(),
        amount: ask.amount,
        from_address: ask.from_address.clone(),
        to_address: ask.recipient.clone(),
        slippage_bps: ask.slippage_bps,
        member,
    }
}

/// Asks one rail, bounded by `hard`.
pub async fn ask_rail(
    rail: &LoadedRail,
    req: QuoteRequest,
    hard: Duration,
) -> Result<RailQuote, Silence> {
    let answer = match tokio::time::timeout(hard, rail.quote(req)).await {
        Ok(Ok(q)) => Ok(q),
        Ok(Err(e)) => {
            let e = e.to_rail_error();
            Err(Silence::Failed {
                kind: e.kind,
                message: e.message,
                retryable: e.retryable,
            })
        }
        Err(_) => Err(Silence::Deadline(hard.as_millis() as u64)),
    };
    if let Err(e) = &answer {
        tracing::info!(rail = rail.id(), reason = %e, "rail not answering");
    }
    answer
}

impl Quoter {
    /// A quoter over `config`'s chains, converting gas with `prices`, with
    /// its own quote book (never refreshed in the background: use
    /// [`Quoter::with_book`] to share the host's).
    pub fn new(config: Arc<HostConfig>, prices: Arc<PriceBook>) -> Self {
        let book = Arc::new(QuoteBook::for_config(&config, prices.clock().clone()));
        Self::with_book(config, prices, book)
    }

    /// A quoter answering warm lanes from `book`.
    pub fn with_book(
        config: Arc<HostConfig>,
        prices: Arc<PriceBook>,
        book: Arc<QuoteBook>,
    ) -> Self {
        let reader = Arc::new(ChainReader::new(&config));
        Quoter {
            gas: GasBook::new(reader.clone()),
            reader,
            schedule: FeeSchedule::from_config(&config.quote),
            config,
            prices,
            book,
            members: TtlCache::new(MEMBERSHIP_TTL),
        }
    }

    /// The fee schedule in force.
    pub fn schedule(&self) -> FeeSchedule {
        self.schedule
    }

    /// The quote book.
    pub fn book(&self) -> &Arc<QuoteBook> {
        &self.book
    }

    async fn membership(&self, who: Option<&str>) -> Membership {
        let key = who.unwrap_or("").to_ascii_lowercase();
        if let Some(m) = self.members.get(&key) {
            return (*m).clone();
        }
        let m = membership::check(&self.reader, &self.config.vip.registry, who).await;
        if m.unread.is_empty() {
            self.members.put(key, m.clone());
        }
        m
    }

    /// Quotes `ask` on every candidate and ranks the answers: from the
    /// quote book on a warm lane, else a hedged live fan-out.
    #[tracing::instrument(skip_all, fields(rails = candidates.len(), member, cached))]
    pub async fn quote(&self, candidates: Vec<Candidate>, ask: &RouteAsk) -> QuoteOutcome {
        // Both ends: a rail bills its gas on one of them.
        let ends = [ask.from_chain.evm_id(), ask.to_chain.evm_id()];
        let (membership, mut gas) = tokio::join!(
            self.membership(ask.from_address.as_deref()),
            self.gas_prices(ends.into_iter().flatten()),
        );
        tracing::Span::current().record("member", membership.member);
        let tier = self.schedule.tier(membership.member);
        let req = request(ask, membership.member);
        if self.book.config().enabled {
            self.book.prime(&quotebook::LaneKey::of(&req)).await;
        }
        let answers = match self.answers_from_book(&candidates, &req) {
            Some(a) => a,
            None => {
                let early = Rates::read(&self.prices, ask, gas.keys().copied());
                let priceable =
                    |q: &RailQuote| self.price(ask, tier, q.clone(), (&gas, &early)).is_ok();
                self.live(&candidates, &req, &priceable).await
            }
        };
        tracing::Span::current().record("cached", answers.iter().any(|a| a.2));
        let more: BTreeSet<u64> = answers
            .iter()
            .filter_map(|a| a.0.as_ref().ok()?.gas.as_ref()?.chain.evm_id())
            .filter(|c| !gas.contains_key(c))
            .collect();
        gas.extend(self.gas_prices(more).await);
        // Read once the answers are in, as every answer is netted now.
        let rates = Rates::read(&self.prices, ask, gas.keys().copied());
        let mut results: Vec<RailResult> = candidates
            .into_iter()
            .zip(answers)
            .map(|(c, (answer, quoted_at_ms, cached))| {
                let m = c.rail.manifest();
                let outcome = answer.and_then(|q| self.price(ask, tier, q, (&gas, &rates)));
                let quote_only = c.quote_only.or_else(|| {
                    outcome
                        .as_ref()
                        .ok()
                        .and_then(|p| p.quote.quote_only_reason.clone())
                });
                RailResult {
                    rail: m.id.clone(),
                    role: m.role,
                    lane: c.lane,
                    upstream: m.upstream.clone(),
                    quote_only,
                    quoted_at_ms: quoted_at_ms.filter(|_| outcome.is_ok()),
                    cached,
                    outcome,
                }
            })
            .collect();
        rank::rank(&mut results, RailResult::rank_key);
        QuoteOutcome {
            ask: ask.clone(),
            membership,
            tier,
            results,
            deadline_ms: self.config.quote.deadline_ms,
            resting: Vec::new(),
        }
    }

    async fn gas_prices(&self, chains: impl IntoIterator<Item = u64>) -> GasPrices {
        let reads = chains
            .into_iter()
            .map(|c| async move { (c, self.gas.price(c).await) });
        futures::future::join_all(reads).await.into_iter().collect()
    }

    /// The book's answers for a warm lane (module docs of
    /// [`super::quotebook`], "when the book answers"); `None` when the
    /// lane is cold, a rail that is not failing has no fresh answer, or no
    /// rail has a price. Every candidate is marked as seeing traffic.
    fn answers_from_book(
        &self,
        candidates: &[Candidate],
        req: &QuoteRequest,
    ) -> Option<Vec<Answer>> {
        let cfg = self.book.config();
        if !cfg.enabled {
            return None;
        }
        let rails: Vec<Arc<LoadedRail>> = candidates.iter().map(|c| c.rail.clone()).collect();
        let key = quotebook::LaneKey::of(req);
        let kept = self.book.visit(&key, req, &rails)?;
        let stale = Duration::from_millis(cfg.stale_ms);
        let mut answers = Vec::with_capacity(rails.len());
        for (rail, (k, asking)) in rails.iter().zip(kept) {
            let aged = k.is_some();
            answers.push(match k.filter(|k| k.age() < stale) {
                // A failing rail, or one whose answer aged out while the
                // book is asking it again (hung), delays nothing; one the
                // book has no answer of yet, or merely could not keep
                // fresh, makes the quote live.
                None if (asking && aged) || self.book.budgets.failing(rail.id()) => {
                    (Err(Silence::Stale(cfg.stale_ms)), None, true)
                }
                None => return None,
                Some(k) => (
                    self.serve(&key, &k.answer, rail, req),
                    Some(k.quoted_at_ms),
                    true,
                ),
            });
        }
        answers.iter().any(|a| a.0.is_ok()).then_some(answers)
    }

    /// An earlier answer of `rail` (the book's, or another request's
    /// fan-out) served to `req`'s amount; when the amounts differ, a live
    /// quote of the exact amount is scheduled in the background.
    fn serve(
        &self,
        key: &quotebook::LaneKey,
        answer: &Result<RailQuote, Silence>,
        rail: &Arc<LoadedRail>,
        req: &QuoteRequest,
    ) -> Result<RailQuote, Silence> {
        let q = answer.as_ref().map_err(Silence::clone)?;
        if q.amount_in != req.amount {
            self.book.ask_later(key, req, rail);
        }
        Ok(quotebook::scale(q, req.amount, req))
    }

    /// A live fan-out — or, while one for the lane is already in flight,
    /// its answers served to this amount ([`super::inflight`]).
    async fn live(
        &self,
        candidates: &[Candidate],
        req: &QuoteRequest,
        priceable: &(dyn Fn(&RailQuote) -> bool + Sync),
    ) -> Vec<Answer> {
        if !self.book.config().enabled {
            return self.fan_out(candidates, req, priceable).await;
        }
        let key = quotebook::LaneKey::of(req);
        loop {
            let slot = match self.book.live.turn(&key) {
                Turn::Lead(lead) => {
                    let answers = self.fan_out(candidates, req, priceable).await;
                    let ids = candidates.iter().map(|c| c.rail.id().to_string());
                    lead.publish(Arc::new(ids.zip(answers.iter().cloned()).collect()));
                    return answers;
                }
                Turn::Follow(slot) => slot,
            };
            // A leader dropped before answering: the next turn leads.
            if let Some(shared) = inflight::wait(slot).await {
                return match self.served_from(&shared, candidates, req) {
                    Some(answers) => answers,
                    None => self.fan_out(candidates, req, priceable).await,
                };
            }
        }
    }

    /// Another request's live answers served to `req`, when they cover
    /// every candidate.
    fn served_from(
        &self,
        shared: &LiveAnswers,
        candidates: &[Candidate],
        req: &QuoteRequest,
    ) -> Option<Vec<Answer>> {
        let key = quotebook::LaneKey::of(req);
        candidates
            .iter()
            .map(|c| {
                let (_, (answer, at, _)) = shared.iter().find(|(id, _)| id == c.rail.id())?;
                Some((self.serve(&key, answer, &c.rail, req), *at, true))
            })
            .collect()
    }

    /// Asks every candidate concurrently (hedged: [`super::latency`]); a
    /// rail still out at the soft deadline — once some rail has answered
    /// with a price the host can net (`priceable`) — is `LATE` and its
    /// answer lands in the book; the hard deadline ends hung rails.
    async fn fan_out(
        &self,
        candidates: &[Candidate],
        req: &QuoteRequest,
        priceable: &(dyn Fn(&RailQuote) -> bool + Sync),
    ) -> Vec<Answer> {
        let hard = Duration::from_millis(self.config.quote.deadline_ms);
        let soft = self.book.latencies.soft_deadline(
            self.book.config(),
            hard,
            candidates.iter().map(|c| c.rail.id()),
        );
        let mut calls: FuturesUnordered<_> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (book, rail, req) = (self.book.clone(), c.rail.clone(), req.clone());
                book.spend(rail.id());
                let task = tokio::spawn(async move {
                    let answer = book.call(&rail, req.clone()).await;
                    let at = book.keep(&req, rail.id(), answer.clone());
                    (answer, at)
                });
                async move { (i, task.await) }
            })
            .collect();
        let mut answers: Vec<Option<Answer>> = vec![None; candidates.len()];
        // Precise to a fraction of a millisecond ([`super::alarm`]).
        let mut alarm = soft.map(|s| alarm::at(std::time::Instant::now() + s));
        loop {
            // The soft deadline only cuts a fan-out that already has a
            // price the host can net (a rail's answer can still be priced
            // out: gas it cannot bill, nothing left after fees).
            let priced = answers
                .iter()
                .flatten()
                .any(|a| a.0.as_ref().is_ok_and(priceable));
            let next = match alarm.as_mut().filter(|_| priced) {
                Some(ring) => match futures::future::select(calls.next(), ring).await {
                    Either::Left((n, _)) => n,
                    Either::Right(_) => break,
                },
                None => calls.next().await,
            };
            let Some((i, joined)) = next else { break };
            answers[i] = Some(match joined {
                Ok((answer, at)) => (answer, Some(at), false),
                Err(e) => (
                    Err(Silence::Unpriced(format!("quote task: {e}"))),
                    None,
                    false,
                ),
            });
        }
        let soft_ms = soft.map_or(0, |s| s.as_millis() as u64);
        answers
            .into_iter()
            .map(|a| a.unwrap_or((Err(Silence::Late(soft_ms)), None, false)))
            .collect()
    }

    /// Nets one answer (spec §8.2) at the quote's gas prices and USD
    /// prices.
    fn price(
        &self,
        ask: &RouteAsk,
        tier: Tier,
        q: RailQuote,
        (gas, rates): (&GasPrices, &Rates<'_>),
    ) -> Result<Priced, Silence> {
        let conversion =
            Conversion::between(&ask.from_token, &ask.to_token, q.amount_in, q.amount_out);
        let route_fee = fees::route_fee(ask.amount, tier.route_fee_bps);
        let bill = self.gas_bill(ask, tier, &q, (gas, rates), conversion)?;
        let rail_fees = q
            .fees
            .iter()
            .filter(|f| !f.included)
            .map(|f| {
                if f.token.eq_ignore_ascii_case(&ask.to_token.symbol) {
                    f.amount
                } else if f.token.eq_ignore_ascii_case(&ask.from_token.symbol) {
                    conversion.apply(f.amount)
                } else {
                    Amount::ZERO
                }
            })
            .fold(Amount::ZERO, |a, b| {
                a.checked_add(b).unwrap_or(Amount(U256::MAX))
            });
        let deductions = Deductions {
            route_fee: conversion.apply(route_fee),
            gas_fee: bill.fee,
            rail_fees,
        };
        let net = fees::net(q.amount_out, q.min_out, &deductions);
        if !net.viable() {
            return Err(Silence::Unviable {
                out: q.amount_out,
                fees: deductions.total(),
            });
        }
        Ok(Priced {
            quote: q,
            route_fee,
            deductions,
            gas: bill,
            net,
        })
    }

    /// The relayer's gas for one answer, in the destination token.
    fn gas_bill(
        &self,
        ask: &RouteAsk,
        tier: Tier,
        q: &RailQuote,
        (gas, rates): (&GasPrices, &Rates<'_>),
        conversion: Conversion,
    ) -> Result<GasBill, Silence> {
        let mut units: BTreeMap<u64, u64> = BTreeMap::new();
        if let (Some(src), Some(_)) = (ask.from_chain.evm_id(), &ask.from_token.address) {
            *units.entry(src).or_default() += self.config.quote.permit2_pull_gas;
        }
        if let Some((c, u)) = q
            .gas
            .as_ref()
            .and_then(|g| Some((g.chain.evm_id()?, g.gas_units)))
        {
            let e = units.entry(c).or_default();
            *e = e.saturating_add(u);
        }
        let mut bill = GasBill {
            markup_bps: tier.gas_markup_bps,
            ..GasBill::default()
        };
        let mut spends = Vec::new();
        for (chain, u) in units {
            let price = gas
                .get(&chain)
                .cloned()
                .unwrap_or_else(|| Err("not read".into()))
                .map_err(|e| Silence::Unpriced(format!("gas price of chain {chain}: {e}")))?;
            let native_usd_e6 = rates
                .native_usd_e6(chain)
                .map_err(|e| Silence::Unpriced(format!("gas of chain {chain}: {e}")))?;
            bill.chains.insert(chain, (u, price));
            spends.push(GasSpend {
                units: u,
                price_wei: price,
                native_usd_e6,
            });
        }
        bill.fee = gas_in_token(ask, rates, &spends, tier.gas_markup_bps, conversion)?;
        Ok(bill)
    }
}

/// Gas in the destination token: directly when it has a price, otherwise
/// through the source token's price and the quote's rate.
fn gas_in_token(
    ask: &RouteAsk,
    rates: &Rates<'_>,
    spends: &[GasSpend],
    markup_bps: u32,
    conversion: Conversion,
) -> Result<Amount, Silence> {
    if spends.is_empty() {
        return Ok(Amount::ZERO);
    }
    let priced = |price: &Result<fees::TokenPrice, oracle::Unpriced>, t: &Token| {
        let p = price.clone().map_err(|e| e.to_string())?;
        fees::gas_fee(spends, markup_bps, p)
            .ok_or_else(|| format!("{} is priced at zero", t.symbol))
    };
    let to = match priced(&rates.to, &ask.to_token) {
        Ok(fee) => return Ok(fee),
        Err(e) => e,
    };
    priced(&rates.from, &ask.from_token)
        .map(|in_source| conversion.apply(in_source))
        .map_err(|from| Silence::Unpriced(format!("gas in the token: {to}; {from}")))
}
