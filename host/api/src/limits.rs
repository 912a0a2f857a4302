//! Rate limits and CORS (spec §5.2, §5.10, §8.1), on the `governor` crate.
//!
//! **Limits** are per client per endpoint, N per window (a minute unless
//! the bucket says otherwise: [`Window`]), counted by the generic cell
//! rate algorithm (GCRA): a client may send N requests at once, and one
//! more every window/N after that — never more than N in a burst, N per
//! window sustained. **Every matched route is limited.** The endpoints of
//! §8.1 have their spec limits and the host's own listed endpoints theirs
//! (each feature lists its buckets in its descriptor, [`crate::FEATURES`],
//! [`Limit`]; operators override a bucket in `[limits.per_minute]`, or
//! `per_hour` / `per_day` for a bucket counted over those); every other
//! route gets a bucket of its own (`"<METHOD> <route template>"`, e.g.
//! `"GET /api/route/status"`) of `limits.default_per_minute` (120), and
//! every unknown path shares one (`"(unknown path)"`). GET and POST compare
//! share one bucket, as do GET and POST solve. Endpoints §8.1 does not
//! list but that fan out to every rail get their own buckets here:
//! `preflight` 40 (one quote, like `quote`), `plan` 20 and `agent` 20 (up
//! to ten quotes, or a quote and a sandbox execute — like `solve`),
//! `improve` 20 and `preflight-full` 20 (several quotes, or every rail's
//! answer and chain reads); `intent` 20 (`POST /api/route/intent` stores a
//! prepared route and reserves its owner's nonces — also capped per IP and
//! per owner, `relay_execution::intent`); `conditional` 30 (like
//! `schedule`); `balance`, `account`, `ncaccount-account` and `receipts`
//! 30 (each reads every chain); `keys` 10 **per day** (`POST
//! /api/keys/create`); `admin-login` 10 (`POST /admin/login`, with a
//! per-IP back-off after failed sign-ins, `crate::admin`);
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
//! pass). A limit of 0 refuses every request to the bucket.
//!
//! The discovery reads of §4.1 beyond `/api/status` (`crate::discovery`) are
//! limited like status — its limit, `per_minute.status` included — each
//! path in its own bucket (§8.1 counts per endpoint), so a dashboard
//! polling them all is not throttled by their sum.
//!
//! **The client** is the IP: the TCP peer's — or, only when that peer is
//! one of `limits.trusted_proxies`, the right-most `X-Forwarded-For`
//! address that is not itself a trusted proxy (a client cannot spoof its
//! way out of its limit). An IPv6 client is counted by its /64 network
//! (one subscriber's allocation), an IPv4-mapped IPv6 address as the IPv4
//! address. An *issued* API key (`x-relay-key`, [`KeyRegistry`]) scopes a
//! bucket of its own, wherever it calls from, **and the request still
//! counts against its IP's bucket** (except in the per-IP-only buckets,
//! [`Limit::by_ip`], counted once, by IP): a key raises no ceiling its IP did
//! not have — keys are free, so ten keys must not buy ten buckets — and
//! the answer's headers are the tighter of the two. The host's developer
//! keys answer "issued?" (`relay_keys`, from memory); any other
//! `x-relay-key` — made up, or revoked — is **unrecognised**: the request
//! is limited by its IP exactly as if it carried no key, and the response
//! says so with `x-relay-key-status: unrecognised` (`issued` for an issued
//! key).
//!
//! **Memory** stays bounded: every 1024 requests, buckets that have fully
//! refilled (indistinguishable from a fresh client) are dropped, so the
//! state holds at most the clients seen in the last window.
//!
//! **CORS** allows any origin, the methods the API uses, and the headers
//! of §5 (`content-type`, `x-relay-sandbox`, `x-idempotency-key`,
//! `x-relay-key`, `x-payment`, …), and exposes the rate-limit headers,
//! `x-relay-key-status`, `x-request-id` and `idempotent-replayed`.

use std::{
    collections::BTreeMap,
    fmt,
    net::{IpAddr, SocketAddr},
    num::NonZeroU32,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, RwLock,
    },
    time::Duration,
};

mod shared;

use super::{ApiError, ErrorCode};
use axum::{
    extract::{ConnectInfo, Request},
    http::{HeaderMap, HeaderName, HeaderValue, Method},
    response::{IntoResponse, Response},
};
use governor::{
    clock::Clock, middleware::StateInformationMiddleware, state::keyed::DashMapStateStore, Quota,
};
use relay_config::LimitsConfig;
use tower_http::cors::{Any, CorsLayer};

/// The period a limit is counted over unless its bucket says otherwise.
pub const WINDOW: Duration = Window::Minute.duration();

pub use relay_feature::{
    caller::{client_ip, Client},
    Limit, Window,
};

/// A bucket a request counts in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Its name (the key of its override in `[limits]`).
    pub name: String,
    /// Requests per window.
    pub limit: u32,
    /// The window.
    pub window: Window,
    /// Counted by the client's IP only, even for a request with an issued
    /// key (creating keys, signing in).
    pub by_ip: bool,
    /// Counted in memory only, its callers never logged
    /// ([`relay_feature::Limit::unrecorded`]).
    pub unrecorded: bool,
}

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

/// The developer keys' live set, answered from the service's memory.
impl KeyRegistry for relay_keys::KeyService {
    fn is_issued(&self, key: &str) -> bool {
        self.is_live(key)
    }
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

impl Decision {
    /// The tighter of two decisions over one request (its key's bucket and
    /// its IP's): refused if either refused.
    fn tighter(self, other: Decision) -> Decision {
        Decision {
            allowed: self.allowed && other.allowed,
            limit: self.limit.min(other.limit),
            remaining: self.remaining.min(other.remaining),
            reset: self.reset.max(other.reset),
            retry_after: self.retry_after.max(other.retry_after),
        }
    }
}

type Keyed<C> = governor::RateLimiter<
    (String, Client),
    DashMapStateStore<(String, Client)>,
    C,
    StateInformationMiddleware,
>;

/// One limiter per distinct (limit, window).
type Limiters<C> = BTreeMap<(u32, Window), Arc<Keyed<C>>>;

/// The host's injected clock as the limiters read it (millisecond
/// resolution): a test that holds the host's time holds every bucket.
#[derive(Clone, Debug)]
pub struct HostClock(pub relay_types::SharedClock);

impl Clock for HostClock {
    type Instant = governor::nanos::Nanos;

    fn now(&self) -> Self::Instant {
        std::time::Duration::from_millis(self.0.now_ms()).into()
    }
}

/// Per-client, per-endpoint GCRA limiters: one keyed `governor` limiter
/// per distinct (limit, window), keyed by (bucket, client).
pub struct RateLimiter<C: Clock + Clone = HostClock> {
    config: LimitsConfig,
    table: Arc<[Limit]>,
    keys: Arc<dyn KeyRegistry>,
    clock: C,
    limiters: RwLock<Limiters<C>>,
    checks: AtomicU64,
    shared: Option<Arc<shared::Shared>>,
}

impl<C: Clock + Clone> fmt::Debug for RateLimiter<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimiter")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RateLimiter {
    /// A limiter over the host's buckets ([`crate::limit_table`])
    /// configured by `[limits]`, with no keys issued, on the host's
    /// `clock`.
    pub fn new(config: &LimitsConfig, clock: relay_types::SharedClock) -> Self {
        Self::with_keys(config, Arc::new(NoKeysIssued), clock)
    }

    /// A limiter whose issued keys `keys` answers for, on the host's
    /// `clock`.
    pub fn with_keys(
        config: &LimitsConfig,
        keys: Arc<dyn KeyRegistry>,
        clock: relay_types::SharedClock,
    ) -> Self {
        Self::with_clock(config, keys, HostClock(clock))
    }
}

impl<C: Clock + Clone> RateLimiter<C> {
    /// A limiter reading time from `clock` (tests advance a fake one).
    pub fn with_clock(config: &LimitsConfig, keys: Arc<dyn KeyRegistry>, clock: C) -> Self {
        RateLimiter {
            config: config.clone(),
            table: crate::limit_table().into(),
            keys,
            clock,
            limiters: RwLock::new(BTreeMap::new()),
            checks: AtomicU64::new(0),
            shared: None,
        }
    }

    /// The same limiter counting in `store` (`[limits] backend =
    /// "store"`: shared by every replica on it), failing as `[limits]
    /// on_backend_failure` says.
    pub fn sharing(mut self, store: relay_store::Store) -> Self {
        self.shared = Some(Arc::new(shared::Shared::new(
            store,
            self.config.on_backend_failure,
        )));
        self
    }

    /// The bucket of an endpoint (none: limits are off). `route` is the
    /// matched route template (`None` for an unknown path).
    pub fn bucket(&self, method: &Method, path: &str, route: Option<&str>) -> Option<Bucket> {
        if !self.config.enabled {
            return None;
        }
        let template = route.unwrap_or(path);
        let listed = self
            .table
            .iter()
            .find(|l| l.path == template && l.methods.contains(method));
        let Some(l) = listed else {
            let name = match route {
                Some(r) => format!("{method} {r}"),
                None => "(unknown path)".into(),
            };
            let limit = self.config.per_minute.get(&name).copied();
            return Some(Bucket {
                limit: limit.unwrap_or(self.config.default_per_minute),
                name,
                window: Window::Minute,
                by_ip: false,
                unrecorded: false,
            });
        };
        let overrides = match l.window {
            Window::Minute => &self.config.per_minute,
            Window::Hour => &self.config.per_hour,
            Window::Day => &self.config.per_day,
        };
        Some(Bucket {
            name: l.bucket.to_string(),
            limit: overrides.get(l.key).copied().unwrap_or(l.per),
            window: l.window,
            by_ip: l.by_ip,
            unrecorded: l.unrecorded,
        })
    }

    fn limiter(&self, limit: NonZeroU32, window: Window) -> Arc<Keyed<C>> {
        let key = (limit.get(), window);
        if let Some(l) = self
            .limiters
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return l.clone();
        }
        let mut all = self.limiters.write().unwrap_or_else(|e| e.into_inner());
        all.entry(key)
            .or_insert_with(|| {
                let quota = Quota::with_period(window.duration() / limit.get())
                    .expect("a nonzero period")
                    .allow_burst(limit);
                Arc::new(
                    governor::RateLimiter::dashmap_with_clock(quota, self.clock.clone())
                        .with_middleware::<StateInformationMiddleware>(),
                )
            })
            .clone()
    }

    /// Counts one request of `client` in `bucket`.
    pub fn hit(&self, bucket: &Bucket, client: &Client) -> Decision {
        let (limit, window) = (bucket.limit, bucket.window.duration());
        let Some(n) = NonZeroU32::new(limit) else {
            return Decision {
                allowed: false,
                limit,
                remaining: 0,
                reset: window,
                retry_after: window,
            };
        };
        self.sweep();
        let per_request = window / limit;
        match self
            .limiter(n, bucket.window)
            .check_key(&(bucket.name.clone(), client.clone()))
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

    /// Counts one request in `bucket`: against its issued key's bucket
    /// and its IP's (a key raises no ceiling its IP did not have), or its
    /// IP's alone (no issued key, or a bucket counted by IP).
    pub fn count(&self, bucket: &Bucket, client: &Client, ip: &Client) -> Decision {
        if !matches!(client, Client::Key(_)) || bucket.by_ip {
            return self.hit(bucket, ip);
        }
        let by_key = self.hit(bucket, client);
        if !by_key.allowed {
            return by_key;
        }
        by_key.tighter(self.hit(bucket, ip))
    }

    /// [`RateLimiter::count`] in the shared store at `now_ms`.
    async fn count_shared(
        &self,
        shared: &shared::Shared,
        (bucket, client, ip): (&Bucket, &Client, &Client),
        now_ms: u64,
    ) -> Result<Decision, relay_store::StoreError> {
        if !matches!(client, Client::Key(_)) || bucket.by_ip {
            return shared.hit(bucket, ip, now_ms).await;
        }
        let by_key = shared.hit(bucket, client, now_ms).await?;
        if !by_key.allowed {
            return Ok(by_key);
        }
        Ok(by_key.tighter(shared.hit(bucket, ip, now_ms).await?))
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
        client_ip(&self.config, headers, peer)
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
        let (key_status, counted) = self.who(req);
        let Some((bucket, client, ip)) = counted else {
            return Ok((None, key_status));
        };
        let d = self.0.count(&bucket, &client, &ip);
        self.decided(d, key_status, (&bucket, &client, &ip))
    }

    fn before_later(&self, req: &Request) -> Option<crate::around::SeenLater<Self::Seen>> {
        let shared = self.0.shared.clone()?;
        let (key_status, counted) = self.who(req);
        if counted.as_ref().is_some_and(|(b, ..)| b.unrecorded) {
            return None;
        }
        let this = self.clone();
        Some(Box::pin(async move {
            let Some((bucket, client, ip)) = counted else {
                return Ok((None, key_status));
            };
            let now = this.0.clock.0.now_ms();
            let who = (&bucket, &client, &ip);
            match this.0.count_shared(&shared, who, now).await {
                Ok(d) => this.decided(d, key_status, who),
                Err(e) => this.unreachable(&shared, &e, key_status),
            }
        }))
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

impl Enforce {
    /// What the host made of the request's key, and the bucket, client and
    /// IP it counts in (none: no bucket, limits are off).
    fn who(&self, req: &Request) -> (KeyStatus, Option<(Bucket, Client, Client)>) {
        let limiter = &self.0;
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        let (client, key_status) = limiter.client(req.headers(), peer);
        let route = crate::operations::route_of(req);
        let counted = limiter
            .bucket(req.method(), req.uri().path(), route)
            .map(|bucket| (bucket, client, limiter.ip_client(req.headers(), peer)));
        (key_status, counted)
    }

    /// The request on, or its 429.
    fn decided(
        &self,
        d: Decision,
        key_status: KeyStatus,
        (bucket, client, ip): (&Bucket, &Client, &Client),
    ) -> Result<(Option<Decision>, KeyStatus), Box<Response>> {
        use crate::around::Around as _;
        if d.allowed {
            return Ok((Some(d), key_status));
        }
        // an unrecorded bucket's refusals leave no line at all (the no-op
        // is unlogged; the gateway's caller is a relay, never named)
        if !bucket.unrecorded {
            tracing::info!(bucket = %bucket.name, %client, %ip, "rate limited");
        }
        let ms = u64::try_from(d.retry_after.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let mut resp = ApiError::new(ErrorCode::RateLimited, "rate limited")
            .retry_after_ms(ms)
            .suggest(
                "wait retryAfterMs; an x-relay-key does not raise the limit of the IP it is sent from",
            )
            .into_response();
        self.after((Some(d), key_status), &mut resp);
        Err(Box::new(resp))
    }

    /// The shared store could not count the request: served uncounted
    /// (`open`) or refused (`closed`).
    fn unreachable(
        &self,
        shared: &shared::Shared,
        e: &relay_store::StoreError,
        key_status: KeyStatus,
    ) -> Result<(Option<Decision>, KeyStatus), Box<Response>> {
        tracing::warn!(error = %e, mode = ?shared.fail, "the shared rate-limit store cannot be reached");
        match shared.fail {
            relay_config::FailMode::Open => Ok((None, key_status)),
            relay_config::FailMode::Closed => Err(Box::new(
                ApiError::new(
                    ErrorCode::RateLimitsUnavailable,
                    "the shared rate-limit store cannot be reached and this host refuses requests it cannot count ([limits] on_backend_failure = \"closed\"); retry",
                )
                .retry_after_ms(1_000)
                .into_response(),
            )),
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
        "idempotent-replayed",
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
        RateLimiter::new(&config(trusted), relay_types::clock::system())
    }

    fn fake() -> (RateLimiter<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let l = RateLimiter::with_clock(&config(&[]), Arc::new(NoKeysIssued), clock.clone());
        (l, clock)
    }

    fn ip(s: &str) -> Client {
        Client::Ip(s.parse().unwrap())
    }

    fn minute(name: &str, limit: u32) -> Bucket {
        Bucket {
            name: name.into(),
            limit,
            window: Window::Minute,
            by_ip: false,
            unrecorded: false,
        }
    }

    #[test]
    fn forty_quotes_pass_at_once_the_41st_waits_for_one_more_cell() {
        let (l, clock) = fake();
        let bucket = l.bucket(&Method::POST, "/api/route/quote", None).unwrap();
        assert_eq!(bucket.limit, 40);
        for i in 0..40 {
            let d = l.hit(&bucket, &ip("1.2.3.4"));
            assert!(d.allowed);
            assert_eq!(d.remaining, 39 - i);
        }
        let refused = l.hit(&bucket, &ip("1.2.3.4"));
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, Duration::from_millis(1500));
        assert_eq!(refused.reset, WINDOW);
        assert!(
            l.hit(&bucket, &ip("5.6.7.8")).allowed,
            "other clients are not affected"
        );
        assert!(
            l.hit(&minute("execute", 40), &ip("1.2.3.4")).allowed,
            "other buckets are not affected"
        );
        clock.advance(Duration::from_millis(1500));
        assert!(l.hit(&bucket, &ip("1.2.3.4")).allowed);
        assert!(!l.hit(&bucket, &ip("1.2.3.4")).allowed);
        clock.advance(WINDOW);
        let full = l.hit(&bucket, &ip("1.2.3.4"));
        assert_eq!((full.allowed, full.remaining), (true, 39));
    }

    #[test]
    fn refilled_buckets_are_dropped_so_memory_stays_bounded() {
        let (l, clock) = fake();
        for i in 0..SWEEP_EVERY - 1 {
            let client = Client::Ip(IpAddr::from([10, 0, (i / 256) as u8, i as u8]));
            l.hit(&minute("quote", 40), &client);
        }
        assert_eq!(l.tracked(), (SWEEP_EVERY - 1) as usize);
        clock.advance(WINDOW);
        l.hit(&minute("quote", 40), &ip("1.2.3.4"));
        assert!(l.tracked() <= 1, "{} still tracked", l.tracked());
    }

    #[test]
    fn a_zero_limit_refuses_everything() {
        let (l, _) = fake();
        let d = l.hit(&minute("execute", 0), &ip("1.2.3.4"));
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
        assert_eq!(b(Method::POST, "/api/route/execute").unwrap().limit, 8);
        assert_eq!(
            b(Method::GET, "/api/intent/solve"),
            b(Method::POST, "/api/intent/solve")
        );
        assert_eq!(b(Method::GET, "/api/routes/recent").unwrap().limit, 60);
        assert_eq!(b(Method::POST, "/api/route/preflight").unwrap().limit, 40);
        assert_eq!(b(Method::POST, "/api/agent/do").unwrap().limit, 20);
        assert_eq!(b(Method::POST, "/api/session/execute").unwrap().limit, 60);
        let keys = b(Method::POST, "/api/keys/create").unwrap();
        assert_eq!((keys.limit, keys.window), (10, Window::Day));
        assert!(keys.by_ip, "creating keys is limited per IP");
    }

    #[test]
    fn discovery_reads_are_limited_like_status_each_in_its_own_bucket() {
        let mut l = limiter(&[]);
        let info = l.bucket(&Method::GET, "/api/gasless/info", None).unwrap();
        assert_eq!(info.limit, 60);
        let uptime = l.bucket(&Method::GET, "/api/uptime", None).unwrap();
        assert_ne!(info.name, uptime.name);
        assert_eq!(
            l.bucket(&Method::POST, "/api/gasless/info", None)
                .unwrap()
                .name,
            "(unknown path)",
            "not a discovery read: no route matched a POST"
        );
        l.config.per_minute.insert("status".into(), 5);
        assert_eq!(
            l.bucket(&Method::GET, "/api/pricefeeds", None)
                .unwrap()
                .limit,
            5
        );
    }

    #[test]
    fn unknown_paths_share_one_default_bucket() {
        let mut l = limiter(&[]);
        l.config.default_per_minute = 100;
        let a = l.bucket(&Method::GET, "/nope/1", None);
        assert_eq!(a, l.bucket(&Method::GET, "/nope/2", None));
        assert_ne!(
            a,
            l.bucket(&Method::GET, "/api/route/chains", Some("/api/route/chains"))
        );
    }

    #[test]
    fn every_matched_route_is_limited_by_default_in_a_bucket_of_its_own() {
        let mut l = limiter(&[]);
        let b = |l: &RateLimiter, m: Method, route: &str| l.bucket(&m, route, Some(route));
        let status = b(&l, Method::GET, "/api/route/status").unwrap();
        assert_eq!(
            (status.name.as_str(), status.limit, status.window),
            ("GET /api/route/status", 120, Window::Minute)
        );
        let chains = b(&l, Method::GET, "/api/route/chains").unwrap();
        assert_ne!(status.name, chains.name);
        l.config
            .per_minute
            .insert("GET /api/route/status".into(), 7);
        assert_eq!(b(&l, Method::GET, "/api/route/status").unwrap().limit, 7);
        l.config.enabled = false;
        assert_eq!(b(&l, Method::GET, "/api/route/status"), None);
    }

    #[test]
    fn the_endpoints_issue_40_found_unlimited_have_their_own_buckets() {
        let l = limiter(&[]);
        let b = |m: Method, route: &str| l.bucket(&m, route, Some(route)).unwrap();
        for (method, route, name, limit) in [
            (Method::POST, "/api/route/intent", "intent", 20),
            (Method::POST, "/api/route/conditional", "conditional", 30),
            (Method::POST, "/api/route/improve", "improve", 20),
            (Method::POST, "/api/preflight/full", "preflight-full", 20),
            (Method::POST, "/admin/login", "admin-login", 10),
            (Method::GET, "/api/balance/{addr}", "balance", 30),
            (Method::GET, "/api/account/{addr}", "account", 30),
            (
                Method::GET,
                "/api/ncaccount/{agent}",
                "ncaccount-account",
                30,
            ),
        ] {
            let got = b(method, route);
            assert_eq!((got.name.as_str(), got.limit), (name, limit), "{route}");
        }
        let login = b(Method::POST, "/admin/login");
        assert!(login.by_ip, "signing in is per IP");
    }

    #[test]
    fn a_day_bucket_refills_one_cell_per_window_over_limit_and_takes_per_day_overrides() {
        let (mut l, clock) = fake();
        let keys = l.bucket(&Method::POST, "/api/keys/create", None).unwrap();
        for _ in 0..10 {
            assert!(l.hit(&keys, &ip("1.2.3.4")).allowed);
        }
        let eleventh = l.hit(&keys, &ip("1.2.3.4"));
        assert!(!eleventh.allowed);
        assert_eq!(eleventh.retry_after, Duration::from_secs(8_640));
        clock.advance(Duration::from_secs(3_600));
        assert!(
            !l.hit(&keys, &ip("1.2.3.4")).allowed,
            "an hour later: still refused"
        );
        clock.advance(Duration::from_secs(5_040));
        assert!(
            l.hit(&keys, &ip("1.2.3.4")).allowed,
            "a tenth of a day later: one more"
        );
        l.config.per_day.insert("keys".into(), 3);
        l.config.per_minute.insert("keys".into(), 1000);
        let keys = l.bucket(&Method::POST, "/api/keys/create", None).unwrap();
        assert_eq!(
            keys.limit, 3,
            "per_day overrides a day bucket, per_minute does not"
        );
    }

    #[test]
    fn an_issued_key_counts_against_its_ip_too_and_buys_no_extra_requests() {
        let (l, _) = fake();
        let bucket = minute("status", 3);
        let home = ip("1.2.3.4");
        let (a, b) = (Client::Key("ak_aaaa".into()), Client::Key("ak_bbbb".into()));
        for _ in 0..2 {
            assert!(l.count(&bucket, &a, &home).allowed);
        }
        let last = l.count(&bucket, &b, &home);
        assert_eq!(
            (last.allowed, last.remaining),
            (true, 0),
            "the IP's is the tighter"
        );
        assert!(
            !l.count(&bucket, &b, &home).allowed,
            "a second key buys nothing"
        );
        assert!(!l.count(&bucket, &home.clone(), &home).allowed);
        let away = l.count(&bucket, &a, &ip("5.6.7.8"));
        assert_eq!(
            (away.allowed, away.remaining),
            (true, 0),
            "from another IP the key's own bucket still holds: its third request"
        );
        assert!(!l.count(&bucket, &a, &ip("9.9.9.9")).allowed);
        let keys = minute("keys", 1);
        assert!(l.count(&keys, &a, &home).allowed);
        assert!(
            !l.count(&keys, &b, &home).allowed,
            "a per-IP bucket counts the IP alone, whatever the key"
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
        let issued = RateLimiter::with_keys(
            &config(&[]),
            Arc::new(|k: &str| k == "ak_made_up_1"),
            relay_types::clock::system(),
        );
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
