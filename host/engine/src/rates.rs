//! The USD prices one quote nets every rail's gas with (spec §8.2), read
//! from the [`PriceBook`] once per quote rather than once per rail and
//! chain: every answer of a quote is netted at the same prices.

use std::collections::BTreeMap;

use super::{
    fees::TokenPrice,
    oracle::{PriceBook, Unpriced},
    prices,
    route::RouteAsk,
};

/// One quote's prices.
#[derive(Debug)]
pub struct Rates<'a> {
    book: &'a PriceBook,
    /// Native-asset USD price by EVM chain id, micro-USD.
    native: BTreeMap<u64, Result<u64, Unpriced>>,
    /// The destination token's price on the destination chain.
    pub to: Result<TokenPrice, Unpriced>,
    /// The source token's price on the source chain.
    pub from: Result<TokenPrice, Unpriced>,
}

impl<'a> Rates<'a> {
    /// `ask`'s token prices and the native prices of `chains`, from `book`.
    pub fn read(
        book: &'a PriceBook,
        ask: &RouteAsk,
        chains: impl IntoIterator<Item = u64>,
    ) -> Self {
        Rates {
            book,
            native: chains
                .into_iter()
                .map(|c| (c, book.native_usd_e6(c)))
                .collect(),
            to: prices::token_price(book, ask.to_chain, &ask.to_token),
            from: prices::token_price(book, ask.from_chain, &ask.from_token),
        }
    }

    /// The native-asset USD price of `chain`, micro-USD (read now when it
    /// was not read with the others).
    pub fn native_usd_e6(&self, chain: u64) -> Result<u64, Unpriced> {
        match self.native.get(&chain) {
            Some(price) => price.clone(),
            None => self.book.native_usd_e6(chain),
        }
    }
}
