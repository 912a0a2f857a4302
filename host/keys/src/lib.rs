//! relay-keys: developer keys (spec §2.13, §4.5, §5.2) — issue, look up,
//! revoke, and count what each key's requests did — the whole feature in
//! one home: the service, its HTTP adapter with its rate-limit bucket and
//! errorCodes ([`http::feature`]) and its job (`keys`: usage writes,
//! live-key refresh, pruning; started by the feature's start, which
//! leaves `Arc<KeyService>` in the host's handles for the HTTP edge's rate
//! limiter and usage recorder). The host registers it with one line.
//!
//! A key (`ak_` and 40 hex digits: 160 random bits) is shown once, when
//! it is created, and stored only as its SHA-256 ([`KeyHash`]); every later
//! comparison is of hashes. A key never authorises anything: it only tags
//! requests (usage visibility, [`KeyService::usage`]) and scopes rate
//! limits to the key instead of the IP. It is never required, and an
//! unknown or revoked key is treated exactly like no key.
//!
//! The HTTP edge asks [`KeyService::is_live`] on every request, so the
//! answer comes from memory (module `cache`): the live keys' hashes, loaded
//! from the store at start, changed at once by this replica's creates and
//! revokes, and refreshed from the store every [`REFRESH_EVERY`] so a key
//! created or revoked on another replica counts within seconds.
//!
//! Usage is buffered in memory (module `recorder`) and written in batches
//! (every [`FLUSH_EVERY`], or at once when [`FLUSH_BATCH`] records wait),
//! so a request never waits for a usage write; the store sums every
//! replica's batches on read, and usage older than a day is pruned.
//!
//! This module never logs a key, and never returns one except from
//! [`KeyService::create`].

mod cache;
pub mod errors;
pub mod http;
mod recorder;

use std::{future::Future, sync::Arc, time::Duration};

use relay_store::{KeyRow, KeyStore, KeyUsageRecord, StoreError, UsageWindow};
use relay_types::clock::SharedClock;
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use cache::LiveKeys;
use recorder::Recorder;

/// Every key starts with this.
pub const KEY_PREFIX: &str = "ak_";
/// Random bytes in a key (160 bits; 40 hex digits).
pub const KEY_RANDOM_BYTES: usize = 20;
/// Characters of a key shown as its `prefix` (`ak_` and 4 hex digits).
pub const DISPLAY_PREFIX_CHARS: usize = 7;
/// The longest label, in characters.
pub const MAX_LABEL_CHARS: usize = 64;
/// Requests listed in `recent`.
pub const RECENT: u32 = 20;
/// Paths listed in `topPaths`.
pub const TOP_PATHS: u32 = 10;
/// How often the live keys are refreshed from the store.
pub const REFRESH_EVERY: Duration = Duration::from_secs(2);
/// How often buffered usage is written.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// Buffered records that trigger a write at once.
pub const FLUSH_BATCH: usize = 256;
/// How long usage is kept.
pub const RETENTION_MS: u64 = 24 * 3_600_000;
/// How often usage older than [`RETENTION_MS`] is pruned.
pub const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// The path recorded for a request that matched no route.
pub const UNKNOWN_PATH: &str = "(unknown path)";

const MINUTE_MS: u64 = relay_store::KEY_USAGE_MINUTE_MS;

/// What `note` says on a new key.
pub const CREATED_NOTE: &str = "Shown once: this host stores only its SHA-256 and cannot show it again. Send it as x-relay-key (or ?key= on /api/keys/*) to tag your requests for usage visibility (GET /api/keys/usage) and to have rate limits counted per key instead of per IP. It is never required and authorises nothing.";

/// Why a key request is refused.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The label is not acceptable.
    #[error("label: {0}")]
    Label(String),
    /// No live key is the one presented (never issued, or revoked).
    #[error("no live key matches the key presented (unknown or revoked)")]
    Unknown,
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// The SHA-256 of a key's text: all the host keeps of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyHash([u8; 32]);

impl KeyHash {
    /// The hash of `key`.
    pub fn of(key: &str) -> Self {
        KeyHash(Sha256::digest(key.as_bytes()).into())
    }

    /// Lowercase hex, as stored.
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses the stored hex form.
    pub fn from_hex(s: &str) -> Option<Self> {
        let bytes = hex::decode(s).ok()?;
        Some(KeyHash(bytes.try_into().ok()?))
    }
}

/// A new key: `ak_` and 40 lowercase hex digits from the thread's CSPRNG.
pub fn generate() -> String {
    let bytes: [u8; KEY_RANDOM_BYTES] = rand::random();
    format!("{KEY_PREFIX}{}", hex::encode(bytes))
}

/// Whether `key` has the shape of a key this host issues.
pub fn well_formed(key: &str) -> bool {
    key.strip_prefix(KEY_PREFIX).is_some_and(|rest| {
        rest.len() == KEY_RANDOM_BYTES * 2 && rest.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// Characters a label may not hold: controls, and the invisible ones
/// that make text read differently from what it is (zero-width, bidi).
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// A label as stored: trimmed, `None` when empty; at most
/// [`MAX_LABEL_CHARS`] printable characters.
pub fn label(raw: Option<&str>) -> Result<Option<String>, KeyError> {
    let Some(l) = raw.map(str::trim).filter(|l| !l.is_empty()) else {
        return Ok(None);
    };
    let n = l.chars().count();
    if n > MAX_LABEL_CHARS {
        return Err(KeyError::Label(format!(
            "{n} characters; at most {MAX_LABEL_CHARS}"
        )));
    }
    if l.chars().any(invisible) {
        return Err(KeyError::Label(
            "control and invisible characters are not allowed".into(),
        ));
    }
    Ok(Some(l.to_string()))
}

/// `POST /api/keys/create`'s answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyCreated {
    /// The key (`ak_…`). Shown once: keep it.
    #[schema(example = "ak_3f9c2a61d0b84e7f95a1c6e2d7b04f8a1e6c3d92")]
    pub key: String,
    /// The label given, if any.
    pub label: Option<String>,
    /// Epoch ms.
    pub created: u64,
    /// What the key does and does not do.
    pub note: String,
}

/// A key's public metadata.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyMeta {
    /// The label given at creation.
    pub label: Option<String>,
    /// Epoch ms.
    pub created: u64,
    /// The key's first characters (`ak_3f9c`), to tell keys apart.
    pub prefix: String,
}

/// `GET /api/keys/me`'s answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyInfo {
    /// The key.
    pub key: KeyMeta,
    /// Always `active` (a revoked key is unknown).
    #[schema(example = "active")]
    pub status: &'static str,
}

/// The key a usage report is about.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyLabel {
    /// The label given at creation.
    pub label: Option<String>,
    /// Epoch ms.
    pub created: u64,
}

/// Requests to one path.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PathUsage {
    /// The matched route template (`/api/route/status`), or
    /// `(unknown path)`.
    pub path: String,
    /// Requests.
    pub count: u64,
}

/// Usage over one window.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WindowUsage {
    /// Requests made with the key.
    pub total: u64,
    /// Of which answered with an HTTP status of 400 or more.
    pub errors: u64,
    /// The busiest paths (at most 10), busiest first.
    pub top_paths: Vec<PathUsage>,
}

impl From<UsageWindow> for WindowUsage {
    fn from(w: UsageWindow) -> Self {
        WindowUsage {
            total: w.total,
            errors: w.errors,
            top_paths: w
                .top_paths
                .into_iter()
                .map(|p| PathUsage {
                    path: p.path,
                    count: p.count,
                })
                .collect(),
        }
    }
}

/// One request made with the key.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentRequest {
    /// When it arrived (epoch ms).
    pub ts: u64,
    /// HTTP method.
    pub method: String,
    /// The matched route template, or `(unknown path)`.
    pub path: String,
    /// The HTTP status answered.
    pub status: u16,
}

/// `GET /api/keys/usage`'s answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyUsage {
    /// The key.
    pub key: KeyLabel,
    /// The current minute and the 59 before it.
    pub hour: WindowUsage,
    /// The current minute and the 1439 before it.
    pub day: WindowUsage,
    /// The latest 20 requests, newest first.
    pub recent: Vec<RecentRequest>,
}

/// `POST /api/keys/revoke`'s answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyRevoked {
    /// Always `true`.
    pub revoked: bool,
    /// The revoked key's first characters.
    pub prefix: String,
}

/// Issues keys, answers who they are and what they did, and records
/// their requests (module docs).
#[derive(Debug)]
pub struct KeyService {
    store: Arc<dyn KeyStore>,
    clock: SharedClock,
    live: LiveKeys,
    recorder: Recorder,
    /// One write at a time, so a flush returns only once everything
    /// recorded before it is in the store.
    flushing: tokio::sync::Mutex<()>,
}

impl KeyService {
    /// The service over `store`, with the live keys loaded.
    pub async fn start(store: Arc<dyn KeyStore>, clock: SharedClock) -> Result<Self, KeyError> {
        let live = LiveKeys::load(store.as_ref(), clock.now_ms()).await?;
        let recorder = Recorder::new(clock.now_ms());
        Ok(KeyService {
            store,
            clock,
            live,
            recorder,
            flushing: tokio::sync::Mutex::new(()),
        })
    }

    /// Epoch ms on the service's clock.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Issues a key labelled `label`.
    #[tracing::instrument(skip_all)]
    pub async fn create(&self, raw_label: Option<&str>) -> Result<KeyCreated, KeyError> {
        let label = label(raw_label)?;
        let key = generate();
        let hash = KeyHash::of(&key);
        let created = self.clock.now_ms();
        let row = KeyRow {
            key_hash: hash.hex(),
            prefix: key[..DISPLAY_PREFIX_CHARS].to_string(),
            label: label.clone(),
            created_ms: created,
            revoked_ms: None,
        };
        self.live
            .change(hash, true, self.store.insert_key(&row))
            .await?;
        tracing::info!(prefix = %row.prefix, "developer key created");
        Ok(KeyCreated {
            key,
            label,
            created,
            note: CREATED_NOTE.into(),
        })
    }

    /// The live key `key` (asked of the store, so a key another replica
    /// just issued is found).
    async fn live_row(&self, key: &str) -> Result<(KeyHash, KeyRow), KeyError> {
        if !well_formed(key) {
            return Err(KeyError::Unknown);
        }
        let hash = KeyHash::of(key);
        match self.store.key(&hash.hex()).await? {
            Some(row) if row.revoked_ms.is_none() => Ok((hash, row)),
            _ => Err(KeyError::Unknown),
        }
    }

    /// `key`'s metadata.
    #[tracing::instrument(skip_all)]
    pub async fn lookup(&self, key: &str) -> Result<KeyInfo, KeyError> {
        let (_, row) = self.live_row(key).await?;
        Ok(KeyInfo {
            key: KeyMeta {
                label: row.label,
                created: row.created_ms,
                prefix: row.prefix,
            },
            status: "active",
        })
    }

    /// Revokes `key`: from now on it is treated like no key.
    #[tracing::instrument(skip_all)]
    pub async fn revoke(&self, key: &str) -> Result<KeyRevoked, KeyError> {
        let (hash, row) = self.live_row(key).await?;
        let now = self.clock.now_ms();
        let revoked = self
            .live
            .change(hash, false, self.store.revoke_key(&hash.hex(), now))
            .await?;
        if !revoked {
            return Err(KeyError::Unknown);
        }
        tracing::info!(prefix = %row.prefix, "developer key revoked");
        Ok(KeyRevoked {
            revoked: true,
            prefix: row.prefix,
        })
    }

    /// What `key`'s requests did in the last hour and day, and its latest
    /// requests. Requests still buffered (at most about a second old) are
    /// not in it yet.
    #[tracing::instrument(skip_all)]
    pub async fn usage(&self, key: &str) -> Result<KeyUsage, KeyError> {
        let (hash, row) = self.live_row(key).await?;
        let h = hash.hex();
        let now = self.clock.now_ms();
        let minute = now - now % MINUTE_MS;
        let since = |minutes: u64| minute.saturating_sub((minutes - 1) * MINUTE_MS);
        let hour = self.store.usage_window(&h, since(60), TOP_PATHS).await?;
        let day = self.store.usage_window(&h, since(1440), TOP_PATHS).await?;
        let recent = self.store.recent_usage(&h, RECENT).await?;
        Ok(KeyUsage {
            key: KeyLabel {
                label: row.label,
                created: row.created_ms,
            },
            hour: hour.into(),
            day: day.into(),
            recent: recent
                .into_iter()
                .map(|r| RecentRequest {
                    ts: r.ts_ms,
                    method: r.method,
                    path: r.path,
                    status: r.status,
                })
                .collect(),
        })
    }

    /// Whether `key` is a live key (from memory: called on every request).
    pub fn is_live(&self, key: &str) -> bool {
        self.live_hash(key).is_some()
    }

    /// The hash of `key` when it is a live key.
    pub fn live_hash(&self, key: &str) -> Option<KeyHash> {
        if !well_formed(key) {
            return None;
        }
        let hash = KeyHash::of(key);
        self.live.contains(&hash).then_some(hash)
    }

    /// Records a request made with a live key; never waits on the store.
    /// `path` is the matched route template (or [`UNKNOWN_PATH`]).
    pub fn record(&self, key: KeyHash, ts_ms: u64, method: &str, path: &str, status: u16) {
        self.recorder.push(key, ts_ms, method, path, status);
    }

    /// Writes the buffered usage; how many records were written. When it
    /// returns `Ok`, every request recorded before the call is in the
    /// store (a write already under way is waited for).
    pub async fn flush(&self) -> Result<usize, KeyError> {
        let _one_at_a_time = self.flushing.lock().await;
        let batch: Vec<KeyUsageRecord> = self.recorder.take();
        if batch.is_empty() {
            return Ok(0);
        }
        match self.store.record_usage(&batch, RECENT).await {
            Ok(()) => Ok(batch.len()),
            Err(e) => {
                self.recorder.put_back(batch);
                Err(e.into())
            }
        }
    }

    /// Brings the live keys up to date with the store.
    pub async fn refresh(&self) -> Result<(), KeyError> {
        self.live
            .refresh(self.store.as_ref(), self.clock.now_ms())
            .await
    }

    /// Forgets usage older than [`RETENTION_MS`]; how many rows went.
    pub async fn prune(&self) -> Result<u64, KeyError> {
        let before = self.clock.now_ms().saturating_sub(RETENTION_MS);
        Ok(self.store.prune_usage(before - before % MINUTE_MS).await?)
    }

    /// Flushes usage, refreshes the live keys and prunes old usage on
    /// their periods until `stop` resolves, then flushes once more.
    pub async fn run(self: Arc<Self>, stop: impl Future<Output = ()>) {
        use tokio::time::{interval, MissedTickBehavior};
        let mut ticks = [FLUSH_EVERY, REFRESH_EVERY, PRUNE_EVERY].map(|p| {
            let mut t = interval(p);
            t.set_missed_tick_behavior(MissedTickBehavior::Delay);
            t
        });
        let [flush, refresh, prune] = &mut ticks;
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => break,
                _ = self.recorder.full() => self.flush_logged().await,
                _ = flush.tick() => self.flush_logged().await,
                _ = refresh.tick() => {
                    if let Err(e) = self.refresh().await {
                        tracing::warn!(error = %e, "refreshing the live developer keys failed");
                    }
                }
                _ = prune.tick() => {
                    if let Err(e) = self.prune().await {
                        tracing::warn!(error = %e, "pruning key usage failed");
                    }
                }
            }
        }
        self.flush_logged().await;
    }

    async fn flush_logged(&self) {
        if let Err(e) = self.flush().await {
            tracing::warn!(error = %e, "writing key usage failed; kept for the next write");
        }
        let dropped = self.recorder.take_dropped();
        if dropped > 0 {
            tracing::warn!(dropped, "key usage buffer full: records dropped");
        }
    }
}

/// The feature's [`relay_feature::Start`]: loads the live keys, starts
/// the `keys` job ([`KeyService::run`]) and leaves `Arc<KeyService>` in
/// the handles.
fn start<'a>(
    parts: &'a relay_feature::Parts,
    jobs: &'a mut relay_jobs::Jobs,
    handles: &'a mut relay_feature::Handles,
) -> futures::future::BoxFuture<'a, Result<(), relay_feature::StartError>> {
    Box::pin(async move {
        let keys = KeyService::start(Arc::new(parts.store.clone()), parts.clock.clone())
            .await
            .map_err(|e| relay_feature::StartError::new("keys", e))?;
        let keys = Arc::new(keys);
        let token = jobs.token();
        jobs.add(
            "keys",
            tokio::spawn(keys.clone().run(async move { token.cancelled().await })),
        );
        handles.insert(keys);
        Ok(())
    })
}

#[cfg(test)]
mod tests;
