//! The per-IP cap of MCP sessions held across replicas (`[limits] backend
//! = "store"`, issue 49): each live session also holds a place in the
//! store's `caller_places` (kind `mcp-session`, counted per client IP
//! under a per-caller lock), so N replicas give an IP
//! `limits.mcp_sessions_per_ip` sessions between them, not N times it.
//! A place lasts [`PLACE_TTL`] — longer than a session may idle — and is
//! renewed while the session is used (at most once per [`RENEW_EVERY`]);
//! a session that ends gives it back at once, and one whose replica died
//! frees it when it lapses. The host-wide total stays per process: it
//! bounds the memory each replica holds.

use std::time::Duration;

use relay_config::FailMode;
use relay_store::Store;

/// How long a place lasts unless renewed (a session idles out after 5
/// minutes).
pub const PLACE_TTL: Duration = Duration::from_secs(6 * 60);
/// A used session's place is renewed at most this often.
pub const RENEW_EVERY: Duration = Duration::from_secs(60);

const KIND: &str = "mcp-session";

/// Why the store refused a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The IP holds its cap across the replicas.
    Full,
    /// The store cannot be reached and the operator refuses what cannot
    /// be counted (`on_backend_failure = "closed"`).
    Down,
}

/// The places in the store.
#[derive(Clone, Debug)]
pub struct Places {
    store: Store,
    per_ip: usize,
    fail: FailMode,
}

impl Places {
    /// At most `per_ip` places per client in `store`; `fail` while it
    /// cannot be reached.
    pub fn new(store: Store, per_ip: usize, fail: FailMode) -> Self {
        Places {
            store,
            per_ip,
            fail,
        }
    }

    fn until(&self) -> (u64, u64) {
        let now = self.store.clock().now_ms();
        (now, now + PLACE_TTL.as_millis() as u64)
    }

    /// A place for one more session of `client` (its id), or why not;
    /// `None` when the store is down and the operator serves uncounted.
    pub async fn take(&self, client: &str) -> Result<Option<String>, Refusal> {
        let id = format!("mcp|{}", uuid::Uuid::new_v4());
        match self
            .store
            .take_place((KIND, client, &id), self.until(), self.per_ip)
            .await
        {
            Ok(Ok(())) => Ok(Some(id)),
            Ok(Err(_)) => Err(Refusal::Full),
            Err(e) => {
                tracing::warn!(error = %e, "MCP session places not counted: the store is unreachable");
                match self.fail {
                    FailMode::Open => Ok(None),
                    FailMode::Closed => Err(Refusal::Down),
                }
            }
        }
    }

    /// Gives place `id` back, in the background.
    pub fn release(&self, id: String) {
        let store = self.store.clone();
        tokio::spawn(async move {
            if let Err(e) = store.drop_place(&id).await {
                tracing::warn!(error = %e, "an MCP session's place not given back (it lapses)");
            }
        });
    }

    /// Renews place `id` for another [`PLACE_TTL`], in the background.
    pub fn renew(&self, id: String) {
        let (store, (_, until)) = (self.store.clone(), self.until());
        tokio::spawn(async move {
            if let Err(e) = store.renew_place(&id, until).await {
                tracing::warn!(error = %e, "an MCP session's place not renewed");
            }
        });
    }
}
