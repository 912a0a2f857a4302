//! USD prices the fee maths converts with (spec §8.2 gas "converted to the
//! token"), integer micro-USD. [`token_price`] asks the host's price book
//! ([`super::oracle::PriceBook`]: on-chain feeds first). The configured
//! prices below (`[quote]`) are the book's fallback for pairs that have no
//! feed configured:
//!
//! 1. an EVM chain's native asset (no contract address) → `native_usd_e6`
//!    of that chain (built-in defaults per chain);
//! 2. a stablecoin symbol (`stablecoins`, default USDC, USDT, DAI) → 1 USD;
//! 3. any other symbol → `token_usd_e6` (default WBTC and BTC);
//! 4. otherwise unpriced: the caller converts through another price.

use super::{
    fees::TokenPrice,
    oracle::{PriceBook, Unpriced},
    tokens::evm_native_symbol,
};
use relay_config::{HostConfig, QuoteConfig};
use relay_plugin_api::{ChainRef, Token};

/// One whole USD in micro-USD.
pub const ONE_USD_E6: u64 = 1_000_000;

/// The USD price of `token` on `chain` from the price book.
pub fn token_price(
    book: &PriceBook,
    chain: ChainRef,
    token: &Token,
) -> Result<TokenPrice, Unpriced> {
    book.token_usd_e6(chain, token).map(|usd_e6| TokenPrice {
        usd_e6,
        decimals: token.decimals,
    })
}

/// The configured USD price of `token` on `chain`, micro-USD (rules 1–3).
pub fn configured_usd_e6(q: &QuoteConfig, chain: ChainRef, token: &Token) -> Option<u64> {
    match (chain, &token.address) {
        (ChainRef::Evm(id), None) => Some(q.native_usd_e6(id)),
        _ => configured_symbol_usd_e6(q, &token.symbol),
    }
    .filter(|p| *p > 0)
}

/// The configured USD price of `asset` (a symbol: `ETH`, `BTC`, `USDC`),
/// micro-USD: a stablecoin at par, `token_usd_e6`, else the native price
/// of the lowest configured chain whose native asset it is.
pub fn configured_pair_usd_e6(config: &HostConfig, asset: &str) -> Option<u64> {
    let q = &config.quote;
    configured_symbol_usd_e6(q, asset)
        .or_else(|| {
            let native = config
                .chain_ids()
                .into_iter()
                .find(|id| evm_native_symbol(*id).eq_ignore_ascii_case(asset.trim()))?;
            Some(q.native_usd_e6(native))
        })
        .filter(|p| *p > 0)
}

fn configured_symbol_usd_e6(q: &QuoteConfig, symbol: &str) -> Option<u64> {
    let symbol = symbol.trim();
    if q.stablecoins.iter().any(|s| s.eq_ignore_ascii_case(symbol)) {
        return Some(ONE_USD_E6);
    }
    q.token_usd_e6
        .iter()
        .find(|(s, _)| s.eq_ignore_ascii_case(symbol))
        .map(|(_, p)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_config::ChainConfig;

    fn token(symbol: &str, address: Option<&str>, decimals: u8) -> Token {
        Token {
            symbol: symbol.into(),
            address: address.map(Into::into),
            decimals,
        }
    }

    #[test]
    fn natives_stables_and_configured_tokens_are_priced() {
        let q = QuoteConfig::default();
        let base = ChainRef::Evm(8453);
        let p = |c, t: &Token| configured_usd_e6(&q, c, t);
        assert_eq!(p(base, &token("ETH", None, 18)), Some(3_000_000_000));
        assert_eq!(
            p(ChainRef::Evm(56), &token("BNB", None, 18)),
            Some(600_000_000)
        );
        assert_eq!(p(base, &token("USDC", Some("0x1"), 6)), Some(ONE_USD_E6));
        assert_eq!(
            p(base, &token("WBTC", Some("0x2"), 8)),
            Some(60_000_000_000)
        );
        assert_eq!(p(base, &token("PEPE", Some("0x3"), 18)), None);
    }

    #[test]
    fn pairs_are_priced_by_symbol_or_a_configured_chains_native() {
        let mut c = HostConfig::default();
        c.chains.insert("56".into(), ChainConfig::default());
        assert_eq!(configured_pair_usd_e6(&c, "bnb"), Some(600_000_000));
        assert_eq!(configured_pair_usd_e6(&c, "USDT"), Some(ONE_USD_E6));
        assert_eq!(configured_pair_usd_e6(&c, "ETH"), None, "no ETH chain");
    }
}
