//! `POST /api/session/execute`: a policy-checked route from the session's
//! own address, through the router.
//!
//! 1. The bearer names the session; it must be active.
//! 2. The runner parses the route (`fromAddress` = the session's address)
//!    and the policy checks it (chains, tokens, recipient, `perTxCap`).
//! 3. The amount is reserved against `rolling24hCap` — the check and the
//!    record one atomic store operation.
//! 4. The runner prepares a router intent for the session's address; the
//!    session key signs a form of it ([`signed_body`]) and the runner runs
//!    the very execute `POST /api/route/execute` runs.
//! 5. Refused before anything was broadcast: the reservation is released.
//!
//! **Which form.** The first route on a chain uses `erc2612`: an EIP-2612
//! permit for the router and the router's `RelayOrder`. Its permit grants
//! the router an unlimited allowance (a standing approval: the router
//! pulls only what an order signed by the session key names, each order
//! with its own nonce), because EIP-2612 nonces are sequential — two
//! concurrent routes signing permits with the same nonce would otherwise
//! leave the second without an allowance. Once the router holds the
//! allowance, routes use `intent` (the `RelayOrder` alone), whose
//! unordered nonces never collide. When a first route is refused because
//! a concurrent one's permit landed meanwhile, it is prepared once more
//! and signed in the `intent` form.

use alloy::primitives::U256;
use async_trait::async_trait;
use relay_chain::session_key::SessionSigner;
use relay_store::{Reservation, SessionRow, SpendAsk};
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::{policy::RouteTerms, CapExceeded, CapKind, SessionError, SessionService, WINDOW_MS};

/// The execute path a session forwards to (the API implements it over its
/// quote source and the execute service, so this crate needs neither).
#[async_trait]
pub trait SessionRunner: Send + Sync {
    /// The route body as the adapter read it (the runner parses it).
    type Route: Sync + ?Sized;
    /// The parsed request the runner prepares from.
    type Ask: Send + Sync;
    /// What a started route answers (the RouteReceipt).
    type Receipt: Send;
    /// A refusal in the runner's own terms.
    type Error: Send;

    /// Parses a session route body for `owner` (the session's address):
    /// the policy's view of it, and the runner's own.
    fn parse(
        &self,
        route: &Self::Route,
        owner: &str,
    ) -> Result<(RouteTerms, Self::Ask), Self::Error>;

    /// Prepares a router intent (`POST /api/route/intent`'s answer).
    async fn prepare(&self, ask: &Self::Ask) -> Result<Value, Self::Error>;

    /// Runs a signed execute body as `POST /api/route/execute` would.
    async fn execute(&self, body: Value, key: Option<String>)
        -> Result<Self::Receipt, Self::Error>;

    /// Whether route `id` exists (after a refused execute).
    async fn route_exists(&self, id: &str) -> bool;
}

/// A session's spend after an execute.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendView {
    /// The session.
    pub id: String,
    /// Reserved in the last 24 hours, this route included.
    pub spent: String,
    /// What `rolling24hCap` still allows.
    pub remaining: String,
}

/// An execute that started a route.
#[derive(Clone, Debug)]
pub struct SessionExecuted<T> {
    /// The forwarded execute's receipt.
    pub receipt: T,
    /// The route's id.
    pub route_id: String,
    /// The session's spend now.
    pub session: SpendView,
}

/// Why a session execute did not start a route.
#[derive(Debug)]
pub enum ExecFailure<E> {
    /// The session refused it.
    Session(SessionError),
    /// The forwarded execute refused it.
    Run(E),
}

impl<E> From<SessionError> for ExecFailure<E> {
    fn from(e: SessionError) -> Self {
        ExecFailure::Session(e)
    }
}

impl<E> From<relay_store::StoreError> for ExecFailure<E> {
    fn from(e: relay_store::StoreError) -> Self {
        ExecFailure::Session(e.into())
    }
}

fn intent_id(prepared: &Value) -> String {
    prepared["intentId"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn router_allowance(prepared: &Value) -> U256 {
    prepared["allowances"]["router"]
        .as_str()
        .and_then(|s| U256::from_str_radix(s, 10).ok())
        .unwrap_or_default()
}

/// The signed execute body of a prepared intent (module docs: which
/// form), and whether it carries a permit.
pub(super) fn signed_body(
    key: &SessionSigner,
    prepared: &Value,
    amount: U256,
) -> Result<(Value, bool), SessionError> {
    let approved = router_allowance(prepared) >= amount;
    let name = if approved { "intent" } else { "erc2612" };
    let mut form = prepared["forms"][name].clone();
    if form["usable"] != true {
        return Err(SessionError::NoPermit(format!(
            "the session's address cannot approve the router without gas: {}",
            form["why"].as_str().unwrap_or("the form is not usable")
        )));
    }
    if !approved {
        let max = U256::MAX.to_string();
        for entry in form["sign"].as_array_mut().into_iter().flatten() {
            if entry["primaryType"] == "Permit" {
                entry["message"]["value"] = json!(max);
            }
        }
        form["submitBody"]["erc2612"]["value"] = json!(max);
    }
    let body = key
        .sign_form(&form)
        .map_err(|e| SessionError::NoPermit(e.to_string()))?;
    Ok((body, !approved))
}

impl SessionService {
    /// Runs a session execute (module docs); `key` is the idempotency key
    /// the route is recorded under.
    #[tracing::instrument(skip_all, fields(session, route))]
    pub async fn execute<R: SessionRunner + ?Sized>(
        &self,
        runner: &R,
        bearer: Option<&str>,
        route: &R::Route,
        key: Option<String>,
    ) -> Result<SessionExecuted<R::Receipt>, ExecFailure<R::Error>> {
        let row = self.authenticate(bearer).await?;
        tracing::Span::current().record("session", row.id.as_str());
        self.ensure_active(&row)?;
        let policy = Self::policy(&row)?;
        let (terms, ask) = runner
            .parse(route, &row.fund_address)
            .map_err(ExecFailure::Run)?;
        policy.check(&terms)?;
        let spend_id = format!("sp_{}", super::random_hex(10));
        let spent = self.reserve(&row, &policy, &terms, &spend_id).await?;
        let signer = self.keys()?.signer(&row.id);
        let mut route_id = String::new();
        let ran = self
            .run_reserved(
                runner,
                (&signer, &ask, terms.amount),
                (&spend_id, &mut route_id),
                key,
            )
            .await;
        let store = &self.d.store;
        match ran {
            Ok(receipt) => {
                store.tag_spend(&spend_id, &route_id, "routed").await?;
                tracing::Span::current().record("route", route_id.as_str());
                let (_, rolling) = policy.caps();
                Ok(SessionExecuted {
                    receipt,
                    route_id,
                    session: SpendView {
                        id: row.id,
                        spent: spent.to_string(),
                        remaining: rolling.saturating_sub(spent).to_string(),
                    },
                })
            }
            Err(e) => {
                if !route_id.is_empty() && runner.route_exists(&route_id).await {
                    store.tag_spend(&spend_id, &route_id, "routed").await?;
                } else {
                    store.release_spend(&spend_id).await?;
                }
                Err(e)
            }
        }
    }

    /// Step 3 of the module docs: the reservation, or why not.
    async fn reserve<E>(
        &self,
        row: &SessionRow,
        policy: &super::Policy,
        terms: &RouteTerms,
        spend_id: &str,
    ) -> Result<U256, ExecFailure<E>> {
        let now = self.now();
        let (per_tx, rolling) = policy.caps();
        let ask = SpendAsk {
            session_id: row.id.clone(),
            spend_id: spend_id.to_string(),
            amount: terms.amount,
            cap: rolling,
            since_ms: now.saturating_sub(WINDOW_MS),
            now_ms: now,
        };
        match self.d.store.reserve_spend(&ask).await? {
            Reservation::Reserved { spent } => Ok(spent),
            Reservation::OverCap { spent, window } => {
                let need = spent.saturating_add(terms.amount).saturating_sub(rolling);
                let mut freed = U256::ZERO;
                let room_at_ms = window.iter().find_map(|(amount, at)| {
                    freed = freed.saturating_add(*amount);
                    (freed >= need).then_some(at + WINDOW_MS + 1)
                });
                Err(SessionError::Cap(Box::new(CapExceeded {
                    kind: CapKind::Rolling24h,
                    amount: terms.amount,
                    per_tx_cap: per_tx,
                    rolling_24h_cap: rolling,
                    spent: Some(spent),
                    room_at_ms,
                    retry_after_ms: room_at_ms.map(|at| at.saturating_sub(now)),
                }))
                .into())
            }
            Reservation::Inactive => {
                // Revoked or expired since it was read.
                let now_row = self.d.store.session(&row.id).await?;
                let now_row = now_row.ok_or_else(|| SessionError::Unknown(row.id.clone()))?;
                self.ensure_active(&now_row)?;
                Err(SessionError::Expired(row.id.clone()).into())
            }
        }
    }

    /// Step 4 of the module docs; `route_id` is set as soon as an intent
    /// (whose id the route takes) is prepared.
    async fn run_reserved<R: SessionRunner + ?Sized>(
        &self,
        runner: &R,
        (signer, ask, amount): (&SessionSigner, &R::Ask, U256),
        (spend_id, route_id): (&str, &mut String),
        key: Option<String>,
    ) -> Result<R::Receipt, ExecFailure<R::Error>> {
        let prepared = runner.prepare(ask).await.map_err(ExecFailure::Run)?;
        *route_id = intent_id(&prepared);
        self.d
            .store
            .tag_spend(spend_id, route_id, "reserved")
            .await?;
        let (body, with_permit) = signed_body(signer, &prepared, amount)?;
        let first = runner.execute(body, key.clone()).await;
        let refused = match first {
            Ok(receipt) => return Ok(receipt),
            Err(e) => e,
        };
        if !with_permit || runner.route_exists(route_id).await {
            return Err(ExecFailure::Run(refused));
        }
        // A concurrent first route may have approved the router meanwhile.
        let again = runner.prepare(ask).await.map_err(ExecFailure::Run)?;
        if router_allowance(&again) < amount {
            return Err(ExecFailure::Run(refused));
        }
        *route_id = intent_id(&again);
        self.d
            .store
            .tag_spend(spend_id, route_id, "reserved")
            .await?;
        let (body, _) = signed_body(signer, &again, amount)?;
        runner.execute(body, key).await.map_err(ExecFailure::Run)
    }
}
