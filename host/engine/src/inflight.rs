//! One live fan-out per lane at a time (issue 12): a quote the book cannot
//! answer while another request is already asking the same lane's rails
//! live waits for that fan-out and is served its answers — scaled to its
//! own amount as the book scales them ([`super::quotebook::scale`]) —
//! instead of asking every upstream again. A burst on a cold or stale
//! lane then waits on each upstream once, not once per client, and the
//! burst answers as soon as the one fan-out does.
//!
//! The request that found no fan-out in flight leads: it fans out and
//! publishes the answers. If it is dropped before publishing (its client
//! went away), the waiting requests are woken empty-handed and the next
//! of them leads a fan-out of its own.

use std::{
    collections::HashMap,
    hash::Hash,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
};

use tokio::sync::watch;

/// Where a follower waits: the published answers, or none yet.
pub type Slot<T> = watch::Receiver<Option<Arc<T>>>;

/// Fan-outs in flight by key (module docs).
#[derive(Debug)]
pub struct Inflight<K, T> {
    /// The fan-out in flight per key, with its leader's number.
    running: Mutex<HashMap<K, (u64, Slot<T>)>>,
    next: AtomicU64,
}

impl<K, T> Default for Inflight<K, T> {
    fn default() -> Self {
        Inflight {
            running: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        }
    }
}

/// What a request does about a key: lead the fan-out, or wait for the one
/// in flight.
#[derive(Debug)]
pub enum Turn<'a, K: Hash + Eq + Clone, T> {
    /// No fan-out was in flight: this request makes it and publishes.
    Lead(Lead<'a, K, T>),
    /// One is in flight: [`wait`] for its answers.
    Follow(Slot<T>),
}

/// The leading request's handle; dropping it unpublished wakes the
/// followers empty-handed.
#[derive(Debug)]
pub struct Lead<'a, K: Hash + Eq + Clone, T> {
    owner: &'a Inflight<K, T>,
    key: K,
    id: u64,
    tx: watch::Sender<Option<Arc<T>>>,
}

impl<K: Hash + Eq + Clone, T> Inflight<K, T> {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<K, (u64, Slot<T>)>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This request's turn on `key`.
    pub fn turn(&self, key: &K) -> Turn<'_, K, T> {
        let mut running = self.running();
        if let Some((_, slot)) = running.get(key) {
            return Turn::Follow(slot.clone());
        }
        let (tx, rx) = watch::channel(None);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        running.insert(key.clone(), (id, rx));
        Turn::Lead(Lead {
            owner: self,
            key: key.clone(),
            id,
            tx,
        })
    }

    /// Fan-outs in flight now.
    pub fn len(&self) -> usize {
        self.running().len()
    }

    /// Whether none is in flight.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A follower's wait: the leader's answers, or `None` when the leader was
/// dropped before publishing.
pub async fn wait<T>(mut slot: Slot<T>) -> Option<Arc<T>> {
    let published = slot.wait_for(Option::is_some).await.ok()?;
    published.clone()
}

impl<K: Hash + Eq + Clone, T> Lead<'_, K, T> {
    /// Hands `answers` to every follower and ends the fan-out.
    pub fn publish(self, answers: Arc<T>) {
        self.tx.send_replace(Some(answers));
    }
}

impl<K: Hash + Eq + Clone, T> Drop for Lead<'_, K, T> {
    fn drop(&mut self) {
        let mut running = self.owner.running();
        if running.get(&self.key).is_some_and(|(id, _)| *id == self.id) {
            running.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_request_waits_for_the_first_and_is_served_its_answers() {
        let inflight = Inflight::<&str, u32>::default();
        let Turn::Lead(lead) = inflight.turn(&"lane") else {
            panic!("the first request leads");
        };
        let Turn::Follow(slot) = inflight.turn(&"lane") else {
            panic!("the second follows");
        };
        assert!(matches!(inflight.turn(&"other"), Turn::Lead(_)));
        let waiting = tokio::spawn(wait(slot));
        lead.publish(Arc::new(7));
        assert_eq!(waiting.await.unwrap().as_deref(), Some(&7));
        assert!(inflight.is_empty(), "published: the fan-out is over");
        assert!(matches!(inflight.turn(&"lane"), Turn::Lead(_)));
    }

    #[tokio::test]
    async fn a_dropped_leader_wakes_its_followers_and_the_next_request_leads() {
        let inflight = Inflight::<&str, u32>::default();
        let lead = inflight.turn(&"lane");
        let Turn::Follow(slot) = inflight.turn(&"lane") else {
            panic!("the second follows");
        };
        drop(lead);
        assert_eq!(wait(slot).await, None);
        assert!(matches!(inflight.turn(&"lane"), Turn::Lead(_)));
    }
}
