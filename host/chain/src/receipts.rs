//! Reading a transaction's receipt with its logs (`eth_getTransactionReceipt`):
//! what the analysis endpoints show as evidence and check outcomes
//! against. Read-only; no key involved.

use alloy::{
    primitives::{Address, Bytes, B256},
    providers::Provider,
};

use crate::reader::{ChainReader, ReadError};

/// One log of a receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiptLog {
    /// Index in the block.
    pub log_index: u64,
    /// Emitting contract.
    pub address: Address,
    /// Topics.
    pub topics: Vec<B256>,
    /// Data.
    pub data: Bytes,
}

/// A mined transaction's receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxReceipt {
    /// Block number.
    pub block_number: u64,
    /// Block hash.
    pub block_hash: B256,
    /// Succeeded (status 1).
    pub success: bool,
    /// Sender.
    pub from: Address,
    /// Target (`None` for a contract creation).
    pub to: Option<Address>,
    /// Gas used.
    pub gas_used: u64,
    /// Logs, in order.
    pub logs: Vec<ReceiptLog>,
}

impl ChainReader {
    /// The receipt of `tx` on `chain`; `None` while it is not mined (or the
    /// chain does not know it).
    pub async fn receipt(&self, chain: u64, tx: B256) -> Result<Option<TxReceipt>, ReadError> {
        let r = self
            .provider(chain)?
            .run("eth_getTransactionReceipt", |p| async move {
                p.get_transaction_receipt(tx).await
            })
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })?;
        Ok(r.and_then(|r| {
            Some(TxReceipt {
                block_number: r.block_number?,
                block_hash: r.block_hash?,
                success: r.status(),
                from: r.from,
                to: r.to,
                gas_used: r.gas_used,
                logs: r
                    .inner
                    .logs()
                    .iter()
                    .map(|l| ReceiptLog {
                        log_index: l.log_index.unwrap_or_default(),
                        address: l.address(),
                        topics: l.topics().to_vec(),
                        data: l.data().data.clone(),
                    })
                    .collect(),
            })
        }))
    }
}
