//! The EVM → EVM quote the three aggregator simulators (LI.FI, Squid,
//! Bungee) share: a devnet asset between two devnet chains, or a swap into
//! another asset on one chain (as the real aggregators quote same-chain
//! swaps), converted at the devnet's fixed prices less the simulated fee,
//! with a `BridgeDeposit` deposit as the transaction to send (the
//! settlement pays the destination asset out on the destination chain,
//! which for a swap is the source chain). Each aggregator module only
//! renders this in its own wire format.

use alloy::primitives::{Address, U256};

use crate::{
    pricing::{Priced, Rate},
    settle::{DepositCall, Destination, QuoteSpec, Settlement},
    tokens::{TokenBook, TokenInfo},
    Upstream,
};

/// The bridge or tool name the simulators report.
pub const TOOL: &str = "devnet-simulator";
/// Gas a `BridgeDeposit.deposit` needs, with headroom.
pub const DEPOSIT_GAS: u64 = 200_000;
/// The gas price the simulators quote, wei (1 gwei).
pub const GAS_PRICE: u64 = 1_000_000_000;
/// The transfer duration the simulators estimate, seconds.
pub const DURATION_SECS: u64 = 30;

/// What a caller asked for.
#[derive(Clone, Debug)]
pub struct EvmAsk<'a> {
    /// The quoting simulator.
    pub upstream: Upstream,
    /// Source chain.
    pub from_chain: u64,
    /// Destination chain.
    pub to_chain: u64,
    /// Source token (symbol or address).
    pub from_token: &'a str,
    /// Destination token (symbol or address).
    pub to_token: &'a str,
    /// Source amount, smallest units.
    pub amount: U256,
    /// Recipient on the destination chain.
    pub recipient: Address,
}

impl EvmAsk<'_> {
    /// Whether this asks for a same-chain swap.
    pub fn is_same_chain(&self) -> bool {
        self.from_chain == self.to_chain
    }
}

/// A priced EVM → EVM quote and the deposit that executes it.
#[derive(Clone, Debug)]
pub struct EvmQuote {
    /// Source token.
    pub from: TokenInfo,
    /// Destination token.
    pub to: TokenInfo,
    /// Source amount (what the deposit takes).
    pub amount: U256,
    /// Output and fee.
    pub priced: Priced,
    /// The deposit to send.
    pub call: DepositCall,
}

/// Why no quote exists.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoQuote {
    /// The source token is not a devnet asset on the source chain.
    #[error("unknown fromToken on chain {0}")]
    FromToken(u64),
    /// The destination token is not a devnet asset on the destination chain.
    #[error("unknown toToken on chain {0}")]
    ToToken(u64),
    /// The amount is zero.
    #[error("the amount must be positive")]
    ZeroAmount,
    /// The devnet routes no such pair (unpriced assets, or the same asset
    /// on the same chain).
    #[error("no route for this pair")]
    NoRoute,
}

/// Prices `ask` and registers its deposit.
pub fn quote(
    tokens: &TokenBook,
    settle: &Settlement,
    ask: &EvmAsk<'_>,
) -> Result<EvmQuote, NoQuote> {
    let from = tokens
        .resolve(ask.from_chain, ask.from_token)
        .ok_or(NoQuote::FromToken(ask.from_chain))?;
    let to = tokens
        .resolve(ask.to_chain, ask.to_token)
        .ok_or(NoQuote::ToToken(ask.to_chain))?;
    if ask.amount.is_zero() {
        return Err(NoQuote::ZeroAmount);
    }
    let rate = Rate::between((from.symbol, from.decimals), (to.symbol, to.decimals))
        .filter(|_| !ask.is_same_chain() || from != to)
        .ok_or(NoQuote::NoRoute)?;
    let bps = crate::pricing::fee_bps(ask.upstream) + settle.extra_fee_bps(ask.upstream);
    let priced = rate.price_at(ask.amount, bps);
    let spec = QuoteSpec {
        upstream: ask.upstream,
        from_chain: ask.from_chain,
        token: from.address,
        amount_in: ask.amount,
        dest: Destination::Evm {
            chain: ask.to_chain,
            token: to.address,
            recipient: ask.recipient,
        },
        amount_out: priced.out,
    };
    let call = settle.quote_deposit(spec).map_err(|_| NoQuote::NoRoute)?;
    Ok(EvmQuote {
        from,
        to,
        amount: ask.amount,
        priced,
        call,
    })
}
