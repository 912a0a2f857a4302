//! Route change notifications: push, not poll.
//!
//! Every write that changes a route ([`Store::insert_route`](crate::Store::insert_route),
//! [`Store::update_route`](crate::Store::update_route)) publishes the route's id after it commits, on an
//! in-process broadcast channel ([`RouteEvents::subscribe`]). On Postgres
//! the same transaction also runs `pg_notify('relay_routes', …)`, delivered
//! at commit to every replica: each replica listens (one connection,
//! started by its first subscriber) and republishes what other replicas
//! changed, so a stream served by one replica sees a route another replica
//! runs. A subscriber that falls behind, or a listener that reconnects, is
//! told [`RouteChange::Resync`]: read again once.
//!
//! Nothing here reads the store: a subscriber with nothing changing costs
//! no query.

use std::sync::{Arc, OnceLock};

use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

/// The Postgres channel route changes are announced on.
pub const CHANNEL: &str = "relay_routes";
/// How many changes a slow subscriber may fall behind before it is told
/// to resync.
const CAPACITY: usize = 4096;

/// One notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteChange {
    /// This route changed.
    Route(Arc<str>),
    /// Changes may have been missed: read what you follow again.
    Resync,
}

/// The broadcast of route changes (cheap to clone).
#[derive(Clone)]
pub struct RouteEvents {
    inner: Arc<Inner>,
}

struct Inner {
    tx: broadcast::Sender<RouteChange>,
    /// Marks this replica's own notifications, which it has published
    /// already.
    origin: String,
    /// Postgres only: where to listen (kept out of `Debug`: it may carry a
    /// password).
    listen_url: Option<String>,
    listening: OnceLock<()>,
}

impl std::fmt::Debug for RouteEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteEvents")
            .field("subscribers", &self.inner.tx.receiver_count())
            .field("postgres", &self.inner.listen_url.is_some())
            .finish()
    }
}

impl RouteEvents {
    /// Events for one store; `listen_url` is the Postgres URL to listen on
    /// for other replicas' changes (none on SQLite).
    pub(crate) fn new(listen_url: Option<String>) -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        let origin = format!("{:016x}", rand_u64());
        Self {
            inner: Arc::new(Inner {
                tx,
                origin,
                listen_url,
                listening: OnceLock::new(),
            }),
        }
    }

    /// Follows every route change from now on (on Postgres, this replica's
    /// and the others').
    pub fn subscribe(&self) -> broadcast::Receiver<RouteChange> {
        let rx = self.inner.tx.subscribe();
        if let Some(url) = &self.inner.listen_url {
            self.inner.listening.get_or_init(|| {
                tokio::spawn(listen(self.clone(), url.clone()));
            });
        }
        rx
    }

    /// Tells subscribers that `route` changed.
    pub(crate) fn publish(&self, route: &str) {
        // No subscriber is not an error.
        let _ = self.inner.tx.send(RouteChange::Route(route.into()));
    }

    /// The `pg_notify` payload announcing `route` from this replica.
    pub(crate) fn payload(&self, route: &str) -> String {
        format!("{}:{route}", self.inner.origin)
    }

    /// Republishes another replica's notification; ignores this one's own.
    fn republish(&self, payload: &str) {
        match payload.split_once(':') {
            Some((origin, _)) if origin == self.inner.origin => {}
            Some((_, route)) => self.publish(route),
            None => {}
        }
    }
}

/// Listens on [`CHANNEL`] for as long as the process runs, reconnecting
/// after a failure (subscribers resync then: notifications sent while
/// disconnected are lost).
async fn listen(events: RouteEvents, url: String) {
    loop {
        match PgListener::connect(&url).await {
            Ok(mut l) => match l.listen(CHANNEL).await {
                Ok(()) => {
                    let _ = events.inner.tx.send(RouteChange::Resync);
                    while let Ok(n) = l.recv().await {
                        events.republish(n.payload());
                    }
                    tracing::warn!("route change listener disconnected; reconnecting");
                }
                Err(e) => tracing::warn!(error = %e, "cannot LISTEN for route changes"),
            },
            Err(e) => tracing::warn!(error = %e, "cannot connect the route change listener"),
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_replica_ignores_its_own_notifications_and_republishes_others() {
        let events = RouteEvents::new(None);
        let mut rx = events.subscribe();
        events.republish(&events.payload("rt_mine"));
        events.republish("someoneelse:rt_theirs");
        events.publish("rt_local");
        assert_eq!(
            rx.recv().await.unwrap(),
            RouteChange::Route("rt_theirs".into())
        );
        assert_eq!(
            rx.recv().await.unwrap(),
            RouteChange::Route("rt_local".into())
        );
        assert!(rx.try_recv().is_err());
    }
}
