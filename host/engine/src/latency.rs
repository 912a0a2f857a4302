//! Per-rail rolling latency and the cold fan-out's soft deadline (issue 12,
//! "hedged cold fan-out").
//!
//! Every live quote call's duration lands in its rail's ring of the last
//! [`SAMPLES`] answers (errors and timeouts count too: a rail that is slow
//! to fail is slow). From the rings:
//!
//! ```text
//! soft deadline = clamp(p90 of the faster half of the rails × factor,
//!                       hedge_min_ms, hard deadline)
//! ```
//!
//! "The faster half" is the `ceil(n / 2)` rails with the lowest p90 among
//! the rails asked that have at least `hedge_min_samples` samples. With
//! fewer than two such rails there is no soft deadline (the fan-out waits
//! for every rail, up to the hard deadline). A rail still out at the soft
//! deadline, once some rail has answered with a price, is reported as not answering (`LATE`); its answer still lands
//! in the quote book when it comes.

use std::{collections::HashMap, sync::Mutex, time::Duration};

use relay_config::QuoteBookConfig;

/// Samples kept per rail.
pub const SAMPLES: usize = 32;

/// The last [`SAMPLES`] durations of one rail, ms.
#[derive(Clone, Debug, Default)]
struct Ring {
    ms: Vec<u32>,
    next: usize,
}

impl Ring {
    fn push(&mut self, ms: u32) {
        if self.ms.len() < SAMPLES {
            self.ms.push(ms);
        } else {
            self.ms[self.next] = ms;
        }
        self.next = (self.next + 1) % SAMPLES;
    }

    /// The `pct` percentile (nearest rank), when there are samples.
    fn percentile(&self, pct: usize) -> Option<u32> {
        if self.ms.is_empty() {
            return None;
        }
        let mut v = self.ms.clone();
        v.sort_unstable();
        let rank = (pct * v.len()).div_ceil(100).clamp(1, v.len());
        Some(v[rank - 1])
    }
}

/// A rail's latency figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    /// Median, ms.
    pub p50_ms: u32,
    /// 90th percentile, ms.
    pub p90_ms: u32,
    /// Samples behind them.
    pub samples: usize,
}

/// Rolling latency of every rail.
#[derive(Debug, Default)]
pub struct Latencies {
    rings: Mutex<HashMap<String, Ring>>,
}

impl Latencies {
    /// Records one call of `rail` that took `took`.
    pub fn record(&self, rail: &str, took: Duration) {
        let ms = u32::try_from(took.as_millis()).unwrap_or(u32::MAX);
        let mut rings = self.rings.lock().unwrap_or_else(|e| e.into_inner());
        match rings.get_mut(rail) {
            Some(r) => r.push(ms),
            None => {
                let mut r = Ring::default();
                r.push(ms);
                rings.insert(rail.to_string(), r);
            }
        }
    }

    /// `rail`'s figures, when it has samples.
    pub fn figures(&self, rail: &str) -> Option<Figures> {
        let rings = self.rings.lock().unwrap_or_else(|e| e.into_inner());
        let r = rings.get(rail)?;
        Some(Figures {
            p50_ms: r.percentile(50)?,
            p90_ms: r.percentile(90)?,
            samples: r.ms.len(),
        })
    }

    /// The soft deadline of a fan-out to `rails` (module docs), or `None`
    /// when the figures do not support one.
    pub fn soft_deadline<'a>(
        &self,
        cfg: &QuoteBookConfig,
        hard: Duration,
        rails: impl IntoIterator<Item = &'a str>,
    ) -> Option<Duration> {
        if cfg.hedge_factor_pct == 0 {
            return None;
        }
        let mut p90: Vec<u32> = rails
            .into_iter()
            .filter_map(|r| self.figures(r))
            .filter(|f| f.samples >= cfg.hedge_min_samples)
            .map(|f| f.p90_ms)
            .collect();
        if p90.len() < 2 {
            return None;
        }
        p90.sort_unstable();
        let faster_half = p90[p90.len().div_ceil(2) - 1];
        let ms = u64::from(faster_half) * u64::from(cfg.hedge_factor_pct) / 100;
        let soft = Duration::from_millis(ms.max(cfg.hedge_min_ms));
        (soft < hard).then_some(soft)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn percentiles_roll_over_the_last_samples() {
        let l = Latencies::default();
        for v in 1..=10 {
            l.record("a", ms(v * 10));
        }
        let f = l.figures("a").unwrap();
        assert_eq!((f.p50_ms, f.p90_ms, f.samples), (50, 90, 10));
        for _ in 0..SAMPLES {
            l.record("a", ms(7));
        }
        assert_eq!(l.figures("a").unwrap().p90_ms, 7);
        assert!(l.figures("b").is_none());
    }

    #[test]
    fn the_soft_deadline_follows_the_faster_half() {
        let cfg = QuoteBookConfig {
            hedge_factor_pct: 150,
            ..QuoteBookConfig::default()
        };
        let l = Latencies::default();
        let rails = [
            ("circle", 600),
            ("bungee", 900),
            ("squid", 1070),
            ("lifi", 1450),
        ];
        let names = rails.map(|(r, _)| r);
        assert_eq!(l.soft_deadline(&cfg, ms(8_000), names), None);
        for (r, v) in rails {
            for _ in 0..3 {
                l.record(r, ms(v));
            }
        }
        // Faster half: circle and bungee; 900 × 1.5.
        assert_eq!(l.soft_deadline(&cfg, ms(8_000), names), Some(ms(1_350)));
        // Never at or past the hard deadline.
        assert_eq!(l.soft_deadline(&cfg, ms(1_000), names), None);
        // One measured rail is not enough to hedge.
        assert_eq!(l.soft_deadline(&cfg, ms(8_000), ["lifi", "new"]), None);
    }
}
