//! Retry spacing: the one exponential back-off every retrying part of the
//! host uses (webhook deliveries, a failing rail's quote refreshes, a
//! faulting plugin's quarantine, failed operator sign-ins).

use std::time::Duration;

/// Exponential back-off: the wait after the n-th failure in a row is
/// `base · 2^(n−1)`, at most `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    base_ms: u64,
    max_ms: u64,
}

impl Backoff {
    /// Waits from `base_ms`, doubling, never longer than `max_ms`.
    pub const fn new(base_ms: u64, max_ms: u64) -> Self {
        Backoff { base_ms, max_ms }
    }

    /// The same from durations (whole milliseconds).
    pub fn of(base: Duration, max: Duration) -> Self {
        Backoff::new(millis(base), millis(max))
    }

    /// The wait after the `failures`-th failure in a row, ms (the first
    /// waits `base`; 0 counts as the first).
    pub fn delay_ms(&self, failures: u32) -> u64 {
        self.uncapped_ms(failures).min(self.max_ms)
    }

    /// [`Backoff::delay_ms`] as a duration.
    pub fn delay(&self, failures: u32) -> Duration {
        Duration::from_millis(self.delay_ms(failures))
    }

    /// The wait after the `failures`-th failure scaled by `jitter` in
    /// `0..=1` from 0.8× to 1.2× (so retries of many clients do not run in
    /// lockstep), at most `max`; a jitter that is not a number counts as
    /// 0.5 (no scaling), one out of range is clamped.
    pub fn jittered(&self, failures: u32, jitter: f64) -> Duration {
        let jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.5
        };
        let ms = self.uncapped_ms(failures) as f64 * (0.8 + 0.4 * jitter);
        Duration::from_secs_f64(ms.min(self.max_ms as f64) / 1000.0)
    }

    fn uncapped_ms(&self, failures: u32) -> u64 {
        let exp = failures.saturating_sub(1).min(63);
        self.base_ms.saturating_mul(1u64 << exp)
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_the_base_up_to_the_cap() {
        let b = Backoff::new(1_000, 60_000);
        let waits: Vec<u64> = (1..=8).map(|n| b.delay_ms(n)).collect();
        assert_eq!(
            waits,
            [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]
        );
        assert_eq!(b.delay_ms(0), 1_000);
        assert_eq!(b.delay_ms(u32::MAX), 60_000);
    }

    #[test]
    fn jitter_scales_by_at_most_a_fifth_and_never_passes_the_cap() {
        let b = Backoff::new(10_000, 100_000);
        assert_eq!(b.jittered(1, 0.0), Duration::from_secs(8));
        assert_eq!(b.jittered(1, 1.0), Duration::from_secs(12));
        assert_eq!(b.jittered(1, 7.0), Duration::from_secs(12));
        assert_eq!(b.jittered(1, f64::NAN), Duration::from_secs(10));
        assert_eq!(b.jittered(99, 1.0), Duration::from_secs(100));
    }
}
