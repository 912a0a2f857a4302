//! The one quote rule the aggregator simulators share: same asset between
//! devnet chains, the simulated bridge fee, a deposit into `BridgeDeposit`.

use alloy::primitives::{Address, B256, U256};

use crate::{
    settle::{Destination, Settlement},
    tokens::{TokenBook, TokenInfo},
};

/// A priced EVM→EVM quote and the deposit that executes it.
#[derive(Clone, Debug)]
pub struct EvmQuote {
    /// Quote id (the deposit's `quoteId`).
    pub id: B256,
    /// Source token.
    pub from: TokenInfo,
    /// Destination token.
    pub to: TokenInfo,
    /// Delivered amount.
    pub to_amount: U256,
    /// Bridge fee, source units.
    pub fee: U256,
    /// The deposit contract (approval target and transaction target).
    pub bridge: Address,
    /// Deposit calldata.
    pub data: Vec<u8>,
}

/// What a caller asked for.
#[derive(Clone, Debug)]
pub struct EvmAsk<'a> {
    /// Source chain.
    pub from_chain: u64,
    /// Destination chain.
    pub to_chain: u64,
    /// Source token (symbol or address).
    pub from_token: &'a str,
    /// Destination token (symbol or address).
    pub to_token: &'a str,
    /// Source amount.
    pub amount: U256,
    /// Recipient.
    pub recipient: Address,
}

/// Prices `ask` and registers its deposit; `None` when no route exists.
pub fn quote(tokens: &TokenBook, settle: &Settlement, ask: &EvmAsk<'_>) -> Option<EvmQuote> {
    let from = tokens.resolve(ask.from_chain, ask.from_token)?;
    let to = tokens.resolve(ask.to_chain, ask.to_token)?;
    if from.symbol != to.symbol || ask.amount.is_zero() || ask.from_chain == ask.to_chain {
        return None;
    }
    let (to_amount, fee) = crate::price(ask.amount, from.decimals, to.decimals);
    let dest = Destination::Evm {
        chain: ask.to_chain,
        token: to.address,
        recipient: ask.recipient,
    };
    let (id, bridge, data) =
        settle.quote_deposit(ask.from_chain, from.address, ask.amount, dest, to_amount)?;
    Some(EvmQuote {
        id,
        from,
        to,
        to_amount,
        fee,
        bridge,
        data,
    })
}

/// `0x`-hex of bytes.
pub fn hex0x(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}
