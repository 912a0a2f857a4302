//! The operator's dashboard over HTTP, thin over [`relay_admin`]:
//!
//! - `GET /admin`: the page (or, without the owner credential, 401 with the
//!   login form); `GET /admin/assets/{file}`: its stylesheet and scripts,
//!   built into the binary.
//! - `POST /admin/login {token}`: checks the owner token and sets the login
//!   cookie ([`relay_admin::login`]: signed under a secret this host drew
//!   at start, never derived from the token; its age capped by the server;
//!   `HttpOnly`, `SameSite=Strict`, never the token); `POST /admin/logout`
//!   clears it. Sign-ins are rate limited per IP (bucket `admin-login`,
//!   [`crate::limits`]) and, after two free ones, each failure backs its
//!   IP off (1 s, doubling, at most 15 min: 429 `RATE_LIMITED` with
//!   `retryAfterMs`, the token not even checked).
//! - `GET /admin/api/snapshot`, `GET /admin/api/audit`,
//!   `POST /admin/api/lane`, `POST /admin/api/rail`, and
//!   `GET /admin/api/events` (server-sent events: a `snapshot` event at
//!   once, then on every route change, operator change and every
//!   `admin.refresh_ms`).
//!
//! Every page and API answer needs the owner credential — the login cookie
//! or `Authorization: Bearer <owner token>` — else 401
//! `ADMIN_AUTH_REQUIRED`; a change made with the cookie also needs the
//! page's CSRF token in `x-relay-csrf` (403 `CSRF_INVALID`). Changes go
//! through [`relay_admin::operator`], the path `relay rails …` takes, and
//! are audited as `owner-token`.
//!
//! [`observe`] reports every error answer and rate-limit refusal of the
//! whole API to the dashboard's [`Signals`].

use super::{auth, edge::JsonObject, ApiError, AppState, ErrorCode};
use axum::{
    extract::{ConnectInfo, Path, Query, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
    Json,
};
use futures::Stream;
use relay_admin::{
    assets,
    dashboard::{self, ChainView, Dashboard, Sources},
    login::{self, Backoff, LoginKeys},
    operator::{self, Actor, AuditEntry},
    signals::{RecentError, Signals},
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::{
    convert::Infallible,
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};
use tokio::sync::{broadcast::error::RecvError, watch, Mutex};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

/// The dashboard's per-host state.
#[derive(Clone)]
pub(crate) struct Admin {
    app: AppState,
    keys: Option<LoginKeys>,
    backoff: Arc<Backoff<crate::limits::Client>>,
    signals: Arc<Signals>,
    chain: Arc<Mutex<Option<(Instant, ChainView)>>>,
    changes: Arc<watch::Sender<u64>>,
}

impl Admin {
    /// The dashboard of the host whose state is `app`.
    pub(crate) fn new(app: &AppState) -> Self {
        Admin {
            keys: app
                .owner_token
                .as_ref()
                .map(|_| LoginKeys::generate(app.config.admin.session_ttl_secs.max(1))),
            backoff: Arc::default(),
            app: app.clone(),
            signals: app.signals.clone(),
            chain: Arc::default(),
            changes: Arc::new(watch::channel(0).0),
        }
    }

    fn sources(&self) -> Sources<'_> {
        let a = &self.app;
        Sources {
            config: &a.config,
            rails: &a.rails,
            store: &a.store,
            health: &a.health,
            reader: &a.reader,
            relayer: a.relayer.as_ref().map(|r| r.address()),
            pool_keys: a
                .relayer
                .as_ref()
                .map(|r| r.pool_keys())
                .unwrap_or_default(),
            signals: &self.signals,
        }
    }

    fn refresh(&self) -> Duration {
        Duration::from_millis(self.app.config.admin.refresh_ms.max(500))
    }

    /// The chain part, re-read when older than `admin.refresh_ms`.
    async fn chain_view(&self) -> ChainView {
        let mut slot = self.chain.lock().await;
        if let Some((at, view)) = slot.as_ref() {
            if at.elapsed() < self.refresh() {
                return view.clone();
            }
        }
        let timeout = Duration::from_millis(self.app.config.quote.chain_read_timeout_ms.max(1));
        let view = dashboard::read_chains(self.sources(), timeout).await;
        *slot = Some((Instant::now(), view.clone()));
        view
    }

    async fn dashboard(&self) -> Result<Dashboard, ApiError> {
        let chain = self.chain_view().await;
        dashboard::snapshot(self.sources(), chain)
            .await
            .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))
    }
}

/// How a request proved it is the operator.
pub(crate) enum Credential {
    /// `Authorization: Bearer <owner token>`.
    Bearer,
    /// The login cookie (its value).
    Cookie(String),
}

fn unauthorized() -> ApiError {
    ApiError::new(
        ErrorCode::AdminAuthRequired,
        "the operator dashboard needs the owner token: sign in at /admin or send Authorization: Bearer <owner token>",
    )
}

fn with_challenge(mut resp: Response) -> Response {
    resp.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(auth::CHALLENGE),
    );
    resp
}

impl Admin {
    /// The host's state.
    pub(crate) fn app(&self) -> &AppState {
        &self.app
    }

    fn credential(&self, headers: &HeaderMap) -> Option<Credential> {
        if auth::is_operator(self.app.owner_token.as_ref(), headers) {
            return Some(Credential::Bearer);
        }
        let keys = self.keys.as_ref()?;
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(login::from_cookie_header)
            .find(|c| keys.verify(c, self.app.clock.now_ms()))
            .map(|c| Credential::Cookie(c.to_string()))
    }

    /// The operator's credential, or 401.
    pub(crate) fn authorize(&self, headers: &HeaderMap) -> Result<Credential, Denied> {
        self.credential(headers).ok_or(Denied::Unauthorized)
    }

    /// Like [`Admin::authorize`] for a change: a cookie must come with its
    /// CSRF token.
    fn authorize_change(&self, headers: &HeaderMap) -> Result<(), Denied> {
        let Credential::Cookie(c) = self.authorize(headers)? else {
            return Ok(());
        };
        let sent = headers
            .get(login::CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        match &self.keys {
            Some(keys) if keys.csrf_ok(&c, sent) => Ok(()),
            _ => Err(Denied::Csrf),
        }
    }
}

/// Why a request was refused before its handler ran.
pub(crate) enum Denied {
    /// No owner credential: 401 with the challenge.
    Unauthorized,
    /// A cookie change without its CSRF token: 403.
    Csrf,
}

impl IntoResponse for Denied {
    fn into_response(self) -> Response {
        match self {
            Denied::Unauthorized => with_challenge(unauthorized().into_response()),
            Denied::Csrf => ApiError::new(
                ErrorCode::CsrfInvalid,
                "x-relay-csrf: missing or not this login's CSRF token",
            )
            .field(login::CSRF_HEADER)
            .into_response(),
        }
    }
}

/// The operator's dashboard (`/admin`): signing in is limited per IP (plus
/// a back-off per IP after each failed sign-in).
pub(crate) const FEATURE: relay_feature::Feature<crate::AppState> = relay_feature::Feature {
    name: "dashboard",
    home: "host/admin",
    spec: "host (the spec shows no dashboard)",
    section: None,
    routes: |s| routes(Admin::new(s)),
    limits: &[relay_feature::Limit::post("admin-login", "/admin/login", 10).by_ip()],
    errors: &[
        crate::ErrorCode::AdminAuthRequired,
        crate::ErrorCode::CsrfInvalid,
        crate::ErrorCode::UnknownRail,
    ],
    start: None,
};

/// The dashboard's routes.
pub(crate) fn routes(admin: Admin) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .route("/admin", axum::routing::get(page))
        .route("/admin/", axum::routing::get(page))
        .route("/admin/assets/{file}", axum::routing::get(asset))
        .routes(routes!(sign_in))
        .routes(routes!(sign_out))
        .routes(routes!(snapshot))
        .routes(routes!(audit))
        .routes(routes!(set_lane))
        .routes(routes!(set_rail))
        .routes(routes!(events))
        .merge(crate::explorer::operator_routes())
        .with_state(admin)
}

fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, assets::CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        body,
    )
        .into_response()
}

/// `GET /admin`: the dashboard, or 401 with the login form.
#[tracing::instrument(skip_all)]
async fn page(State(a): State<Admin>, headers: HeaderMap) -> Response {
    match a.credential(&headers) {
        Some(c) => {
            let csrf = match (&c, &a.keys) {
                (Credential::Cookie(v), Some(k)) => k.csrf(v),
                _ => String::new(),
            };
            html(
                StatusCode::OK,
                assets::INDEX_HTML.replace(assets::CSRF_PLACEHOLDER, &csrf),
            )
        }
        None => with_challenge(html(
            StatusCode::UNAUTHORIZED,
            assets::LOGIN_HTML.to_string(),
        )),
    }
}

/// `GET /admin/assets/{file}`.
async fn asset(Path(file): Path<String>) -> Response {
    match assets::asset(&file) {
        Some((content_type, body)) => (
            [
                (header::CONTENT_TYPE, content_type),
                (header::CACHE_CONTROL, "no-cache"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            body,
        )
            .into_response(),
        None => ApiError::new(ErrorCode::NotFound, "no such dashboard asset").into_response(),
    }
}

/// The answer of a sign-in or sign-out.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SignedIn {
    /// Whether the login cookie is now set.
    signed_in: bool,
    /// When it expires, epoch ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_ms: Option<u64>,
}

#[utoipa::path(
    post,
    path = "/admin/login",
    tag = "admin",
    summary = "Sign in to the operator dashboard with the owner token: sets the login cookie (HttpOnly, SameSite=Strict; a signed expiry, never the token)",
    request_body(content = Object, example = json!({"token": "<owner token>"})),
    responses(
        (status = 200, description = "Signed in; Set-Cookie carries the login", body = SignedIn),
        (status = "default", description = "A typed error (401 ADMIN_AUTH_REQUIRED: not the owner token)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn sign_in(
    State(a): State<Admin>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let peer = peer.map(|axum::Extension(ConnectInfo(p))| p.ip());
    let client = crate::limits::client_ip(&a.app.config.limits, &headers, peer);
    let now = a.app.clock.now_ms();
    if let Some(wait) = a.backoff.wait(&client, now) {
        tracing::info!(%client, wait, "dashboard sign-in refused: backing off");
        return ApiError::new(
            ErrorCode::RateLimited,
            "rate limited: a failed sign-in from this address; try again after retryAfterMs",
        )
        .retry_after_ms(wait.max(1))
        .into_response();
    }
    let token = body.ok().and_then(|JsonObject(b)| match b.get("token") {
        Some(Value::String(t)) => Some(t.clone()),
        _ => None,
    });
    let (Some(owner), Some(keys)) = (&a.app.owner_token, &a.keys) else {
        return with_challenge(unauthorized().into_response());
    };
    if !token.is_some_and(|t| owner.admits(&t)) {
        let wait = a.backoff.failed(&client, now);
        tracing::info!(%client, wait, "dashboard sign-in refused");
        return with_challenge(unauthorized().into_response());
    }
    a.backoff.succeeded(&client);
    let cookie = keys.issue(now);
    tracing::info!("dashboard sign-in");
    let mut resp = Json(SignedIn {
        signed_in: true,
        expires_ms: LoginKeys::expires_ms(&cookie),
    })
    .into_response();
    if let Ok(v) = HeaderValue::from_str(&login::set_cookie(&cookie, keys.max_age_secs())) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}

#[utoipa::path(
    post,
    path = "/admin/logout",
    tag = "admin",
    summary = "Sign out of the operator dashboard: clears the login cookie",
    responses((status = 200, description = "Signed out", body = SignedIn))
)]
#[tracing::instrument(skip_all)]
async fn sign_out() -> Response {
    let mut resp = Json(SignedIn {
        signed_in: false,
        expires_ms: None,
    })
    .into_response();
    if let Ok(v) = HeaderValue::from_str(&login::clear_cookie()) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}

#[utoipa::path(
    get,
    path = "/admin/api/snapshot",
    tag = "admin",
    summary = "The operator dashboard's data: rails (packaging, health, quarantine), lanes and executeReady, float and capNow, relayer balances, routes in flight, webhook backlog, rate-limit hits, recent errors, audit log",
    responses(
        (status = 200, description = "The snapshot", body = Dashboard),
        (status = "default", description = "A typed error (401 ADMIN_AUTH_REQUIRED)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn snapshot(State(a): State<Admin>, headers: HeaderMap) -> Response {
    if let Err(denied) = a.authorize(&headers) {
        return denied.into_response();
    }
    match a.dashboard().await {
        Ok(d) => Json(d).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `?limit=`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct AuditQuery {
    /// How many entries, newest first (1–500, default 100).
    limit: Option<u32>,
}

/// The audit log.
#[derive(Debug, Serialize, ToSchema)]
struct AuditLog {
    /// Newest first.
    entries: Vec<AuditEntry>,
}

#[utoipa::path(
    get,
    path = "/admin/api/audit",
    tag = "admin",
    summary = "The operator audit log: every rail and lane switch, who (owner-token or cli:<user>), when, before and after",
    params(AuditQuery),
    responses(
        (status = 200, description = "Newest first", body = AuditLog),
        (status = "default", description = "A typed error (401 ADMIN_AUTH_REQUIRED)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn audit(
    State(a): State<Admin>,
    headers: HeaderMap,
    q: Result<Query<AuditQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    if let Err(denied) = a.authorize(&headers) {
        return denied.into_response();
    }
    let limit = match q {
        Ok(Query(q)) => q.limit.unwrap_or(100).clamp(1, 500),
        Err(e) => {
            return ApiError::new(ErrorCode::InvalidField, format!("limit: {}", e.body_text()))
                .field("limit")
                .into_response()
        }
    };
    match operator::audit_log(&a.app.store, limit).await {
        Ok(entries) => Json(AuditLog { entries }).into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}

fn text_field<'a>(b: &'a Map<String, Value>, f: &str) -> Result<&'a str, ApiError> {
    match b.get(f) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        None | Some(Value::Null) => {
            Err(ApiError::new(ErrorCode::MissingField, format!("{f}: required")).field(f))
        }
        Some(_) => {
            Err(ApiError::new(ErrorCode::InvalidField, format!("{f}: must be a string")).field(f))
        }
    }
}

fn bool_field(b: &Map<String, Value>, f: &str) -> Result<bool, ApiError> {
    match b.get(f) {
        Some(Value::Bool(v)) => Ok(*v),
        None | Some(Value::Null) => {
            Err(ApiError::new(ErrorCode::MissingField, format!("{f}: required")).field(f))
        }
        Some(_) => Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("{f}: must be true or false"),
        )
        .field(f)),
    }
}

/// What a switch did.
#[derive(Debug, Serialize, ToSchema)]
struct Switched {
    /// The audit entry recorded for it.
    audit: AuditEntry,
}

/// Runs a change after its credential check and body check.
async fn change(
    a: &Admin,
    headers: &HeaderMap,
    body: Result<JsonObject, ApiError>,
    allowed: &[&str],
    run: impl AsyncFnOnce(
        &Map<String, Value>,
        &[relay_runtime::rails::RailListing],
    ) -> Result<operator::Change, ApiError>,
) -> Response {
    if let Err(denied) = a.authorize_change(headers) {
        return denied.into_response();
    }
    let result = async {
        let JsonObject(b) = body?;
        super::edge::only_fields(&b, allowed)?;
        let listing = relay_runtime::rails::listing(&a.app.rails.snapshot());
        run(&b, &listing).await
    }
    .await;
    match result {
        Ok(c) => {
            a.changes.send_modify(|v| *v += 1);
            Json(Switched { audit: c.audit }).into_response()
        }
        Err(e) => e.into_response(),
    }
}

#[utoipa::path(
    post,
    path = "/admin/api/lane",
    tag = "admin",
    summary = "Switch a lane's executeReady (the operator path of `relay rails execute-ready`), audited as owner-token",
    request_body(content = Object, example = json!({"rail": "lifi", "lane": "evm->evm", "executeReady": false})),
    responses(
        (status = 200, description = "Switched; the audit entry", body = Switched),
        (status = "default", description = "A typed error (401 ADMIN_AUTH_REQUIRED, 403 CSRF_INVALID, 404 UNKNOWN_RAIL, 400 MISSING_FIELD)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn set_lane(
    State(a): State<Admin>,
    headers: HeaderMap,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let store = a.app.store.clone();
    change(
        &a,
        &headers,
        body,
        &["rail", "lane", "executeReady"],
        async |b, listing| {
            let (rail, lane) = (text_field(b, "rail")?, text_field(b, "lane")?);
            let ready = bool_field(b, "executeReady")?;
            Ok(
                operator::set_execute_ready(&store, listing, &Actor::Owner, (rail, lane), ready)
                    .await?,
            )
        },
    )
    .await
}

#[utoipa::path(
    post,
    path = "/admin/api/rail",
    tag = "admin",
    summary = "Enable or disable a rail (the operator path of `relay rails enable|disable`), audited as owner-token",
    request_body(content = Object, example = json!({"rail": "lifi", "enabled": false})),
    responses(
        (status = 200, description = "Switched; the audit entry", body = Switched),
        (status = "default", description = "A typed error (401 ADMIN_AUTH_REQUIRED, 403 CSRF_INVALID, 404 UNKNOWN_RAIL, 400 MISSING_FIELD)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn set_rail(
    State(a): State<Admin>,
    headers: HeaderMap,
    body: Result<JsonObject, ApiError>,
) -> Response {
    let store = a.app.store.clone();
    change(
        &a,
        &headers,
        body,
        &["rail", "enabled"],
        async |b, listing| {
            let (rail, enabled) = (text_field(b, "rail")?, bool_field(b, "enabled")?);
            Ok(operator::set_enabled(&store, listing, &Actor::Owner, rail, enabled).await?)
        },
    )
    .await
}

/// One `snapshot` event's data.
#[derive(ToSchema)]
#[allow(dead_code)]
struct SnapshotEvent(Dashboard);

#[utoipa::path(
    get,
    path = "/admin/api/events",
    tag = "admin",
    summary = "Server-sent events of the operator dashboard: `event: snapshot` at once, then on each route or operator change and every admin.refresh_ms",
    responses(
        (status = 200, description = "text/event-stream: each event's data is the snapshot as JSON", content_type = "text/event-stream", body = Dashboard),
        (status = "default", description = "A typed error (401 ADMIN_AUTH_REQUIRED)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn events(State(a): State<Admin>, headers: HeaderMap) -> Response {
    let credential = match a.authorize(&headers) {
        Ok(c) => c,
        Err(denied) => return denied.into_response(),
    };
    let cookie = match credential {
        Credential::Cookie(c) => Some(c),
        Credential::Bearer => None,
    };
    Sse::new(live(a, cookie))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The live stream: a snapshot now, then after every change or period. A
/// stream signed in by cookie ends when the cookie expires.
fn live(a: Admin, cookie: Option<String>) -> impl Stream<Item = Result<Event, Infallible>> {
    let routes = a.app.store.route_events().subscribe();
    let changes = a.changes.subscribe();
    futures::stream::unfold(
        (a, cookie, routes, changes, true),
        |(a, cookie, mut routes, mut changes, first)| async move {
            if !first {
                tokio::select! {
                    r = routes.recv() => if matches!(r, Err(RecvError::Closed)) { return None },
                    c = changes.changed() => if c.is_err() { return None },
                    _ = tokio::time::sleep(a.refresh()) => {}
                }
                // Let a burst of route changes settle into one snapshot.
                tokio::time::sleep(Duration::from_millis(150)).await;
                while routes.try_recv().is_ok() {}
            }
            if let (Some(c), Some(k)) = (&cookie, &a.keys) {
                if !k.verify(c, a.app.clock.now_ms()) {
                    return None;
                }
            }
            let ev = match a.dashboard().await {
                Ok(d) => Event::default()
                    .event("snapshot")
                    .data(serde_json::to_string(&d).unwrap_or_default()),
                Err(e) => Event::default().event("error").data(e.message),
            };
            Some((Ok(ev), (a, cookie, routes, changes, false)))
        },
    )
}

/// Reports every error answer (and every 429) to the dashboard
/// ([`crate::around::Around`]).
#[derive(Clone)]
pub(crate) struct Observe(pub Arc<Signals>, pub relay_types::SharedClock);

impl crate::around::Around for Observe {
    /// The request's method and matched route (each a reference count).
    type Seen = (axum::http::Method, Option<String>);

    fn before(&self, req: &Request) -> Result<Self::Seen, Box<Response>> {
        let route = crate::operations::route_of(req).map(str::to_string);
        Ok((req.method().clone(), route))
    }

    fn after(&self, (method, route): Self::Seen, resp: &mut Response) {
        if resp.status().as_u16() < 400 {
            return;
        }
        self.0.record(RecentError {
            at_ms: self.1.now_ms(),
            method: method.as_str().to_string(),
            route: route.unwrap_or_else(|| "(unmatched)".to_string()),
            status: resp.status().as_u16(),
            error_code: resp
                .extensions()
                .get::<ErrorCode>()
                .map(|c| c.as_str().to_string()),
        });
    }
}
