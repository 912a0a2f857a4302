//! The threads native calls run on: a small pool of persistent worker
//! threads per rail, handed one call at a time.
//!
//! Why not `spawn_blocking`: a blocking-pool hand-off costs two thread
//! wake-ups (the worker's and the caller's) plus the task's allocation,
//! ~25–30 µs on a busy 2-core machine — a hundred times the plugin's own
//! work for a rail that only computes. A call still needs a thread of its
//! own (a native plugin cannot be interrupted, so a call that hangs must
//! be abandonable at its deadline), but the hand-off can be cheap:
//!
//! - an idle worker **spins** for [`WORKER_SPIN`] after each call before
//!   it parks, so back-to-back calls reach it without a wake-up;
//! - the caller, for a rail whose last call was short, **spins** for up to
//!   [`CALLER_SPIN`] on the reply before it yields, so a short call
//!   returns without a wake-up either. A rail that makes upstream requests
//!   (milliseconds) never spins the caller.
//!
//! A worker that is stuck in a hung call is simply not idle: the next call
//! takes (or starts) another. When the hung call returns at last, its
//! worker goes back to the pool. At most [`MAX_IDLE`] idle workers are kept
//! per rail; the others exit.

use std::{
    panic::{catch_unwind, AssertUnwindSafe},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex, Weak,
    },
    thread::Thread,
    time::{Duration, Instant},
};

/// How long an idle worker spins for the next call before it parks.
pub(super) const WORKER_SPIN: Duration = Duration::from_micros(100);
/// How long a caller spins on the reply of a rail whose calls are short.
pub(super) const CALLER_SPIN: Duration = Duration::from_micros(50);
/// Idle workers kept per rail.
const MAX_IDLE: usize = 4;

/// One unit of work for a worker: it runs, then returns how to deliver its
/// result, which the worker does after it is back in the pool (so the
/// caller's next call finds it idle).
pub(super) type Job = Box<dyn FnOnce() -> Deliver + Send + 'static>;
/// Hands a job's result to its caller.
pub(super) type Deliver = Box<dyn FnOnce() + Send + 'static>;

/// A rail's worker threads.
pub(super) struct Workers {
    shared: Arc<Shared>,
    /// Duration of the rail's last completed call, in nanoseconds
    /// (`u64::MAX` before the first).
    last_call_ns: AtomicU64,
}

struct Shared {
    name: String,
    idle: Mutex<Vec<Arc<Slot>>>,
    closed: AtomicBool,
}

/// Where a caller leaves a job for one worker. Aligned to its own cache
/// lines: the idle worker polls `ready`, and an allocation of the caller's
/// that happened to share the line would bounce it between the cores on
/// every write (a call then takes twice as long, depending on where the
/// allocator put the slot).
#[repr(align(128))]
struct Slot {
    job: Mutex<Option<Job>>,
    ready: AtomicBool,
    thread: Thread,
}

impl Workers {
    /// A pool whose threads are named after `name` (the rail).
    pub(super) fn new(name: &str) -> Self {
        Workers {
            shared: Arc::new(Shared {
                name: format!("relay-native-{name}"),
                idle: Mutex::new(Vec::new()),
                closed: AtomicBool::new(false),
            }),
            last_call_ns: AtomicU64::new(u64::MAX),
        }
    }

    /// Runs `job` on an idle worker, or on a new one when none is idle.
    pub(super) fn submit(&self, job: Job) -> std::io::Result<()> {
        let idle = self.shared.idle.lock().expect("idle workers").pop();
        match idle {
            Some(slot) => {
                *slot.job.lock().expect("worker slot") = Some(job);
                slot.ready.store(true, Ordering::Release);
                slot.thread.unpark();
                Ok(())
            }
            None => spawn(&self.shared, job),
        }
    }

    /// Whether a caller should spin on this rail's reply: its last call
    /// took less than the spin budget.
    pub(super) fn spin_budget(&self) -> Option<Duration> {
        let last = self.last_call_ns.load(Ordering::Relaxed);
        (last < CALLER_SPIN.as_nanos() as u64).then_some(CALLER_SPIN)
    }

    /// Records how long a call took (see [`Workers::spin_budget`]).
    pub(super) fn record(&self, took: Duration) {
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.last_call_ns.store(ns, Ordering::Relaxed);
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        for slot in self.shared.idle.lock().expect("idle workers").drain(..) {
            slot.thread.unpark();
        }
    }
}

/// Starts a worker thread that runs `first`, then serves the pool.
fn spawn(shared: &Arc<Shared>, first: Job) -> std::io::Result<()> {
    let weak = Arc::downgrade(shared);
    std::thread::Builder::new()
        .name(shared.name.clone())
        .spawn(move || serve(weak, first))
        .map(drop)
}

/// A worker's life: run a job, offer itself as idle, wait for the next.
fn serve(pool: Weak<Shared>, first: Job) {
    let slot = Arc::new(Slot {
        job: Mutex::new(None),
        ready: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    let mut job = first;
    loop {
        // A job that panics must not take the worker with it; its caller
        // sees the reply channel closed.
        let deliver = catch_unwind(AssertUnwindSafe(job)).ok();
        let idle = offer(&slot, &pool);
        if let Some(deliver) = deliver {
            deliver();
        }
        if !idle {
            return;
        }
        match next_job(&slot, &pool) {
            Some(next) => job = next,
            None => return,
        }
    }
}

/// Puts the worker back in the pool's idle list; `false` when it should
/// exit instead (the pool is full or gone).
fn offer(slot: &Arc<Slot>, pool: &Weak<Shared>) -> bool {
    let Some(shared) = pool.upgrade() else {
        return false;
    };
    let mut idle = shared.idle.lock().expect("idle workers");
    if idle.len() >= MAX_IDLE || shared.closed.load(Ordering::Acquire) {
        return false;
    }
    idle.push(slot.clone());
    true
}

/// Waits for the next job: spins for [`WORKER_SPIN`], then parks until a
/// caller hands one over or the pool closes.
fn next_job(slot: &Slot, pool: &Weak<Shared>) -> Option<Job> {
    let spin_until = Instant::now() + WORKER_SPIN;
    loop {
        // A plain load while nothing is there: polling with a swap would
        // take the line exclusive on every turn of the loop.
        if slot.ready.load(Ordering::Relaxed) && slot.ready.swap(false, Ordering::Acquire) {
            return slot.job.lock().expect("worker slot").take();
        }
        if Instant::now() < spin_until {
            std::hint::spin_loop();
            continue;
        }
        match pool.upgrade() {
            Some(shared) if !shared.closed.load(Ordering::Acquire) => {}
            _ => return None,
        }
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use std::{sync::mpsc, thread::ThreadId};

    use super::*;

    /// A job that waits for `hold` (if any), then delivers its thread's id.
    fn job(tx: mpsc::Sender<ThreadId>, hold: Option<mpsc::Receiver<()>>) -> Job {
        Box::new(move || {
            if let Some(hold) = hold {
                hold.recv().ok();
            }
            let id = std::thread::current().id();
            Box::new(move || {
                tx.send(id).ok();
            }) as Deliver
        })
    }

    #[test]
    fn jobs_run_on_reused_workers_and_a_busy_worker_is_not_waited_for() {
        let workers = Workers::new("test");
        let (tx, rx) = mpsc::channel();
        let (release, hold) = mpsc::channel::<()>();
        workers.submit(job(tx.clone(), Some(hold))).unwrap();
        // The first worker is busy: this one runs beside it at once.
        workers.submit(job(tx.clone(), None)).unwrap();
        let quick = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        release.send(()).unwrap();
        let slow = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_ne!(quick, slow);
        // A worker is idle again before it delivers: back-to-back calls
        // reuse it rather than start threads.
        for _ in 0..20 {
            workers.submit(job(tx.clone(), None)).unwrap();
            let id = rx.recv_timeout(Duration::from_secs(5)).unwrap();
            assert!(id == quick || id == slow, "a third thread ran a job");
        }
    }

    #[test]
    fn a_panicking_job_leaves_the_worker_serving() {
        let workers = Workers::new("test");
        workers.submit(Box::new(|| panic!("job panics"))).unwrap();
        let (tx, rx) = mpsc::channel();
        workers.submit(job(tx, None)).unwrap();
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
    }
}
