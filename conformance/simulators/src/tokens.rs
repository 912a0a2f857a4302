//! The devnet's tokens per chain, by symbol and by address.

use alloy::primitives::Address;
use relay_devnet::{Devnet, Token};

/// One token on one chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenInfo {
    /// Symbol.
    pub symbol: &'static str,
    /// Contract.
    pub address: Address,
    /// Decimals.
    pub decimals: u8,
}

/// Every devnet token on every chain.
#[derive(Clone, Debug, Default)]
pub struct TokenBook(Vec<(u64, TokenInfo)>);

impl TokenBook {
    /// The tokens of `devnet`.
    pub fn from_devnet(devnet: &Devnet) -> Self {
        let mut v = Vec::new();
        for c in devnet.chains() {
            for t in Token::ALL {
                let info = TokenInfo {
                    symbol: t.symbol(),
                    address: c.deployment.token(t),
                    decimals: t.decimals(),
                };
                v.push((c.chain_id, info));
            }
        }
        TokenBook(v)
    }

    /// A token on `chain` by symbol (any case) or address.
    pub fn resolve(&self, chain: u64, token: &str) -> Option<TokenInfo> {
        let addr = token.parse::<Address>().ok();
        self.0
            .iter()
            .find(|(c, t)| {
                *c == chain && (Some(t.address) == addr || t.symbol.eq_ignore_ascii_case(token))
            })
            .map(|(_, t)| t.clone())
    }
}
