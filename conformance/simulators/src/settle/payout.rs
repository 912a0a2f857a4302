//! A payout is paid at most once, even when sending it reports an error;
//! and the operator's wait for a receipt, by which it learns so.
//!
//! An error from the node (a dropped connection, a receipt poll that
//! failed, a transaction still pending when the wait ended) does not say
//! the payout did not happen: it may be mined, or pending still. Refunding
//! the deposit then would pay the transfer twice — once on each chain, the
//! very fault a relayer must never see from its upstream. So after an
//! error the simulator asks the destination chain: a `PaidOut` log of the
//! transfer's id is the delivery; otherwise it sends the payout again with
//! the same id (`BridgeDeposit` settles an id once per chain, so of two
//! payouts of one id at most one pays). It gives up — and the deposit is
//! refunded — only once nothing of the operator is pending on that chain
//! and still no payout of the id was mined: then none ever will be.

use std::time::{Duration, Instant};

use alloy::{
    primitives::{B256, U256},
    providers::Provider,
    rpc::types::{Filter, TransactionReceipt},
    sol_types::SolEvent,
};
use relay_devnet::{contracts::BridgeDeposit, keys};

use super::{Destination, Settlement};
use crate::error::SettleError;

/// How long a payout that reports errors is tried again before a refund is
/// considered (only once nothing of the operator is pending).
const PATIENCE: Duration = Duration::from_secs(20);
/// The first and the longest pause between two tries.
const PAUSE: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(4));

impl Settlement {
    /// Delivers `amount` to `dest` for the transfer whose payout id is `id`,
    /// at most once: the delivering transaction, or the error of a payout
    /// that never happened and never will.
    pub(super) async fn deliver_once(
        &self,
        dest: &Destination,
        amount: U256,
        id: B256,
    ) -> Result<String, SettleError> {
        let Destination::Evm { chain, .. } = dest else {
            return self.deliver(dest, amount, id).await;
        };
        let since = Instant::now();
        let mut pause = PAUSE.0;
        loop {
            let err = match self.deliver(dest, amount, id).await {
                Ok(tx) => return Ok(tx),
                Err(e) => e,
            };
            tracing::warn!(error = %err, "simulator payout reported an error; asking the chain");
            if let Some(tx) = self.paid_out(*chain, id).await {
                return Ok(tx);
            }
            if since.elapsed() > PATIENCE && self.nothing_pending(*chain).await {
                // Read after the pending check: a payout mined meanwhile shows.
                return match self.paid_out(*chain, id).await {
                    Some(tx) => Ok(tx),
                    None => Err(err),
                };
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(PAUSE.1);
        }
    }

    /// The receipt of the operator's transaction `hash` on `chain`, asked
    /// for every 100 ms up to the operator's receipt wait (a poll the node
    /// does not answer is asked again). A wait that ends without one is an
    /// error like any other: a payout is then asked after on chain.
    pub(super) async fn receipt(
        &self,
        chain: u64,
        hash: B256,
    ) -> Result<TransactionReceipt, SettleError> {
        let h = self
            .chains
            .get(&chain)
            .ok_or(SettleError::UnknownChain(chain))?;
        let until = Instant::now() + self.receipt_wait;
        loop {
            if let Ok(Some(r)) = h.operator.get_transaction_receipt(hash).await {
                return Ok(r);
            }
            if Instant::now() > until {
                let waited = format!("no receipt of {hash} within {:?}", self.receipt_wait);
                return Err(SettleError::chain(chain, waited));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The transaction that paid out id `id` on `chain`, if one was mined.
    async fn paid_out(&self, chain: u64, id: B256) -> Option<String> {
        let h = self.chains.get(&chain)?;
        let filter = Filter::new()
            .address(h.bridge)
            .event_signature(BridgeDeposit::PaidOut::SIGNATURE_HASH)
            .topic1(id)
            .from_block(0);
        let logs = h.operator.get_logs(&filter).await.ok()?;
        let tx = logs.first()?.transaction_hash?;
        Some(format!("{tx:#x}"))
    }

    /// Whether the operator has nothing pending on `chain` (its pending
    /// nonce is its mined one): no payout of it can be mined later.
    async fn nothing_pending(&self, chain: u64) -> bool {
        let Some(h) = self.chains.get(&chain) else {
            return false;
        };
        let operator = keys::bridge_operator().address();
        let mined = h.operator.get_transaction_count(operator).latest().await;
        let pending = h.operator.get_transaction_count(operator).pending().await;
        matches!((mined, pending), (Ok(m), Ok(p)) if m == p)
    }
}
