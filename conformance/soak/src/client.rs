//! The soak's HTTP client: each request goes to the next replica (a
//! round-robin balancer), is timed under its endpoint's name and counted by
//! status. A 5xx is acceptable only as the API promises it — a typed
//! answer with `retryable: true` while something is down; any other (a
//! plain 500, a 5xx a client may not retry) is recorded as a violation.

use std::{
    collections::BTreeMap,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Mutex,
    },
    time::{Duration, Instant},
};

use serde::Serialize;
use serde_json::Value;

/// One endpoint's record.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EndpointStats {
    /// Latencies of answered requests, µs.
    #[serde(skip)]
    pub latencies_us: Vec<u64>,
    /// Answers by status code.
    pub statuses: BTreeMap<u16, u64>,
    /// Requests no replica answered (connection refused or cut, timeout).
    pub unanswered: u64,
    /// Answers the API does not allow — a 5xx not marked retryable, a
    /// stream without its first event (the first few).
    pub violations: Vec<String>,
    /// How many of them in all.
    pub violation_count: u64,
    /// The first refusal (4xx and 5xx) of each status, with its body.
    pub refusals: BTreeMap<u16, String>,
}

impl EndpointStats {
    fn violate(&mut self, what: String) {
        self.violation_count += 1;
        if self.violations.len() < 10 {
            self.violations.push(what);
        }
    }
}

/// The balancer and the record.
pub struct Client {
    /// The shared HTTP client.
    pub http: reqwest::Client,
    bases: Vec<String>,
    next: AtomicUsize,
    stats: Mutex<BTreeMap<&'static str, EndpointStats>>,
}

/// An answer: status and JSON body (`Null` when it was not JSON).
pub type Answer = (u16, Value);

impl Client {
    /// Balances over `bases`.
    pub fn new(bases: Vec<String>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .pool_max_idle_per_host(4)
            .build()
            .expect("an HTTP client");
        Client {
            http,
            bases,
            next: AtomicUsize::new(0),
            stats: Mutex::default(),
        }
    }

    /// The next replica's base URL.
    pub fn base(&self) -> &str {
        &self.bases[self.next.fetch_add(1, Ordering::Relaxed) % self.bases.len()]
    }

    /// Sends the request `build` makes for the next replica, recorded under
    /// `name`; `None` when nothing answered.
    pub async fn send(
        &self,
        name: &'static str,
        build: impl Fn(&reqwest::Client, &str) -> reqwest::RequestBuilder,
    ) -> Option<Answer> {
        let started = Instant::now();
        let sent = build(&self.http, self.base()).send().await;
        let resp = match sent {
            Ok(r) => r,
            Err(_) => {
                self.record(name, |s| s.unanswered += 1);
                return None;
            }
        };
        let status = resp.status().as_u16();
        let body = match resp.bytes().await {
            Ok(b) => serde_json::from_slice(&b).unwrap_or(Value::Null),
            Err(_) => {
                self.record(name, |s| s.unanswered += 1);
                return None;
            }
        };
        let took = started.elapsed().as_micros() as u64;
        self.record(name, |s| {
            s.latencies_us.push(took);
            *s.statuses.entry(status).or_default() += 1;
            if status >= 400 {
                s.refusals
                    .entry(status)
                    .or_insert_with(|| body.to_string().chars().take(300).collect());
            }
            if status >= 500 && (status == 500 || body["retryable"] != true) {
                s.violate(format!("{status} {body}"));
            }
        });
        Some((status, body))
    }

    /// [`Client::send`] again (each time to the next replica) while nothing
    /// answers, the answer is retryable (a 5xx the API marks so, a 409 of a
    /// key still in flight, a 429) or `until` has not passed — what a
    /// client with an idempotency key does. The last answer, if any.
    pub async fn send_until(
        &self,
        name: &'static str,
        within: Duration,
        build: impl Fn(&reqwest::Client, &str) -> reqwest::RequestBuilder,
    ) -> Option<Answer> {
        let until = Instant::now() + within;
        let mut wait = Duration::from_millis(100);
        loop {
            let answer = self.send(name, &build).await;
            let again = match &answer {
                None => true,
                Some((s, b)) => {
                    *s == 429
                        || *s == 409 && b["retryable"] == true
                        || *s >= 500 && b["retryable"] == true
                }
            };
            if !again || Instant::now() > until {
                return answer;
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(2));
        }
    }

    /// Records an answer a flow read itself (a stream): its status, how
    /// long it took, and what was wrong with it, if anything.
    pub fn note(&self, name: &'static str, (status, took): (u16, Duration), wrong: Option<String>) {
        self.record(name, |s| {
            s.latencies_us.push(took.as_micros() as u64);
            *s.statuses.entry(status).or_default() += 1;
            if let Some(w) = wrong {
                s.violate(w);
            }
        });
    }

    fn record(&self, name: &'static str, f: impl FnOnce(&mut EndpointStats)) {
        f(self.stats.lock().expect("stats").entry(name).or_default());
    }

    /// Everything recorded.
    pub fn stats(&self) -> BTreeMap<&'static str, EndpointStats> {
        self.stats.lock().expect("stats").clone()
    }
}

/// The `p`-th percentile (0..=100) of `v`, in ms.
pub fn percentile_ms(v: &[u64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let i = ((p / 100.0) * (s.len() - 1) as f64).round() as usize;
    s[i] as f64 / 1000.0
}
