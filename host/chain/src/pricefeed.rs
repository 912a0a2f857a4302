//! Reading a Chainlink-style price feed (`AggregatorV3Interface`):
//! `decimals()` and `latestRoundData()`, one `eth_call` each.

use alloy::{
    primitives::{Address, I256},
    sol,
    sol_types::SolCall,
};

use crate::reader::{ChainReader, ReadError};

sol! {
    /// `AggregatorV3Interface.decimals`.
    function decimals() external view returns (uint8);
    /// `AggregatorV3Interface.latestRoundData`.
    function latestRoundData() external view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
}

/// A feed's latest round, as the contract answered it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeedRound {
    /// Decimals of `answer`.
    pub decimals: u8,
    /// The round.
    pub round_id: u128,
    /// The answer (may be zero or negative: the caller refuses those).
    pub answer: I256,
    /// When the answer was written, unix seconds (saturated to `u64`).
    pub updated_at: u64,
}

impl ChainReader {
    /// The latest round of the `AggregatorV3Interface` feed at `feed` on
    /// `chain`, with its decimals.
    pub async fn feed_round(&self, chain: u64, feed: Address) -> Result<FeedRound, ReadError> {
        let bad = |e: alloy::sol_types::Error| ReadError::Failed {
            chain,
            reason: format!("feed {feed}: {e}"),
        };
        let (d, r) = tokio::join!(
            self.read(chain, feed, decimalsCall {}.abi_encode()),
            self.read(chain, feed, latestRoundDataCall {}.abi_encode()),
        );
        let decimals = decimalsCall::abi_decode_returns(&d?).map_err(bad)?;
        let round = latestRoundDataCall::abi_decode_returns(&r?).map_err(bad)?;
        Ok(FeedRound {
            decimals,
            round_id: round.roundId.to(),
            answer: round.answer,
            updated_at: round.updatedAt.saturating_to(),
        })
    }
}
