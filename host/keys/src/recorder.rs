//! The in-memory buffer of keyed requests, written to the store in
//! batches by [`super::KeyService::run`]: a request only pushes a record
//! (a short lock, no I/O). The buffer is bounded — when the store is
//! unreachable for long, new records are dropped and counted, never
//! memory without end.

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Mutex,
};

use relay_store::KeyUsageRecord;
use tokio::sync::Notify;

use super::{KeyHash, FLUSH_BATCH};

/// The most records held while the store is unreachable.
const MAX_BUFFERED: usize = 65_536;
/// The longest method recorded (a client may send any token).
const MAX_METHOD: usize = 16;

/// The buffer (module docs).
#[derive(Debug)]
pub(super) struct Recorder {
    buf: Mutex<Vec<KeyUsageRecord>>,
    seq: AtomicU64,
    full: Notify,
    dropped: AtomicU64,
}

impl Recorder {
    /// An empty buffer; record sequence numbers start from `now_ms`
    /// scaled up, so they keep increasing across restarts.
    pub(super) fn new(now_ms: u64) -> Self {
        Recorder {
            buf: Mutex::new(Vec::new()),
            seq: AtomicU64::new(now_ms.saturating_mul(1000)),
            full: Notify::new(),
            dropped: AtomicU64::new(0),
        }
    }

    /// Buffers one request; wakes the writer when a batch is ready.
    pub(super) fn push(&self, key: KeyHash, ts_ms: u64, method: &str, path: &str, status: u16) {
        let record = KeyUsageRecord {
            key_hash: key.hex(),
            ts_ms,
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
            method: method.chars().take(MAX_METHOD).collect(),
            path: path.to_string(),
            status,
        };
        let waiting = {
            let mut buf = self.buf.lock().unwrap_or_else(|e| e.into_inner());
            if buf.len() >= MAX_BUFFERED {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            buf.push(record);
            buf.len()
        };
        if waiting >= FLUSH_BATCH {
            self.full.notify_one();
        }
    }

    /// Resolves when a batch is ready.
    pub(super) async fn full(&self) {
        self.full.notified().await
    }

    /// Everything buffered.
    pub(super) fn take(&self) -> Vec<KeyUsageRecord> {
        std::mem::take(&mut *self.buf.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Returns a batch the store refused to the front of the buffer,
    /// dropping the oldest records beyond the bound.
    pub(super) fn put_back(&self, mut batch: Vec<KeyUsageRecord>) {
        let mut buf = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        batch.append(&mut buf);
        let over = batch.len().saturating_sub(MAX_BUFFERED);
        if over > 0 {
            batch.drain(..over);
            self.dropped.fetch_add(over as u64, Ordering::Relaxed);
        }
        *buf = batch;
    }

    /// Records dropped since the last call.
    pub(super) fn take_dropped(&self) -> u64 {
        self.dropped.swap(0, Ordering::Relaxed)
    }
}
