//! What the HTTP edge tells the dashboard, held in memory per host: how
//! many requests the rate limiter refused (per route) and the most recent
//! error answers. Labels are matched route templates, never raw request
//! input, so a client cannot grow them without bound.

use serde::Serialize;
use std::{
    collections::{BTreeMap, VecDeque},
    sync::Mutex,
};
use utoipa::ToSchema;

/// How many recent errors are kept.
pub const RECENT_ERRORS: usize = 50;

/// One error answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentError {
    /// When, epoch ms.
    pub at_ms: u64,
    /// Request method.
    pub method: String,
    /// The matched route (`(unmatched)` for unknown paths).
    pub route: String,
    /// The HTTP status.
    pub status: u16,
    /// The `errorCode`, when the answer carried one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

/// Rate-limit refusals since the host started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitHits {
    /// All of them.
    pub total: u64,
    /// Per matched route.
    pub by_route: BTreeMap<String, u64>,
    /// The last one, epoch ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_ms: Option<u64>,
}

#[derive(Debug, Default)]
struct Inner {
    errors: VecDeque<RecentError>,
    limited: RateLimitHits,
    answered_errors: u64,
}

/// The per-host signal board (cheap to share behind an `Arc`).
#[derive(Debug, Default)]
pub struct Signals {
    inner: Mutex<Inner>,
}

/// A copy of the board.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignalsView {
    /// Rate-limit refusals.
    pub rate_limits: RateLimitHits,
    /// Error answers since start.
    pub error_answers: u64,
    /// The most recent error answers, newest first.
    pub recent_errors: Vec<RecentError>,
}

impl Signals {
    /// Records one answer with status `status` (anything below 400 is
    /// ignored; 429 also counts as a rate-limit hit).
    pub fn record(&self, e: RecentError) {
        if e.status < 400 {
            return;
        }
        let mut i = self.inner.lock().expect("signals lock");
        if e.status == 429 {
            i.limited.total += 1;
            *i.limited.by_route.entry(e.route.clone()).or_default() += 1;
            i.limited.last_ms = Some(e.at_ms);
        }
        i.answered_errors += 1;
        if i.errors.len() == RECENT_ERRORS {
            i.errors.pop_back();
        }
        i.errors.push_front(e);
    }

    /// What the board shows now.
    pub fn view(&self) -> SignalsView {
        let i = self.inner.lock().expect("signals lock");
        SignalsView {
            rate_limits: i.limited.clone(),
            error_answers: i.answered_errors,
            recent_errors: i.errors.iter().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, route: &str) -> RecentError {
        RecentError {
            at_ms: u64::from(status),
            method: "POST".into(),
            route: route.into(),
            status,
            error_code: None,
        }
    }

    #[test]
    fn keeps_the_newest_errors_and_counts_429s_per_route() {
        let s = Signals::default();
        s.record(answer(200, "/api/status"));
        for _ in 0..3 {
            s.record(answer(429, "/api/route/quote"));
        }
        for _ in 0..RECENT_ERRORS {
            s.record(answer(404, "(unmatched)"));
        }
        s.record(answer(500, "/api/route/execute"));
        let v = s.view();
        assert_eq!(v.rate_limits.total, 3);
        assert_eq!(v.rate_limits.by_route["/api/route/quote"], 3);
        assert_eq!(v.error_answers, 3 + RECENT_ERRORS as u64 + 1);
        assert_eq!(v.recent_errors.len(), RECENT_ERRORS);
        assert_eq!(v.recent_errors[0].status, 500, "newest first");
        assert!(v.recent_errors.iter().all(|e| e.status != 200));
    }
}
