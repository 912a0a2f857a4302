//! The relayer key pool's enrolment: at start, and every
//! `execution.resume_interval_ms` until it succeeds, each chain with pool
//! keys and a `relayer_account` is enrolled ([`Relayer::enrol`]); until
//! then its routes are signed by the relayer key alone.

use relay_execution::relayer::{Enrolled, Relayer};
use std::sync::Arc;

/// One pass: enrols the chains not yet enrolled, logging each outcome.
pub async fn tick(relayer: &Arc<Relayer>) {
    for (chain, outcome) in relayer.enrol().await {
        match outcome {
            Enrolled::Already => tracing::info!(chain, "relayer key pool enrolled"),
            Enrolled::Now(tx) => tracing::info!(chain, %tx, "relayer key pool enrolled now"),
            Enrolled::Failed(why) => {
                tracing::warn!(chain, %why, "relayer key pool not enrolled; the relayer key signs alone")
            }
        }
    }
}
