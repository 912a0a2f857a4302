//! The live keys' hashes, in memory, so the per-request question "is this
//! an issued key?" never touches the store.
//!
//! Loaded whole at start; this replica's creates and revokes change it
//! at once; [`LiveKeys::refresh`] reads the keys changed (created or
//! revoked) since a minute before the last refresh — the overlap absorbs
//! commit delays and clock skew between replicas — and reloads the whole
//! set every five minutes, or after refreshes have failed for a while,
//! as a backstop. One lock orders local changes and refreshes, so a
//! refresh that read the store before a local revoke commits can never
//! bring the revoked key back.

use std::{collections::HashSet, future::Future, sync::RwLock};

use relay_store::{KeyStore, StoreError};

use super::{KeyError, KeyHash};

/// How far before the last refresh an incremental refresh looks.
const OVERLAP_MS: u64 = 60_000;
/// How often the whole set is reloaded.
const FULL_EVERY_MS: u64 = 300_000;
/// Without a successful refresh for this long, the next one is whole.
const STALE_MS: u64 = 30_000;

#[derive(Debug)]
struct Mark {
    last_ok_ms: u64,
    last_full_ms: u64,
}

/// The live keys (module docs).
#[derive(Debug)]
pub(super) struct LiveKeys {
    set: RwLock<HashSet<KeyHash>>,
    sync: tokio::sync::Mutex<Mark>,
}

async fn all_live(store: &dyn KeyStore) -> Result<HashSet<KeyHash>, KeyError> {
    let hashes = store.live_key_hashes().await?;
    Ok(hashes.iter().filter_map(|h| parse(h)).collect())
}

fn parse(h: &str) -> Option<KeyHash> {
    let parsed = KeyHash::from_hex(h);
    if parsed.is_none() {
        tracing::warn!("a stored key hash is not 32 bytes of hex; ignored");
    }
    parsed
}

impl LiveKeys {
    /// Every live key in `store`.
    pub(super) async fn load(store: &dyn KeyStore, now_ms: u64) -> Result<Self, KeyError> {
        let set = all_live(store).await?;
        tracing::info!(live = set.len(), "developer keys loaded");
        Ok(LiveKeys {
            set: RwLock::new(set),
            sync: tokio::sync::Mutex::new(Mark {
                last_ok_ms: now_ms,
                last_full_ms: now_ms,
            }),
        })
    }

    /// Whether `hash` is a live key's.
    pub(super) fn contains(&self, hash: &KeyHash) -> bool {
        self.set
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(hash)
    }

    fn set_live(&self, hash: KeyHash, live: bool) {
        let mut set = self.set.write().unwrap_or_else(|e| e.into_inner());
        if live {
            set.insert(hash);
        } else {
            set.remove(&hash);
        }
    }

    /// Runs `write` (the store change) and, when it succeeds, marks
    /// `hash` live or not — ordered with refreshes (module docs).
    pub(super) async fn change<T>(
        &self,
        hash: KeyHash,
        live: bool,
        write: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, KeyError> {
        let _ordered = self.sync.lock().await;
        let out = write.await?;
        self.set_live(hash, live);
        Ok(out)
    }

    /// Brings the set up to date with `store` (module docs).
    pub(super) async fn refresh(&self, store: &dyn KeyStore, now_ms: u64) -> Result<(), KeyError> {
        let mut mark = self.sync.lock().await;
        let whole = now_ms.saturating_sub(mark.last_full_ms) >= FULL_EVERY_MS
            || now_ms.saturating_sub(mark.last_ok_ms) > STALE_MS;
        if whole {
            let set = all_live(store).await?;
            *self.set.write().unwrap_or_else(|e| e.into_inner()) = set;
            mark.last_full_ms = now_ms;
        } else {
            let since = mark.last_ok_ms.saturating_sub(OVERLAP_MS);
            for (h, live) in store.keys_changed_since(since).await? {
                if let Some(hash) = parse(&h) {
                    self.set_live(hash, live);
                }
            }
        }
        mark.last_ok_ms = now_ms;
        Ok(())
    }

    /// How many keys are live (tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.set.read().unwrap_or_else(|e| e.into_inner()).len()
    }
}
