//! `GET /metrics`: the host's metrics in the Prometheus text format
//! (version 0.0.4), recorded through the `metrics` facade and rendered by
//! `metrics-exporter-prometheus` (no listener of its own: the API serves
//! it). One recorder per process, installed by the first router built.
//!
//! | metric | type | labels | what |
//! |---|---|---|---|
//! | `relay_http_requests_total` | counter | `method`, `route`, `status` | requests answered; `route` is the matched route (`/api/route/quote`), `(unmatched)` for unknown paths |
//! | `relay_http_request_duration_seconds` | histogram | `method`, `route`, `status` | time to the response head (a stream's later events are not included) |
//! | `relay_rail_calls_total` | counter | `rail`, `method`, `outcome` | plugin calls (`quote`, `prepare`, `track`, `health`, …) by outcome: `ok`, `rail_error`, `fault`, `hung`, `quarantined` |
//! | `relay_rail_call_duration_seconds` | histogram | `rail`, `method`, `outcome` | plugin call latency (quarantined calls are not timed) |
//! | `relay_quote_attestations_total` | counter | — | quote attestations signed; over `relay_quote_attestation_signatures_total` (signatures made), the mean batch of quotes one signature covers |
//! | `relay_quote_attestation_signatures_total` | counter | — | relayer signatures over attestation batches (one Merkle root each) |
//! | `relay_routes` | gauge | `status` | stored routes by internal status (`PENDING`, `BRIDGING`, `DONE`, …), counted on each scrape |
//! | `relay_relayer_native_balance` | gauge | `chain` | the relayer's native balance per configured chain, whole units (ETH …), read on each scrape; a failed read keeps the last value |
//! | `relay_relayer_pool_native_balance` | gauge | `chain`, `key` | each relayer pool key's native balance per configured chain, whole units, read on each scrape |
//! | `relay_relayer_pool_enrolled` | gauge | `chain` | 1 once this replica has found the chain's relayer account enrolled (its routes there spread over the key pool), 0 while the relayer key signs alone; chains with a `relayer_account` and pool keys only |
//! | `relay_relayer_balance_read_failures_total` | counter | `chain` | scrapes whose balance read failed or timed out |
//!
//! Scrape-time reads are bounded by `quote.chain_read_timeout_ms`
//! (default 2 s), so a slow chain cannot hold a scrape. Label values come
//! from the router and the installed rails, never from raw request input,
//! so a client cannot grow the series without bound.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        LazyLock, OnceLock, RwLock,
    },
    time::{Duration, Instant},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;
use axum::{
    extract::{MatchedPath, Request, State},
    http::{header, Method},
    response::{IntoResponse, Response},
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use relay_types::RouteStatus;

/// Buckets of every `_seconds` histogram.
const LATENCY_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Histogram samples are folded in (memory released) once per this many
/// requests, besides every scrape.
const UPKEEP_EVERY: u64 = 1024;

/// Every route status, for the `relay_routes` gauge.
const STATUSES: &[RouteStatus] = &[
    RouteStatus::Pending,
    RouteStatus::Bridging,
    RouteStatus::Done,
    RouteStatus::Failed,
    RouteStatus::FundsRequired,
    RouteStatus::AwaitingDeposit,
    RouteStatus::Dry,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
static REQUESTS: AtomicU64 = AtomicU64::new(0);

/// The process's recorder, installed as the global `metrics` recorder on
/// first use. When another recorder is already installed (an embedding
/// program's), the handle renders only what reaches this one.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), LATENCY_BUCKETS)
            .expect("the latency buckets are not empty")
            .build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed; /metrics shows only its own");
        }
        handle
    })
}

/// `GET /metrics`.
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(scrape))
}

/// The Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "discovery", summary = "Prometheus metrics (text format): requests, rail calls, quote attestations, routes by status, relayer balances", responses((status = 200, description = "OK", content_type = "text/plain", body = String)))]
#[tracing::instrument(skip_all)]
async fn scrape(State(s): State<AppState>) -> Response {
    let timeout = Duration::from_millis(s.config.quote.chain_read_timeout_ms.max(1));
    tokio::join!(count_routes(&s, timeout), read_balances(&s, timeout));
    let handle = handle();
    handle.run_upkeep();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
        .into_response()
}

async fn count_routes(s: &AppState, timeout: Duration) {
    for status in STATUSES {
        match tokio::time::timeout(timeout, s.store.count_routes(*status)).await {
            Ok(Ok(n)) => metrics::gauge!("relay_routes", "status" => status.as_str()).set(n as f64),
            Ok(Err(e)) => return tracing::debug!(error = %e, "routes not counted"),
            Err(_) => return tracing::debug!("routes not counted in time"),
        }
    }
}

async fn read_balances(s: &AppState, timeout: Duration) {
    let Some(relayer) = &s.relayer else { return };
    let who = relayer.address();
    let reads = s.config.chain_ids().into_iter().map(|chain| async move {
        let read = tokio::time::timeout(timeout, s.reader.native_balance(chain, who)).await;
        let label = chain.to_string();
        match read {
            Ok(Ok(wei)) => {
                let whole = wei.to_string().parse::<f64>().unwrap_or(f64::NAN) / 1e18;
                metrics::gauge!("relay_relayer_native_balance", "chain" => label).set(whole);
            }
            _ => metrics::counter!("relay_relayer_balance_read_failures_total", "chain" => label)
                .increment(1),
        }
    });
    futures::future::join_all(reads).await;
    for (chain, enrolled) in relayer.pool_chains() {
        metrics::gauge!("relay_relayer_pool_enrolled", "chain" => chain.to_string())
            .set(if enrolled { 1.0 } else { 0.0 });
    }
    let pool = relayer.pool_keys();
    let wanted = pool
        .iter()
        .flat_map(|k| s.config.chain_ids().into_iter().map(move |c| (c, *k)));
    let reads = wanted.map(|(chain, key)| async move {
        let read = tokio::time::timeout(timeout, s.reader.native_balance(chain, key)).await;
        let label = chain.to_string();
        match read {
            Ok(Ok(wei)) => {
                let whole = wei.to_string().parse::<f64>().unwrap_or(f64::NAN) / 1e18;
                let key = key.to_checksum(None);
                metrics::gauge!("relay_relayer_pool_native_balance", "chain" => label, "key" => key)
                    .set(whole);
            }
            _ => metrics::counter!("relay_relayer_balance_read_failures_total", "chain" => label)
                .increment(1),
        }
    });
    futures::future::join_all(reads).await;
}

/// Request methods as labels: the standard ones by name, anything else
/// `OTHER` (a client cannot mint label values).
fn method_label(m: &Method) -> &'static str {
    match m.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        _ => "OTHER",
    }
}

/// Counts and times every request by method, matched route and status
/// ([`crate::around::Around`]).
#[derive(Clone, Copy)]
pub struct Track;

/// One request series: its counter and its histogram.
type Series = (metrics::Counter, metrics::Histogram);

/// A route's series by method and status.
type RouteSeries = HashMap<(&'static str, u16), Series>;

/// The request series by matched route, then method and status: each is
/// registered with the recorder once, so a request's bookkeeping is two
/// lookups under a read lock and no allocation. Bounded as the labels are
/// (module docs).
static SERIES: LazyLock<RwLock<HashMap<String, RouteSeries>>> = LazyLock::new(Default::default);

/// The series of `method`, `route` and `status`, registered on first use.
fn series(method: &'static str, route: &str, status: u16) -> Series {
    let key = (method, status);
    let known = SERIES.read().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = known.get(route).and_then(|by| by.get(&key)) {
        return s.clone();
    }
    drop(known);
    let mut all = SERIES.write().unwrap_or_else(|e| e.into_inner());
    let by = all.entry(route.to_string()).or_default();
    by.entry(key)
        .or_insert_with(|| {
            let labels = vec![
                metrics::Label::new("method", method),
                metrics::Label::new("route", route.to_string()),
                metrics::Label::new("status", status.to_string()),
            ];
            (
                metrics::counter!("relay_http_requests_total", labels.clone()),
                metrics::histogram!("relay_http_request_duration_seconds", labels),
            )
        })
        .clone()
}

impl crate::around::Around for Track {
    /// When the request came, its method label and matched route.
    type Seen = (Instant, &'static str, Option<MatchedPath>);

    fn before(&self, req: &Request) -> Result<Self::Seen, Box<Response>> {
        let route = req.extensions().get::<MatchedPath>().cloned();
        Ok((Instant::now(), method_label(req.method()), route))
    }

    fn after(&self, (started, method, route): Self::Seen, resp: &mut Response) {
        let route = route.as_ref().map_or("(unmatched)", MatchedPath::as_str);
        let (requests, duration) = series(method, route, resp.status().as_u16());
        requests.increment(1);
        duration.record(started.elapsed());
        if REQUESTS.fetch_add(1, Ordering::Relaxed) % UPKEEP_EVERY == UPKEEP_EVERY - 1 {
            handle().run_upkeep();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::around::Around as _;
    use axum::{body::Body, http::StatusCode};

    /// One request through the layer, answered with `status`.
    fn answer(status: u16) {
        let req = Request::builder()
            .method("PATCH")
            .uri("/not-a-route")
            .body(Body::empty())
            .unwrap();
        let seen = Track.before(&req).unwrap();
        let mut resp = Response::new(Body::empty());
        *resp.status_mut() = StatusCode::from_u16(status).unwrap();
        Track.after(seen, &mut resp);
    }

    /// The count `/metrics` shows for unmatched PATCH requests answered
    /// with `status`.
    fn shown(status: u16) -> Option<String> {
        let prefix = format!(
            "relay_http_requests_total{{method=\"PATCH\",route=\"(unmatched)\",status=\"{status}\"}} "
        );
        let text = handle().render();
        let count = text.lines().find_map(|l| l.strip_prefix(&prefix))?;
        Some(count.to_string())
    }

    #[test]
    fn every_request_counts_once_in_its_own_series() {
        handle();
        for status in [418, 418, 417] {
            answer(status);
        }
        assert_eq!(shown(418).as_deref(), Some("2"));
        assert_eq!(shown(417).as_deref(), Some("1"));
        assert_eq!(shown(416), None);
    }
}
