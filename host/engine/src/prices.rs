//! USD prices the fee maths converts with (spec §8.2 gas "converted to the
//! token"), all from configuration (`[quote]`), integer micro-USD:
//!
//! 1. an EVM chain's native asset (no contract address) → `native_usd_e6`
//!    of that chain (built-in defaults per chain);
//! 2. a stablecoin symbol (`stablecoins`, default USDC, USDT, DAI) → 1 USD;
//! 3. any other symbol → `token_usd_e6` (default WBTC and BTC);
//! 4. otherwise unpriced: the caller converts through another price.

use super::fees::TokenPrice;
use relay_config::QuoteConfig;
use relay_plugin_api::{ChainRef, Token};

/// One whole USD in micro-USD.
pub const ONE_USD_E6: u64 = 1_000_000;

/// The USD price of `token` on `chain`, if configured.
pub fn token_price(q: &QuoteConfig, chain: ChainRef, token: &Token) -> Option<TokenPrice> {
    let usd_e6 = match (chain, &token.address) {
        (ChainRef::Evm(id), None) => Some(q.native_usd_e6(id)),
        _ if q
            .stablecoins
            .iter()
            .any(|s| s.eq_ignore_ascii_case(&token.symbol)) =>
        {
            Some(ONE_USD_E6)
        }
        _ => q
            .token_usd_e6
            .iter()
            .find(|(s, _)| s.eq_ignore_ascii_case(&token.symbol))
            .map(|(_, p)| *p),
    }?;
    (usd_e6 > 0).then_some(TokenPrice {
        usd_e6,
        decimals: token.decimals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            token_price(&q, base, &token("ETH", None, 18)).map(|p| p.usd_e6),
            Some(3_000_000_000)
        );
        assert_eq!(
            token_price(&q, ChainRef::Evm(56), &token("BNB", None, 18)).map(|p| p.usd_e6),
            Some(600_000_000)
        );
        assert_eq!(
            token_price(&q, base, &token("USDC", Some("0x1"), 6)).map(|p| p.usd_e6),
            Some(ONE_USD_E6)
        );
        assert_eq!(
            token_price(&q, base, &token("WBTC", Some("0x2"), 8)).map(|p| p.usd_e6),
            Some(60_000_000_000)
        );
        assert_eq!(token_price(&q, base, &token("PEPE", Some("0x3"), 18)), None);
    }
}
