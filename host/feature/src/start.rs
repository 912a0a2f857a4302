//! How a feature starts: from the host's shared [`Parts`] it builds its
//! service, applies its migrations, adds its jobs and leaves what its
//! routes need in [`Handles`]. The binary starts every feature of its
//! list in order ([`start_all`]); a feature added later starts the same
//! way, with no line in the binary's start-up.

use std::sync::Arc;

use futures::future::BoxFuture;
use relay_chain::{reader::ChainReader, sender::Senders};
use relay_config::HostConfig;
use relay_engine::oracle::PriceBook;
use relay_jobs::Jobs;
use relay_store::Store;
use relay_types::SharedClock;
use tracing::Instrument;

use crate::Feature;

/// What every feature starts from: the host's shared parts.
#[derive(Clone)]
pub struct Parts {
    /// Host configuration (a feature reads its own table from
    /// `config.sections`).
    pub config: Arc<HostConfig>,
    /// The store (a feature applies its own migrations to it).
    pub store: Store,
    /// Read-only chain access.
    pub reader: Arc<ChainReader>,
    /// USD prices.
    pub prices: Arc<PriceBook>,
    /// The relayer's senders; `None`: the host runs without a key.
    pub senders: Option<Senders>,
    /// Time.
    pub clock: SharedClock,
    /// The SHA-256 of the operator's owner token (`None`: nobody has the
    /// operator's authority): what [`crate::operator::is_operator`]
    /// checks a request against.
    pub owner: Option<crate::operator::OwnerTokenHash>,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("sends", &self.senders.is_some())
            .finish_non_exhaustive()
    }
}

/// What started features leave for the adapters: at most one value per
/// type (a feature's handle, e.g. its service or `None` when it is off).
#[derive(Clone, Debug, Default)]
pub struct Handles(axum::http::Extensions);

impl Handles {
    /// Leaves `value` (replacing one of the same type).
    pub fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.0.insert(value);
    }

    /// The value of type `T`, when a feature left one.
    pub fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.0.get::<T>().cloned()
    }
}

/// A host state that carries the started features' [`Handles`] (what a
/// feature's routes read their handle from).
pub trait HasHandles {
    /// The handles.
    fn handles(&self) -> &Handles;
}

/// Why a feature did not start.
#[derive(Debug, thiserror::Error)]
#[error("{feature} did not start: {source}")]
pub struct StartError {
    /// The feature.
    pub feature: &'static str,
    /// Why.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl StartError {
    /// `feature` failed with `source`.
    pub fn new(
        feature: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        StartError {
            feature,
            source: source.into(),
        }
    }
}

/// Why a [`Service`] feature did not start: what every such feature can
/// fail on.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Its configuration table is invalid.
    #[error(transparent)]
    Config(#[from] relay_config::ConfigError),
    /// Its migrations did not apply.
    #[error(transparent)]
    Store(#[from] relay_store::StoreError),
    /// The host left no handle of a kind it needs (an adapter of the
    /// application layer, e.g. the engine's delivery legs).
    #[error("the host left no {0} for the feature")]
    MissingHandle(&'static str),
}

/// A feature's start: builds it over the parts, adds its jobs, leaves its
/// handle.
pub type Start =
    for<'a> fn(&'a Parts, &'a mut Jobs, &'a mut Handles) -> BoxFuture<'a, Result<(), StartError>>;

/// A feature that starts as one service, or as none when its
/// configuration leaves it off. Its [`Start`] is [`service::<Self>`]:
/// it leaves `Option<Arc<Self>>` in the handles, which its routes read.
pub trait Service: Send + Sync + Sized + 'static {
    /// The feature's name (what a start error names).
    const FEATURE: &'static str;
    /// Why it may not start.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Starts it over the host's parts (its migrations, its jobs); `None`
    /// when it is off.
    fn start(
        parts: &Parts,
        jobs: &mut Jobs,
    ) -> impl std::future::Future<Output = Result<Option<Arc<Self>>, Self::Error>> + Send;
}

/// The [`Start`] of a [`Service`] feature: starts it and leaves
/// `Option<Arc<S>>` in the handles.
pub fn service<'a, S: Service>(
    parts: &'a Parts,
    jobs: &'a mut Jobs,
    handles: &'a mut Handles,
) -> BoxFuture<'a, Result<(), StartError>> {
    Box::pin(async move {
        let started = S::start(parts, jobs)
            .await
            .map_err(|e| StartError::new(S::FEATURE, e))?;
        handles.insert(started);
        Ok(())
    })
}

/// Starts every feature of `features` that has a start, in order, over
/// what the host itself leaves them in `handles` (the application
/// layer's adapters a feature reaches the engine through, e.g. the yield
/// account's delivery legs); a feature may read what one before it left.
pub async fn start_all<S>(
    features: &[Feature<S>],
    parts: &Parts,
    jobs: &mut Jobs,
    mut handles: Handles,
) -> Result<Handles, StartError> {
    for f in features {
        if let Some(start) = f.start {
            let span = tracing::info_span!("feature_start", feature = f.name);
            start(parts, jobs, &mut handles).instrument(span).await?;
            tracing::debug!(feature = f.name, "feature started");
        }
    }
    Ok(handles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_jobs::CancellationToken;
    use utoipa_axum::router::OpenApiRouter;

    fn feature(name: &'static str, start: Option<Start>) -> Feature<()> {
        Feature {
            name,
            home: "host/feature",
            spec: "",
            section: None,
            routes: |_| OpenApiRouter::new(),
            limits: &[],
            errors: &[],
            start,
        }
    }

    fn leaves_a_handle<'a>(
        parts: &'a Parts,
        jobs: &'a mut Jobs,
        handles: &'a mut Handles,
    ) -> BoxFuture<'a, Result<(), StartError>> {
        Box::pin(async move {
            let _ = parts.store.backend();
            handles.insert(7u32);
            jobs.repeat("a-job", std::time::Duration::from_secs(3_600), || async {});
            Ok(())
        })
    }

    fn cannot_start<'a>(
        _: &'a Parts,
        _: &'a mut Jobs,
        _: &'a mut Handles,
    ) -> BoxFuture<'a, Result<(), StartError>> {
        Box::pin(async { Err(StartError::new("broken", "its table is invalid")) })
    }

    async fn parts(dir: &tempfile::TempDir) -> Parts {
        crate::testing::parts(dir.path(), HostConfig::default()).await
    }

    #[tokio::test]
    async fn features_start_over_the_parts_leave_handles_and_jobs_and_a_failure_names_its_feature()
    {
        let dir = tempfile::tempdir().unwrap();
        let parts = parts(&dir).await;
        let mut jobs = Jobs::new(CancellationToken::new());
        let list = [feature("a", Some(leaves_a_handle)), feature("b", None)];
        let handles = start_all(&list, &parts, &mut jobs, Handles::default())
            .await
            .unwrap();
        assert_eq!(handles.get::<u32>(), Some(7));
        assert_eq!(handles.get::<u64>(), None);
        assert_eq!(jobs.names(), ["a-job"]);

        let list = [
            feature("broken", Some(cannot_start)),
            feature("a", Some(leaves_a_handle)),
        ];
        let e = start_all(&list, &parts, &mut jobs, Handles::default())
            .await
            .unwrap_err();
        assert_eq!(e.feature, "broken");
        assert!(e.to_string().contains("its table is invalid"), "{e}");
        assert_eq!(jobs.names(), ["a-job"], "nothing after the failure started");
        jobs.shutdown().await;
    }
}
