//! relay-sessions: policy-gated agent sessions (spec §2.13, §4.5, §5.6),
//! the whole feature in one home — the policy, reserved spends, the
//! forwarded execute ([`SessionRunner`], which the host implements over
//! its one execute service and hands the feature as [`http::Forwarder`]),
//! sweeps, the HTTP adapter with its rate-limit bucket and errorCodes
//! ([`http::feature`]) and the sweep job (`session-sweep`, started by the
//! feature's start). The host registers it with one line.
//!
//! **Who may do what.** The owner (the platform owner token, the same
//! credential as `mode: self`) issues, lists and revokes sessions. Issuing
//! answers a `rsk_` bearer once (256 random bits; only its SHA-256 is
//! stored and compared); the agent holding it executes routes within the
//! policy ([`policy`]) and reads its own session.
//!
//! **Where the funds are.** Each session holds its funds at an address of
//! its own, derived by the host from the relayer key and the session id
//! ([`relay_chain::session_key`]); the key never leaves the host. The
//! owner funds `fundAddress` (an ERC-20 transfer, or a relay route with
//! `toAddress = fundAddress`). The address never needs gas: every spend is
//! a router route ([`run`]) the relayer sends, signed by the session key,
//! and the unspent balance goes back to `refundTo` through a permit the
//! session key signs for the relayer ([`sweep`]).
//!
//! **Spending.** A session execute is checked against the policy
//! (chains, tokens, recipient, `perTxCap`), then its amount is
//! **reserved**: the rolling-24 h cap check and the spend record are one
//! atomic store operation ([`relay_store::SessionStore::reserve_spend`]),
//! so concurrent executes — on one replica or many — never overspend.
//! Only then is the route prepared, signed and run through the same
//! execute path as `POST /api/route/execute` (every check of it applies).
//! A refusal before anything is broadcast releases the reservation; once
//! a route exists its amount stays counted for 24 hours, whatever becomes
//! of the route (a FAILED route's refund lands back at `fundAddress`).
//!
//! **Revoke and expiry.** New executes are refused at once
//! (`SESSION_REVOKED`, `SESSION_EXPIRED`). Routes already started complete
//! (they were authorised and signed before). Once none of the session's
//! routes is still waiting to pull its source funds, the host returns the
//! whole unspent balance of every listed token on every listed chain to
//! `refundTo`; a job retries this until nothing is left. Revoking an
//! already revoked session sweeps it again (for funds sent after the
//! sweep).

pub mod errors;
pub mod http;
mod policy;
mod run;
mod sweep;
#[cfg(test)]
mod tests;

pub use policy::{IssueAsk, Policy, RouteTerms, TokenTerm};
pub use run::{ExecFailure, SessionExecuted, SessionRunner, SpendView};
pub use sweep::SweepDeps;

use std::sync::Arc;

use alloy::primitives::U256;
use relay_chain::session_key::SessionKeys;
use relay_config::HostConfig;
use relay_store::{SessionRow, SessionStore, StoreError};
use relay_types::clock::SharedClock;
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

/// The rolling window, ms.
pub const WINDOW_MS: u64 = 24 * 3_600_000;
/// The most sessions `GET /api/session/list` answers.
pub const LIST_LIMIT: u32 = 200;

/// Which cap a route would break.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum CapKind {
    /// The route alone is above `perTxCap`.
    PerTx,
    /// The last 24 hours with the route are above `rolling24hCap`.
    Rolling24h,
}

/// A refusal by cap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapExceeded {
    /// Which cap.
    pub kind: CapKind,
    /// The route's amount.
    pub amount: U256,
    /// The policy's `perTxCap`.
    pub per_tx_cap: U256,
    /// The policy's `rolling24hCap`.
    pub rolling_24h_cap: U256,
    /// Spent in the window already (rolling refusals).
    pub spent: Option<U256>,
    /// When enough of the window ages out for this amount (epoch ms).
    pub room_at_ms: Option<u64>,
    /// How long from the refusal until then, ms (by the session
    /// service's clock).
    pub retry_after_ms: Option<u64>,
}

impl std::fmt::Display for CapExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.kind, self.spent) {
            (CapKind::PerTx, _) | (_, None) => write!(
                f,
                "amount {} is above the session's perTxCap {} (rolling24hCap {})",
                self.amount, self.per_tx_cap, self.rolling_24h_cap
            ),
            (CapKind::Rolling24h, Some(spent)) => write!(
                f,
                "amount {} with {spent} spent in the last 24 h is above the session's rolling24hCap {} (perTxCap {}); {} remains",
                self.amount,
                self.rolling_24h_cap,
                self.per_tx_cap,
                self.rolling_24h_cap.saturating_sub(spent)
            ),
        }
    }
}

/// Why a session request is refused.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No bearer, or not one this host issued.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// No session has the id.
    #[error("no session has id {0:?}")]
    Unknown(String),
    /// The session was revoked.
    #[error("session {0} is revoked")]
    Revoked(String),
    /// The session expired.
    #[error("session {0} has expired")]
    Expired(String),
    /// The route is outside the policy's allowlists.
    #[error("{field}: {why}")]
    Policy {
        /// The request field at fault.
        field: &'static str,
        /// Why.
        why: String,
    },
    /// The route is above a cap.
    #[error("{0}")]
    Cap(Box<CapExceeded>),
    /// A field of an issue body is invalid.
    #[error("{field}: {why}")]
    Field {
        /// The field.
        field: String,
        /// Why.
        why: String,
    },
    /// A field of an issue body is missing.
    #[error("{field}: required")]
    Missing {
        /// The field.
        field: String,
    },
    /// This host has no relayer key: it can derive no session address.
    #[error("this host has no relayer key (RELAY_RELAYER_KEY): sessions need it to derive their addresses and send their routes")]
    NoRelayer,
    /// The session's token takes no EIP-2612 permit (its address cannot
    /// approve the router without gas).
    #[error("{0}")]
    NoPermit(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// A session's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    /// Executes are accepted.
    Active,
    /// Revoked by the owner.
    Revoked,
    /// Past `expiresAt`.
    Expired,
}

/// `POST /api/session/issue`: the session and its bearer (shown once).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionIssued {
    /// `ses_…`.
    pub id: String,
    /// `rsk_…`: `Authorization: Bearer <it>` on `/api/session/execute`
    /// and `GET /api/session/{id}`. Shown once; only its hash is kept.
    pub bearer: String,
    /// `active`.
    pub status: SessionStatus,
    /// The owner's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The policy.
    pub policy: Policy,
    /// The session's own address: fund it with the tokens it may spend.
    pub fund_address: String,
    /// Where unspent funds go on revoke or expiry.
    pub refund_to: String,
    /// Epoch ms.
    pub created: u64,
    /// Unix seconds.
    pub expires_at: u64,
    /// How to use it.
    pub note: String,
}

/// A session as `GET /api/session/{id}` and the list answer it (never
/// the bearer).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    /// `ses_…`.
    pub id: String,
    /// `active`, `revoked` or `expired`.
    pub status: SessionStatus,
    /// The owner's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The policy.
    pub policy: Policy,
    /// The session's own address.
    pub fund_address: String,
    /// Where unspent funds go.
    pub refund_to: String,
    /// Reserved in the last 24 hours, source smallest units.
    #[serde(rename = "spent24h")]
    pub spent_24h: String,
    /// `rolling24hCap − spent24h`.
    #[serde(rename = "remaining24h")]
    pub remaining_24h: String,
    /// The routes the session started (route ids), oldest first.
    pub routes: Vec<String>,
    /// Epoch ms.
    pub created: u64,
    /// Unix seconds.
    pub expires_at: u64,
    /// Epoch ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<u64>,
    /// When the unspent balance was last found returned (epoch ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swept_at: Option<u64>,
}

/// `GET /api/session/list`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SessionList {
    /// Newest first.
    pub sessions: Vec<SessionView>,
    /// How many.
    pub count: usize,
}

/// `POST /api/session/revoke`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRevoked {
    /// The session.
    pub id: String,
    /// `revoked`.
    pub status: SessionStatus,
    /// Epoch ms.
    pub revoked_at: Option<u64>,
    /// What happens next.
    pub note: String,
}

/// Who is asking to read a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader<'a> {
    /// The owner token.
    Owner,
    /// `Authorization: Bearer <rsk_…>` (or none).
    Bearer(Option<&'a str>),
}

/// What the service works with.
#[derive(Clone, Debug)]
pub struct SessionDeps {
    /// Sessions and spends.
    pub store: Arc<dyn SessionStore>,
    /// Host configuration.
    pub config: Arc<HostConfig>,
    /// Session key derivation (absent without a relayer key).
    pub keys: Option<SessionKeys>,
    /// The clock.
    pub clock: SharedClock,
    /// What returning balances needs (absent without a relayer key).
    pub sweep: Option<SweepDeps>,
}

/// Issues, checks, runs and sweeps sessions (module docs).
#[derive(Debug)]
pub struct SessionService {
    d: SessionDeps,
}

fn hash(bearer: &str) -> String {
    hex::encode(Sha256::digest(bearer.as_bytes()))
}

fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    rand::fill(&mut b[..]);
    hex::encode(b)
}

impl SessionService {
    /// A service over `deps`.
    pub fn new(deps: SessionDeps) -> Self {
        SessionService { d: deps }
    }

    fn now(&self) -> u64 {
        self.d.clock.now_ms()
    }

    fn keys(&self) -> Result<&SessionKeys, SessionError> {
        self.d.keys.as_ref().ok_or(SessionError::NoRelayer)
    }

    /// Issues a session (owner only; the caller checked) from a decoded
    /// issue body ([`IssueAsk::from_request`] checks it).
    #[tracing::instrument(skip_all, fields(session))]
    pub async fn issue(
        &self,
        body: &relay_wire::SessionIssueRequest,
    ) -> Result<SessionIssued, SessionError> {
        let now = self.now();
        let ask = IssueAsk::from_request(body, &self.d.config, now)?;
        let keys = self.keys()?;
        let id = format!("ses_{}", random_hex(12));
        tracing::Span::current().record("session", id.as_str());
        let bearer = format!("rsk_{}", random_hex(32));
        let fund = keys.address(&id).to_checksum(None);
        let row = SessionRow {
            id: id.clone(),
            bearer_hash: hash(&bearer),
            label: ask.label.clone(),
            policy: serde_json::to_string(&ask.policy).unwrap_or_default(),
            fund_address: fund.clone(),
            refund_to: ask.refund_to.to_checksum(None),
            status: "active".into(),
            expires_ms: ask.policy.expires_at * 1000,
            created_ms: now,
            revoked_ms: None,
            swept_ms: None,
        };
        self.d.store.put_session(&row).await?;
        Ok(SessionIssued {
            id,
            bearer,
            status: SessionStatus::Active,
            label: ask.label,
            expires_at: ask.policy.expires_at,
            policy: ask.policy,
            fund_address: fund,
            refund_to: row.refund_to,
            created: now,
            note: "the bearer is shown once: send it as Authorization: Bearer <bearer> to POST /api/session/execute. Fund fundAddress with the policy's tokens (an ERC-20 transfer, or a relay route with toAddress = fundAddress); it never needs gas. On revoke or expiry the unspent balance returns to refundTo".into(),
        })
    }

    /// The session a bearer belongs to.
    pub async fn authenticate(&self, bearer: Option<&str>) -> Result<SessionRow, SessionError> {
        let bearer = bearer
            .filter(|b| b.starts_with("rsk_"))
            .ok_or(SessionError::Unauthorized(
                "send the session's bearer: Authorization: Bearer rsk_…",
            ))?;
        self.d
            .store
            .session_by_bearer(&hash(bearer))
            .await?
            .ok_or(SessionError::Unauthorized(
                "the bearer is not one this host issued",
            ))
    }

    /// A row's state now.
    pub fn status(&self, row: &SessionRow) -> SessionStatus {
        if row.status == "revoked" {
            SessionStatus::Revoked
        } else if row.expires_ms <= self.now() {
            SessionStatus::Expired
        } else {
            SessionStatus::Active
        }
    }

    /// Refuses a session that is not active.
    fn ensure_active(&self, row: &SessionRow) -> Result<(), SessionError> {
        match self.status(row) {
            SessionStatus::Active => Ok(()),
            SessionStatus::Revoked => Err(SessionError::Revoked(row.id.clone())),
            SessionStatus::Expired => Err(SessionError::Expired(row.id.clone())),
        }
    }

    fn policy(row: &SessionRow) -> Result<Policy, SessionError> {
        serde_json::from_str(&row.policy)
            .map_err(|e| SessionError::Store(StoreError::Corrupt(format!("session policy: {e}"))))
    }

    /// `GET /api/session/{id}`: for the owner, or the bearer of that very
    /// session.
    pub async fn get(&self, id: &str, who: Reader<'_>) -> Result<SessionView, SessionError> {
        let row = match who {
            Reader::Owner => self.d.store.session(id).await?,
            Reader::Bearer(b) => {
                let row = self.authenticate(b).await?;
                if row.id != id {
                    return Err(SessionError::Unauthorized(
                        "the bearer belongs to another session",
                    ));
                }
                Some(row)
            }
        };
        self.view(&row.ok_or_else(|| SessionError::Unknown(id.to_string()))?)
            .await
    }

    /// A session's answer: state, policy, spend in the window, routes.
    pub async fn view(&self, row: &SessionRow) -> Result<SessionView, SessionError> {
        let policy = Self::policy(row)?;
        let (spent, _) = self.spent(&row.id).await?;
        let (_, rolling) = policy.caps();
        let routes = self
            .d
            .store
            .spends(&row.id, 0)
            .await?
            .into_iter()
            .filter(|s| s.state == "routed")
            .filter_map(|s| s.route_id)
            .collect();
        Ok(SessionView {
            id: row.id.clone(),
            status: self.status(row),
            label: row.label.clone(),
            fund_address: row.fund_address.clone(),
            refund_to: row.refund_to.clone(),
            spent_24h: spent.to_string(),
            remaining_24h: rolling.saturating_sub(spent).to_string(),
            routes,
            created: row.created_ms,
            expires_at: policy.expires_at,
            revoked_at: row.revoked_ms,
            swept_at: row.swept_ms,
            policy,
        })
    }

    /// Reserved in the last 24 hours, and the window's start (epoch ms).
    async fn spent(&self, id: &str) -> Result<(U256, u64), SessionError> {
        let since = self.now().saturating_sub(WINDOW_MS);
        let spends = self.d.store.spends(id, since).await?;
        let total = spends
            .iter()
            .fold(U256::ZERO, |s, r| s.saturating_add(r.amount));
        Ok((total, since))
    }

    /// `GET /api/session/list` (owner only; the caller checked).
    pub async fn list(&self) -> Result<SessionList, SessionError> {
        let rows = self.d.store.sessions(LIST_LIMIT).await?;
        let mut sessions = Vec::with_capacity(rows.len());
        for row in &rows {
            sessions.push(self.view(row).await?);
        }
        Ok(SessionList {
            count: sessions.len(),
            sessions,
        })
    }

    /// `POST /api/session/revoke` (owner only; the caller checked): new
    /// executes are refused from now on, the sweep is (re-)armed.
    #[tracing::instrument(skip_all, fields(session = id))]
    pub async fn revoke(&self, id: &str) -> Result<SessionRevoked, SessionError> {
        let row = self
            .d
            .store
            .revoke_session(id, self.now())
            .await?
            .ok_or_else(|| SessionError::Unknown(id.to_string()))?;
        Ok(SessionRevoked {
            id: row.id,
            status: SessionStatus::Revoked,
            revoked_at: row.revoked_ms,
            note: "new executes are refused; routes already started complete; the unspent balance at fundAddress is returned to refundTo once no route is still pulling from it".into(),
        })
    }
}

/// The sessions' [`relay_feature::Start`]: builds the service over the
/// host's parts and the session keys the host left (none without a
/// relayer key: issuing is refused), starts the sweep job when the host
/// can send (`session-sweep`, every `sessions.sweep_interval_ms`: revoked
/// and expired sessions' balances back to `refundTo`; replicas coordinate
/// through a lease on each session's row), and leaves the
/// [`http::Sessions`] handle.
fn start<'a>(
    parts: &'a relay_feature::Parts,
    jobs: &'a mut relay_jobs::Jobs,
    handles: &'a mut relay_feature::Handles,
) -> futures::future::BoxFuture<'a, Result<(), relay_feature::StartError>> {
    Box::pin(async move {
        let missing = |what| {
            relay_feature::StartError::new(
                "sessions",
                relay_feature::ServiceError::MissingHandle(what),
            )
        };
        let forward = handles
            .get::<http::Forwarder>()
            .ok_or_else(|| missing("the forwarded execute (the host's execute service)"))?;
        let keys = handles.get::<Option<SessionKeys>>().flatten();
        let sessions = Arc::new(SessionService::new(SessionDeps {
            store: Arc::new(parts.store.clone()),
            config: parts.config.clone(),
            keys,
            clock: parts.clock.clone(),
            sweep: parts.senders.as_ref().map(|s| SweepDeps {
                reader: parts.reader.clone(),
                senders: s.by_chain.clone(),
                relayer: s.relayer,
            }),
        }));
        if parts.senders.is_some() {
            let every = parts.config.sessions.sweep_interval_ms.max(100);
            jobs.repeat(
                "session-sweep",
                std::time::Duration::from_millis(every),
                sweep_tick(sessions.clone()),
            );
        }
        handles.insert(http::Sessions {
            sessions,
            forward,
            owner: parts.owner.clone(),
            store: parts.store.clone(),
            stale_ms: parts.config.execution.idempotency_stale_ms,
        });
        Ok(())
    })
}

/// One sweep of the due sessions, logged.
fn sweep_tick(
    sessions: Arc<SessionService>,
) -> impl FnMut() -> futures::future::BoxFuture<'static, ()> + Send + 'static {
    move || {
        let s = sessions.clone();
        Box::pin(async move {
            match s.sweep_due().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(sessions = n, "session balances returned"),
                Err(e) => tracing::warn!(error = %e, "session sweep tick failed"),
            }
        })
    }
}
