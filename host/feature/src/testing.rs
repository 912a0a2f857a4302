//! A feature tested in its own crate, without chains (the `test-utils`
//! feature): the host's [`Parts`] over a fresh SQLite store, and the
//! feature's routes served over a state that holds the handles its start
//! left — the path a client's request takes through the feature, without
//! the host's edge (rate limits, usage, metrics: the host's own tests
//! cover those). The fakes of the application layer a feature needs (the
//! engine's legs, the live runner) come from the crates that declare
//! those traits, under their own `test-utils` features.
//!
//! ```ignore
//! let dir = tempfile::tempdir()?;
//! let app = testing::App::start(&my_feature::feature(), testing::parts(dir.path(), config).await, handles).await?;
//! let (status, body) = app.post("/api/thing", &json!({…}), &[]).await;
//! ```

use std::{path::Path, sync::Arc};

use axum::{body::Body, http::Request, Router};
use relay_chain::reader::ChainReader;
use relay_config::HostConfig;
use relay_engine::oracle::PriceBook;
use relay_jobs::{CancellationToken, Jobs};
use relay_store::Store;
use serde_json::Value;
use tower::ServiceExt;

use crate::{start_all, Feature, Handles, HasHandles, Parts, StartError};

/// The host's parts for a test: `config`, a fresh SQLite store in `dir`,
/// the system clock, no relayer key and no owner token (set
/// [`Parts::owner`] to test the operator's credential). Nothing dials a
/// chain until something reads one.
pub async fn parts(dir: &Path, config: HostConfig) -> Parts {
    let url = format!("sqlite://{}?mode=rwc", dir.join("feature.db").display());
    let clock = relay_types::clock::system();
    let store = Store::connect_with_clock(&url, clock.clone())
        .await
        .unwrap_or_else(|e| panic!("a test store at {url}: {e}"));
    let config = Arc::new(config);
    let reader = Arc::new(ChainReader::new(&config));
    let prices = Arc::new(PriceBook::new(
        config.clone(),
        reader.clone(),
        clock.clone(),
    ));
    Parts {
        config,
        store,
        reader,
        prices,
        senders: None,
        clock,
        owner: None,
    }
}

/// The state a feature's routes are served over in a test: the handles.
#[derive(Clone, Debug, Default)]
pub struct TestState(Handles);

impl HasHandles for TestState {
    fn handles(&self) -> &Handles {
        &self.0
    }
}

/// One started feature and its routes.
pub struct App {
    router: Router,
    /// What the start left (the feature's service, to look behind the
    /// HTTP answers).
    pub handles: Handles,
    /// Its jobs (cancelled when the app is dropped).
    pub jobs: Jobs,
}

impl Drop for App {
    fn drop(&mut self) {
        self.jobs.token().cancel();
    }
}

impl App {
    /// Starts `feature` over `parts` with `handles` (what the host would
    /// have left before it: the application layer's adapters) and serves
    /// its routes.
    pub async fn start(
        feature: &Feature<TestState>,
        parts: Parts,
        handles: Handles,
    ) -> Result<App, StartError> {
        let mut jobs = Jobs::new(CancellationToken::new());
        let handles = start_all(std::slice::from_ref(feature), &parts, &mut jobs, handles).await?;
        let state = TestState(handles.clone());
        let (router, _doc) = (feature.routes)(&state).split_for_parts();
        Ok(App {
            router: router.with_state(state),
            handles,
            jobs,
        })
    }

    /// Sends one request; the status and the body as JSON (`Null` when
    /// empty, `{"text": …}` when not JSON).
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> (u16, Value) {
        let mut req = Request::builder().method(method).uri(path);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let body = match body {
            Some(b) => {
                req = req.header("content-type", "application/json");
                Body::from(b.to_string())
            }
            None => Body::empty(),
        };
        let resp = self
            .router
            .clone()
            .oneshot(req.body(body).expect("a well-formed test request"))
            .await
            .unwrap_or_else(|e| match e {});
        let status = resp.status().as_u16();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .expect("the answer's body");
        let json = match bytes.is_empty() {
            true => Value::Null,
            false => serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| serde_json::json!({"text": String::from_utf8_lossy(&bytes)})),
        };
        (status, json)
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> (u16, Value) {
        self.send("POST", path, Some(body), headers).await
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.send("GET", path, None, &[]).await
    }
}
