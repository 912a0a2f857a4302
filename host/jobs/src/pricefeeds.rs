//! Price feeds: every `quote.feed_refresh_ms` each replica reads every
//! `[[pricefeeds]]` feed into its own price book
//! ([`relay_engine::oracle::PriceBook::refresh`]), which the fee maths and
//! the watchers read synchronously.

use relay_engine::oracle::PriceBook;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Spawns the refresh job (the host reads once before serving, so the
/// first tick waits one period).
pub fn spawn(
    cancel: CancellationToken,
    book: Arc<PriceBook>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(crate::every(cancel, every, false, move || {
        let b = book.clone();
        async move {
            let read = b.refresh().await;
            tracing::debug!(read, "price feeds refreshed");
        }
    }))
}
