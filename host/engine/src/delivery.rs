//! Delivery statistics (spec §4.1 `GET /api/delivery/stats`), pure maths
//! over what the store reads ([`relay_store::Store::route_counts_since`],
//! [`relay_store::Store::delivery_latencies_ms`]):
//!
//! - `counts` by public status (§3.1; the internal `PENDING` is shown as
//!   `BRIDGING`, as receipts show it). Dry runs are not deliveries and are
//!   left out; sandbox routes are never stored, so never counted.
//! - `successRate` = DONE ÷ (DONE + FAILED): routes still in flight, and
//!   `FUNDS_REQUIRED` (refused before anything moved), are not settled
//!   either way. `null` while nothing has settled.
//! - latency from creation to DONE, seconds: nearest-rank p50, p90, p99,
//!   plus min, max and the number of samples.

use relay_types::route::RouteStatus;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Latency distribution of delivered routes, seconds.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Latency {
    /// Delivered routes measured.
    pub samples: usize,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Fastest.
    pub min: f64,
    /// Slowest.
    pub max: f64,
}

/// The statistics of one window.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryStats {
    /// Routes by public status.
    pub counts: BTreeMap<String, i64>,
    /// Routes counted.
    pub total: i64,
    /// DONE + FAILED.
    pub settled: i64,
    /// DONE ÷ settled, 0..=1 with four decimals; `None` before any settled.
    pub success_rate: Option<f64>,
    /// Created → DONE, seconds; `None` before any delivery.
    pub latency_sec: Option<Latency>,
}

/// The window the statistics cover.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Window {
    /// Days.
    pub days: u64,
    /// From, epoch ms.
    pub from: u64,
    /// To, epoch ms.
    pub to: u64,
}

/// `GET /api/delivery/stats`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct DeliveryReport {
    /// The figures.
    #[serde(flatten)]
    pub stats: DeliveryStats,
    /// The window.
    pub window: Window,
    /// How to read them.
    pub note: String,
}

impl DeliveryReport {
    /// `stats` over `window`.
    pub fn new(stats: DeliveryStats, window: Window) -> Self {
        DeliveryReport {
            stats,
            window,
            note: "routes created in the window, by status (PENDING shown as BRIDGING; dry runs left out); successRate = DONE / (DONE + FAILED); latencySec is created-to-DONE, nearest-rank percentiles; sandbox routes are never stored or counted".into(),
        }
    }
}

/// Builds the statistics from stored-status counts and DONE latencies
/// (milliseconds, any order).
pub fn compute(counts: &[(String, i64)], latencies_ms: &[i64]) -> DeliveryStats {
    let mut by_status: BTreeMap<String, i64> = BTreeMap::new();
    for (stored, n) in counts {
        let public = match stored.as_str() {
            s if s == RouteStatus::Dry.as_str() => continue,
            s if s == RouteStatus::Pending.as_str() => RouteStatus::Pending.public(),
            s => s,
        };
        *by_status.entry(public.to_string()).or_default() += n;
    }
    let get = |s: RouteStatus| by_status.get(s.public()).copied().unwrap_or(0);
    let (done, failed) = (get(RouteStatus::Done), get(RouteStatus::Failed));
    let settled = done + failed;
    DeliveryStats {
        total: by_status.values().sum(),
        settled,
        success_rate: (settled > 0)
            .then(|| (done as f64 * 10_000.0 / settled as f64).round() / 10_000.0),
        latency_sec: latency(latencies_ms),
        counts: by_status,
    }
}

fn latency(ms: &[i64]) -> Option<Latency> {
    let mut sorted: Vec<i64> = ms.iter().map(|m| (*m).max(0)).collect();
    sorted.sort_unstable();
    let sec = |m: i64| m as f64 / 1000.0;
    Some(Latency {
        samples: sorted.len(),
        p50: sec(percentile(&sorted, 50)?),
        p90: sec(percentile(&sorted, 90)?),
        p99: sec(percentile(&sorted, 99)?),
        min: sec(*sorted.first()?),
        max: sec(*sorted.last()?),
    })
}

/// Nearest-rank percentile `p` (1..=100) of ascending `sorted`.
pub fn percentile(sorted: &[i64], p: u32) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p.clamp(1, 100) as usize * sorted.len()).div_ceil(100);
    sorted.get(rank.saturating_sub(1)).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(rows: &[(&str, i64)]) -> Vec<(String, i64)> {
        rows.iter().map(|(s, n)| (s.to_string(), *n)).collect()
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<i64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50), Some(50));
        assert_eq!(percentile(&v, 99), Some(99));
        assert_eq!(percentile(&[7], 99), Some(7));
        assert_eq!(percentile(&[1, 2, 3], 50), Some(2));
        assert_eq!(percentile(&[], 50), None);
    }

    #[test]
    fn pending_shows_as_bridging_dry_runs_are_left_out_and_success_is_of_settled() {
        let s = compute(
            &counts(&[
                ("DONE", 3),
                ("FAILED", 1),
                ("PENDING", 2),
                ("BRIDGING", 1),
                ("DRY", 9),
                ("FUNDS_REQUIRED", 1),
            ]),
            &[4_000, 1_000, 2_000],
        );
        assert_eq!(s.counts["BRIDGING"], 3);
        assert!(!s.counts.contains_key("DRY"));
        assert_eq!((s.total, s.settled), (8, 4));
        assert_eq!(s.success_rate, Some(0.75));
        let l = s.latency_sec.unwrap();
        assert_eq!((l.samples, l.p50, l.max, l.min), (3, 2.0, 4.0, 1.0));
    }

    #[test]
    fn nothing_settled_means_no_rate_and_no_latency() {
        let s = compute(&counts(&[("PENDING", 1)]), &[]);
        assert_eq!((s.success_rate, s.latency_sec), (None, None));
    }
}
