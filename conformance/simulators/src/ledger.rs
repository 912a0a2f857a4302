//! Simulated non-EVM ledgers (stellar, solana, tron, bitcoin): balances per
//! address and transaction ids. They are simulations — no real node of those
//! chains runs here — and everything that reads them says so.

use std::{collections::HashMap, sync::Mutex};

use serde::Serialize;

/// A simulated ledger entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerTx {
    /// Simulated transaction id.
    pub tx_id: String,
    /// Node (`bitcoin`, `solana`, …).
    pub node: String,
    /// Recipient.
    pub to: String,
    /// Asset symbol.
    pub asset: String,
    /// Amount, smallest units (sats for BTC).
    pub amount: u128,
}

/// (node, address, asset).
type BalanceKey = (String, String, String);

/// Balances and history of every simulated ledger.
#[derive(Debug, Default)]
pub struct Ledger {
    inner: Mutex<(HashMap<BalanceKey, u128>, Vec<LedgerTx>)>,
}

impl Ledger {
    /// Credits `amount` of `asset` to `to` on `node`; returns the tx id.
    pub fn credit(&self, node: &str, to: &str, asset: &str, amount: u128) -> String {
        let mut g = self.inner.lock().expect("ledger lock");
        let tx_id = format!("sim-{node}-{:08}", g.1.len() + 1);
        *g.0.entry((node.into(), to.into(), asset.into()))
            .or_default() += amount;
        g.1.push(LedgerTx {
            tx_id: tx_id.clone(),
            node: node.into(),
            to: to.into(),
            asset: asset.into(),
            amount,
        });
        tx_id
    }

    /// Balance of `asset` at `address` on `node`.
    pub fn balance(&self, node: &str, address: &str, asset: &str) -> u128 {
        let g = self.inner.lock().expect("ledger lock");
        g.0.get(&(node.into(), address.into(), asset.into()))
            .copied()
            .unwrap_or(0)
    }

    /// Every simulated transaction, oldest first.
    pub fn history(&self) -> Vec<LedgerTx> {
        self.inner.lock().expect("ledger lock").1.clone()
    }
}
