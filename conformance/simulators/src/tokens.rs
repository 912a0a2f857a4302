//! The devnet's EVM assets per chain, by symbol or address: USDC, USDT,
//! WBTC (the devnet's ERC-20s) and the native coin (ETH, address zero, or
//! the `0xEeee…EEeE` sentinel some aggregators use). Every devnet chain
//! deploys its tokens at the same addresses, so an address alone does not
//! name a chain — callers always say which chain.

use alloy::primitives::{address, Address};
use relay_devnet::{Devnet, Token};

/// The `0xEeee…EEeE` native-coin sentinel (Squid, Bungee).
pub const NATIVE_EEEE: Address = address!("0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE");

/// One asset on one chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenInfo {
    /// Symbol.
    pub symbol: &'static str,
    /// Human name.
    pub name: &'static str,
    /// Contract (zero for the native coin).
    pub address: Address,
    /// Decimals.
    pub decimals: u8,
}

impl TokenInfo {
    /// Whether this is the chain's native coin.
    pub fn is_native(&self) -> bool {
        self.address == Address::ZERO
    }
}

/// Every devnet asset on every chain.
#[derive(Clone, Debug, Default)]
pub struct TokenBook(Vec<(u64, TokenInfo)>);

impl TokenBook {
    /// The assets of `devnet`.
    pub fn from_devnet(devnet: &Devnet) -> Self {
        let mut v = Vec::new();
        for c in devnet.chains() {
            v.push((
                c.chain_id,
                TokenInfo {
                    symbol: "ETH",
                    name: "Ether",
                    address: Address::ZERO,
                    decimals: 18,
                },
            ));
            for t in Token::ALL {
                let info = TokenInfo {
                    symbol: t.symbol(),
                    name: t.name(),
                    address: c.deployment.token(t),
                    decimals: t.decimals(),
                };
                v.push((c.chain_id, info));
            }
        }
        TokenBook(v)
    }

    /// An asset on `chain` by symbol (any case) or address (the native
    /// coin also as `0xEeee…EEeE`).
    pub fn resolve(&self, chain: u64, token: &str) -> Option<TokenInfo> {
        let addr =
            token
                .parse::<Address>()
                .ok()
                .map(|a| if a == NATIVE_EEEE { Address::ZERO } else { a });
        self.0
            .iter()
            .find(|(c, t)| {
                *c == chain && (Some(t.address) == addr || t.symbol.eq_ignore_ascii_case(token))
            })
            .map(|(_, t)| t.clone())
    }

    /// Every asset on `chain`.
    pub fn on_chain(&self, chain: u64) -> impl Iterator<Item = &TokenInfo> {
        self.0
            .iter()
            .filter(move |(c, _)| *c == chain)
            .map(|(_, t)| t)
    }

    /// The chains with assets, in devnet order.
    pub fn chains(&self) -> Vec<u64> {
        let mut v: Vec<u64> = Vec::new();
        for (c, _) in &self.0 {
            if !v.contains(c) {
                v.push(*c);
            }
        }
        v
    }
}
