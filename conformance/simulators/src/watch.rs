//! The one chain watcher the simulators share: poll a devnet chain for new
//! logs matching a filter at a bounded interval and hand each to a
//! callback, the way an upstream's indexer follows the chain. The
//! settlement engine watches `BridgeDeposit.Deposited`; the Circle
//! simulator watches `MessageTransmitter.MessageSent`.

use std::{future::Future, time::Duration};

use crate::error::SimError;
use alloy::{
    providers::{DynProvider, Provider},
    rpc::types::{Filter, Log},
};
use tokio::time::MissedTickBehavior;

/// Starts following `chain` from the block after its current head; every
/// new log matching `filter` goes to `on_log`, in chain order. The head is
/// read before this returns, so nothing mined afterwards is missed.
pub async fn watch_logs<F, Fut>(
    chain: u64,
    provider: DynProvider,
    filter: Filter,
    poll: Duration,
    on_log: F,
) -> Result<tokio::task::JoinHandle<()>, SimError>
where
    F: Fn(Log) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let head = provider
        .get_block_number()
        .await
        .map_err(|e| SimError::Chain {
            chain,
            message: e.to_string(),
        })?;
    Ok(tokio::spawn(async move {
        let mut from = head + 1;
        let mut tick = tokio::time::interval(poll);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Ok(head) = provider.get_block_number().await else {
                continue;
            };
            if head < from {
                continue;
            }
            let range = filter.clone().from_block(from).to_block(head);
            match provider.get_logs(&range).await {
                Ok(logs) => {
                    for log in logs {
                        on_log(log).await;
                    }
                    from = head + 1;
                }
                Err(e) => tracing::debug!(chain, error = %e, "simulator watcher: get_logs failed"),
            }
        }
    }))
}
