//! Gas prices for quoting (the relayer's gas bill, spec §8.2).
//!
//! `eth_gasPrice` is read at most every [`FRESH`] per chain. A price older
//! than that but younger than [`USABLE`] is still served, while one
//! background read replaces it: a quote never waits on a chain read for a
//! chain the host priced within the last [`USABLE`], so a cold quote's
//! fan-out starts at once and a warm one never stalls on a round trip.
//! Only a chain never priced, or not for [`USABLE`], is read inline. A
//! failed background read leaves the last price to age out.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use alloy::primitives::U256;
use relay_chain::reader::ChainReader;

/// A price younger than this is served as it is.
pub const FRESH: Duration = Duration::from_secs(2);
/// A price younger than this is served while a background read replaces
/// it (the spec's 12 s compare window).
pub const USABLE: Duration = Duration::from_secs(12);

/// One chain's last price.
#[derive(Clone, Copy, Debug)]
struct Slot {
    wei: U256,
    read_at: Instant,
    refreshing: bool,
}

/// What a cached price is good for at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Serve {
    /// Served as it is.
    Fresh(U256),
    /// Served; the caller starts the one background read.
    Refresh(U256),
    /// Served; a background read is already out.
    Stale(U256),
    /// Not served: read inline.
    Read,
}

impl Slot {
    /// What this price is good for `now`; marks a background read as out
    /// when it asks the caller for one.
    fn serve(&mut self, now: Instant) -> Serve {
        let age = now.saturating_duration_since(self.read_at);
        match (age < FRESH, age < USABLE, self.refreshing) {
            (true, _, _) => Serve::Fresh(self.wei),
            (false, true, true) => Serve::Stale(self.wei),
            (false, true, false) => {
                self.refreshing = true;
                Serve::Refresh(self.wei)
            }
            (false, false, _) => Serve::Read,
        }
    }
}

type Slots = Arc<Mutex<HashMap<u64, Slot>>>;

/// Gas prices by chain, kept fresh as quotes use them.
#[derive(Debug)]
pub struct GasBook {
    reader: Arc<ChainReader>,
    slots: Slots,
}

impl GasBook {
    /// Prices read through `reader`.
    pub fn new(reader: Arc<ChainReader>) -> Self {
        GasBook {
            reader,
            slots: Arc::default(),
        }
    }

    /// `chain`'s gas price, wei, or why it could not be read.
    pub async fn price(&self, chain: u64) -> Result<U256, String> {
        let serve = lock(&self.slots)
            .get_mut(&chain)
            .map_or(Serve::Read, |s| s.serve(Instant::now()));
        match serve {
            Serve::Fresh(wei) | Serve::Stale(wei) => Ok(wei),
            Serve::Refresh(wei) => {
                let (reader, slots) = (self.reader.clone(), self.slots.clone());
                tokio::spawn(async move { read(&reader, &slots, chain).await });
                Ok(wei)
            }
            Serve::Read => read(&self.reader, &self.slots, chain).await,
        }
    }
}

fn lock(slots: &Slots) -> std::sync::MutexGuard<'_, HashMap<u64, Slot>> {
    slots.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads `chain`'s price and keeps it; a failure clears the refresh mark
/// so the next quote asks again.
async fn read(reader: &ChainReader, slots: &Slots, chain: u64) -> Result<U256, String> {
    let read = reader.gas_price(chain).await.map_err(|e| e.to_string());
    let mut slots = lock(slots);
    match &read {
        Ok(wei) => {
            let slot = Slot {
                wei: *wei,
                read_at: Instant::now(),
                refreshing: false,
            };
            slots.insert(chain, slot);
        }
        Err(_) => {
            if let Some(slot) = slots.get_mut(&chain) {
                slot.refreshing = false;
            }
        }
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_then_one_refresh_then_stale_then_read() {
        let t0 = Instant::now();
        let wei = U256::from(7u64);
        let mut slot = Slot {
            wei,
            read_at: t0,
            refreshing: false,
        };
        assert_eq!(slot.serve(t0 + Duration::from_secs(1)), Serve::Fresh(wei));
        let aged = t0 + FRESH + Duration::from_millis(1);
        // The first quote past FRESH starts the one background read; the
        // next ones are served the same price without another.
        assert_eq!(slot.serve(aged), Serve::Refresh(wei));
        assert_eq!(slot.serve(aged), Serve::Stale(wei));
        // Never served past USABLE, refreshing or not.
        assert_eq!(slot.serve(t0 + USABLE), Serve::Read);
        slot.refreshing = false;
        assert_eq!(slot.serve(t0 + USABLE), Serve::Read);
    }
}
