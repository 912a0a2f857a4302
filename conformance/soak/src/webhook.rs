//! The webhook receiver: a loopback endpoint that sometimes fails (the
//! first delivery of about a third of the messages answers 500, a few later
//! ones too), recording what it answered to each `webhook-id`. At the end
//! each id must have exactly one 200 and nothing delivered after it.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use axum::{extract::State, http::HeaderMap, routing::post, Router};

/// What was answered to one message.
#[derive(Clone, Debug, Default)]
pub struct Deliveries {
    /// The statuses answered, in order.
    pub answered: Vec<u16>,
    /// When each was answered.
    pub at: Vec<std::time::Instant>,
    /// The event of the body (`event`).
    pub event: String,
    /// The route it is about (`routeId`).
    pub route: String,
}

/// The receiver's log, by `webhook-id`.
#[derive(Clone, Default)]
pub struct Receiver {
    log: Arc<Mutex<BTreeMap<String, Deliveries>>>,
    /// `http://127.0.0.1:<port>/hook`.
    pub url: String,
}

impl Receiver {
    /// Serves on a fresh loopback port.
    pub async fn start() -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/hook", listener.local_addr()?);
        let r = Receiver {
            log: Arc::default(),
            url,
        };
        let app = Router::new()
            .route("/hook", post(receive))
            .with_state(r.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(r)
    }

    /// Waits (at most `within`) until every message's last delivery was
    /// answered 200 (the hosts retry the others on their schedule) and each
    /// of `routes` (hooked, ended) was told.
    pub async fn settled(&self, within: std::time::Duration, routes: &[String]) {
        let until = std::time::Instant::now() + within;
        while std::time::Instant::now() < until {
            let log = self.log();
            let told = |r: &String| log.values().any(|d| &d.route == r);
            if log.values().all(|d| d.answered.last() == Some(&200)) && routes.iter().all(told) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
    }

    /// The log so far.
    pub fn log(&self) -> BTreeMap<String, Deliveries> {
        self.log.lock().expect("webhook log").clone()
    }
}

async fn receive(
    State(r): State<Receiver>,
    headers: HeaderMap,
    body: String,
) -> axum::http::StatusCode {
    let id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    let mut log = r.log.lock().expect("webhook log");
    let d = log.entry(id.clone()).or_default();
    d.event = v["event"].as_str().unwrap_or_default().to_string();
    d.route = v["routeId"].as_str().unwrap_or_default().to_string();
    // Deterministic per id and attempt: a third of first deliveries fail,
    // one in eight of the second, none after.
    let h = id
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    let fail = match d.answered.len() {
        0 => h % 3 == 0,
        1 => h % 8 == 0,
        _ => false,
    };
    let status = if fail { 500 } else { 200 };
    d.answered.push(status);
    d.at.push(std::time::Instant::now());
    axum::http::StatusCode::from_u16(status).expect("a status")
}
