//! Retry spacing of webhook deliveries: exponential, with ±20 % jitter so
//! replicas and receivers do not retry in lockstep; about a day from the
//! first attempt to the last with the defaults.

use std::time::Duration;

use relay_config::NotifyConfig;

/// The longest single wait, whatever the configuration (30 days).
const MAX_WAIT_SECS: f64 = 30.0 * 86_400.0;

/// When the next attempt of a delivery is due: the host's one
/// [`relay_types::Backoff`], jittered, for at most `max_attempts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    spacing: relay_types::Backoff,
    max_attempts: u32,
}

impl Default for Backoff {
    /// 5 s base, 15 attempts: about 22.75 hours of waits in total.
    fn default() -> Self {
        Backoff::from_config(&NotifyConfig::default())
    }
}

impl Backoff {
    /// A schedule: the first wait is `base`, each next one doubles, and
    /// there are at most `max_attempts` attempts.
    pub fn new(base: Duration, max_attempts: u32) -> Self {
        let spacing = relay_types::Backoff::of(base, Duration::from_secs_f64(MAX_WAIT_SECS));
        Backoff {
            spacing,
            max_attempts,
        }
    }

    /// `notify.base_delay_ms` and `notify.max_attempts`.
    pub fn from_config(config: &NotifyConfig) -> Self {
        Backoff::new(
            Duration::from_millis(config.base_delay_ms),
            config.max_attempts,
        )
    }

    /// Attempts before a delivery is given up.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait after `attempt` attempts were made (1-based), scaled by
    /// `jitter` in `0..=1` from 0.8× to 1.2× of `base·2^(attempt-1)`;
    /// `None` once `max_attempts` were made (the delivery has failed).
    /// Each wait is longer than the one before whatever the jitter
    /// (1.6× the previous nominal at least, against 1.2× at most).
    pub fn after(&self, attempt: u32, jitter: f64) -> Option<Duration> {
        (attempt < self.max_attempts).then(|| self.spacing.jittered(attempt, jitter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_schedule_spans_about_a_day() {
        let b = Backoff::default();
        assert_eq!(b.max_attempts(), 15);
        let total: Duration = (1..15).map(|n| b.after(n, 0.5).expect("wait")).sum();
        let hours = total.as_secs_f64() / 3600.0;
        assert!((20.0..30.0).contains(&hours), "{hours} h");
        // Even at the jitter extremes it stays near a day.
        let low: Duration = (1..15).map(|n| b.after(n, 0.0).expect("wait")).sum();
        let high: Duration = (1..15).map(|n| b.after(n, 1.0).expect("wait")).sum();
        assert!(low.as_secs() > 18 * 3600 && high.as_secs() < 28 * 3600);
    }

    #[test]
    fn waits_double_nominally_and_stop_after_the_last_attempt() {
        let b = Backoff::new(Duration::from_secs(5), 4);
        assert_eq!(b.after(1, 0.5), Some(Duration::from_secs(5)));
        assert_eq!(b.after(2, 0.5), Some(Duration::from_secs(10)));
        assert_eq!(b.after(3, 0.5), Some(Duration::from_secs(20)));
        assert_eq!(b.after(4, 0.5), None);
        assert_eq!(b.after(99, 0.5), None);
    }

    #[test]
    fn jitter_stays_within_twenty_percent() {
        let b = Backoff::new(Duration::from_secs(10), 10);
        assert_eq!(b.after(1, 0.0), Some(Duration::from_secs(8)));
        assert_eq!(b.after(1, 1.0), Some(Duration::from_secs(12)));
        // Out-of-range jitter is clamped, never a panic.
        assert_eq!(b.after(1, 7.0), Some(Duration::from_secs(12)));
        assert_eq!(b.after(1, f64::NAN), Some(Duration::from_secs(10)));
    }

    #[test]
    fn gaps_grow_whatever_the_jitter() {
        let b = Backoff::default();
        for n in 1..13 {
            let longest_now = b.after(n, 1.0).expect("wait");
            let shortest_next = b.after(n + 1, 0.0).expect("wait");
            assert!(shortest_next > longest_now, "attempt {n}");
        }
    }

    #[test]
    fn huge_attempt_counts_are_capped_not_overflowed() {
        let b = Backoff::new(Duration::from_secs(3600), u32::MAX);
        let w = b.after(u32::MAX - 1, 1.0).expect("wait");
        assert_eq!(w, Duration::from_secs_f64(MAX_WAIT_SECS));
    }
}
