//! `GET /simulator/requests` (simulator-only, like every `/simulator/*`
//! endpoint): the upstream API requests this simulator received — when,
//! which method and path — so a test or an operator can measure what the
//! host sends an upstream (issue 49: a rail's budget across replicas).
//! The last [`KEPT`] are kept; `?since=<epoch ms>` lists only later ones.
//! Control endpoints are not counted.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::{SystemTime, UNIX_EPOCH},
};

use axum::{
    extract::{Query, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
    routing::get,
    Json, Router,
};
use serde::Serialize;
use serde_json::json;

use crate::http::{param, Params};

/// Requests kept.
pub const KEPT: usize = 10_000;

/// One request.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Seen {
    /// When it arrived, epoch ms.
    pub at_ms: u64,
    /// Its method.
    pub method: String,
    /// Its path.
    pub path: String,
}

/// The requests of one simulator.
#[derive(Debug, Default)]
pub struct Requests {
    seen: Mutex<(u64, VecDeque<Seen>)>,
}

impl Requests {
    fn record(&self, method: &str, path: &str) {
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        if s.1.len() == KEPT {
            s.1.pop_front();
        }
        s.1.push_back(Seen {
            at_ms,
            method: method.to_string(),
            path: path.to_string(),
        });
    }

    /// How many were received in all, and the kept ones after `since_ms`.
    pub fn since(&self, since_ms: u64) -> (u64, Vec<Seen>) {
        let s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let later = s.1.iter().filter(|r| r.at_ms > since_ms).cloned().collect();
        (s.0, later)
    }
}

/// Counts every request of `api` in `log`.
pub fn counted(api: Router, log: Arc<Requests>) -> Router {
    api.layer(axum::middleware::from_fn_with_state(log, count))
}

async fn count(State(log): State<Arc<Requests>>, req: Request, next: Next) -> Response {
    log.record(req.method().as_str(), req.uri().path());
    next.run(req).await
}

async fn list(State(log): State<Arc<Requests>>, Query(q): Query<Params>) -> Response {
    let since = param(&q, "since").and_then(|s| s.parse().ok()).unwrap_or(0);
    let (total, requests) = log.since(since);
    Json(json!({"simulator": true, "total": total, "requests": requests})).into_response()
}

/// `GET /simulator/requests`.
pub fn routes(log: Arc<Requests>) -> Router {
    Router::new()
        .route("/simulator/requests", get(list))
        .with_state(log)
}
