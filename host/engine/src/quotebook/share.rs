//! The quote book shared by replicas (issue 49, `[limits] backend =
//! "store"`): replicas on one database behave as one book.
//!
//! - **One budget per rail for the deployment.** Every upstream quote a
//!   replica makes is counted in one window shared by all of them
//!   ([`BookShare::take`]); a background refresh is made only while the
//!   deployment's last minute has room, so the upstream sees the rail's
//!   budget, not N times it. Each replica's own window still counts too
//!   (an upper bound that is never the tighter one while the share is
//!   reachable).
//! - **One refresher per lane and rail at a time.** A replica refreshes a
//!   rail's answer on a lane only under a lease ([`BookShare::claim`],
//!   until a tick before the answer it brings is due again), so two
//!   replicas that find the same answer ageing do not both ask.
//! - **The same fresh answers everywhere.** Every answer a replica keeps
//!   (a refresh, a live quote) is published ([`BookShare::publish`]); every
//!   tick each replica pulls the answers published since its last pull
//!   ([`BookShare::since`]) into its own book — a lane it already keeps
//!   takes the newer answer, a lane it has not seen yet is seeded — and
//!   before the first quote of a lane it does not keep it reads that
//!   lane's answers ([`BookShare::lane`]), so that quote is served from
//!   the book too.
//! - **While the share cannot be reached** the book falls back to what
//!   `[limits] on_backend_failure` says: `open` — each replica keeps its
//!   own budget (the upstream may then see up to N times it), `closed` —
//!   no background refresh at all (quotes go live; a live quote is counted,
//!   never refused). Either way quotes are answered; publishing and pulling
//!   resume when the share is back.
//!
//! Back-off after upstream errors stays per replica: every replica that
//! meets the failing upstream backs off on its own, and the shared budget
//! bounds what they send together meanwhile.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use relay_config::FailMode;
use relay_plugin_api::RailQuote;
use serde::{Deserialize, Serialize};

use super::super::quote::Silence;

/// The share could not be reached (a database error, said in words).
#[derive(Debug, thiserror::Error)]
#[error("the shared quote book is unavailable: {0}")]
pub struct ShareDown(pub String);

/// One answer as replicas exchange it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Published {
    /// The lane ([`super::LaneKey::id`]).
    pub lane: String,
    /// The rail.
    pub rail: String,
    /// When it was quoted, epoch ms.
    pub quoted_at_ms: u64,
    /// The answer, or why there was none.
    pub answer: Result<RailQuote, Silence>,
}

/// What replicas share (module docs); the host implements it over its
/// store.
#[async_trait::async_trait]
pub trait BookShare: Send + Sync + std::fmt::Debug {
    /// Counts one upstream request of `rail` at `now_ms` in the
    /// deployment's last minute, unless `cap` requests were already made
    /// in it (`None`: always counted — a client's live quote).
    async fn take(&self, rail: &str, cap: Option<u32>, now_ms: u64) -> Result<bool, ShareDown>;

    /// Leases the refresh of `rail` on `lane` until `until_ms`; false while
    /// another replica holds it.
    async fn claim(
        &self,
        lane: &str,
        rail: &str,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<bool, ShareDown>;

    /// Publishes an answer (kept only when newer than the one published).
    async fn publish(&self, answer: &Published) -> Result<(), ShareDown>;

    /// The answers published quoted after `after_ms`.
    async fn since(&self, after_ms: u64) -> Result<Vec<Published>, ShareDown>;

    /// The answers published for `lane`.
    async fn lane(&self, lane: &str) -> Result<Vec<Published>, ShareDown>;
}

/// How far back each pull reaches past the previous one: an answer
/// published a little after it was quoted (its call, then its insert) is
/// not missed.
pub const PULL_OVERLAP: Duration = Duration::from_secs(2);

/// A book's side of the share: the backend, what to do while it is down,
/// and the answers pulled for lanes this replica has not seen yet.
#[derive(Debug)]
pub struct Sharing {
    /// The backend.
    pub backend: Arc<dyn BookShare>,
    /// While it is down (module docs).
    pub fail: FailMode,
    seeds: Mutex<Seeds>,
}

#[derive(Debug, Default)]
struct Seeds {
    /// Answers of lanes not kept here yet, by lane and rail.
    lanes: HashMap<String, HashMap<String, (Published, Instant)>>,
    /// Epoch ms of the last pull.
    pulled_ms: u64,
    /// Rails whose shared budget was full, until when.
    full: HashMap<String, Instant>,
}

impl Sharing {
    /// Shares through `backend`, `fail` while it is down.
    pub fn new(backend: Arc<dyn BookShare>, fail: FailMode) -> Self {
        Sharing {
            backend,
            fail,
            seeds: Mutex::new(Seeds::default()),
        }
    }

    fn seeds(&self) -> std::sync::MutexGuard<'_, Seeds> {
        self.seeds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `rail`'s shared budget was found full and has not freed yet.
    pub fn full(&self, rail: &str) -> bool {
        self.seeds()
            .full
            .get(rail)
            .is_some_and(|until| Instant::now() < *until)
    }

    /// Remembers that `rail`'s shared budget is full for `wait`.
    pub fn mark_full(&self, rail: &str, wait: Duration) {
        self.seeds()
            .full
            .insert(rail.to_string(), Instant::now() + wait);
    }

    /// Where the next pull starts (epoch ms), and records `now_ms` as the
    /// pull's time.
    pub fn pull_from(&self, now_ms: u64) -> u64 {
        let mut s = self.seeds();
        let from = s.pulled_ms.saturating_sub(PULL_OVERLAP.as_millis() as u64);
        s.pulled_ms = now_ms;
        from
    }

    /// Keeps `p` for a lane not kept here yet, at most `cap` lanes (the
    /// oldest pulled dropped first), nothing older than `stale`.
    pub fn seed(&self, p: Published, cap: usize, stale: Duration) {
        let mut s = self.seeds();
        s.lanes.retain(|_, rails| {
            rails.retain(|_, (_, at)| at.elapsed() < stale);
            !rails.is_empty()
        });
        if s.lanes.len() >= cap && !s.lanes.contains_key(&p.lane) {
            let oldest = s
                .lanes
                .iter()
                .min_by_key(|(_, rails)| rails.values().map(|(_, at)| *at).max())
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                s.lanes.remove(&k);
            }
        }
        let lane = s.lanes.entry(p.lane.clone()).or_default();
        let newer = lane
            .get(&p.rail)
            .is_none_or(|(q, _)| q.quoted_at_ms < p.quoted_at_ms);
        if newer {
            lane.insert(p.rail.clone(), (p, Instant::now()));
        }
    }

    /// The seeded answers of `lane`, taken (the lane is kept from now on).
    pub fn take_seeds(&self, lane: &str) -> Vec<Published> {
        self.seeds()
            .lanes
            .remove(lane)
            .map(|rails| rails.into_values().map(|(p, _)| p).collect())
            .unwrap_or_default()
    }
}

/// How long a rail found full in the shared budget is not asked again.
const FULL_PAUSE: Duration = Duration::from_secs(1);

impl super::QuoteBook {
    /// The answers pulled for `key` before this replica kept it.
    pub(super) fn seeded(&self, key: &super::LaneKey) -> HashMap<String, super::Kept> {
        let Some(share) = &self.share else {
            return HashMap::new();
        };
        let (now, stale) = (self.clock.now_ms(), self.cfg.stale_ms);
        share
            .take_seeds(&key.id())
            .into_iter()
            .filter_map(|p| {
                let age = now.saturating_sub(p.quoted_at_ms);
                (age < stale).then(|| (p.rail.clone(), super::Kept::adopted(p, ms(age))))
            })
            .collect()
    }

    /// Publishes an answer just kept, in the background.
    pub(super) fn publish(
        &self,
        key: &super::LaneKey,
        rail: &str,
        (answer, quoted_at_ms): (&Result<RailQuote, Silence>, u64),
    ) {
        let Some(share) = &self.share else { return };
        let p = Published {
            lane: key.id(),
            rail: rail.to_string(),
            quoted_at_ms,
            answer: answer.clone(),
        };
        let backend = share.backend.clone();
        tokio::spawn(async move {
            if let Err(e) = backend.publish(&p).await {
                tracing::debug!(error = %e, rail = p.rail, "book answer not published");
            }
        });
    }

    /// Takes one request of `rail`'s shared budget (`cap`: module docs of
    /// [`BookShare::take`]); while the share is down, as configured. The
    /// replica's own window counts the request once either way (a live
    /// quote, `cap` `None`, was counted there already by [`Self::spend`]).
    pub(super) async fn take_shared(&self, rail: &str, cap: Option<u32>) -> bool {
        let Some(share) = &self.share else {
            return true;
        };
        match (
            share.backend.take(rail, cap, self.clock.now_ms()).await,
            cap,
        ) {
            (Ok(true), None) => true,
            (Ok(true), Some(_)) => {
                self.budgets.spend(rail);
                true
            }
            (Ok(false), _) => {
                share.mark_full(rail, FULL_PAUSE);
                false
            }
            (Err(e), None) => {
                tracing::warn!(error = %e, rail, "a live quote not counted in the shared budget");
                true
            }
            (Err(e), Some(c)) => self.share_down(&e, rail, c < self.cfg.rpm(rail)),
        }
    }

    /// What a refresh of `rail` meets while the share is down: its own
    /// budget (`open`), or no refresh (`closed`).
    fn share_down(&self, e: &ShareDown, rail: &str, spare: bool) -> bool {
        tracing::warn!(error = %e, rail, "quote book budget not shared");
        match self.share.as_ref().map(|s| s.fail) {
            Some(FailMode::Closed) => false,
            _ if spare => self.budgets.try_take_spare(rail),
            _ => self.budgets.try_take(rail),
        }
    }

    /// Whether the refresher may consider asking `rail` now: alone, within
    /// its own budget (taken); shared, when it is not backing off and the
    /// deployment's budget was not just found full ([`Self::admit`] takes
    /// it).
    pub(super) fn may_ask(&self, rail: &str) -> bool {
        match &self.share {
            None => self.budgets.try_take(rail),
            Some(s) => self.budgets.resting(rail).is_none() && !s.full(rail),
        }
    }

    /// Whether a refresh the refresher found due is made: always alone;
    /// shared, under the lane's lease and within the deployment's budget.
    pub(super) async fn admit(&self, due: &super::Due) -> bool {
        let Some(share) = &self.share else {
            return true;
        };
        let (rail, now) = (due.rail.id(), self.clock.now_ms());
        // Until just before the answer it brings is due again: whoever
        // finds it ageing next has pulled it by then.
        let tick = self.cfg.tick_ms;
        let until = now + self.cfg.refresh_ms.saturating_sub(tick).max(tick);
        match share.backend.claim(&due.key.id(), rail, now, until).await {
            Ok(true) => {}
            Ok(false) => return false,
            Err(e) => return self.share_down(&e, rail, false),
        }
        self.take_shared(rail, Some(self.cfg.rpm(rail))).await
    }

    /// Before the first quote of a lane this replica does not keep yet:
    /// takes in that lane's answers the others published (one read by
    /// lane), so the quote is served from the book as it is on theirs.
    pub async fn prime(&self, key: &super::LaneKey) {
        let Some(share) = &self.share else { return };
        if self.lanes().contains_key(key) {
            return;
        }
        // the lane's own answers, whatever the ticks' pulls have seen
        match share.backend.lane(&key.id()).await {
            Ok(published) => self.adopt(share, published),
            Err(e) => tracing::debug!(error = %e, "book answers not pulled"),
        }
    }

    /// Takes in the answers other replicas published since the last pull.
    pub(super) async fn pull(&self) {
        let Some(share) = &self.share else { return };
        let now = self.clock.now_ms();
        let published = match share.backend.since(share.pull_from(now)).await {
            Ok(p) => p,
            Err(e) => return tracing::debug!(error = %e, "book answers not pulled"),
        };
        self.adopt(share, published);
    }

    /// Takes `published` into the lanes kept here, or seeds the others.
    fn adopt(&self, share: &Sharing, published: Vec<Published>) {
        let now = self.clock.now_ms();
        let stale = self.cfg.stale_ms;
        let mut lanes = self.lanes();
        let ids: HashMap<String, super::LaneKey> =
            lanes.keys().map(|k| (k.id(), k.clone())).collect();
        for p in published {
            let age = now.saturating_sub(p.quoted_at_ms);
            if age >= stale {
                continue;
            }
            let Some(lane) = ids.get(&p.lane).and_then(|k| lanes.get_mut(k)) else {
                share.seed(p, self.cfg.lanes, ms(stale));
                continue;
            };
            let kept = lane.kept.get(&p.rail);
            let newer = kept.is_none_or(|k| k.quoted_at_ms < p.quoted_at_ms);
            if newer && self.replaces(kept, &p.answer) {
                lane.kept
                    .insert(p.rail.clone(), super::Kept::adopted(p, ms(age)));
            }
        }
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quotebook::QuoteBook;
    use relay_config::QuoteBookConfig;

    /// A share that cannot be reached.
    #[derive(Debug)]
    struct Unreachable;

    #[async_trait::async_trait]
    impl BookShare for Unreachable {
        async fn take(&self, _: &str, _: Option<u32>, _: u64) -> Result<bool, ShareDown> {
            Err(ShareDown("connection refused".into()))
        }
        async fn claim(&self, _: &str, _: &str, _: u64, _: u64) -> Result<bool, ShareDown> {
            Err(ShareDown("connection refused".into()))
        }
        async fn publish(&self, _: &Published) -> Result<(), ShareDown> {
            Err(ShareDown("connection refused".into()))
        }
        async fn since(&self, _: u64) -> Result<Vec<Published>, ShareDown> {
            Err(ShareDown("connection refused".into()))
        }
        async fn lane(&self, _: &str) -> Result<Vec<Published>, ShareDown> {
            Err(ShareDown("connection refused".into()))
        }
    }

    fn book(fail: FailMode) -> QuoteBook {
        let cfg = QuoteBookConfig {
            default_rpm: 3,
            ..QuoteBookConfig::default()
        };
        let sharing = Sharing::new(Arc::new(Unreachable), fail);
        QuoteBook::new(cfg, Duration::from_secs(1), relay_types::clock::system()).shared(sharing)
    }

    #[tokio::test]
    async fn an_unreachable_share_falls_back_as_configured() {
        // open: each replica keeps its own budget
        let open = book(FailMode::Open);
        for _ in 0..3 {
            assert!(open.take_shared("lifi", Some(3)).await);
        }
        assert!(!open.take_shared("lifi", Some(3)).await, "the local budget");
        // a live quote while it is down is counted once, here
        let live = book(FailMode::Open);
        live.budgets.spend("squid");
        assert!(live.take_shared("squid", None).await);
        assert_eq!(live.budgets.spent("squid"), 1);
        // closed: no background refresh at all
        let closed = book(FailMode::Closed);
        assert!(!closed.take_shared("lifi", Some(3)).await);
        closed.pull().await;
        assert!(closed.is_empty());
    }

    #[test]
    fn seeds_keep_the_newest_answer_of_a_lane_within_the_cap() {
        let s = Sharing::new(Arc::new(Unreachable), FailMode::Open);
        let p = |lane: &str, at: u64| Published {
            lane: lane.into(),
            rail: "lifi".into(),
            quoted_at_ms: at,
            answer: Err(Silence::Deadline(1)),
        };
        let stale = Duration::from_secs(60);
        s.seed(p("a", 2), 2, stale);
        s.seed(p("a", 1), 2, stale);
        s.seed(p("b", 1), 2, stale);
        s.seed(p("c", 1), 2, stale);
        assert!(s.take_seeds("a").is_empty(), "the oldest lane dropped");
        let c = s.take_seeds("c");
        assert_eq!(c.len(), 1);
        s.seed(p("d", 5), 2, stale);
        s.seed(p("d", 3), 2, stale);
        assert_eq!(s.take_seeds("d")[0].quoted_at_ms, 5, "the newest kept");
        assert!(s.take_seeds("d").is_empty(), "taken once");
    }
}
