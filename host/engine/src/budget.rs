//! Per-rail upstream request budgets and back-off for the quote book.
//!
//! A rail's budget is `requests per minute` (`[quote_book] default_rpm`,
//! `rail_rpm`), kept as a sliding window of the last minute's request
//! times — exact, not a token bucket's average. Every upstream quote the
//! host makes is counted: the book's refreshes and the live quotes clients
//! ask for. The book only refreshes a rail while the window has room, so
//! it never pushes a rail over its budget; a client's live quote is
//! counted, never refused for budget. The book's re-quotes of an exact
//! amount it served from another ([`Budgets::try_take_spare`]) may use only
//! the first half of the window, so a lane quoted at ever-changing amounts
//! never starves the refreshes that keep every lane's answers fresh.
//!
//! An upstream error (a 429, a 5xx, a timeout, a malformed answer)
//! backs the rail off: no refresh for `backoff_base_ms × 2^(n−1)` after
//! the n-th consecutive error, at most `backoff_max_ms`; an answer resets
//! it.

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
    time::{Duration, Instant},
};

use relay_config::QuoteBookConfig;

const MINUTE: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
struct Rail {
    sent: VecDeque<Instant>,
    errors: u32,
    until: Option<Instant>,
}

impl Rail {
    fn trim(&mut self, now: Instant) {
        while self
            .sent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= MINUTE)
        {
            self.sent.pop_front();
        }
    }
}

/// Every rail's budget and back-off.
#[derive(Debug)]
pub struct Budgets {
    cfg: QuoteBookConfig,
    rails: Mutex<HashMap<String, Rail>>,
}

impl Budgets {
    /// Budgets under `cfg`.
    pub fn new(cfg: QuoteBookConfig) -> Self {
        Budgets {
            cfg,
            rails: Mutex::new(HashMap::new()),
        }
    }

    fn with<T>(&self, rail: &str, f: impl FnOnce(&mut Rail) -> T) -> T {
        let mut rails = self.rails.lock().unwrap_or_else(|e| e.into_inner());
        f(rails.entry(rail.to_string()).or_default())
    }

    /// Counts a live quote to `rail` (never refused).
    pub fn spend(&self, rail: &str) {
        let now = Instant::now();
        self.with(rail, |r| {
            r.trim(now);
            r.sent.push_back(now);
        });
    }

    /// Takes one request of `rail`'s budget for a background refresh, when
    /// the rail is not backing off and its last minute has room.
    pub fn try_take(&self, rail: &str) -> bool {
        let now = Instant::now();
        let rpm = self.cfg.rpm(rail) as usize;
        self.with(rail, |r| {
            r.trim(now);
            let resting = r.until.is_some_and(|u| now < u);
            let room = r.sent.len() < rpm;
            if room && !resting {
                r.sent.push_back(now);
            }
            room && !resting
        })
    }

    /// Like [`Budgets::try_take`] for a request the book can do without
    /// (an exact-amount re-quote): only while the last minute used less
    /// than half of the budget.
    pub fn try_take_spare(&self, rail: &str) -> bool {
        let now = Instant::now();
        let half = (self.cfg.rpm(rail) / 2) as usize;
        self.with(rail, |r| {
            r.trim(now);
            let ok = r.sent.len() < half && r.until.is_none_or(|u| now >= u);
            if ok {
                r.sent.push_back(now);
            }
            ok
        })
    }

    /// Whether `rail`'s last upstream call failed (an error or a timeout;
    /// reset by its next answer).
    pub fn failing(&self, rail: &str) -> bool {
        self.with(rail, |r| r.errors > 0)
    }

    /// Requests of `rail` in the last minute.
    pub fn spent(&self, rail: &str) -> usize {
        let now = Instant::now();
        self.with(rail, |r| {
            r.trim(now);
            r.sent.len()
        })
    }

    /// Records the outcome of an upstream call: `ok` resets the back-off,
    /// an upstream error extends it.
    pub fn outcome(&self, rail: &str, ok: bool) {
        let spacing = relay_types::Backoff::new(self.cfg.backoff_base_ms, self.cfg.backoff_max_ms);
        self.with(rail, |r| {
            if ok {
                r.errors = 0;
                r.until = None;
                return;
            }
            r.errors = r.errors.saturating_add(1);
            r.until = Some(Instant::now() + spacing.delay(r.errors));
        });
    }

    /// How long `rail` still rests, if it is backing off.
    pub fn resting(&self, rail: &str) -> Option<Duration> {
        let now = Instant::now();
        self.with(rail, |r| {
            r.until.and_then(|u| u.checked_duration_since(now))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(rpm: u32) -> QuoteBookConfig {
        QuoteBookConfig {
            default_rpm: rpm,
            backoff_base_ms: 1_000,
            backoff_max_ms: 4_000,
            ..QuoteBookConfig::default()
        }
    }

    #[test]
    fn refreshes_never_exceed_the_budget_and_live_quotes_count() {
        let b = Budgets::new(cfg(3));
        b.spend("lifi");
        assert!(b.try_take("lifi"));
        assert!(b.try_take("lifi"));
        assert!(!b.try_take("lifi"), "three in the last minute");
        assert_eq!(b.spent("lifi"), 3);
        assert!(b.try_take("squid"), "budgets are per rail");
    }

    #[test]
    fn exact_amount_requotes_leave_half_the_budget_to_refreshes() {
        let b = Budgets::new(cfg(4));
        assert!(b.try_take_spare("lifi"));
        assert!(b.try_take_spare("lifi"));
        assert!(!b.try_take_spare("lifi"), "half of 4 spent on re-quotes");
        assert!(
            b.try_take("lifi") && b.try_take("lifi"),
            "refreshes get the rest"
        );
        assert!(!b.try_take("lifi"));
    }

    #[test]
    fn errors_back_off_exponentially_and_an_answer_resets() {
        let b = Budgets::new(cfg(100));
        assert!(!b.failing("lifi"));
        b.outcome("lifi", false);
        assert!(b.failing("lifi"));
        let first = b.resting("lifi").unwrap();
        assert!(first <= Duration::from_millis(1_000));
        assert!(!b.try_take("lifi"));
        b.outcome("lifi", false);
        b.outcome("lifi", false);
        b.outcome("lifi", false);
        let capped = b.resting("lifi").unwrap();
        assert!(capped > Duration::from_millis(3_000) && capped <= Duration::from_millis(4_000));
        b.outcome("lifi", true);
        assert!(b.resting("lifi").is_none() && !b.failing("lifi"));
        assert!(b.try_take("lifi"));
    }
}
