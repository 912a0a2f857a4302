//! Rate limits and CORS (spec §5.2, §5.10, §8.1).
//!
//! **Limits** are per client per endpoint per minute, in fixed one-minute
//! windows that start at a client's first request. The endpoints of §8.1
//! have their spec limits (operators override them per bucket in
//! `[limits.per_minute]`); every other endpoint is unlimited unless
//! `limits.default_per_minute` is set. GET and POST compare share one
//! bucket, as do GET and POST solve. Endpoints §8.1 does not list but
//! that fan out to every rail get their own buckets here: `preflight` 40
//! (one quote, like `quote`), `plan` 20 and `agent` 20 (up to ten quotes,
//! or a quote and a sandbox execute — like `solve`). Every limited
//! response carries `x-ratelimit-limit`, `x-ratelimit-remaining` and
//! `x-ratelimit-reset` (seconds until the window resets); a refused one
//! is 429 `{error: "rate limited", errorCode: "RATE_LIMITED", retryable:
//! true, retryAfterMs}` with `retry-after`.
//!
//! The discovery reads of §4.1 beyond `/api/status` ([`DISCOVERY`]) are
//! limited like status — its limit, `per_minute.status` included — each
//! path in its own window (§8.1 counts per endpoint), so a dashboard
//! polling them all is not throttled by their sum.
//!
//! **The client** is the `x-relay-key` when it carries a well-formed key
//! (`ak_…`): the limit is then the key's, wherever it calls from. Otherwise
//! it is the TCP peer's IP — or, only when that peer is one of
//! `limits.trusted_proxies`, the right-most `X-Forwarded-For` address that
//! is not itself a trusted proxy (a client cannot spoof its way out of its
//! limit).
//!
//! **CORS** allows any origin, the methods the API uses, and the headers
//! of §5 (`content-type`, `x-relay-sandbox`, `x-idempotency-key`,
//! `x-relay-key`, `x-payment`, …), and exposes the rate-limit headers.

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use super::{ApiError, ErrorCode};
use axum::{
    extract::{ConnectInfo, Request, State},
    http::{HeaderMap, HeaderName, HeaderValue, Method},
    middleware::Next,
    response::{IntoResponse, Response},
};
use relay_config::LimitsConfig;
use tower_http::cors::{Any, CorsLayer};

/// The length of a window.
pub const WINDOW: Duration = Duration::from_secs(60);

/// The limited endpoints of §8.1: bucket, methods, path, per-minute limit.
const TABLE: &[(&str, &[Method], &str, u32)] = &[
    ("status", &[Method::GET], "/api/status", 60),
    ("quote", &[Method::POST], "/api/route/quote", 40),
    ("execute", &[Method::POST], "/api/route/execute", 8),
    (
        "compare",
        &[Method::GET, Method::POST],
        "/api/route/compare",
        30,
    ),
    (
        "solve",
        &[Method::GET, Method::POST],
        "/api/intent/solve",
        20,
    ),
    ("recent", &[Method::GET], "/api/routes/recent", 60),
    ("preflight", &[Method::POST], "/api/route/preflight", 40),
    ("plan", &[Method::POST], "/api/route/plan", 20),
    ("agent", &[Method::POST], "/api/agent/do", 20),
    ("batch", &[Method::POST], "/api/route/batch", 30),
    ("schedule", &[Method::POST], "/api/route/schedule", 30),
];

/// Discovery reads (§4.1) limited like `GET /api/status`, each in its
/// own window.
pub const DISCOVERY: &[&str] = &[
    "/api/gasless/info",
    "/api/uptime",
    "/api/delivery/stats",
    "/api/capability/snapshot",
    "/api/changelog",
    "/api/pricefeeds",
    "/api/floatlane/info",
    "/api/membership/status",
];

/// Sweep expired windows once the map holds this many.
const SWEEP_AT: usize = 10_000;

#[derive(Clone, Copy, Debug)]
struct Window {
    start: Instant,
    count: u32,
}

/// The outcome of counting one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// The bucket's limit.
    pub limit: u32,
    /// Requests left in this window.
    pub remaining: u32,
    /// Until the window resets.
    pub reset: Duration,
}

/// Per-client, per-endpoint fixed-window counters.
#[derive(Debug)]
pub struct RateLimiter {
    config: LimitsConfig,
    windows: Mutex<HashMap<(String, String), Window>>,
}

impl RateLimiter {
    /// A limiter configured by `[limits]`.
    pub fn new(config: &LimitsConfig) -> Self {
        RateLimiter {
            config: config.clone(),
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// The bucket and limit of an endpoint, if it is limited.
    pub fn bucket(&self, method: &Method, path: &str) -> Option<(String, u32)> {
        if !self.config.enabled {
            return None;
        }
        let listed = TABLE
            .iter()
            .find(|(_, methods, p, _)| *p == path && methods.contains(method));
        match listed {
            Some((name, _, _, limit)) => {
                let limit = self.config.per_minute.get(*name).copied().unwrap_or(*limit);
                Some((name.to_string(), limit))
            }
            None if *method == Method::GET && DISCOVERY.contains(&path) => {
                let (_, _, _, limit) = TABLE.iter().find(|(n, ..)| *n == "status")?;
                let limit = self
                    .config
                    .per_minute
                    .get("status")
                    .copied()
                    .unwrap_or(*limit);
                Some((format!("status {path}"), limit))
            }
            None => self
                .config
                .default_per_minute
                .map(|l| (format!("{method} {path}"), l)),
        }
    }

    /// Counts one request of `client` in `bucket` at `now`.
    pub fn hit(&self, bucket: &str, limit: u32, client: &str, now: Instant) -> Decision {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if windows.len() >= SWEEP_AT {
            windows.retain(|_, w| now.saturating_duration_since(w.start) < WINDOW);
        }
        let w = windows
            .entry((bucket.to_string(), client.to_string()))
            .or_insert(Window {
                start: now,
                count: 0,
            });
        if now.saturating_duration_since(w.start) >= WINDOW {
            *w = Window {
                start: now,
                count: 0,
            };
        }
        let reset = (w.start + WINDOW).saturating_duration_since(now);
        let allowed = w.count < limit;
        if allowed {
            w.count += 1;
        }
        Decision {
            allowed,
            limit,
            remaining: limit.saturating_sub(w.count),
            reset,
        }
    }

    /// Who is calling: the API key's scope, or the client IP.
    pub fn client(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> String {
        let key = headers.get("x-relay-key").and_then(|v| v.to_str().ok());
        if let Some(k) = key.filter(|k| well_formed_key(k)) {
            return format!("key:{k}");
        }
        let Some(peer) = peer else {
            return "ip:unknown".into();
        };
        let trusted = &self.config.trusted_proxies;
        if !trusted.contains(&peer) {
            return format!("ip:{peer}");
        }
        let forwarded = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect::<Vec<_>>();
        let client = forwarded
            .iter()
            .rev()
            .map_while(|s| s.parse::<IpAddr>().ok())
            .find(|ip| !trusted.contains(ip))
            .unwrap_or(peer);
        format!("ip:{client}")
    }
}

/// `ak_` followed by 4 to 128 characters of `[A-Za-z0-9_-]`.
fn well_formed_key(k: &str) -> bool {
    k.strip_prefix("ak_").is_some_and(|rest| {
        (4..=128).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

fn set_headers(headers: &mut HeaderMap, d: &Decision) {
    let reset = d.reset.as_millis().div_ceil(1000);
    for (name, value) in [
        ("x-ratelimit-limit", u128::from(d.limit)),
        ("x-ratelimit-remaining", u128::from(d.remaining)),
        ("x-ratelimit-reset", reset),
    ] {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from(value as u64),
        );
    }
}

/// The middleware: counts the request, refuses it over the limit, and
/// labels the response.
pub async fn enforce(
    State(limiter): State<Arc<RateLimiter>>,
    req: Request,
    next: Next,
) -> Response {
    let Some((bucket, limit)) = limiter.bucket(req.method(), req.uri().path()) else {
        return next.run(req).await;
    };
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let client = limiter.client(req.headers(), peer);
    let d = limiter.hit(&bucket, limit, &client, Instant::now());
    let mut resp = if d.allowed {
        next.run(req).await
    } else {
        tracing::info!(%bucket, %client, "rate limited");
        let ms = u64::try_from(d.reset.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        ApiError::new(ErrorCode::RateLimited, "rate limited")
            .retry_after_ms(ms)
            .suggest("wait retryAfterMs, or send an x-relay-key to be limited per key")
            .into_response()
    };
    set_headers(resp.headers_mut(), &d);
    resp
}

/// The CORS layer of §5.10.
pub fn cors() -> CorsLayer {
    let allow = [
        "content-type",
        "authorization",
        "x-relay-sandbox",
        "x-idempotency-key",
        "x-relay-key",
        "x-payment",
        "x-relay-pass",
        "x-relay-rehearse",
    ];
    let expose = [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "retry-after",
    ];
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers(allow.map(HeaderName::from_static))
        .expose_headers(expose.map(HeaderName::from_static))
        .max_age(Duration::from_secs(600))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(trusted: &[&str]) -> RateLimiter {
        RateLimiter::new(&LimitsConfig {
            trusted_proxies: trusted.iter().map(|s| s.parse().unwrap()).collect(),
            ..LimitsConfig::default()
        })
    }

    #[test]
    fn the_41st_quote_in_a_minute_is_refused_and_the_next_window_serves() {
        let l = limiter(&[]);
        let (bucket, limit) = l.bucket(&Method::POST, "/api/route/quote").unwrap();
        assert_eq!(limit, 40);
        let t0 = Instant::now();
        for i in 0..40 {
            let d = l.hit(&bucket, limit, "ip:1.2.3.4", t0 + Duration::from_millis(i));
            assert!(d.allowed);
            assert_eq!(d.remaining, 39 - i as u32);
        }
        let refused = l.hit(&bucket, limit, "ip:1.2.3.4", t0 + Duration::from_secs(1));
        assert!(!refused.allowed);
        assert_eq!(refused.reset, Duration::from_secs(59));
        assert!(
            l.hit(&bucket, limit, "ip:5.6.7.8", t0).allowed,
            "other clients are not affected"
        );
        assert!(l.hit(&bucket, limit, "ip:1.2.3.4", t0 + WINDOW).allowed);
    }

    #[test]
    fn buckets_follow_the_spec_table() {
        let l = limiter(&[]);
        assert_eq!(
            l.bucket(&Method::GET, "/api/route/compare"),
            l.bucket(&Method::POST, "/api/route/compare")
        );
        assert_eq!(l.bucket(&Method::POST, "/api/route/execute").unwrap().1, 8);
        assert_eq!(l.bucket(&Method::GET, "/api/route/quote"), None);
        assert_eq!(l.bucket(&Method::GET, "/api/route/chains"), None);
        assert_eq!(
            l.bucket(&Method::GET, "/api/intent/solve"),
            l.bucket(&Method::POST, "/api/intent/solve")
        );
        assert_eq!(l.bucket(&Method::GET, "/api/routes/recent").unwrap().1, 60);
        assert_eq!(
            l.bucket(&Method::POST, "/api/route/preflight").unwrap().1,
            40
        );
        assert_eq!(l.bucket(&Method::POST, "/api/agent/do").unwrap().1, 20);
    }

    #[test]
    fn discovery_reads_are_limited_like_status_each_in_its_own_window() {
        let mut l = limiter(&[]);
        let (info, limit) = l.bucket(&Method::GET, "/api/gasless/info").unwrap();
        assert_eq!(limit, 60);
        let (uptime, _) = l.bucket(&Method::GET, "/api/uptime").unwrap();
        assert_ne!(info, uptime);
        assert_eq!(l.bucket(&Method::POST, "/api/gasless/info"), None);
        l.config.per_minute.insert("status".into(), 5);
        assert_eq!(l.bucket(&Method::GET, "/api/pricefeeds").unwrap().1, 5);
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("6.6.6.6, 9.9.9.9, 10.0.0.2"),
        );
        let peer: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(limiter(&[]).client(&h, Some(peer)), "ip:10.0.0.1");
        assert_eq!(
            limiter(&["10.0.0.1", "10.0.0.2"]).client(&h, Some(peer)),
            "ip:9.9.9.9"
        );
        h.insert("x-relay-key", HeaderValue::from_static("ak_test_key_1"));
        assert_eq!(limiter(&[]).client(&h, Some(peer)), "key:ak_test_key_1");
        h.insert("x-relay-key", HeaderValue::from_static("not-a-key"));
        assert_eq!(limiter(&[]).client(&h, Some(peer)), "ip:10.0.0.1");
    }
}
