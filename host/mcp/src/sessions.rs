//! Caps on the hosted endpoint's MCP sessions (issue 40): each live session
//! holds a worker task and its buffers in memory (about 60 KiB) until it
//! is closed or idles out (5 minutes), so an unbounded `initialize` flood
//! grows the host's memory for as long. A session is counted against the
//! IP that opened it (the rate limiter's client IP: trusted proxies,
//! IPv6 /64) from `initialize` until it ends; past
//! `limits.mcp_sessions_per_ip` for that IP, or `limits.mcp_sessions_total`
//! in all, `initialize` is answered 429 `{error, errorCode:
//! "RATE_LIMITED", retryable: true, retryAfterMs}` with `retry-after`, and
//! no session is made.
//!
//! **Refuse, not evict.** Evicting the caller's oldest idle session would
//! end a conversation an agent still holds (its next call answers 404 and
//! it must start over) to make room for one it may leak the same way; and
//! under the total cap eviction would let one IP end everyone else's. A
//! refusal leaves every live session intact and tells the caller what to
//! do: close a session (HTTP `DELETE` with `mcp-session-id`), or wait for
//! one to idle out.
//!
//! How it fits rmcp: the endpoint's middleware (`crate::hosted`) takes a
//! [`Slot`] for a request that opens a session (a POST without
//! `mcp-session-id`) before the transport sees it and lends it to the
//! request's task ([`with_slot`]); `Capped::create_session` — called in that task —
//! binds the slot to the new session id, and `Capped::close_session`
//! (called when a client deletes the session or its worker ends: idle,
//! init timeout, shutdown) gives it back. A slot no session took (a
//! refused or malformed request) is given back when the request ends.

pub mod shared;

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::Stream;
use relay_api::limits::Client;
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::streamable_http_server::{
        session::ServerSseMessage, RestoreOutcome, SessionId, SessionManager,
    },
};

/// What a refused `initialize` suggests waiting: the time a session may
/// idle before it ends is the longest; a minute is a fair first retry.
pub const RETRY_AFTER: Duration = Duration::from_secs(60);

/// Why a session was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The IP holds its cap of live sessions.
    #[error("this address holds {0} live MCP sessions, the most one address may (limits.mcp_sessions_per_ip): close one (HTTP DELETE /mcp with its mcp-session-id) or let one idle out")]
    PerIp(usize),
    /// The host holds its cap of live sessions.
    #[error("the host holds {0} live MCP sessions, the most it keeps (limits.mcp_sessions_total): retry later")]
    Total(usize),
}

/// Live sessions per IP and in total, and who opened each.
#[derive(Debug)]
pub struct SessionCaps {
    per_ip: usize,
    total: usize,
    state: Mutex<Counts>,
    /// The per-IP cap across replicas ([`shared`]), when they share.
    places: Option<shared::Places>,
}

#[derive(Debug, Default)]
struct Counts {
    /// Slots held per client (taken, bound or not).
    by_client: HashMap<Client, usize>,
    /// Each bound session.
    sessions: HashMap<SessionId, Held>,
    /// Slots held in all.
    held: usize,
}

/// A bound session: who opened it, its place in the store and when that
/// was last renewed.
#[derive(Debug)]
struct Held {
    client: Client,
    place: Option<String>,
    renewed: Instant,
}

impl SessionCaps {
    /// At most `per_ip` live sessions per client IP and `total` in all.
    pub fn new(per_ip: usize, total: usize) -> Arc<Self> {
        Self::sharing(per_ip, total, None)
    }

    /// Like [`SessionCaps::new`], the per-IP cap held across replicas in
    /// `places` when given ([`shared`]).
    pub fn sharing(per_ip: usize, total: usize, places: Option<shared::Places>) -> Arc<Self> {
        Arc::new(SessionCaps {
            per_ip,
            total,
            state: Mutex::default(),
            places,
        })
    }

    /// Takes `slot`'s place across replicas, when they share; or why not.
    pub async fn hold(&self, slot: &mut Slot) -> Result<(), shared::Refusal> {
        let (Some(places), Some(client)) = (&self.places, &slot.client) else {
            return Ok(());
        };
        slot.place = places.take(&client.to_string()).await?;
        Ok(())
    }

    /// Notes a request of session `id`: its place is renewed when due.
    pub fn touch(&self, id: &str) {
        let Some(places) = &self.places else { return };
        let mut c = self.counts();
        let due = c
            .sessions
            .get_mut(id)
            .filter(|h| h.renewed.elapsed() >= shared::RENEW_EVERY);
        if let Some(held) = due {
            held.renewed = Instant::now();
            if let Some(place) = held.place.clone() {
                places.renew(place);
            }
        }
    }

    fn release(&self, place: Option<String>) {
        if let (Some(places), Some(place)) = (&self.places, place) {
            places.release(place);
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for one more session of `client`, or why not.
    pub fn take(self: &Arc<Self>, client: Client) -> Result<Slot, Refused> {
        let mut c = self.counts();
        if c.held >= self.total {
            return Err(Refused::Total(self.total));
        }
        let mine = c.by_client.entry(client.clone()).or_default();
        if *mine >= self.per_ip {
            return Err(Refused::PerIp(self.per_ip));
        }
        *mine += 1;
        c.held += 1;
        Ok(Slot {
            caps: self.clone(),
            client: Some(client),
            place: None,
        })
    }

    /// Live (or being opened) sessions in all.
    pub fn live(&self) -> usize {
        self.counts().held
    }

    fn give_back(&self, client: &Client) {
        let mut c = self.counts();
        c.held = c.held.saturating_sub(1);
        if let Some(n) = c.by_client.get_mut(client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.by_client.remove(client);
            }
        }
    }

    fn bind(&self, mut slot: Slot, id: &SessionId) {
        if let Some(client) = slot.client.take() {
            let held = Held {
                client,
                place: slot.place.take(),
                renewed: Instant::now(),
            };
            self.counts().sessions.insert(id.clone(), held);
        }
    }

    fn ended(&self, id: &SessionId) {
        let held = self.counts().sessions.remove(id);
        if let Some(held) = held {
            self.give_back(&held.client);
            self.release(held.place);
        }
    }
}

/// One session's place under the caps; given back when dropped unless a
/// session took it.
#[derive(Debug)]
pub struct Slot {
    caps: Arc<SessionCaps>,
    client: Option<Client>,
    /// Its place in the store, when replicas share the cap.
    place: Option<String>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            self.caps.give_back(&client);
            self.caps.release(self.place.take());
        }
    }
}

tokio::task_local! {
    /// The slot lent to the request being served, for the session it opens.
    static LENT: Mutex<Option<Slot>>;
}

/// Runs `request` (the transport serving one HTTP request) with `slot`
/// lent to any session it opens.
pub async fn with_slot<F: Future>(slot: Slot, request: F) -> F::Output {
    LENT.scope(Mutex::new(Some(slot)), request).await
}

fn borrowed_slot() -> Option<Slot> {
    LENT.try_with(|s| s.lock().unwrap_or_else(|p| p.into_inner()).take())
        .ok()
        .flatten()
}

/// A session manager that opens sessions only with a slot under the caps
/// and gives the slot back when the session ends.
#[derive(Debug)]
pub struct Capped<M> {
    inner: M,
    caps: Arc<SessionCaps>,
}

impl<M> Capped<M> {
    /// `inner` under `caps`.
    pub fn new(inner: M, caps: Arc<SessionCaps>) -> Self {
        Capped { inner, caps }
    }
}

/// A session opened outside a capped request (never, on this endpoint).
#[derive(Debug, thiserror::Error)]
pub enum CappedError<E> {
    /// The inner manager failed.
    #[error(transparent)]
    Inner(E),
    /// No slot was lent to the request.
    #[error("no MCP session slot: {0}")]
    Refused(#[from] Refused),
}

impl<M: SessionManager> SessionManager for Capped<M> {
    type Error = CappedError<M::Error>;
    type Transport = M::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let slot = match borrowed_slot() {
            Some(s) => s,
            None => self.caps.take(Client::Unknown)?,
        };
        let (id, transport) = self
            .inner
            .create_session()
            .await
            .map_err(CappedError::Inner)?;
        self.caps.bind(slot, &id);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        inner(self.inner.initialize_session(id, message).await)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        inner(self.inner.has_session(id).await)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.caps.ended(id);
        inner(closed)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        inner(self.inner.create_stream(id, message).await)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        inner(self.inner.accept_message(id, message).await)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        inner(self.inner.create_standalone_stream(id).await)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        inner(self.inner.resume(id, last_event_id).await)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        inner(self.inner.restore_session(id).await)
    }
}

fn inner<T, E>(r: Result<T, E>) -> Result<T, CappedError<E>> {
    r.map_err(CappedError::Inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Client {
        Client::Ip(s.parse().unwrap())
    }

    #[test]
    fn each_ip_and_the_host_hold_at_most_their_cap() {
        let caps = SessionCaps::new(2, 3);
        let a1 = caps.take(ip("1.1.1.1")).unwrap();
        let _a2 = caps.take(ip("1.1.1.1")).unwrap();
        assert_eq!(caps.take(ip("1.1.1.1")).unwrap_err(), Refused::PerIp(2));
        let _b = caps.take(ip("2.2.2.2")).unwrap();
        assert_eq!(caps.take(ip("3.3.3.3")).unwrap_err(), Refused::Total(3));
        drop(a1);
        assert_eq!(caps.live(), 2, "an unused slot is given back");
        assert!(caps.take(ip("1.1.1.1")).is_ok());
    }

    #[test]
    fn a_bound_slot_is_held_until_its_session_ends() {
        let caps = SessionCaps::new(1, 10);
        let id: SessionId = "s-1".to_string().into();
        caps.bind(caps.take(ip("1.1.1.1")).unwrap(), &id);
        assert_eq!(caps.live(), 1);
        assert!(caps.take(ip("1.1.1.1")).is_err(), "the session holds it");
        caps.ended(&id);
        caps.ended(&id);
        assert_eq!(caps.live(), 0, "ended once, given back once");
        assert!(caps.take(ip("1.1.1.1")).is_ok());
    }

    #[tokio::test]
    async fn a_lent_slot_is_taken_by_the_session_the_request_opens() {
        let caps = SessionCaps::new(1, 10);
        let slot = caps.take(ip("1.1.1.1")).unwrap();
        let taken = with_slot(slot, async { borrowed_slot() }).await;
        assert!(taken.is_some());
        assert_eq!(caps.live(), 1);
        drop(taken);
        assert_eq!(caps.live(), 0);
        assert!(borrowed_slot().is_none(), "nothing lent outside a request");
    }
}
