//! The gasless configuration clients sign against (spec §2.4
//! `GET /api/gasless/info`), derived from the host configuration alone:
//! chains, tokens, Permit2, the relayer. Nothing is invented: this host
//! runs no router contract, ERC-4337 paymaster or EntryPoint, so
//!
//! - `router` and `anyGasRouter` are the **relayer** address — the Permit2
//!   spender every transfer signature names and the account that fronts gas
//!   for any accepted token (there is no separate router contract);
//! - `tokenPaymaster` and `entryPoint` are `null`: gas is repaid out of the
//!   token in flight by the relayer, not by an ERC-4337 paymaster.
//!
//! `domain` is the EIP-712 domain of the signature clients make, Permit2's:
//! `{name: "Permit2", chainId, verifyingContract}`. Permit2's domain has
//! **no `version`** field; adding one would change the domain separator and
//! break every signature, so it is left out (and said so in `domainNote`).
//! `chainId` is the chain the domain is for: the `chainId` asked for, else
//! the lowest configured chain id.
//!
//! `gaslessChains` is keyed by chain id: `address` (the relayer there),
//! `permit2`, `stable` (the contract of the chain's repayment stablecoin:
//! USDC, else USDT, else the first configured stablecoin; `null` if none)
//! with `stableSymbol`, and `version` (the service release, spec §9).
//! `acceptedTokens` are the configured tokens the host can price (stablecoins
//! at par, `token_usd_e6`): gas can be charged in them. A chain's native
//! asset is not listed: Permit2 pulls ERC-20 tokens only.

use super::prices::token_price;
use relay_config::HostConfig;
use relay_plugin_api::{ChainRef, Token};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The route modes (`routes`) and what each means here.
pub const ROUTE_MODES: [(&str, &str); 3] = [
    ("direct", "execute with `rail` naming one rail: that rail only, no failover to others"),
    ("cheapest", "the default: rails ranked by net destination output after every fee, failover down the ranking"),
    ("fastest", "rank by durationSec instead (compare shows each rail's etaSeconds)"),
];

/// The recommended mode.
pub const RECOMMENDED: &str = "cheapest";

/// The gasless info for `chain` (must be configured; the lowest configured
/// chain when `None`). `release` is the service release per-chain entries
/// carry (spec §9).
pub fn info(config: &HostConfig, chain: Option<u64>, release: &str) -> Value {
    let chain = chain.or_else(|| config.chain_ids().first().copied());
    let relayer = config.relayer.as_deref();
    let domain = chain
        .map(|id| json!({"name": "Permit2", "chainId": id, "verifyingContract": config.permit2}));
    let routes: Vec<&str> = ROUTE_MODES.iter().map(|(m, _)| *m).collect();
    let modes: Map<String, Value> = ROUTE_MODES
        .iter()
        .map(|(m, what)| (m.to_string(), json!(what)))
        .collect();
    json!({
        "service": "relay",
        "router": relayer,
        "anyGasRouter": relayer,
        "tokenPaymaster": null,
        "permit2": config.permit2,
        "entryPoint": null,
        "chainId": chain,
        "routes": routes,
        "routeModes": modes,
        "recommended": RECOMMENDED,
        "gaslessChains": gasless_chains(config, release),
        "acceptedTokens": accepted_tokens(config),
        "domain": domain,
        "domainNote": "Permit2's EIP-712 domain has no version field; sign PermitTransferFrom with spender = router (the relayer) under this domain, with chainId set to the source chain",
        "addressNotes": {
            "router": "the relayer: the Permit2 spender every transfer signature names",
            "anyGasRouter": "the relayer: it fronts gas for any accepted token and is repaid from the token moved; no router contract is deployed",
            "tokenPaymaster": "null: no ERC-4337 paymaster; gas is withheld from the token in flight",
            "entryPoint": "null: no ERC-4337 EntryPoint; the relayer broadcasts ordinary transactions",
        },
    })
}

fn is_stable(config: &HostConfig, symbol: &str) -> bool {
    config
        .quote
        .stablecoins
        .iter()
        .any(|s| s.eq_ignore_ascii_case(symbol))
}

fn gasless_chains(config: &HostConfig, release: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for id in config.chain_ids() {
        let Some(c) = config.chains.get(&id.to_string()) else {
            continue;
        };
        let stable = ["USDC", "USDT"]
            .iter()
            .find_map(|s| c.tokens.get_key_value(*s))
            .or_else(|| c.tokens.iter().find(|(s, _)| is_stable(config, s)));
        out.insert(
            id.to_string(),
            json!({
                "name": config.chain_name(id),
                "address": config.relayer,
                "permit2": config.permit2,
                "stable": stable.map(|(_, t)| &t.address),
                "stableSymbol": stable.map(|(s, _)| s),
                "version": release,
            }),
        );
    }
    out
}

fn accepted_tokens(config: &HostConfig) -> Vec<Value> {
    let mut by_symbol: BTreeMap<String, (Vec<u8>, Map<String, Value>)> = BTreeMap::new();
    for id in config.chain_ids() {
        let Some(c) = config.chains.get(&id.to_string()) else {
            continue;
        };
        for (symbol, t) in &c.tokens {
            let token = Token {
                symbol: symbol.clone(),
                address: Some(t.address.clone()),
                decimals: t.decimals,
            };
            if token_price(&config.quote, ChainRef::Evm(id), &token).is_none() {
                continue;
            }
            let entry = by_symbol.entry(symbol.to_ascii_uppercase()).or_default();
            entry.0.push(t.decimals);
            entry.1.insert(id.to_string(), json!(t.address));
        }
    }
    by_symbol
        .into_iter()
        .map(|(symbol, (decimals, chains))| {
            let same = decimals.windows(2).all(|w| w[0] == w[1]);
            json!({
                "symbol": symbol,
                "decimals": if same { json!(decimals[0]) } else { Value::Null },
                "stable": is_stable(config, &symbol),
                "chains": chains,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_config::{ChainConfig, TokenConfig};

    fn config() -> HostConfig {
        let mut c = HostConfig {
            relayer: Some("0x00000000000000000000000000000000000000aa".into()),
            ..HostConfig::default()
        };
        for (id, usdc) in [("8453", "0x01"), ("10", "0x02")] {
            let tokens = [("USDC", usdc, 6), ("WBTC", "0x03", 8), ("PEPE", "0x04", 18)]
                .into_iter()
                .map(|(s, a, d)| {
                    let t = TokenConfig {
                        address: a.into(),
                        decimals: d,
                    };
                    (s.to_string(), t)
                })
                .collect();
            c.chains.insert(
                id.into(),
                ChainConfig {
                    tokens,
                    ..ChainConfig::default()
                },
            );
        }
        c
    }

    #[test]
    fn the_domain_is_permit2s_without_a_version_on_the_lowest_chain_by_default() {
        let i = info(&config(), None, "3.1");
        assert_eq!(i["chainId"], 10);
        assert_eq!(
            i["domain"],
            json!({"name": "Permit2", "chainId": 10, "verifyingContract": relay_config::CANONICAL_PERMIT2})
        );
        assert_eq!(
            info(&config(), Some(8453), "3.1")["domain"]["chainId"],
            8453
        );
        assert_eq!(i["router"], i["anyGasRouter"]);
        assert_eq!(
            (&i["tokenPaymaster"], &i["entryPoint"]),
            (&Value::Null, &Value::Null)
        );
        assert_eq!(i["routes"], json!(["direct", "cheapest", "fastest"]));
    }

    #[test]
    fn chains_carry_their_stablecoin_and_only_priced_tokens_are_accepted() {
        let i = info(&config(), None, "3.1");
        assert_eq!(i["gaslessChains"]["8453"]["stable"], "0x01");
        assert_eq!(i["gaslessChains"]["10"]["version"], "3.1");
        let symbols: Vec<&str> = i["acceptedTokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["symbol"].as_str().unwrap())
            .collect();
        assert_eq!(symbols, ["USDC", "WBTC"], "PEPE has no price");
        assert_eq!(i["acceptedTokens"][0]["chains"]["10"], "0x02");
        assert_eq!(i["acceptedTokens"][0]["stable"], true);
    }
}
