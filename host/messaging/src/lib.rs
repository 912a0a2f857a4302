//! relay-messaging: sealed messaging v2 (spec §4.10, §5.8, §6.4, §8.2,
//! §9.2), the server side — the whole feature in one home: its table
//! (`[messaging]`, [`config`]), its schema ([`store`], migration 0019),
//! the release grid and cover decoys ([`feed`]), mailbox publications
//! ([`mailbox`]), names ([`names`]), Plus passes ([`passes`]), the relay
//! directory ([`relays`]),
//! the witness log
//! ([`witness`]), its errorCodes
//! ([`errors`]) and the HTTP adapter with its rate-limit buckets
//! ([`http::feature`]). The client side — sealing, scanning, opening — is
//! `relay-sealed`; the server never holds a message key and cannot read a
//! row.
//!
//! What the host learns, and what it does not:
//! - a row is three opaque fields of one of two sizes; it never learns the
//!   sender, the recipient, the text or the thread. It keeps no IP, no
//!   key and no arrival time finer than the row's release slot;
//! - rows are released on the 60,000 ms grid, shuffled, among Poisson
//!   cover decoys, so the feed says nothing of arrival order within a
//!   minute and a reader cannot tell a real row from a decoy;
//! - a network observer of a sender sees a POST of one of two sizes to
//!   `send`, and of a reader a GET of the public feed (which every reader
//!   fetches whole); recipients scan locally with their viewing key.
//!   What the observer does learn: that an IP sends (and how many rows,
//!   hence the message's length in frames), and when — sending through
//!   the privacy lane hides the IP;
//! - mailbox lookups by address (`mailbox/{addressOrName}`) tell the host
//!   whom a reader is about to write to; the directory, the same bytes for
//!   every reader, does not.

pub mod config;
pub mod errors;
pub mod feed;
pub mod http;
pub mod mailbox;
pub mod names;
pub mod passes;
pub mod relays;
pub mod sales;
pub mod store;
pub mod witness;

pub use config::{MessagingConfig, SECTION};

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use futures::future::BoxFuture;
use passes::{PassError, Passes};
use relay_chain::signer::RelayerSigner;
use relay_feature::{Handles, Parts, StartError};
use relay_jobs::Jobs;
use relay_sealed::{message::Row, witness::SigningKey, SealError};
use relay_store::StoreError;
use relay_types::SharedClock;
use store::{FeedRow, Inserted, Messages};
use witness::Witness;

/// The purpose the witness key is derived for from the relayer key.
pub const WITNESS_KEY_PURPOSE: &str = "messages/v2/witness";
/// The purpose the Plus pass secret (issuer keys, caller tags) is derived
/// for from the relayer key.
pub const PASSES_PURPOSE: &str = "messages/v2/passes";

/// Why a send is refused.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// A field is malformed.
    #[error(transparent)]
    Row(#[from] SealError),
    /// The ephemeral key was used before.
    #[error("ephemeralPubKey: already sent; every row needs a fresh one-time handle")]
    Replayed,
    /// The pass does not verify.
    #[error(transparent)]
    Pass(#[from] PassError),
    /// The pass was spent before.
    #[error("pass: already spent; a Plus pass is accepted once")]
    PassSpent,
    /// This caller's free sends for the minute are used up.
    #[error(
        "{per_minute} sends a minute without a Plus pass from this IP; this minute's are used"
    )]
    Ceiling {
        /// The free ceiling.
        per_minute: u32,
        /// Until the next minute, ms.
        retry_after_ms: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A page of the feed.
#[derive(Debug)]
pub struct Page {
    /// The rows after the cursor.
    pub rows: Vec<FeedRow>,
    /// The first number still kept (rows before it aged out).
    pub oldest: Option<u64>,
    /// The last released number.
    pub last: u64,
    /// When the next slot is released, ms.
    pub next_release_at: u64,
}

/// The ceilings `info` publishes: the shipped ones (the feature's
/// rate-limit buckets) or the operator's `[limits]` overrides of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ceilings {
    /// Sends per IP per minute at the door: the ceiling with Plus passes
    /// (the free ceiling is `[messaging] free_sends_per_minute`).
    pub sends_per_minute: u32,
    /// Mailbox publications per IP per day.
    pub publications_per_day: u32,
}

impl Ceilings {
    /// The ceilings in effect under `limits`.
    pub fn of(limits: &relay_config::LimitsConfig) -> Self {
        let per = |table: &std::collections::BTreeMap<String, u32>, bucket: &str| {
            table
                .get(bucket)
                .copied()
                .unwrap_or_else(|| http::shipped(bucket))
        };
        Ceilings {
            sends_per_minute: per(&limits.per_minute, "messages-send"),
            publications_per_day: per(&limits.per_day, "messages-publish"),
        }
    }
}

/// The messaging service.
pub struct MessagingService {
    store: Messages,
    config: MessagingConfig,
    clock: SharedClock,
    witness: Arc<Witness>,
    passes: Passes,
    sales: Option<Arc<sales::NameTill>>,
    /// The latest slot this replica saw released.
    released: AtomicU64,
    /// What `info` publishes as the ceilings.
    pub ceilings: Ceilings,
    /// The host's `[limits]` (its trusted proxies name the client IP).
    pub limits: relay_config::LimitsConfig,
}

impl std::fmt::Debug for MessagingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessagingService")
            .field("witness", &self.witness)
            .finish_non_exhaustive()
    }
}

impl MessagingService {
    /// The service over `store` (migrated), signing the witness log with
    /// `key` and deriving Plus pass keys from `passes_seed`.
    pub fn new(
        store: Messages,
        config: MessagingConfig,
        clock: SharedClock,
        (key, passes_seed): (SigningKey, [u8; 32]),
    ) -> Self {
        let witness = Arc::new(Witness::new(
            store.clone(),
            key,
            config.witness_origin.clone(),
        ));
        let passes = Passes::new(config.passes.clone(), store.clone(), passes_seed);
        MessagingService {
            passes,
            store,
            config,
            clock,
            witness,
            sales: None,
            released: AtomicU64::new(0),
            ceilings: Ceilings::of(&relay_config::LimitsConfig::default()),
            limits: relay_config::LimitsConfig::default(),
        }
    }

    /// The table in effect.
    pub fn config(&self) -> &MessagingConfig {
        &self.config
    }

    /// The witness log.
    pub fn witness(&self) -> &Witness {
        &self.witness
    }

    /// The names' till, when this host takes payment for names
    /// ([`sales`]).
    pub fn sales(&self) -> Option<&sales::NameTill> {
        self.sales.as_deref()
    }

    /// Time now, ms.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// The Plus pass issuer.
    pub fn passes(&self) -> &Passes {
        &self.passes
    }

    /// Stores `row` for the next slot, spending `pass` when one is given
    /// (the row and the spend in one transaction) or else counting the
    /// send against the free ceiling of the client `ip`; when the row
    /// becomes visible.
    pub async fn send(&self, row: &Row, pass: Option<&str>, ip: &str) -> Result<u64, SendError> {
        row.decode()?;
        let now = self.now_ms();
        let release = feed::release_at(now);
        let Some(pass) = pass else {
            let per_minute = self.config.free_sends_per_minute;
            let caller = self.passes.caller(ip);
            let count = store::Count {
                counter: "sends",
                caller: &caller,
                window: now / 60_000,
            };
            if self
                .store
                .count(count, (1, 0), (per_minute, 0))
                .await?
                .is_err()
            {
                let retry_after_ms = 60_000 - now % 60_000;
                return Err(SendError::Ceiling {
                    per_minute,
                    retry_after_ms,
                });
            }
            return match self.store.insert_row(row, release).await? {
                true => Ok(release),
                false => Err(SendError::Replayed),
            };
        };
        let spend = self.passes.check(&self.witness, pass, now).await?;
        match self
            .store
            .insert_row_spending(row, release, (&spend.nonce, spend.epoch))
            .await?
        {
            Inserted::Stored => Ok(release),
            Inserted::Replayed => Err(SendError::Replayed),
            Inserted::PassSpent => Err(SendError::PassSpent),
        }
    }

    /// Releases the slot whose time has come, if nobody did yet (with its
    /// decoys); the rows it released.
    pub async fn release_due(&self) -> Result<Option<u64>, StoreError> {
        let slot = feed::due_slot(self.now_ms());
        if slot <= self.released.load(Ordering::Acquire) {
            return Ok(None);
        }
        let (waiting, large) = self.store.pending(slot, feed::LARGE_CT_B64).await?;
        let share = match waiting {
            0 => 0.25,
            n => large as f64 / n as f64,
        };
        let n = feed::poisson(self.config.decoys_per_minute, &mut rand::rng());
        let decoys = tokio::task::spawn_blocking(move || feed::decoys(n, share))
            .await
            .unwrap_or_default();
        let done = self.store.release(slot, &decoys).await?;
        self.released.fetch_max(slot, Ordering::AcqRel);
        if let Some(n) = done {
            tracing::debug!(slot, rows = n, "messages released");
        }
        Ok(done)
    }

    /// Released rows after `since`, at most `limit` (the due slot is
    /// released first).
    pub async fn feed(&self, since: u64, limit: u32) -> Result<Page, StoreError> {
        self.release_due().await?;
        let rows = self.store.feed(since, limit).await?;
        let bounds = self.store.feed_bounds().await?;
        Ok(Page {
            rows,
            oldest: bounds.map(|b| b.0),
            last: bounds.map_or(0, |b| b.1),
            next_release_at: feed::due_slot(self.now_ms()) + feed::GRID_MS,
        })
    }

    /// Drops released rows past the retention window, and what the
    /// passes no longer need.
    pub async fn prune(&self) -> Result<u64, StoreError> {
        let keep_ms = u64::from(self.config.retention_days) * 86_400_000;
        let now = self.now_ms();
        self.passes.prune(now).await?;
        self.store.prune(now.saturating_sub(keep_ms)).await
    }

    /// The witness key and the Plus pass secret: derived from the relayer
    /// key when the host has one (stable across restarts and replicas);
    /// otherwise new for this process, with a warning.
    fn secrets(relayer: Option<&RelayerSigner>) -> (SigningKey, [u8; 32]) {
        match relayer {
            Some(r) => (
                SigningKey::from_bytes(&r.derive_secret(WITNESS_KEY_PURPOSE)),
                r.derive_secret(PASSES_PURPOSE),
            ),
            None => {
                tracing::warn!("no relayer key: the messaging witness key and Plus pass keys are new for this process; clients pinning them will see them change on restart");
                (SigningKey::from_bytes(&rand::random()), rand::random())
            }
        }
    }
}

/// How often the release job looks at the clock.
/// The names' till ([`sales`]), its orders' migration applied and its
/// resume job started (every `[messaging.names] resume_interval_ms`; at
/// once, so a restarted host finishes what its predecessor left as soon
/// as the lease lapses); `None` when this host takes no payment for names.
async fn start_sales(
    parts: &Parts,
    jobs: &mut Jobs,
    service: &MessagingService,
) -> Result<Option<Arc<sales::NameTill>>, StoreError> {
    let cfg = &service.config.names;
    let Some(till) = sales::till(parts, cfg, service.witness.clone()) else {
        return Ok(None);
    };
    let orders = relay_x402::orders::Orders::from(parts.store.clone());
    orders.migrate(relay_x402::orders::MIGRATIONS).await?;
    let till = Arc::new(till);
    if cfg.resume_interval_ms > 0 {
        let every = std::time::Duration::from_millis(cfg.resume_interval_ms);
        let t = till.clone();
        jobs.repeat("name-orders", every, move || {
            let t = t.clone();
            async move {
                t.resume().await;
            }
        });
    }
    Ok(Some(till))
}

const RELEASE_TICK: std::time::Duration = std::time::Duration::from_secs(1);
/// How often aged rows are dropped.
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(3_600);

/// The feature's start: reads `[messaging]`; when enabled, applies the
/// migration, builds the service (the witness key derived from the
/// relayer key the host left in the handles), starts the release job
/// (every second: a slot is released within a second of its time even
/// when nobody reads) and the prune job, and leaves
/// `Option<Arc<MessagingService>>`.
pub fn start<'a>(
    parts: &'a Parts,
    jobs: &'a mut Jobs,
    handles: &'a mut Handles,
) -> BoxFuture<'a, Result<(), StartError>> {
    Box::pin(async move {
        let fail = |e: Box<dyn std::error::Error + Send + Sync>| StartError::new("messaging", e);
        let config = MessagingConfig::from_host(&parts.config).map_err(|e| fail(e.into()))?;
        if !config.enabled {
            handles.insert(None::<Arc<MessagingService>>);
            return Ok(());
        }
        let store = Messages::from(parts.store.clone());
        store
            .migrate(store::MIGRATIONS)
            .await
            .map_err(|e| fail(e.into()))?;
        let relayer = handles.get::<Option<RelayerSigner>>().flatten();
        let secrets = MessagingService::secrets(relayer.as_ref());
        let mut service = MessagingService::new(store, config, parts.clock.clone(), secrets);
        service.ceilings = Ceilings::of(&parts.config.limits);
        service.limits = parts.config.limits.clone();
        service.sales = start_sales(parts, jobs, &service)
            .await
            .map_err(|e| fail(e.into()))?;
        let service = Arc::new(service);
        let s = service.clone();
        jobs.repeat("messages-release", RELEASE_TICK, move || {
            let s = s.clone();
            async move {
                if let Err(e) = s.release_due().await {
                    tracing::warn!(error = %e, "messages not released; the next tick retries");
                }
            }
        });
        let s = service.clone();
        jobs.repeat("messages-prune", PRUNE_EVERY, move || {
            let s = s.clone();
            async move {
                match s.prune().await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(rows = n, "aged messages dropped"),
                    Err(e) => tracing::warn!(error = %e, "aged messages not dropped"),
                }
            }
        });
        handles.insert(Some(service));
        Ok(())
    })
}

#[cfg(test)]
mod tests;
