//! Rate limits and CORS (spec §5.2, §5.10, §8.1), on the `governor` crate.
//!
//! **Limits** are per client per endpoint, N per minute, counted by the
//! generic cell rate algorithm (GCRA): a client may send N requests at
//! once, and one more every 60/N seconds after that — never more than N in
//! a burst, N per minute sustained. The endpoints of §8.1 have their spec
//! limits (operators override them per bucket in `[limits.per_minute]`);
//! every other endpoint is unlimited unless `limits.default_per_minute`
//! is set (then each matched route has its own bucket, and every unknown
//! path shares one). GET and POST compare share one bucket, as do GET and
//! POST solve. Endpoints §8.1 does not list but that fan out to every rail
//! get their own buckets here: `preflight` 40 (one quote, like `quote`),
//! `plan` 20 and `agent` 20 (up to ten quotes, or a quote and a sandbox
//! execute — like `solve`); `keys` 10 (`POST /api/keys/create`, always
//! counted per IP — [`BY_IP`] — so that a key cannot buy more keys);
//! `session-execute` 60 (`POST /api/session/execute`: an agent's routes,
//! also bounded by its session's caps); `hooks` 30 and `subscribe` 30
//! (`POST /api/hooks`, `POST /api/events/subscribe`: each registration
//! makes the host send requests); `ask` 30 (`POST /api/ask`: each
//! question reads the mesh and health).
//! Every request counts, including those refused
//! later for a bad body. Every limited response carries
//! `x-ratelimit-limit`, `x-ratelimit-remaining` and `x-ratelimit-reset`
//! (seconds until the full limit is available again); a refused one is 429
//! `{error: "rate limited", errorCode: "RATE_LIMITED", retryable: true,
//! retryAfterMs}` with `retry-after` (seconds until the next request can
//! pass). A per-minute limit of 0 refuses every request to the bucket.
//!
//! The discovery reads of §4.1 beyond `/api/status` ([`DISCOVERY`]) are
//! limited like status — its limit, `per_minute.status` included — each
//! path in its own bucket (§8.1 counts per endpoint), so a dashboard
//! polling them all is not throttled by their sum.
//!
//! **The client** is an *issued* API key when the request's `x-relay-key`
//! is one ([`KeyRegistry`]): the limit is then the key's, wherever it calls
//! from (except in the per-IP buckets of [`BY_IP`]). The host's developer
//! keys answer it (`relay_accounts::keys`, from memory); any other
//! `x-relay-key` — made up, or revoked — is **unrecognised**: the request
//! is limited by its IP exactly as if it carried no key — a made-up
//! `ak_…` per request buys nothing — and the response says so with
//! `x-relay-key-status: unrecognised` (`issued` for an issued key). The
//! IP is the TCP peer's — or, only when that peer is one of
//! `limits.trusted_proxies`, the right-most `X-Forwarded-For` address that
//! is not itself a trusted proxy (a client cannot spoof its way out of its
//! limit). An IPv6 client is
//! counted by its /64 network (one subscriber's allocation), an
//! IPv4-mapped IPv6 address as the IPv4 address.
//!
//! **Memory** stays bounded: every 1024 requests, buckets that have fully
//! refilled (indistinguishable from a fresh client) are dropped, so the
//! state holds at most the clients seen in the last minute.
//!
//! **CORS** allows any origin, the methods the API uses, and the headers
//! of §5 (`content-type`, `x-relay-sandbox`, `x-idempotency-key`,
//! `x-relay-key`, `x-payment`, …), and exposes the rate-limit headers,
//! `x-relay-key-status` and `x-request-id`.

use std::{
    collections::BTreeMap,
    fmt,
    net::{IpAddr, Ipv6Addr, SocketAddr},
    num::NonZeroU32,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, RwLock,
    },
    time::Duration,
};

use super::{ApiError, ErrorCode};
use axum::{
    extract::{ConnectInfo, MatchedPath, Request},
    http::{HeaderMap, HeaderName, HeaderValue, Method},
    response::{IntoResponse, Response},
};
use governor::{
    clock::{Clock, DefaultClock},
    middleware::StateInformationMiddleware,
    state::keyed::DashMapStateStore,
    Quota,
};
use relay_config::LimitsConfig;
use tower_http::cors::{Any, CorsLayer};

/// The period every limit is counted over.
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
    (
        "session-execute",
        &[Method::POST],
        "/api/session/execute",
        60,
    ),
    ("keys", &[Method::POST], "/api/keys/create", 10),
    ("ask", &[Method::POST], "/api/ask", 30),
    ("hooks", &[Method::POST], "/api/hooks", 30),
    ("subscribe", &[Method::POST], "/api/events/subscribe", 30),
    // spec §4.8 (its limits are not shown): the free check like a quote,
    // a paid sponsorship like a fund-moving execute (a 402 counts too)
    ("7702-check", &[Method::POST], "/api/7702/check", 40),
    // erasure: a signed request is cheap to check, but each one scans routes
    (
        "erasure-request",
        &[Method::POST],
        "/api/erasure/request",
        5,
    ),
    ("7702-sponsor", &[Method::POST], "/api/7702/sponsor", 20),
    // spec §4.7 (limits not shown): fund-moving netting calls like an
    // execute, enrolment and deposit claims like a quote
    ("netting-enroll", &[Method::POST], "/api/netting/enroll", 20),
    (
        "netting-deposit",
        &[Method::POST],
        "/api/netting/deposit",
        20,
    ),
    (
        "netting-transfer",
        &[Method::POST],
        "/api/netting/transfer",
        30,
    ),
    (
        "netting-withdraw",
        &[Method::POST],
        "/api/netting/withdraw",
        8,
    ),
    // spec §4.6 (limits not shown): a yield-account spend like an execute,
    // its quote (several chain reads) like a quote
    (
        "ncaccount-quote",
        &[Method::POST],
        "/api/ncaccount/quote",
        40,
    ),
    (
        "ncaccount-spend",
        &[Method::POST],
        "/api/ncaccount/spend",
        20,
    ),
];

/// Buckets always counted by the client's IP, even for a request with an
/// issued key: creating keys must not be a way around a per-IP limit.
const BY_IP: &[&str] = &["keys"];

/// Discovery reads (§4.1) limited like `GET /api/status`, each in its
/// own bucket.
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

/// Refilled buckets are dropped once per this many requests.
const SWEEP_EVERY: u64 = 1024;

/// Answers "did this host issue this API key?" — the seam the developer
/// keys plug their store into. Called on every request, so it answers from
/// memory.
pub trait KeyRegistry: Send + Sync + 'static {
    /// Whether `key` (an `x-relay-key` value) was issued by this host and
    /// is live.
    fn is_issued(&self, key: &str) -> bool;
}

impl<F: Fn(&str) -> bool + Send + Sync + 'static> KeyRegistry for F {
    fn is_issued(&self, key: &str) -> bool {
        self(key)
    }
}

/// No key is issued: every `x-relay-key` is unrecognised (a limiter
/// built without a key service).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoKeysIssued;

impl KeyRegistry for NoKeysIssued {
    fn is_issued(&self, _: &str) -> bool {
        false
    }
}

/// Who a request is counted against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Client {
    /// An issued API key.
    Key(String),
    /// An IP address (an IPv6 client's /64 network).
    Ip(IpAddr),
    /// No peer address known (never the case behind the real server).
    Unknown,
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Client::Key(k) => write!(f, "key:{k}"),
            Client::Ip(ip) => write!(f, "ip:{ip}"),
            Client::Unknown => f.write_str("ip:unknown"),
        }
    }
}

/// What became of the request's `x-relay-key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyStatus {
    /// No key was sent.
    Absent,
    /// An issued key: the limits are the key's.
    Issued,
    /// A key this host did not issue: limited by IP, like no key.
    Unrecognised,
}

impl KeyStatus {
    /// The `x-relay-key-status` header value, when a key was sent.
    pub fn header(self) -> Option<&'static str> {
        match self {
            KeyStatus::Absent => None,
            KeyStatus::Issued => Some("issued"),
            KeyStatus::Unrecognised => Some("unrecognised"),
        }
    }
}

/// The outcome of counting one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// The bucket's per-minute limit.
    pub limit: u32,
    /// Requests that may follow at once.
    pub remaining: u32,
    /// Until the whole limit is available again.
    pub reset: Duration,
    /// Until the next request may pass (zero when this one did).
    pub retry_after: Duration,
}

type Keyed<C> = governor::RateLimiter<
    (String, Client),
    DashMapStateStore<(String, Client)>,
    C,
    StateInformationMiddleware,
>;

/// Per-client, per-endpoint GCRA limiters: one keyed `governor` limiter
/// per distinct per-minute limit, keyed by (bucket, client).
pub struct RateLimiter<C: Clock + Clone = DefaultClock> {
    config: LimitsConfig,
    keys: Arc<dyn KeyRegistry>,
    clock: C,
    limiters: RwLock<BTreeMap<u32, Arc<Keyed<C>>>>,
    checks: AtomicU64,
}

impl<C: Clock + Clone> fmt::Debug for RateLimiter<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimiter")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RateLimiter {
    /// A limiter configured by `[limits]`, with no keys issued.
    pub fn new(config: &LimitsConfig) -> Self {
        Self::with_keys(config, Arc::new(NoKeysIssued))
    }

    /// A limiter whose issued keys `keys` answers for.
    pub fn with_keys(config: &LimitsConfig, keys: Arc<dyn KeyRegistry>) -> Self {
        Self::with_clock(config, keys, DefaultClock::default())
    }
}

impl<C: Clock + Clone> RateLimiter<C> {
    /// A limiter reading time from `clock` (tests advance a fake one).
    pub fn with_clock(config: &LimitsConfig, keys: Arc<dyn KeyRegistry>, clock: C) -> Self {
        RateLimiter {
            config: config.clone(),
            keys,
            clock,
            limiters: RwLock::new(BTreeMap::new()),
            checks: AtomicU64::new(0),
        }
    }

    /// The bucket and per-minute limit of an endpoint, if it is limited.
    /// `route` is the matched route (`None` for an unknown path).
    pub fn bucket(
        &self,
        method: &Method,
        path: &str,
        route: Option<&str>,
    ) -> Option<(String, u32)> {
        if !self.config.enabled {
            return None;
        }
        let limit_of =
            |name: &str, spec: u32| self.config.per_minute.get(name).copied().unwrap_or(spec);
        let listed = TABLE
            .iter()
            .find(|(_, methods, p, _)| *p == path && methods.contains(method));
        match listed {
            Some((name, _, _, spec)) => Some((name.to_string(), limit_of(name, *spec))),
            None if *method == Method::GET && DISCOVERY.contains(&path) => {
                let (name, _, _, spec) = TABLE.iter().find(|(n, ..)| *n == "status")?;
                Some((format!("status {path}"), limit_of(name, *spec)))
            }
            None => self
                .config
                .default_per_minute
                .map(|l| (format!("{method} {}", route.unwrap_or("(unknown path)")), l)),
        }
    }

    fn limiter(&self, limit: NonZeroU32) -> Arc<Keyed<C>> {
        if let Some(l) = self
            .limiters
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&limit.get())
        {
            return l.clone();
        }
        let mut all = self.limiters.write().unwrap_or_else(|e| e.into_inner());
        all.entry(limit.get())
            .or_insert_with(|| {
                let quota = Quota::with_period(WINDOW / limit.get())
                    .expect("a nonzero period")
                    .allow_burst(limit);
                Arc::new(
                    governor::RateLimiter::dashmap_with_clock(quota, self.clock.clone())
                        .with_middleware::<StateInformationMiddleware>(),
                )
            })
            .clone()
    }

    /// Counts one request of `client` in `bucket`, whose limit is `limit`
    /// per minute.
    pub fn hit(&self, bucket: &str, limit: u32, client: &Client) -> Decision {
        let Some(n) = NonZeroU32::new(limit) else {
            return Decision {
                allowed: false,
                limit,
                remaining: 0,
                reset: WINDOW,
                retry_after: WINDOW,
            };
        };
        self.sweep();
        let per_request = WINDOW / limit;
        match self
            .limiter(n)
            .check_key(&(bucket.to_string(), client.clone()))
        {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                Decision {
                    allowed: true,
                    limit,
                    remaining,
                    reset: per_request * (limit - remaining),
                    retry_after: Duration::ZERO,
                }
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                Decision {
                    allowed: false,
                    limit,
                    remaining: 0,
                    reset: wait + per_request * (limit - 1),
                    retry_after: wait,
                }
            }
        }
    }

    /// Drops refilled buckets once per [`SWEEP_EVERY`] requests.
    fn sweep(&self) {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY != SWEEP_EVERY - 1 {
            return;
        }
        let all: Vec<_> = self
            .limiters
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for l in all {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }

    /// Clients currently tracked in any bucket (for tests and metrics).
    pub fn tracked(&self) -> usize {
        let all = self.limiters.read().unwrap_or_else(|e| e.into_inner());
        all.values().map(|l| l.len()).sum()
    }

    /// Who is calling: an issued key, or the client IP — and what became
    /// of the `x-relay-key` the request carried.
    pub fn client(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> (Client, KeyStatus) {
        let status = match headers.get("x-relay-key") {
            None => KeyStatus::Absent,
            Some(v) => match v.to_str().ok().filter(|k| well_formed_key(k)) {
                Some(k) if self.keys.is_issued(k) => {
                    return (Client::Key(k.to_string()), KeyStatus::Issued)
                }
                _ => KeyStatus::Unrecognised,
            },
        };
        (self.ip_client(headers, peer), status)
    }

    /// The client IP, whatever key the request carries.
    pub fn ip_client(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> Client {
        let Some(peer) = peer else {
            return Client::Unknown;
        };
        let trusted = &self.config.trusted_proxies;
        if !trusted.contains(&peer) {
            return Client::Ip(counted_as(peer));
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
        Client::Ip(counted_as(client))
    }
}

/// The address a client is counted as: IPv4 as is (IPv4-mapped IPv6
/// included), IPv6 by its /64 network.
fn counted_as(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(network))
        }
        v4 => v4,
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
            HeaderValue::from(u64::try_from(value).unwrap_or(u64::MAX)),
        );
    }
}

/// The middleware ([`crate::around::Around`]): counts the request,
/// refuses it over the limit, and labels the response (limit headers,
/// `x-relay-key-status`).
#[derive(Clone)]
pub struct Enforce(pub Arc<RateLimiter>);

impl crate::around::Around for Enforce {
    /// The bucket's decision (none: the request counts against no bucket)
    /// and what the host made of the request's key.
    type Seen = (Option<Decision>, KeyStatus);

    fn before(&self, req: &Request) -> Result<Self::Seen, Box<Response>> {
        let limiter = &self.0;
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        let (client, key_status) = limiter.client(req.headers(), peer);
        let route = req.extensions().get::<MatchedPath>().map(|m| m.as_str());
        let Some((bucket, limit)) = limiter.bucket(req.method(), req.uri().path(), route) else {
            return Ok((None, key_status));
        };
        let client = match BY_IP.contains(&bucket.as_str()) {
            true => limiter.ip_client(req.headers(), peer),
            false => client,
        };
        let d = limiter.hit(&bucket, limit, &client);
        if d.allowed {
            return Ok((Some(d), key_status));
        }
        tracing::info!(%bucket, %client, "rate limited");
        let ms = u64::try_from(d.retry_after.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let mut resp = ApiError::new(ErrorCode::RateLimited, "rate limited")
            .retry_after_ms(ms)
            .suggest(
                "wait retryAfterMs; an x-relay-key the host did not issue does not raise the limit",
            )
            .into_response();
        self.after((Some(d), key_status), &mut resp);
        Err(Box::new(resp))
    }

    fn after(&self, (decision, key_status): Self::Seen, resp: &mut Response) {
        if let Some(d) = &decision {
            set_headers(resp.headers_mut(), d);
        }
        if let Some(status) = key_status.header() {
            resp.headers_mut()
                .insert("x-relay-key-status", HeaderValue::from_static(status));
        }
    }
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
        "payment-signature",
        "x-relay-pass",
        "x-relay-rehearse",
        "x-request-id",
    ];
    let expose = [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "retry-after",
        "x-relay-key-status",
        "x-request-id",
        // x402 (spec §4.8): the settlement receipt (v1, v2) and v2's invoice
        "x-payment-response",
        "payment-response",
        "payment-required",
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
    use governor::clock::FakeRelativeClock;

    fn config(trusted: &[&str]) -> LimitsConfig {
        LimitsConfig {
            trusted_proxies: trusted.iter().map(|s| s.parse().unwrap()).collect(),
            ..LimitsConfig::default()
        }
    }

    fn limiter(trusted: &[&str]) -> RateLimiter {
        RateLimiter::new(&config(trusted))
    }

    fn fake() -> (RateLimiter<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let l = RateLimiter::with_clock(&config(&[]), Arc::new(NoKeysIssued), clock.clone());
        (l, clock)
    }

    fn ip(s: &str) -> Client {
        Client::Ip(s.parse().unwrap())
    }

    #[test]
    fn forty_quotes_pass_at_once_the_41st_waits_for_one_more_cell() {
        let (l, clock) = fake();
        let (bucket, limit) = l.bucket(&Method::POST, "/api/route/quote", None).unwrap();
        assert_eq!(limit, 40);
        for i in 0..40 {
            let d = l.hit(&bucket, limit, &ip("1.2.3.4"));
            assert!(d.allowed);
            assert_eq!(d.remaining, 39 - i);
        }
        let refused = l.hit(&bucket, limit, &ip("1.2.3.4"));
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, Duration::from_millis(1500));
        assert_eq!(refused.reset, WINDOW);
        assert!(
            l.hit(&bucket, limit, &ip("5.6.7.8")).allowed,
            "other clients are not affected"
        );
        assert!(
            l.hit("execute", limit, &ip("1.2.3.4")).allowed,
            "other buckets are not affected"
        );
        clock.advance(Duration::from_millis(1500));
        assert!(l.hit(&bucket, limit, &ip("1.2.3.4")).allowed);
        assert!(!l.hit(&bucket, limit, &ip("1.2.3.4")).allowed);
        clock.advance(WINDOW);
        let full = l.hit(&bucket, limit, &ip("1.2.3.4"));
        assert_eq!((full.allowed, full.remaining), (true, 39));
    }

    #[test]
    fn refilled_buckets_are_dropped_so_memory_stays_bounded() {
        let (l, clock) = fake();
        for i in 0..SWEEP_EVERY - 1 {
            let client = Client::Ip(IpAddr::from([10, 0, (i / 256) as u8, i as u8]));
            l.hit("quote", 40, &client);
        }
        assert_eq!(l.tracked(), (SWEEP_EVERY - 1) as usize);
        clock.advance(WINDOW);
        l.hit("quote", 40, &ip("1.2.3.4"));
        assert!(l.tracked() <= 1, "{} still tracked", l.tracked());
    }

    #[test]
    fn a_zero_limit_refuses_everything() {
        let (l, _) = fake();
        let d = l.hit("execute", 0, &ip("1.2.3.4"));
        assert_eq!((d.allowed, d.retry_after), (false, WINDOW));
    }

    #[test]
    fn buckets_follow_the_spec_table() {
        let l = limiter(&[]);
        let b = |m: Method, p: &str| l.bucket(&m, p, Some(p));
        assert_eq!(
            b(Method::GET, "/api/route/compare"),
            b(Method::POST, "/api/route/compare")
        );
        assert_eq!(b(Method::POST, "/api/route/execute").unwrap().1, 8);
        assert_eq!(b(Method::GET, "/api/route/quote"), None);
        assert_eq!(b(Method::GET, "/api/route/chains"), None);
        assert_eq!(
            b(Method::GET, "/api/intent/solve"),
            b(Method::POST, "/api/intent/solve")
        );
        assert_eq!(b(Method::GET, "/api/routes/recent").unwrap().1, 60);
        assert_eq!(b(Method::POST, "/api/route/preflight").unwrap().1, 40);
        assert_eq!(b(Method::POST, "/api/agent/do").unwrap().1, 20);
        assert_eq!(b(Method::POST, "/api/session/execute").unwrap().1, 60);
        let (keys, limit) = b(Method::POST, "/api/keys/create").unwrap();
        assert_eq!(limit, 10);
        assert!(
            BY_IP.contains(&keys.as_str()),
            "creating keys is limited per IP"
        );
    }

    #[test]
    fn discovery_reads_are_limited_like_status_each_in_its_own_bucket() {
        let mut l = limiter(&[]);
        let (info, limit) = l.bucket(&Method::GET, "/api/gasless/info", None).unwrap();
        assert_eq!(limit, 60);
        let (uptime, _) = l.bucket(&Method::GET, "/api/uptime", None).unwrap();
        assert_ne!(info, uptime);
        assert_eq!(l.bucket(&Method::POST, "/api/gasless/info", None), None);
        l.config.per_minute.insert("status".into(), 5);
        assert_eq!(
            l.bucket(&Method::GET, "/api/pricefeeds", None).unwrap().1,
            5
        );
    }

    #[test]
    fn unknown_paths_share_one_default_bucket() {
        let mut l = limiter(&[]);
        l.config.default_per_minute = Some(100);
        let a = l.bucket(&Method::GET, "/nope/1", None);
        assert_eq!(a, l.bucket(&Method::GET, "/nope/2", None));
        assert_ne!(
            a,
            l.bucket(&Method::GET, "/api/route/chains", Some("/api/route/chains"))
        );
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("6.6.6.6, 9.9.9.9, 10.0.0.2"),
        );
        let peer: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(limiter(&[]).client(&h, Some(peer)).0, ip("10.0.0.1"));
        assert_eq!(
            limiter(&["10.0.0.1", "10.0.0.2"]).client(&h, Some(peer)).0,
            ip("9.9.9.9")
        );
    }

    #[test]
    fn only_issued_keys_scope_limits() {
        let mut h = HeaderMap::new();
        let peer: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(
            limiter(&[]).client(&h, Some(peer)),
            (ip("10.0.0.1"), KeyStatus::Absent)
        );
        h.insert("x-relay-key", HeaderValue::from_static("ak_made_up_1"));
        assert_eq!(
            limiter(&[]).client(&h, Some(peer)),
            (ip("10.0.0.1"), KeyStatus::Unrecognised)
        );
        let issued = RateLimiter::with_keys(&config(&[]), Arc::new(|k: &str| k == "ak_made_up_1"));
        assert_eq!(
            issued.client(&h, Some(peer)),
            (Client::Key("ak_made_up_1".into()), KeyStatus::Issued)
        );
        h.insert("x-relay-key", HeaderValue::from_static("not-a-key"));
        assert_eq!(issued.client(&h, Some(peer)).1, KeyStatus::Unrecognised);
    }

    #[test]
    fn ipv6_clients_count_by_their_64_network() {
        let l = limiter(&[]);
        let h = HeaderMap::new();
        let a = l
            .client(&h, Some("2001:db8:1:2:aaaa::1".parse().unwrap()))
            .0;
        let b = l
            .client(&h, Some("2001:db8:1:2:bbbb::2".parse().unwrap()))
            .0;
        let c = l.client(&h, Some("2001:db8:1:3::1".parse().unwrap())).0;
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mapped = l.client(&h, Some("::ffff:1.2.3.4".parse().unwrap())).0;
        assert_eq!(mapped, ip("1.2.3.4"));
    }
}
