//! Reading ERC-20 payouts on a chain: the head block, and the `Transfer`
//! logs of one token to one address over a block range (`eth_getLogs`).
//! The executor watches a destination chain with these when a rail's
//! upstream has no status API.

use alloy::{
    primitives::{Address, B256, U256},
    providers::Provider,
    rpc::types::Filter,
    sol,
    sol_types::SolEvent,
};

use crate::reader::{ChainReader, ReadError};

sol! {
    /// ERC-20 `Transfer`.
    event Transfer(address indexed from, address indexed to, uint256 value);
}

/// One ERC-20 `Transfer` log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferLog {
    /// The block it is in.
    pub block: u64,
    /// Its transaction.
    pub tx_hash: B256,
    /// Its index in the block.
    pub log_index: u64,
    /// Who sent.
    pub from: Address,
    /// Who received.
    pub to: Address,
    /// How much, smallest units.
    pub value: U256,
}

impl ChainReader {
    /// `eth_blockNumber` of `chain`.
    pub async fn block_number(&self, chain: u64) -> Result<u64, ReadError> {
        self.provider(chain)?
            .run(
                "eth_blockNumber",
                |p| async move { p.get_block_number().await },
            )
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })
    }

    /// The `Transfer(_, to, _)` logs of `token` on `chain` in blocks
    /// `from..=to_block`, in chain order. The caller bounds the range (nodes
    /// refuse wide ones); a log the node returns without its position
    /// (pending) is left out.
    pub async fn transfers_to(
        &self,
        chain: u64,
        token: Address,
        to: Address,
        (from, to_block): (u64, u64),
    ) -> Result<Vec<TransferLog>, ReadError> {
        let filter = Filter::new()
            .address(token)
            .event_signature(Transfer::SIGNATURE_HASH)
            .topic2(to.into_word())
            .from_block(from)
            .to_block(to_block);
        let logs = self
            .provider(chain)?
            .run("eth_getLogs", |p| {
                let filter = filter.clone();
                async move { p.get_logs(&filter).await }
            })
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })?;
        let mut out: Vec<TransferLog> = logs.iter().filter_map(transfer_of).collect();
        out.sort_by_key(|l| (l.block, l.log_index));
        Ok(out)
    }
}

/// A mined `Transfer` log, decoded; `None` for anything else.
fn transfer_of(log: &alloy::rpc::types::Log) -> Option<TransferLog> {
    let decoded = Transfer::decode_log_data(log.data()).ok()?;
    Some(TransferLog {
        block: log.block_number?,
        tx_hash: log.transaction_hash?,
        log_index: log.log_index?,
        from: decoded.from,
        to: decoded.to,
        value: decoded.value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{address, b256, LogData};

    fn rpc_log(topics: Vec<B256>, value: U256, positioned: bool) -> alloy::rpc::types::Log {
        let data = LogData::new_unchecked(topics, value.to_be_bytes_vec().into());
        alloy::rpc::types::Log {
            inner: alloy::primitives::Log {
                address: Address::ZERO,
                data,
            },
            block_number: positioned.then_some(7),
            transaction_hash: Some(b256!(
                "0x1111111111111111111111111111111111111111111111111111111111111111"
            )),
            log_index: Some(3),
            ..Default::default()
        }
    }

    #[test]
    fn a_transfer_log_decodes_and_anything_else_is_left_out() {
        let from = address!("0x00000000000000000000000000000000000000aa");
        let to = address!("0x00000000000000000000000000000000000000bb");
        let topics = vec![Transfer::SIGNATURE_HASH, from.into_word(), to.into_word()];
        let got = transfer_of(&rpc_log(topics.clone(), U256::from(5u8), true)).unwrap();
        assert_eq!(
            (got.block, got.log_index, got.from, got.to, got.value),
            (7, 3, from, to, U256::from(5u8))
        );
        assert_eq!(
            transfer_of(&rpc_log(topics, U256::from(5u8), false)),
            None,
            "pending"
        );
        let other = vec![B256::ZERO, from.into_word(), to.into_word()];
        assert_eq!(transfer_of(&rpc_log(other, U256::from(5u8), true)), None);
    }
}
