//! Deadlines kept to a fraction of a millisecond: the hedged fan-out's
//! soft deadline ([`super::quote`]).
//!
//! tokio's timer rounds a deadline up to its next millisecond tick and the
//! runtime sleeps in whole milliseconds, so a tokio timeout fires up to
//! ~2 ms late — most of a cold quote's overhead over the rails it waited
//! for. Alarms are kept by one thread instead, which sleeps until the
//! nearest (a futex wait, precise to the kernel's timer slack, ~50 µs) and
//! rings it through a oneshot channel; the waiting task wakes at once.
//! An alarm whose [`Alarm`] was dropped still rings, into nothing, at its
//! time; alarms are never longer than a quote's hard deadline.

use std::{
    cmp::Ordering,
    collections::BinaryHeap,
    future::Future,
    pin::Pin,
    sync::{Condvar, LazyLock, Mutex},
    task::{Context, Poll},
    time::Instant,
};

use tokio::sync::oneshot;

/// Rings at its instant (or at once when that has passed).
#[derive(Debug)]
pub struct Alarm(oneshot::Receiver<()>);

impl Future for Alarm {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // The keeper never drops a sender unrung; either way, it is time.
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

/// An alarm that rings at `when`.
pub fn at(when: Instant) -> Alarm {
    let (tx, rx) = oneshot::channel();
    KEEPER.set(when, tx);
    Alarm(rx)
}

/// One set alarm, ordered by when it rings.
struct Set {
    when: Instant,
    ring: oneshot::Sender<()>,
}

impl PartialEq for Set {
    fn eq(&self, other: &Self) -> bool {
        self.when == other.when
    }
}

impl Eq for Set {}

impl PartialOrd for Set {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Set {
    /// Reversed: the heap's top is the earliest.
    fn cmp(&self, other: &Self) -> Ordering {
        other.when.cmp(&self.when)
    }
}

/// The alarms and the thread that rings them.
struct Keeper {
    set: Mutex<BinaryHeap<Set>>,
    changed: Condvar,
}

static KEEPER: LazyLock<&'static Keeper> = LazyLock::new(|| {
    let keeper: &'static Keeper = Box::leak(Box::new(Keeper {
        set: Mutex::new(BinaryHeap::new()),
        changed: Condvar::new(),
    }));
    std::thread::Builder::new()
        .name("relay-alarms".into())
        .spawn(move || keeper.run())
        .expect("the alarm thread starts");
    keeper
});

impl Keeper {
    fn set(&self, when: Instant, ring: oneshot::Sender<()>) {
        let mut set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        let earliest = set.peek().is_none_or(|s| when < s.when);
        set.push(Set { when, ring });
        if earliest {
            self.changed.notify_one();
        }
    }

    /// Rings every alarm that is due, then sleeps until the next one (or
    /// until an earlier one is set).
    fn run(&self) {
        let mut set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            while set.peek().is_some_and(|s| s.when <= now) {
                if let Some(due) = set.pop() {
                    let _ = due.ring.send(());
                }
            }
            set = match set.peek().map(|s| s.when - now) {
                Some(wait) => {
                    self.changed
                        .wait_timeout(set, wait)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                None => self.changed.wait(set).unwrap_or_else(|e| e.into_inner()),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn rings_in_order_never_early() {
        let start = Instant::now();
        let mut late = at(start + Duration::from_millis(40));
        let soon = at(start + Duration::from_millis(10));
        tokio::select! {
            biased;
            () = soon => {}
            () = &mut late => panic!("the later alarm rang first"),
        }
        assert!(start.elapsed() >= Duration::from_millis(10));
        late.await;
        assert!(start.elapsed() >= Duration::from_millis(40));
        // A time already past rings at once.
        at(start).await;
    }
}
