//! Returning the unspent balance of revoked and expired sessions to
//! `refundTo` (the mechanics on chain: [`relay_chain::session_sweep`]).
//!
//! A sweep of a session is leased in the store (one replica at a time;
//! a lapsed lease is retried), waits while any of the session's routes
//! still has to pull its source funds (an execute under way, or a route
//! whose source transaction has not mined — it was authorised before the
//! revoke and completes), then returns every listed token's balance on
//! every listed chain. A session whose balances all read zero is marked
//! swept; anything else is retried after the lease.

use std::{collections::HashMap, sync::Arc};

use alloy::primitives::Address;
use relay_chain::{
    reader::ChainReader,
    sender::Sender,
    session_key::SessionSigner,
    session_sweep::{sweep, SweepTarget, Swept},
};
use relay_store::SessionRow;

use super::{SessionError, SessionService};

/// Sessions looked at per tick.
const BATCH: u32 = 20;
/// Slack beyond an intent's lifetime before a reservation whose execute
/// never answered is taken as dead, ms.
const SLACK_MS: u64 = 60_000;

/// What returning balances needs: chain reads and the relayer's senders.
#[derive(Clone, Debug)]
pub struct SweepDeps {
    /// Chain reads.
    pub reader: Arc<ChainReader>,
    /// The relayer's sender on each chain.
    pub senders: HashMap<u64, Arc<Sender>>,
    /// The relayer's address (the permits' spender).
    pub relayer: Address,
}

impl SessionService {
    /// Sweeps every revoked or expired session that is due (module docs);
    /// how many were found fully returned.
    #[tracing::instrument(skip_all)]
    pub async fn sweep_due(&self) -> Result<u32, SessionError> {
        let Some(deps) = &self.d.sweep else {
            return Ok(0);
        };
        let now = self.now();
        let lease = self.d.config.sessions.sweep_lease_ms;
        let mut done = 0;
        for row in self.d.store.sweeps_due(now, BATCH).await? {
            if !self.d.store.lease_sweep(&row.id, now, now + lease).await? {
                continue;
            }
            let clear = match self.sweep_one(deps, &row).await {
                Ok(clear) => clear,
                Err(e) => {
                    tracing::warn!(session = %row.id, error = %e, "session sweep failed; retried after its lease");
                    false
                }
            };
            done += u32::from(clear);
            let at = clear.then(|| self.now());
            self.d.store.end_sweep(&row.id, at).await?;
        }
        Ok(done)
    }

    /// Whether any route of the session may still pull from its address.
    async fn pulling(&self, row: &SessionRow) -> Result<bool, SessionError> {
        let ttl_ms = self.d.config.execution.intent_ttl_secs * 1000;
        let since = self.now().saturating_sub(ttl_ms + SLACK_MS);
        for spend in self.d.store.spends(&row.id, since).await? {
            let Some(route) = &spend.route_id else {
                return Ok(true);
            };
            match self.d.store.route_progress(route).await? {
                Some(p) if !p.terminal && !p.source_sent => return Ok(true),
                None if spend.state == "reserved" => return Ok(true),
                _ => {}
            }
        }
        Ok(false)
    }

    /// One session: `Ok(true)` when every balance reads zero afterwards.
    async fn sweep_one(&self, deps: &SweepDeps, row: &SessionRow) -> Result<bool, SessionError> {
        if self.pulling(row).await? {
            tracing::debug!(session = %row.id, "a route still pulls from the session; sweep later");
            return Ok(false);
        }
        let key = self.keys()?.signer(&row.id);
        if !key
            .address()
            .to_string()
            .eq_ignore_ascii_case(&row.fund_address)
        {
            tracing::error!(session = %row.id, "the relayer key changed since issue: the session's address is not derivable; its funds need the old key");
            return Ok(false);
        }
        let to: Address = row.refund_to.parse().map_err(|_| {
            SessionError::Store(relay_store::StoreError::Corrupt("refundTo".into()))
        })?;
        let policy = Self::policy(row)?;
        let mut clear = true;
        for (chain, token) in policy.sweep_targets(&self.d.config) {
            let Some(sender) = deps.senders.get(&chain) else {
                clear = false;
                continue;
            };
            let journal = format!("sweep_{}_{chain}_{token:#x}", row.id);
            clear &= self
                .return_balance(deps, sender, &key, (chain, token, to), &journal)
                .await;
        }
        Ok(clear)
    }

    /// Returns one balance; whether it then reads zero.
    async fn return_balance(
        &self,
        deps: &SweepDeps,
        sender: &Sender,
        key: &SessionSigner,
        (chain, token, to): (u64, Address, Address),
        journal: &str,
    ) -> bool {
        // The second pass reads the balance the first left (zero, unless
        // funds arrived meanwhile).
        for _ in 0..2 {
            let target = SweepTarget {
                chain,
                token,
                to,
                journal,
                now_ms: self.now(),
            };
            match sweep(&deps.reader, sender, key, deps.relayer, target).await {
                Ok(Swept::Nothing) => return true,
                Ok(Swept::Returned { amount, tx }) => {
                    tracing::info!(chain, %token, %amount, %tx, "session balance returned to refundTo");
                }
                Err(e) => {
                    tracing::warn!(chain, %token, error = %e, "session balance not returned yet");
                    return false;
                }
            }
        }
        false
    }
}
