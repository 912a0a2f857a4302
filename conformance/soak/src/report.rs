//! The soak's report: what was injected, what was sent and how it was
//! answered, what held, the latencies per endpoint and each replica's
//! memory curve — as Markdown for people and JSON for tools.

use std::{collections::BTreeMap, fmt::Write as _, path::Path};

use serde::Serialize;
use serde_json::Value;

use crate::{
    client::{percentile_ms, EndpointStats},
    cluster::Sample,
    faults::Injected,
    invariants::Verdict,
    world::Started,
};

/// Everything a run produced.
pub struct Run {
    /// The traffic's seed.
    pub seed: u64,
    /// Minutes asked for.
    pub minutes: f64,
    /// Seconds the traffic ran.
    pub traffic_s: f64,
    /// Replicas.
    pub replicas: usize,
    /// Relayer keys (the relayer's and the pool's).
    pub keys: usize,
    /// Faults injected.
    pub injected: Vec<Injected>,
    /// Each route's last status.
    pub statuses: BTreeMap<String, Value>,
    /// Routes started.
    pub routes: Vec<Started>,
    /// Sponsorships and yield spends by their last state.
    pub paid: BTreeMap<String, BTreeMap<String, u64>>,
    /// Per endpoint.
    pub stats: BTreeMap<&'static str, EndpointStats>,
    /// Memory samples per replica lifetime.
    pub lifetimes: Vec<(usize, Vec<Sample>)>,
    /// The verdicts.
    pub invariants: Vec<Verdict>,
}

/// One endpoint's line.
#[derive(Serialize)]
struct Latency {
    endpoint: String,
    requests: u64,
    p50_ms: f64,
    p99_ms: f64,
    statuses: BTreeMap<u16, u64>,
    unanswered: u64,
}

/// The report.
#[derive(Serialize)]
pub struct Report {
    seed: u64,
    minutes: f64,
    traffic_s: f64,
    replicas: usize,
    keys: usize,
    requests: u64,
    routes_by_kind: BTreeMap<String, BTreeMap<String, u64>>,
    paid_by_state: BTreeMap<String, BTreeMap<String, u64>>,
    injected: Vec<Injected>,
    /// The verdicts.
    pub invariants: Vec<Verdict>,
    latency: Vec<Latency>,
    refusals: BTreeMap<String, BTreeMap<u16, String>>,
    memory: Vec<(usize, Vec<Sample>)>,
}

impl Report {
    /// Summarises `run`.
    pub fn new(run: Run) -> Self {
        let latency: Vec<Latency> = run
            .stats
            .iter()
            .map(|(e, s)| Latency {
                endpoint: e.to_string(),
                requests: s.statuses.values().sum::<u64>() + s.unanswered,
                p50_ms: percentile_ms(&s.latencies_us, 50.0),
                p99_ms: percentile_ms(&s.latencies_us, 99.0),
                statuses: s.statuses.clone(),
                unanswered: s.unanswered,
            })
            .collect();
        let mut routes_by_kind: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for r in &run.routes {
            let status = run
                .statuses
                .get(&r.id)
                .and_then(|v| v["status"].as_str())
                .unwrap_or("?");
            *routes_by_kind
                .entry(r.kind.clone())
                .or_default()
                .entry(status.into())
                .or_default() += 1;
        }
        Report {
            seed: run.seed,
            minutes: run.minutes,
            traffic_s: run.traffic_s,
            replicas: run.replicas,
            keys: run.keys,
            requests: latency.iter().map(|l| l.requests).sum(),
            routes_by_kind,
            paid_by_state: run.paid,
            injected: run.injected,
            invariants: run.invariants,
            latency,
            refusals: run
                .stats
                .iter()
                .filter(|(_, s)| !s.refusals.is_empty())
                .map(|(e, s)| (e.to_string(), s.refusals.clone()))
                .collect(),
            memory: run.lifetimes,
        }
    }

    /// Writes `<path>.md` and `<path>.json`.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(
            path.with_extension("json"),
            serde_json::to_string_pretty(self)?,
        )?;
        std::fs::write(path.with_extension("md"), self.markdown())?;
        Ok(())
    }

    /// One line per invariant.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "soak: {:.0} s of traffic, {} requests, {} faults, seed {}\n",
            self.traffic_s,
            self.requests,
            self.injected.len(),
            self.seed
        );
        for v in &self.invariants {
            let _ = writeln!(
                s,
                "  {} {}: {}",
                if v.held { "held  " } else { "BROKEN" },
                v.name,
                v.detail
            );
        }
        s
    }

    fn markdown(&self) -> String {
        let mut s = format!(
            "# Soak report\n\n{:.1} minutes of traffic ({:.0} s asked), {} replicas on one Postgres, {} relayer keys, \
             {} requests, seed {}.\n\n## Invariants\n\n| invariant | held | detail |\n|---|---|---|\n",
            self.traffic_s / 60.0,
            self.minutes * 60.0,
            self.replicas,
            self.keys,
            self.requests,
            self.seed
        );
        for v in &self.invariants {
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                v.name,
                if v.held { "yes" } else { "**no**" },
                v.detail
            );
        }
        s.push_str(
            "\n## Faults injected\n\n| at (s) | fault | held (s) | outcome |\n|---|---|---|---|\n",
        );
        for f in &self.injected {
            let _ = writeln!(
                s,
                "| {:.0} | {} | {:.1} | {} |",
                f.at_s, f.fault, f.held_s, f.outcome
            );
        }
        s.push_str("\n## Routes\n\n| kind | by status |\n|---|---|\n");
        for (k, by) in &self.routes_by_kind {
            let _ = writeln!(s, "| {k} | {by:?} |");
        }
        s.push_str("\n## Sponsorships and yield spends\n\n| flow | by state |\n|---|---|\n");
        for (k, by) in &self.paid_by_state {
            let _ = writeln!(s, "| {k} | {by:?} |");
        }
        s.push_str("\n## Latency per endpoint\n\n| endpoint | requests | p50 ms | p99 ms | statuses | unanswered |\n|---|---|---|---|---|---|\n");
        for l in &self.latency {
            let _ = writeln!(
                s,
                "| {} | {} | {:.1} | {:.1} | {:?} | {} |",
                l.endpoint, l.requests, l.p50_ms, l.p99_ms, l.statuses, l.unanswered
            );
        }
        s.push_str("\n## Refusals seen (the first of each status per endpoint)\n\n");
        for (e, r) in &self.refusals {
            for (status, x) in r {
                let _ = writeln!(s, "- {e}: {status} `{}`", x.replace('`', "'"));
            }
        }
        s.push_str("\n## Memory (RSS MiB / open files), ten points per process lifetime\n\n");
        for (replica, samples) in &self.memory {
            let n = samples.len();
            let at = |i: usize| if n <= 10 { i } else { i * (n - 1) / 9 };
            let points: Vec<String> = (0..n.min(10))
                .map(|i| &samples[at(i)])
                .map(|x| format!("{:.0}s {}/{}", x.at_s, x.rss_kib / 1024, x.fds))
                .collect();
            let _ = writeln!(s, "- replica {replica}: {}", points.join(", "));
        }
        s
    }
}
