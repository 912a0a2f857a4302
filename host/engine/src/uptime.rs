//! Per-day availability (spec §4.1 `GET /api/uptime`) from the hosts' own
//! health probes.
//!
//! The probe job (`relay_jobs::health_probe`) takes a fresh reading every
//! [`PROBE_EVERY`] and stores its verdict ([`Verdict::of`]) as one sample
//! per 30 s slot, whichever replica takes it first; the report is built
//! from the stored counts per UTC day ([`UptimeTally::from_counts`]) for
//! the last [`KEEP_DAYS`] days, so it survives restarts and reads the same
//! from every replica.
//!
//! Nothing here does I/O; the prober is honest about being the hosts
//! themselves, not an independent observer.

use super::health::HealthReport;
use serde::Serialize;
use std::{collections::BTreeMap, time::Duration};
use utoipa::ToSchema;

/// How often the probe loop takes a reading.
pub const PROBE_EVERY: Duration = Duration::from_secs(30);

/// Days of history kept.
pub const KEEP_DAYS: usize = 90;

/// What one reading says about the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every chain RPC answered and every loaded rail is serving.
    Operational,
    /// Some chains or rails are down, some serve.
    Degraded,
    /// Nothing answered.
    Down,
}

impl Verdict {
    /// Its name as stored: `operational`, `degraded`, `down`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Operational => "operational",
            Verdict::Degraded => "degraded",
            Verdict::Down => "down",
        }
    }

    /// The verdict a stored name stands for.
    pub fn parse(s: &str) -> Option<Self> {
        [Verdict::Operational, Verdict::Degraded, Verdict::Down]
            .into_iter()
            .find(|v| v.as_str() == s)
    }

    /// The verdict of a reading; `None` when there is nothing to judge (no
    /// chain configured, no rail loaded).
    pub fn of(r: &HealthReport) -> Option<Self> {
        let chains = r.chains.values().copied();
        let rails = r.rails.keys().map(|id| r.rail_up(id));
        let parts: Vec<bool> = chains.chain(rails).collect();
        let up = parts.iter().filter(|u| **u).count();
        match (parts.len(), up) {
            (0, _) => None,
            (n, u) if u == n => Some(Verdict::Operational),
            (_, 0) => Some(Verdict::Down),
            _ => Some(Verdict::Degraded),
        }
    }
}

/// One day's samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DayCounts {
    /// Samples judged operational.
    pub operational: u64,
    /// Samples judged degraded.
    pub degraded: u64,
    /// Samples judged down.
    pub down: u64,
}

impl DayCounts {
    /// All samples of the day.
    pub fn samples(&self) -> u64 {
        self.operational + self.degraded + self.down
    }

    /// Share of samples in which the service answered (operational or
    /// degraded), percent with two decimals.
    pub fn up_pct(&self) -> f64 {
        pct(self.operational + self.degraded, self.samples())
    }

    /// Share of samples in which everything was operational, percent.
    pub fn operational_pct(&self) -> f64 {
        pct(self.operational, self.samples())
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 * 10_000.0 / whole as f64).round() / 100.0
}

/// Samples per UTC day (`YYYY-MM-DD`), the last [`KEEP_DAYS`] days.
#[derive(Clone, Debug, Default)]
pub struct UptimeTally {
    days: BTreeMap<String, DayCounts>,
    since_ms: Option<u64>,
}

impl UptimeTally {
    /// Records one verdict taken at `ts_ms` (epoch ms).
    pub fn record(&mut self, ts_ms: u64, v: Verdict) {
        self.since_ms.get_or_insert(ts_ms);
        let day = self.days.entry(utc_date(ts_ms)).or_default();
        match v {
            Verdict::Operational => day.operational += 1,
            Verdict::Degraded => day.degraded += 1,
            Verdict::Down => day.down += 1,
        }
        while self.days.len() > KEEP_DAYS {
            self.days.pop_first();
        }
    }

    /// A tally of stored counts `(day, verdict, count)` (unknown verdicts
    /// are skipped), the last [`KEEP_DAYS`] days, first sample at `since_ms`.
    pub fn from_counts(counts: &[(String, String, i64)], since_ms: Option<u64>) -> Self {
        let mut days: BTreeMap<String, DayCounts> = BTreeMap::new();
        for (day, verdict, n) in counts {
            let n = u64::try_from(*n).unwrap_or_default();
            let c = days.entry(day.clone()).or_default();
            match Verdict::parse(verdict) {
                Some(Verdict::Operational) => c.operational += n,
                Some(Verdict::Degraded) => c.degraded += n,
                Some(Verdict::Down) => c.down += n,
                None => {}
            }
        }
        while days.len() > KEEP_DAYS {
            days.pop_first();
        }
        UptimeTally { days, since_ms }
    }

    /// Days with samples, oldest first.
    pub fn days(&self) -> impl Iterator<Item = (&str, &DayCounts)> {
        self.days.iter().map(|(d, c)| (d.as_str(), c))
    }

    /// When the first sample was taken, epoch ms.
    pub fn since_ms(&self) -> Option<u64> {
        self.since_ms
    }
}

/// One day of `GET /api/uptime`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UptimeDay {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// Samples taken.
    pub samples: u64,
    /// Operational or degraded, percent.
    pub up_pct: f64,
    /// Fully operational, percent.
    pub operational_pct: f64,
    /// Samples by verdict.
    pub counts: DayCounts,
}

/// `GET /api/uptime`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UptimeReport {
    /// Newest first.
    pub days: Vec<UptimeDay>,
    /// First sample, epoch ms.
    pub since: Option<u64>,
    /// How often the prober samples.
    pub probe_interval_sec: u64,
    /// Days kept.
    pub kept_days: usize,
    /// Who probes.
    pub prober: String,
    /// How to read it.
    pub note: String,
}

impl UptimeReport {
    /// The report of `tally`, newest day first.
    pub fn of(tally: &UptimeTally) -> Self {
        let mut days: Vec<UptimeDay> = tally
            .days()
            .map(|(date, c)| UptimeDay {
                date: date.to_string(),
                samples: c.samples(),
                up_pct: c.up_pct(),
                operational_pct: c.operational_pct(),
                counts: *c,
            })
            .collect();
        days.reverse();
        UptimeReport {
            days,
            since: tally.since_ms(),
            probe_interval_sec: PROBE_EVERY.as_secs(),
            kept_days: KEEP_DAYS,
            prober: "host".into(),
            note: "the prober is the hosts' own probe loop (every chain RPC and loaded rail, every 30 s, outside the request path), not an independent observer; one sample per 30 s slot is stored, whichever replica takes it, so the report survives restarts and is the same from every replica (since `since`, epoch ms). upPct counts operational and degraded samples, operationalPct only fully operational ones".into(),
        }
    }
}

/// The UTC calendar date of `ts_ms`, `YYYY-MM-DD` (proleptic Gregorian;
/// Howard Hinnant's `civil_from_days`).
pub fn utc_date(ts_ms: u64) -> String {
    let z = (ts_ms / 86_400_000) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use relay_plugin_api::{HealthStatus, RailHealth};

    use super::*;

    fn report(chains: &[bool], rails: &[HealthStatus]) -> HealthReport {
        HealthReport {
            ts_ms: 0,
            chains: chains
                .iter()
                .enumerate()
                .map(|(i, u)| (i as u64, *u))
                .collect(),
            rails: rails
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let h = RailHealth {
                        status: *s,
                        detail: None,
                        lanes: vec![],
                    };
                    (format!("r{i}"), h)
                })
                .collect(),
        }
    }

    #[test]
    fn dates_are_utc_calendar_days() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400_000), "2000-02-29");
        assert_eq!(utc_date(1_709_251_199_999), "2024-02-29");
        assert_eq!(utc_date(1_709_251_200_000), "2024-03-01");
    }

    #[test]
    fn a_reading_is_operational_degraded_or_down() {
        use HealthStatus::{Degraded, Down, Operational};
        let v = |c: &[bool], r: &[HealthStatus]| Verdict::of(&report(c, r));
        assert_eq!(
            v(&[true], &[Operational, Degraded]),
            Some(Verdict::Operational)
        );
        assert_eq!(v(&[true, false], &[Operational]), Some(Verdict::Degraded));
        assert_eq!(v(&[false], &[Down]), Some(Verdict::Down));
        assert_eq!(v(&[], &[]), None);
    }

    #[test]
    fn samples_are_counted_per_day_and_old_days_age_out() {
        let mut t = UptimeTally::default();
        t.record(0, Verdict::Operational);
        t.record(1_000, Verdict::Operational);
        t.record(2_000, Verdict::Degraded);
        t.record(3_000, Verdict::Down);
        let (day, c) = t.days().next().unwrap();
        assert_eq!((day, c.samples()), ("1970-01-01", 4));
        assert_eq!((c.up_pct(), c.operational_pct()), (75.0, 50.0));
        for d in 1..=KEEP_DAYS as u64 {
            t.record(d * 86_400_000, Verdict::Operational);
        }
        assert_eq!(t.days().count(), KEEP_DAYS);
        assert_eq!(t.days().next().unwrap().0, "1970-01-02");
        assert_eq!(t.since_ms(), Some(0));
    }
}
