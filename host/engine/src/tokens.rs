//! Nodes and tokens as this host knows them (spec §2.1, §2.5).
//!
//! A node is an EVM chain id (integer, or numeric string as query strings
//! carry it), a chain's well-known name (`base`), or a non-EVM node name
//! (`bitcoin`). An EVM chain is served only when it is configured. A token
//! is a symbol or a contract address known on its chain (the host's
//! `[chains.<id>.tokens]`), or the chain's native asset when omitted (also
//! reachable by its symbol, `ETH`). Non-EVM nodes carry the assets of a
//! fixed table and have no token contracts here.
//!
//! An amount must stay below 10^15 whole tokens ([`check_maximum`]).
//!
//! Everything is read from the host configuration; nothing here asks a
//! rail, so a token a rail does not know is still a known token (the lane is
//! then unroutable, not the request malformed).

use relay_config::HostConfig;
use relay_plugin_api::{Amount, ChainRef, NonEvmNode, Token, U256};
use relay_types::chains::{well_known_name, GASLESS_CHAINS};

/// Why a chain or token is not usable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// Not a node, or a node this host does not serve.
    #[error("{0}")]
    UnknownChain(String),
    /// Not a symbol or address known on the chain.
    #[error("{0}")]
    UnknownToken(String),
    /// Looks like an address but is not one.
    #[error("{0}")]
    InvalidAddress(String),
}

/// Assets of the non-EVM nodes: symbol, decimals, whether native.
fn non_evm_assets(node: NonEvmNode) -> &'static [(&'static str, u8, bool)] {
    match node {
        NonEvmNode::Bitcoin => &[("BTC", 8, true)],
        NonEvmNode::Solana => &[("SOL", 9, true), ("USDC", 6, false), ("USDT", 6, false)],
        NonEvmNode::Stellar => &[("XLM", 7, true), ("USDC", 7, false)],
        NonEvmNode::Tron => &[("TRX", 6, true), ("USDT", 6, false), ("USDC", 6, false)],
        NonEvmNode::Sui => &[("SUI", 9, true), ("USDC", 6, false)],
    }
}

/// The native asset's symbol on an EVM chain.
pub fn evm_native_symbol(chain: u64) -> &'static str {
    match chain {
        56 => "BNB",
        100 => "XDAI",
        137 => "POL",
        146 => "S",
        999 => "HYPE",
        5000 => "MNT",
        33139 => "APE",
        43114 => "AVAX",
        _ => "ETH",
    }
}

/// Parses a node reference: id, numeric string, well-known EVM name or
/// non-EVM node name.
pub fn parse_chain(raw: &str) -> Result<ChainRef, LookupError> {
    if let Ok(c) = raw.parse::<ChainRef>() {
        return Ok(c);
    }
    let t = raw.trim();
    GASLESS_CHAINS
        .into_iter()
        .find(|id| well_known_name(*id).eq_ignore_ascii_case(t))
        .map(ChainRef::Evm)
        .ok_or_else(|| {
            LookupError::UnknownChain(format!(
                "{:?} is not an EVM chain id, chain name or one of stellar, solana, bitcoin, tron, sui",
                clip(raw)
            ))
        })
}

/// Checks that this host serves `chain` (EVM chains must be configured).
pub fn served(config: &HostConfig, chain: ChainRef) -> Result<ChainRef, LookupError> {
    match chain {
        ChainRef::Evm(id) if !config.chains.contains_key(&id.to_string()) => {
            Err(LookupError::UnknownChain(format!(
                "chain {id} is not served by this host (served: {:?})",
                config.chain_ids()
            )))
        }
        c => Ok(c),
    }
}

/// The native asset of a node.
pub fn native(chain: ChainRef) -> Token {
    let (symbol, decimals) = match chain {
        ChainRef::Evm(id) => (evm_native_symbol(id), 18),
        ChainRef::NonEvm(n) => {
            let (s, d, _) = non_evm_assets(n)[0];
            (s, d)
        }
    };
    Token {
        symbol: symbol.into(),
        address: None,
        decimals,
    }
}

/// Whether `s` is a 0x-prefixed 20-byte hex address.
pub fn is_evm_address(s: &str) -> bool {
    s.strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .is_some_and(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Resolves `token` (symbol or address; `None` for the native asset) on a
/// served `chain`.
pub fn resolve(
    config: &HostConfig,
    chain: ChainRef,
    token: Option<&str>,
) -> Result<Token, LookupError> {
    let Some(raw) = token.map(str::trim) else {
        return Ok(native(chain));
    };
    match chain {
        ChainRef::Evm(id) => resolve_evm(config, id, raw),
        ChainRef::NonEvm(n) => non_evm_assets(n)
            .iter()
            .find(|(s, _, _)| s.eq_ignore_ascii_case(raw))
            .map(|(s, d, _)| Token {
                symbol: (*s).into(),
                address: None,
                decimals: *d,
            })
            .ok_or_else(|| unknown(raw, chain)),
    }
}

fn resolve_evm(config: &HostConfig, id: u64, raw: &str) -> Result<Token, LookupError> {
    let looks_like_address = raw.starts_with("0x") || raw.starts_with("0X");
    if looks_like_address && !is_evm_address(raw) {
        return Err(LookupError::InvalidAddress(format!(
            "{:?} is not a 0x-prefixed 20-byte token address",
            clip(raw)
        )));
    }
    let tokens = config.chains.get(&id.to_string()).map(|c| &c.tokens);
    let found = tokens.into_iter().flatten().find(|(sym, t)| {
        if looks_like_address {
            t.address.eq_ignore_ascii_case(raw)
        } else {
            sym.eq_ignore_ascii_case(raw)
        }
    });
    if let Some((sym, t)) = found {
        return Ok(Token {
            symbol: sym.to_ascii_uppercase(),
            address: Some(t.address.clone()),
            decimals: t.decimals,
        });
    }
    let native = native(ChainRef::Evm(id));
    if native.symbol.eq_ignore_ascii_case(raw) {
        return Ok(native);
    }
    Err(unknown(raw, ChainRef::Evm(id)))
}

/// The largest amount a request may name is below this many whole tokens
/// (`10^15`): `amount < 10^(decimals + 15)` in smallest units. It is far
/// above any real transfer (10^15 USD), yet keeps every fee, price and
/// gas computation far from 256-bit overflow.
pub const MAX_WHOLE_TOKENS_EXP: u32 = 15;

/// Checks `amount` (smallest units of `token`) against the maximum,
/// explaining a refusal.
pub fn check_maximum(token: &Token, amount: &Amount) -> Result<(), String> {
    let exp = u32::from(token.decimals) + MAX_WHOLE_TOKENS_EXP;
    let Some(cap) = U256::from(10u8).checked_pow(U256::from(exp)) else {
        return Ok(());
    };
    if amount.0 < cap {
        return Ok(());
    }
    Err(format!(
        "{} is above the maximum: amounts must be below 10^{MAX_WHOLE_TOKENS_EXP} whole {} (10^{exp} smallest units at {} decimals)",
        clip(&amount.to_string()),
        token.symbol,
        token.decimals
    ))
}

/// Whether `symbol` exists on `chain` (used to default the destination token).
pub fn has_symbol(config: &HostConfig, chain: ChainRef, symbol: &str) -> bool {
    resolve(config, chain, Some(symbol)).is_ok()
}

fn unknown(raw: &str, chain: ChainRef) -> LookupError {
    LookupError::UnknownToken(format!(
        "{:?} is not a token this host knows on {chain}",
        clip(raw)
    ))
}

/// At most 60 characters of user input, for messages.
pub fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_config::{ChainConfig, TokenConfig};

    const USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

    fn config() -> HostConfig {
        let mut c = HostConfig::default();
        let mut chain = ChainConfig::default();
        chain.tokens.insert(
            "USDC".into(),
            TokenConfig {
                address: USDC.into(),
                decimals: 6,
            },
        );
        c.chains.insert("8453".into(), chain);
        c
    }

    #[test]
    fn chains_parse_from_ids_numeric_strings_and_names() {
        for raw in ["8453", "base", "BASE"] {
            assert_eq!(parse_chain(raw), Ok(ChainRef::Evm(8453)), "{raw}");
        }
        assert_eq!(
            parse_chain("bitcoin"),
            Ok(ChainRef::NonEvm(NonEvmNode::Bitcoin))
        );
        assert!(matches!(
            parse_chain("dogechain"),
            Err(LookupError::UnknownChain(_))
        ));
        assert!(served(&config(), ChainRef::Evm(10)).is_err());
        assert!(served(&config(), ChainRef::Evm(8453)).is_ok());
    }

    #[test]
    fn tokens_resolve_by_symbol_address_or_native() {
        let c = config();
        let base = ChainRef::Evm(8453);
        let by_symbol = resolve(&c, base, Some("usdc")).unwrap();
        assert_eq!(by_symbol.address.as_deref(), Some(USDC));
        assert_eq!(
            resolve(&c, base, Some(&USDC.to_lowercase())).unwrap(),
            by_symbol
        );
        assert_eq!(resolve(&c, base, None).unwrap().symbol, "ETH");
        assert_eq!(resolve(&c, base, Some("eth")).unwrap().address, None);
        assert!(matches!(
            resolve(&c, base, Some("DOGE")),
            Err(LookupError::UnknownToken(_))
        ));
        assert!(matches!(
            resolve(&c, base, Some("0x1234")),
            Err(LookupError::InvalidAddress(_))
        ));
        let btc = resolve(&c, ChainRef::NonEvm(NonEvmNode::Bitcoin), None).unwrap();
        assert_eq!((btc.symbol.as_str(), btc.decimals), ("BTC", 8));
    }

    #[test]
    fn amounts_stay_below_a_quadrillion_whole_tokens() {
        let c = config();
        let usdc = resolve(&c, ChainRef::Evm(8453), Some("USDC")).unwrap();
        let eth = resolve(&c, ChainRef::Evm(8453), None).unwrap();
        let units = |s: &str| s.parse::<Amount>().unwrap();
        assert!(check_maximum(&usdc, &units("999999999999999999999")).is_ok());
        let refused = check_maximum(&usdc, &units("1000000000000000000000")).unwrap_err();
        assert!(refused.contains("10^15 whole USDC"), "{refused}");
        let max = Amount(U256::MAX);
        assert!(check_maximum(&usdc, &max).is_err());
        assert!(check_maximum(&eth, &units(&format!("1{}", "0".repeat(32)))).is_ok());
        assert!(check_maximum(&eth, &units(&format!("1{}", "0".repeat(33)))).is_err());
        let odd = Token {
            symbol: "ODD".into(),
            address: None,
            decimals: 255,
        };
        assert!(
            check_maximum(&odd, &max).is_ok(),
            "a cap past 2^256 caps nothing"
        );
    }
}
