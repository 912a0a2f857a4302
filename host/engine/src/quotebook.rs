//! The warm quote book (issue 12): lanes that see traffic keep every
//! applicable rail's answer fresh in the background, so a quote on a warm
//! lane answers from memory instead of waiting for the slowest upstream.
//!
//! **Lanes.** A lane is (source chain and token, destination chain and
//! token, amount bucket, member tier, slippage). Amount buckets are
//! log-scale, one per power of two: `bucket = bit length of the amount`,
//! so 5 USDC and 7 USDC share a bucket and 9 USDC does not. At most
//! `[quote_book] lanes` lanes are kept, the least recently quoted dropped
//! first; a lane nobody quoted for `idle_ms` is dropped too.
//!
//! **Freshness.** Every rail's last answer (a price, or a refusal such as
//! "amount out of range") is kept with when it was quoted. The refresher
//! ([`QuoteBook::run`], stopped by the host's cancellation token) asks a
//! rail again once its answer is `refresh_ms` old, within the rail's
//! request budget ([`super::budget`]: never exceeded; upstream errors back
//! off exponentially). An answer older than `stale_ms` (default 12 s) is
//! never served.
//!
//! **Which lanes the budget keeps.** A lane is refreshed once it has been
//! quoted a second time: a lane quoted once (a one-off amount, slippage or
//! pair) serves its live answers until they age out and costs no refresh.
//! Within the budget the busiest lanes come first — a lane's heat is its
//! quotes, each fading with a half-life of [`HEAT_HALF_LIFE`] — so a
//! stream of one-off lanes never takes the budget from the lanes that see
//! the traffic.
//!
//! **When the book answers.** A lane answers from the book only when every
//! rail asked has a fresh answer there, is failing upstream (its last call
//! erred or timed out), or had an answer that aged out while the book is
//! asking it again (a refresh that has not come back within `stale_ms −
//! refresh_ms`: a hung upstream): such a rail is
//! reported as not answering, `STALE`, and delays nothing. Otherwise — a
//! rail the budget could not keep fresh, a rail new on the lane — the quote
//! is a live fan-out like a cold lane's, and its answers warm the book; so
//! a budget too small for the traffic costs speed, never a rail's place in
//! the ranking. A lane has one live fan-out at a time
//! ([`super::inflight`]): requests arriving while it runs wait for it and
//! are served its answers.
//!
//! **Serving another amount.** A book answer for amount `A` (output `O`,
//! minimum `M`, included fees `F` in output units) serves amount `A'` of
//! the same bucket with
//!
//! ```text
//! proportional  O·A'/A              (fees that scale with the amount)
//! fixed fees    (O + F)·A'/A − F    (fees that do not)
//! served out    min(proportional, fixed fees)     — the lower, honest side
//! served min    served out · M / O                — the rail's own slippage ratio
//! ```
//!
//! The included fees listed with the served answer are the ones its output
//! implies: `F·A'/A` when the proportional side was served, `F` when the
//! fixed side was. A rail's own `detail` (the float lane's block, a
//! non-EVM leg's rail object) is the book's, for amount `A`.
//!
//! Fees not included in the rail's output, its gas units and the host's
//! own fees are fixed per transfer and are netted afresh for `A'` (route
//! fee, gas at the current gas price). The served minimum is what the
//! quote's attestation locks; execute re-quotes the rail live and only
//! proceeds when the fresh output meets it. Whenever the served amount
//! differs from the book's, a live quote for exactly that amount is
//! scheduled in the background (within the budget), so the next quote of
//! that amount is exact.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use alloy::primitives::U256;
use relay_config::QuoteBookConfig;
use relay_plugin_api::{Amount, ChainRef, Fee, QuoteRequest, RailQuote};
use relay_runtime::LoadedRail;
use relay_types::clock::SharedClock;
use tokio_util::sync::CancellationToken;

mod share;

pub use share::{BookShare, Published, ShareDown, Sharing};

use super::{
    budget::Budgets,
    fees::Conversion,
    inflight::Inflight,
    latency::Latencies,
    quote::{ask_rail, LiveAnswers, Silence},
};

/// How fast a lane's heat fades (module docs): it halves every this long.
pub const HEAT_HALF_LIFE: Duration = Duration::from_secs(30);

/// A lane of the book.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaneKey {
    from: (ChainRef, String),
    to: (ChainRef, String),
    bucket: usize,
    member: bool,
    slippage_bps: u32,
}

fn token_key(t: &relay_plugin_api::Token) -> String {
    t.address
        .as_deref()
        .unwrap_or(&t.symbol)
        .to_ascii_lowercase()
}

/// The amount bucket of `amount` (module docs).
pub fn bucket(amount: Amount) -> usize {
    amount.0.bit_len()
}

impl LaneKey {
    /// The lane of `req`.
    pub fn of(req: &QuoteRequest) -> Self {
        LaneKey {
            from: (req.from_chain, token_key(&req.from_token)),
            to: (req.to_chain, token_key(&req.to_token)),
            bucket: bucket(req.amount),
            member: req.member,
            slippage_bps: req.slippage_bps,
        }
    }

    /// The lane as replicas name it ([`share`]).
    pub fn id(&self) -> String {
        let LaneKey {
            from,
            to,
            bucket,
            member,
            slippage_bps,
        } = self;
        format!(
            "{}:{}>{}:{}/{bucket}/{}/{slippage_bps}",
            from.0, from.1, to.0, to.1, *member as u8
        )
    }
}

/// One rail's last answer on a lane.
#[derive(Clone, Debug)]
pub struct Kept {
    /// The answer (for the amount it names), or why there was none;
    /// shared, so serving it copies only what is scaled.
    pub answer: Arc<Result<RailQuote, Silence>>,
    /// When it was quoted, epoch ms.
    pub quoted_at_ms: u64,
    at: Instant,
}

impl Kept {
    /// An answer another replica published, `age` old now.
    fn adopted(p: Published, age: Duration) -> Self {
        Kept {
            answer: Arc::new(p.answer),
            quoted_at_ms: p.quoted_at_ms,
            at: Instant::now().checked_sub(age).unwrap_or_else(Instant::now),
        }
    }

    /// How old it is.
    pub fn age(&self) -> Duration {
        self.at.elapsed()
    }
}

/// How busy a lane is: its quotes, each fading with [`HEAT_HALF_LIFE`].
#[derive(Clone, Copy, Debug)]
struct Heat {
    quotes: u32,
    value: f64,
    at: Instant,
}

impl Heat {
    fn new(now: Instant) -> Self {
        Heat {
            quotes: 1,
            value: 1.0,
            at: now,
        }
    }

    /// The heat at `now`.
    fn at(&self, now: Instant) -> f64 {
        let halves =
            now.saturating_duration_since(self.at).as_secs_f64() / HEAT_HALF_LIFE.as_secs_f64();
        self.value * 0.5f64.powf(halves)
    }

    /// One more quote at `now`.
    fn bump(&mut self, now: Instant) {
        *self = Heat {
            quotes: self.quotes.saturating_add(1),
            value: self.at(now) + 1.0,
            at: now,
        };
    }
}

#[derive(Debug)]
struct Lane {
    /// The last request on the lane (refreshes ask it again).
    req: QuoteRequest,
    rails: Vec<Arc<LoadedRail>>,
    kept: HashMap<String, Kept>,
    used: Instant,
    heat: Heat,
    asking: HashSet<String>,
}

/// The book (module docs).
#[derive(Debug)]
pub struct QuoteBook {
    cfg: QuoteBookConfig,
    /// The hard deadline of one upstream call.
    hard: Duration,
    /// Stamps each kept answer.
    clock: SharedClock,
    lanes: Mutex<HashMap<LaneKey, Lane>>,
    /// Per-rail latency (the hedged fan-out reads it).
    pub latencies: Latencies,
    /// Per-rail request budgets.
    pub budgets: Budgets,
    /// Live fan-outs in flight, one per lane.
    pub live: Inflight<LaneKey, LiveAnswers>,
    /// Shared with other replicas ([`share`]), when they run.
    share: Option<Sharing>,
}

/// A refresh the refresher decided to make.
struct Due {
    key: LaneKey,
    rail: Arc<LoadedRail>,
    req: QuoteRequest,
}

impl QuoteBook {
    /// A book under `cfg`, upstream calls bounded by `hard`, answers
    /// stamped by `clock`.
    pub fn new(cfg: QuoteBookConfig, hard: Duration, clock: SharedClock) -> Self {
        QuoteBook {
            budgets: Budgets::new(cfg.clone()),
            latencies: Latencies::default(),
            live: Inflight::default(),
            lanes: Mutex::new(HashMap::new()),
            cfg,
            hard,
            clock,
            share: None,
        }
    }

    /// The book shared with other replicas through `sharing` ([`share`]).
    pub fn shared(mut self, sharing: Sharing) -> Self {
        self.share = Some(sharing);
        self
    }

    /// Whether the book is shared with other replicas.
    pub fn is_shared(&self) -> bool {
        self.share.is_some()
    }

    /// The book of `config` (`[quote_book]`, upstream calls bounded by
    /// `quote.deadline_ms`), answers stamped by `clock`.
    pub fn for_config(config: &relay_config::HostConfig, clock: SharedClock) -> Self {
        Self::new(
            config.quote_book.clone(),
            Duration::from_millis(config.quote.deadline_ms),
            clock,
        )
    }

    /// Its settings.
    pub fn config(&self) -> &QuoteBookConfig {
        &self.cfg
    }

    fn lanes(&self) -> std::sync::MutexGuard<'_, HashMap<LaneKey, Lane>> {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the lane of `req` as seeing traffic (warming it if new), asked
    /// on `rails`; when the lane was already warm, each rail's kept answer
    /// (in `rails` order) and whether the book is asking it now.
    pub fn visit(
        &self,
        key: &LaneKey,
        req: &QuoteRequest,
        rails: &[Arc<LoadedRail>],
    ) -> Option<Vec<(Option<Kept>, bool)>> {
        let mut lanes = self.lanes();
        let now = Instant::now();
        if let Some(lane) = lanes.get_mut(key) {
            lane.used = now;
            lane.heat.bump(now);
            lane.req = req.clone();
            // A warm lane sees the same rails on every quote.
            let same_rails = lane.rails.len() == rails.len()
                && lane.rails.iter().zip(rails).all(|(a, b)| Arc::ptr_eq(a, b));
            if !same_rails {
                lane.rails = rails.to_vec();
            }
            return Some(
                rails
                    .iter()
                    .map(|r| (lane.kept.get(r.id()).cloned(), lane.asking.contains(r.id())))
                    .collect(),
            );
        }
        if lanes.len() >= self.cfg.lanes {
            let oldest = lanes
                .iter()
                .min_by_key(|(_, l)| l.used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                lanes.remove(&k);
            }
        }
        let kept = self.seeded(key);
        let served = (!kept.is_empty()).then(|| {
            rails
                .iter()
                .map(|r| (kept.get(r.id()).cloned(), false))
                .collect()
        });
        let lane = Lane {
            req: req.clone(),
            rails: rails.to_vec(),
            kept,
            used: now,
            heat: Heat::new(now),
            asking: HashSet::new(),
        };
        lanes.insert(key.clone(), lane);
        served
    }

    /// Keeps `rail`'s answer to `req` (a live quote or a refresh); when it
    /// was quoted (epoch ms), as the book records it.
    pub fn keep(&self, req: &QuoteRequest, rail: &str, answer: Result<RailQuote, Silence>) -> u64 {
        let quoted_at_ms = self.clock.now_ms();
        let key = LaneKey::of(req);
        let mut lanes = self.lanes();
        let Some(lane) = lanes.get_mut(&key) else {
            return quoted_at_ms;
        };
        lane.asking.remove(rail);
        if !self.replaces(lane.kept.get(rail), &answer) {
            return quoted_at_ms;
        }
        self.publish(&key, rail, (&answer, quoted_at_ms));
        lane.kept.insert(
            rail.to_string(),
            Kept {
                answer: Arc::new(answer),
                quoted_at_ms,
                at: Instant::now(),
            },
        );
        quoted_at_ms
    }

    /// Whether `answer` replaces `kept`: a refusal never overwrites a price
    /// still fresh enough to serve (the rail is backing off, and the price
    /// ages out on its own).
    fn replaces(&self, kept: Option<&Kept>, answer: &Result<RailQuote, Silence>) -> bool {
        let fresh_price = kept.is_some_and(|k| {
            k.answer.is_ok() && k.age() < Duration::from_millis(self.cfg.stale_ms)
        });
        !(answer.is_err() && fresh_price && is_upstream_failure(answer.as_ref().err()))
    }

    /// Counts a client's live quote to `rail` (never refused): here, and in
    /// the deployment's budget when shared.
    pub fn spend(self: &Arc<Self>, rail: &str) {
        self.budgets.spend(rail);
        if self.share.is_some() {
            let (book, rail) = (self.clone(), rail.to_string());
            tokio::spawn(async move { book.take_shared(&rail, None).await });
        }
    }

    /// Asks `rail` for `req` in the background, within its budget (a
    /// served amount the book did not have exactly).
    pub fn ask_later(self: &Arc<Self>, key: &LaneKey, req: &QuoteRequest, rail: &Arc<LoadedRail>) {
        {
            let mut lanes = self.lanes();
            let Some(lane) = lanes.get_mut(key) else {
                return;
            };
            let local = self.share.is_none() && !self.budgets.try_take_spare(rail.id());
            if lane.asking.contains(rail.id()) || local {
                return;
            }
            lane.asking.insert(rail.id().to_string());
        }
        let book = self.clone();
        let due = Due {
            key: key.clone(),
            rail: rail.clone(),
            req: req.clone(),
        };
        tokio::spawn(async move {
            let half = book.cfg.rpm(due.rail.id()) / 2;
            if book.share.is_none() || book.take_shared(due.rail.id(), Some(half)).await {
                book.refresh(due).await
            } else {
                book.unask(&due);
            }
        });
    }

    /// The book no longer asks `due`'s rail on its lane.
    fn unask(&self, due: &Due) {
        if let Some(lane) = self.lanes().get_mut(&due.key) {
            lane.asking.remove(due.rail.id());
        }
    }

    /// Renews one answer.
    async fn refresh(&self, due: Due) {
        let answer = self.call(&due.rail, due.req.clone()).await;
        tracing::debug!(rail = due.rail.id(), lane = ?due.key, ok = answer.is_ok(), "book refreshed");
        self.keep(&due.req, due.rail.id(), answer);
    }

    /// One upstream call: timed, counted, backed off on failure.
    pub async fn call(&self, rail: &LoadedRail, req: QuoteRequest) -> Result<RailQuote, Silence> {
        let started = Instant::now();
        let answer = ask_rail(rail, req, self.hard).await;
        self.latencies.record(rail.id(), started.elapsed());
        self.budgets
            .outcome(rail.id(), !is_upstream_failure(answer.as_ref().err()));
        answer
    }

    /// The refreshes due now, each already within its rail's budget: of
    /// the lanes quoted more than once, the hottest first (module docs).
    fn due(&self) -> Vec<Due> {
        let refresh = Duration::from_millis(self.cfg.refresh_ms);
        let idle = Duration::from_millis(self.cfg.idle_ms);
        let now = Instant::now();
        let mut lanes = self.lanes();
        lanes.retain(|_, l| l.used.elapsed() < idle);
        let mut hottest: Vec<(&LaneKey, &mut Lane)> = lanes
            .iter_mut()
            .filter(|(_, l)| l.heat.quotes > 1)
            .collect();
        hottest.sort_by(|(_, a), (_, b)| b.heat.at(now).total_cmp(&a.heat.at(now)));
        let mut due = Vec::new();
        for (key, lane) in hottest {
            for rail in &lane.rails {
                let id = rail.id();
                let old = lane.kept.get(id).is_none_or(|k| k.age() >= refresh);
                if !old || lane.asking.contains(id) || !self.may_ask(id) {
                    continue;
                }
                lane.asking.insert(id.to_string());
                due.push(Due {
                    key: key.clone(),
                    rail: rail.clone(),
                    req: lane.req.clone(),
                });
            }
        }
        due
    }

    /// Keeps warm lanes fresh until `cancel` fires.
    pub async fn run(self: Arc<Self>, cancel: CancellationToken) {
        let mut tick = tokio::time::interval(Duration::from_millis(self.cfg.tick_ms));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => {}
            }
            self.pull().await;
            for due in self.due() {
                if !self.admit(&due).await {
                    self.unask(&due);
                    continue;
                }
                let book = self.clone();
                tokio::spawn(async move { book.refresh(due).await });
            }
        }
    }

    /// Lanes kept now.
    pub fn len(&self) -> usize {
        self.lanes().len()
    }

    /// Whether no lane is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether `s` is the upstream failing (back off) rather than answering.
fn is_upstream_failure(s: Option<&Silence>) -> bool {
    use relay_plugin_api::RailErrorKind as K;
    match s {
        Some(Silence::Failed { kind, .. }) => matches!(
            kind,
            K::Upstream | K::UpstreamTimeout | K::UpstreamMalformed | K::Capability | K::Internal
        ),
        Some(Silence::Deadline(_) | Silence::Late(_)) => true,
        _ => false,
    }
}

/// `q` (an answer for its own `amount_in`) serving `amount` (module docs).
pub fn scale(q: &RailQuote, amount: Amount, req: &QuoteRequest) -> RailQuote {
    if q.amount_in == amount || q.amount_in.is_zero() {
        return q.clone();
    }
    let (a, a2) = (q.amount_in.0, amount.0);
    let conv = Conversion::between(&req.from_token, &req.to_token, q.amount_in, q.amount_out);
    let fixed: U256 = q
        .fees
        .iter()
        .filter(|f| f.included)
        .map(|f| {
            if f.token.eq_ignore_ascii_case(&req.to_token.symbol) {
                f.amount.0
            } else if f.token.eq_ignore_ascii_case(&req.from_token.symbol) {
                conv.apply(f.amount).0
            } else {
                U256::ZERO
            }
        })
        .fold(U256::ZERO, |x, y| x.saturating_add(y));
    let prop = q.amount_out.mul_div(a2, a).unwrap_or_default();
    let gross = Amount(q.amount_out.0.saturating_add(fixed));
    let with_fixed = gross
        .mul_div(a2, a)
        .unwrap_or_default()
        .saturating_sub(Amount(fixed));
    let out = prop.min(with_fixed);
    let min = out
        .mul_div(q.min_out.0, q.amount_out.0)
        .unwrap_or_default()
        .min(out);
    // The fees listed are the ones the served output implies: scaled with
    // the amount when the proportional side was served, as they are when
    // the fixed side was.
    let fees = if prop <= with_fixed {
        q.fees
            .iter()
            .map(|f| Fee {
                amount: if f.included {
                    f.amount.mul_div(a2, a).unwrap_or(f.amount)
                } else {
                    f.amount
                },
                ..f.clone()
            })
            .collect()
    } else {
        q.fees.clone()
    };
    RailQuote {
        amount_in: amount,
        amount_out: out,
        min_out: min,
        fees,
        upstream_ref: None,
        rail: q.rail.clone(),
        lane: q.lane.clone(),
        gas: q.gas.clone(),
        duration_sec: q.duration_sec,
        quote_only_reason: q.quote_only_reason.clone(),
        expires_at_ms: q.expires_at_ms,
        detail: q.detail.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::{ChainRef, FeeKind, Token};

    fn usdc() -> Token {
        Token {
            symbol: "USDC".into(),
            address: Some("0x1".into()),
            decimals: 6,
        }
    }

    fn req(amount: u128) -> QuoteRequest {
        QuoteRequest {
            from_chain: ChainRef::Evm(8453),
            to_chain: ChainRef::Evm(42161),
            from_token: usdc(),
            to_token: usdc(),
            amount: Amount::from_u128(amount),
            from_address: None,
            to_address: None,
            slippage_bps: 50,
            member: false,
        }
    }

    fn quote(amount_in: u128, out: u128, min: u128, fixed_fee: u128) -> RailQuote {
        RailQuote {
            rail: "r".into(),
            lane: "evm->evm".into(),
            amount_in: Amount::from_u128(amount_in),
            amount_out: Amount::from_u128(out),
            min_out: Amount::from_u128(min),
            fees: vec![Fee {
                kind: FeeKind::Bridge,
                amount: Amount::from_u128(fixed_fee),
                token: "USDC".into(),
                included: true,
            }],
            gas: None,
            duration_sec: 60,
            quote_only_reason: None,
            upstream_ref: Some("abc".into()),
            expires_at_ms: u64::MAX,
            detail: serde_json::json!({}).into(),
        }
    }

    fn book(rpm: u32) -> (QuoteBook, [Arc<LoadedRail>; 1]) {
        let cfg = QuoteBookConfig {
            default_rpm: rpm,
            ..QuoteBookConfig::default()
        };
        let rail =
            crate::execute::tests::loaded("r", Err(relay_plugin_api::RailErrorKind::Upstream));
        (
            QuoteBook::new(cfg, Duration::from_secs(1), relay_types::clock::system()),
            [rail],
        )
    }

    /// Eight lanes, one bucket each.
    fn eight_lanes() -> Vec<QuoteRequest> {
        (0..8).map(|i| req(1_000_000 << (2 * i))).collect()
    }

    #[test]
    fn a_short_budget_refreshes_the_busiest_lane_first() {
        let (book, rails) = book(1);
        let lanes = eight_lanes();
        // The busiest lane is quoted first, then every other one twice.
        let busiest = &lanes[0];
        for _ in 0..4 {
            book.visit(&LaneKey::of(busiest), busiest, &rails);
        }
        for r in &lanes[1..] {
            assert!(
                book.visit(&LaneKey::of(r), r, &rails).is_none(),
                "a new lane"
            );
            assert!(book.visit(&LaneKey::of(r), r, &rails).is_some(), "now warm");
        }
        let due = book.due();
        assert_eq!(due.len(), 1, "one request fits the budget");
        assert_eq!(due[0].key, LaneKey::of(busiest));
    }

    #[test]
    fn a_lane_quoted_once_costs_no_refresh() {
        let (book, rails) = book(60);
        let lanes = eight_lanes();
        for r in &lanes {
            book.visit(&LaneKey::of(r), r, &rails);
        }
        assert!(book.due().is_empty(), "eight one-off lanes");
        book.visit(&LaneKey::of(&lanes[3]), &lanes[3], &rails);
        let due = book.due();
        assert_eq!(due.len(), 1, "the lane quoted again");
        assert_eq!(due[0].key, LaneKey::of(&lanes[3]));
    }

    #[test]
    fn heat_halves_every_half_life() {
        let start = Instant::now();
        let mut heat = Heat::new(start);
        heat.bump(start);
        assert_eq!(heat.quotes, 2);
        let later = heat.at(start + HEAT_HALF_LIFE);
        assert!((later - 1.0).abs() < 1e-9, "{later}");
    }

    #[test]
    fn buckets_are_powers_of_two() {
        assert_eq!(
            bucket(Amount::from_u128(5_000_000)),
            bucket(Amount::from_u128(7_000_000))
        );
        assert_ne!(
            bucket(Amount::from_u128(5_000_000)),
            bucket(Amount::from_u128(9_000_000))
        );
        assert_eq!(LaneKey::of(&req(5_000_000)), LaneKey::of(&req(6_000_000)));
    }

    #[test]
    fn scaling_takes_the_lower_of_fixed_and_proportional_fees() {
        // 5 USDC in, 4.99 out (0.01 fee), min 4.965.
        let q = quote(5_000_000, 4_990_000, 4_965_050, 10_000);
        let up = scale(&q, Amount::from_u128(7_000_000), &req(7_000_000));
        // Proportional: 6.986; fixed fee: 6.99 → the lower.
        assert_eq!(up.amount_out, Amount::from_u128(6_986_000));
        assert_eq!(up.min_out, Amount::from_u128(6_951_070));
        assert_eq!(up.upstream_ref, None);
        // The fee listed is the proportional one the output implies.
        assert_eq!(up.fees[0].amount, Amount::from_u128(14_000));
        let down = scale(&q, Amount::from_u128(4_000_000), &req(4_000_000));
        // Fixed fee: 3.99 (lower than proportional 3.992).
        assert_eq!(down.amount_out, Amount::from_u128(3_990_000));
        assert!(down.min_out <= down.amount_out);
        assert_eq!(down.fees[0].amount, Amount::from_u128(10_000));
        assert_eq!(scale(&q, q.amount_in, &req(5_000_000)), q);
        // Every served copy shares the rail's detail rather than copying it.
        assert!(Arc::ptr_eq(&up.detail, &q.detail) && Arc::ptr_eq(&down.detail, &q.detail));
    }
}
