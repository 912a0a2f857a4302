//! relay-privacy: the privacy lane (spec §4.11, §8.2) — the whole feature
//! in one home: its table (`[privacy]`, [`config`]), the gateway's keys
//! ([`keys`]), the fixed sizes ([`pad`]), the allowlist ([`allow`]), the
//! RFC 9458 gateway ([`gateway`]), the devnet's oblivious relay
//! ([`relay`]), the client the CLI and the local tool server send through
//! ([`client`]), its errorCodes ([`errors`]) and the HTTP adapter with its
//! rate-limit buckets ([`http::feature`]).
//!
//! Who learns what: the relay sees the client's address and an opaque
//! message of a fixed size, never what it asks; the gateway reads the
//! request but sees only the relay's connection, never the client's
//! address, and neither logs nor stores the outer request's address or
//! headers. Every request is 16,384 bytes (or a multiple) inside its
//! encapsulation and every response 8,192 (or a multiple), so sizes tell
//! a watcher of either hop nothing but a size class. What the lane does
//! not hide: what the inner request itself says (an execute names its
//! wallet and recipient, and those go on chain), timing, and that a
//! client uses the lane at all — the no-op (`GET /api/privacy/noop`) lets
//! a client send at a constant rate to blur the last two.

pub mod allow;
pub mod client;
pub mod config;
pub mod conformance;
pub mod coverproof;
pub mod errors;
pub mod gateway;
pub mod http;
pub mod keys;
pub mod pad;
pub mod policy;
pub mod relay;
pub mod store;
#[cfg(test)]
mod vectors;

pub use config::{PrivacyConfig, SECTION};

use std::sync::{atomic::AtomicU64, Arc};

use futures::future::BoxFuture;
use relay_chain::signer::RelayerSigner;
use relay_feature::{Handles, Parts, StartError};
use relay_jobs::Jobs;
use relay_messaging::MessagingService;
use relay_types::SharedClock;

use gateway::{Gateway, Inner};
use keys::{EpochKeys, KeyRing};

/// The purpose the gateway's key seed is derived for from the relayer key.
pub const KEYS_PURPOSE: &str = "privacy/ohttp/keys";
/// The purpose the policy key (the policy log's and the cover proof's
/// signatures) is derived for from the relayer key.
pub const POLICY_PURPOSE: &str = "privacy/policy";

/// The privacy lane's service.
pub struct PrivacyService {
    ring: Arc<KeyRing>,
    /// The gateway.
    pub gateway: Gateway,
    witness: Option<Arc<MessagingService>>,
    clock: SharedClock,
    config: PrivacyConfig,
    store: store::Privacy,
    policy_key: relay_sealed::witness::SigningKey,
    /// The promise values the lane runs with (those in force at start).
    running: policy::Values,
    started_ms: u64,
    /// When the replay window's prune last ran, epoch ms.
    last_prune: Arc<AtomicU64>,
}

impl std::fmt::Debug for PrivacyService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivacyService").finish_non_exhaustive()
    }
}

/// Why the keys cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    /// The witness log could not take them.
    #[error("the key configurations could not be logged in the witness log: {0}")]
    Witness(String),
}

impl PrivacyService {
    /// The lane's configuration.
    pub fn config(&self) -> &PrivacyConfig {
        &self.config
    }

    /// The current epoch's keys, each logged in the witness log before it
    /// is served (when this host keeps one: sealed messaging on).
    pub async fn keys(&self) -> Result<Arc<EpochKeys>, KeysError> {
        Ok(self.witnessed_keys().await?.0)
    }

    /// [`Self::keys`], with each configuration's witness log entry (its
    /// number and the exact body whose hash is the entry's `b`; none
    /// without a witness log).
    pub async fn witnessed_keys(&self) -> Result<(Arc<EpochKeys>, Vec<(u64, String)>), KeysError> {
        let now = self.clock.now_ms();
        let keys = self.ring.keys(self.ring.epoch_at(now));
        let mut logged = Vec::new();
        if let Some(m) = &self.witness {
            for e in &keys.entries {
                let body = serde_json::to_string(e).expect("a key entry serializes");
                let entry = m
                    .witness()
                    .log_key(&e.id, body, now)
                    .await
                    .map_err(|e| KeysError::Witness(e.to_string()))?;
                logged.push(entry);
            }
        }
        Ok((keys, logged))
    }

    /// Whether every key configuration of the current epoch is in the
    /// witness log exactly as served (false without a witness log).
    pub async fn keys_witnessed(&self) -> bool {
        let Some(m) = &self.witness else {
            return false;
        };
        let keys = self.ring.keys(self.ring.epoch_at(self.clock.now_ms()));
        for e in &keys.entries {
            let served = serde_json::to_string(e).expect("a key entry serializes");
            match m.witness().logged_key(&e.id).await {
                Ok(Some((_, logged))) if logged == served => {}
                _ => return false,
            }
        }
        true
    }

    /// When the next key epoch starts, epoch ms.
    pub fn next_rotation_ms(&self) -> u64 {
        let epoch_ms = self.ring.epoch_ms();
        (self.clock.now_ms() / epoch_ms + 1) * epoch_ms
    }

    /// The policy log as stored, and its public key.
    pub async fn policy_log(
        &self,
    ) -> Result<(Vec<store::PolicyRow>, relay_sealed::witness::VerifyingKey), relay_store::StoreError>
    {
        Ok((self.store.policy().await?, self.policy_key.verifying_key()))
    }

    /// The promise values the lane runs with.
    pub fn running(&self) -> &policy::Values {
        &self.running
    }

    /// The cover proof now, with `route`'s inclusion when asked.
    pub async fn cover_proof(
        &self,
        route: Option<&str>,
    ) -> Result<coverproof::CoverProof, relay_store::StoreError> {
        let window = self.config.cover_window_hours * 3_600_000;
        coverproof::prove(
            &self.store,
            &self.policy_key,
            (self.clock.now_ms(), window),
            route,
        )
        .await
    }
}

/// What the lane runs with: the configuration's values, held to the ones
/// in force where the log says a loosening has not taken effect yet.
fn running_config(config: &PrivacyConfig, in_force: &policy::Values) -> PrivacyConfig {
    let held =
        |id: &str, configured: u64| in_force.get(id).map_or(configured, |v| configured.min(*v));
    PrivacyConfig {
        key_epoch_hours: held("ohttp.keyEpochHours", config.key_epoch_hours),
        replay_window_ms: held("ohttp.replayWindowMs", config.replay_window_ms),
        notice_days: in_force
            .get("policy.noticeDays")
            .map_or(config.notice_days, |v| config.notice_days.max(*v as u32)),
        ..config.clone()
    }
}

/// The feature's start: reads `[privacy]`; when enabled and the host has
/// a relayer key (the key seed is derived from it; without one the lane
/// stays off), builds the gateway over the host's services (an [`Inner`]
/// the router is set into once built), starts the replay window's prune
/// job and leaves `Option<Arc<PrivacyService>>` and the [`Inner`].
pub fn start<'a>(
    parts: &'a Parts,
    jobs: &'a mut Jobs,
    handles: &'a mut Handles,
) -> BoxFuture<'a, Result<(), StartError>> {
    Box::pin(async move {
        let fail = |e: Box<dyn std::error::Error + Send + Sync>| StartError::new("privacy", e);
        let config = PrivacyConfig::from_host(&parts.config).map_err(|e| fail(e.into()))?;
        let relayer = handles.get::<Option<RelayerSigner>>().flatten();
        let inner = Inner::default();
        handles.insert(inner.clone());
        let Some(relayer) = relayer.filter(|_| config.enabled) else {
            handles.insert(None::<Arc<PrivacyService>>);
            return Ok(());
        };
        let store = store::Privacy::from(parts.store.clone());
        store
            .migrate(store::MIGRATIONS)
            .await
            .map_err(|e| fail(e.into()))?;
        let policy_key =
            relay_sealed::witness::SigningKey::from_bytes(&relayer.derive_secret(POLICY_PURPOSE));
        let now = parts.clock.now_ms();
        let log = policy::sync(&store, &policy_key, &policy::promised(&config), now)
            .await
            .map_err(|e| fail(e.into()))?;
        let config = running_config(&config, &policy::effective(&log, now));
        let ring = Arc::new(KeyRing::new(
            relayer.derive_secret(KEYS_PURPOSE),
            config.epoch_ms(),
        ));
        let gateway = Gateway::new(
            ring.clone(),
            parts.store.clone(),
            inner,
            (parts.clock.clone(), config.replay_window_ms),
        );
        let last_prune = Arc::new(AtomicU64::new(0));
        let (pruner, clock, stamp) = (parts.store.clone(), parts.clock.clone(), last_prune.clone());
        jobs.repeat("ohttp-replay-prune", PRUNE_EVERY, move || {
            let (store, clock, stamp) = (pruner.clone(), clock.clone(), stamp.clone());
            async move {
                match store.prune_places(clock.now_ms()).await {
                    Ok(_) => stamp.store(clock.now_ms(), std::sync::atomic::Ordering::Relaxed),
                    Err(e) => {
                        tracing::warn!(error = %e, "the replay window's lapsed marks not pruned")
                    }
                }
            }
        });
        let service = PrivacyService {
            ring,
            gateway,
            witness: handles.get::<Option<Arc<MessagingService>>>().flatten(),
            clock: parts.clock.clone(),
            running: policy::promised(&config),
            config,
            store,
            policy_key,
            started_ms: now,
            last_prune,
        };
        // the epoch's keys are in the witness log before anyone asks
        if let Err(e) = service.keys().await {
            tracing::warn!(error = %e, "the gateway's keys are not logged yet; the first fetch retries");
        }
        handles.insert(Some(Arc::new(service)));
        Ok(())
    })
}

/// How often the replay window's lapsed marks are dropped.
pub(crate) const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);
