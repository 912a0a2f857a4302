//! Where time comes from. Services take an [`Clock`] so expiry, leases,
//! retention and schedules can be tested with a clock a test advances
//! ([`ManualClock`]); production uses [`SystemClock`].

use std::{
    fmt::Debug,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{SystemTime, UNIX_EPOCH},
};

/// A source of wall-clock time, epoch milliseconds.
pub trait Clock: Debug + Send + Sync + 'static {
    /// Epoch milliseconds now.
    fn now_ms(&self) -> u64;

    /// Unix seconds now.
    fn now_secs(&self) -> u64 {
        self.now_ms() / 1000
    }
}

/// A shared clock.
pub type SharedClock = Arc<dyn Clock>;

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default()
    }
}

/// The system clock, shared.
pub fn system() -> SharedClock {
    Arc::new(SystemClock)
}

/// A clock that moves only when told to (tests).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock reading `ms`.
    pub fn at(ms: u64) -> Arc<Self> {
        Arc::new(ManualClock(AtomicU64::new(ms)))
    }

    /// Moves the clock forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock to `ms`.
    pub fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let c = ManualClock::at(1_000);
        assert_eq!(c.now_ms(), 1_000);
        c.advance(30 * 86_400_000);
        assert_eq!(c.now_secs(), (1_000 + 30 * 86_400_000) / 1000);
        c.set(5);
        assert_eq!(c.now_ms(), 5);
    }
}
