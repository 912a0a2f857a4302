//! Resume: every `execution.resume_interval_ms`, the open routes nobody
//! holds (a replica died, or the host restarted) are run by this replica.
//! Each side effect already journaled is finished, never repeated.

use relay_execution::executor::Executor;
use relay_store::Store;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Spawns the resume job.
pub fn spawn(
    cancel: CancellationToken,
    store: Store,
    executor: Arc<Executor>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, every, true, move || {
        let (store, executor) = (store.clone(), executor.clone());
        async move { tick(&store, &executor).await }
    }))
}

/// One pass: hands each open, unheld route to the executor.
pub async fn tick(store: &Store, executor: &Arc<Executor>) {
    let Ok(open) = store.open_routes().await else {
        return;
    };
    for id in open {
        let ex = executor.clone();
        tokio::spawn(async move {
            tracing::info!(route = %id, "resuming route");
            if let Err(e) = ex.run(&id).await {
                tracing::error!(route = %id, error = %e, "resumed route stopped");
            }
        });
    }
}
