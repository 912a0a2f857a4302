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
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The route modes (`routes`) and what each means here.
pub const ROUTE_MODES: [(&str, &str); 3] = [
    ("direct", "execute with `rail` naming one rail: that rail only, no failover to others"),
    ("cheapest", "the default: rails ranked by net destination output after every fee, failover down the ranking"),
    ("fastest", "rank by durationSec instead (compare shows each rail's etaSeconds)"),
];

/// The recommended mode.
pub const RECOMMENDED: &str = "cheapest";

/// The EIP-712 domain clients sign under.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningDomain {
    /// Domain name.
    pub name: String,
    /// Chain id.
    pub chain_id: u64,
    /// The verifying contract.
    pub verifying_contract: String,
}

/// One chain of `gaslessChains`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GaslessChain {
    /// Chain name.
    pub name: String,
    /// The relayer there.
    pub address: Option<String>,
    /// The Permit2 contract.
    pub permit2: String,
    /// The repayment stablecoin's contract.
    pub stable: Option<String>,
    /// Its symbol.
    pub stable_symbol: Option<String>,
    /// The service release (spec §9).
    pub version: String,
}

/// One accepted token.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AcceptedToken {
    /// Symbol.
    pub symbol: String,
    /// Decimals, when equal on every chain.
    pub decimals: Option<u8>,
    /// Whether priced at par.
    pub stable: bool,
    /// Contract per chain id.
    pub chains: BTreeMap<String, String>,
}

/// `GET /api/gasless/info` (spec §2.4).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GaslessInfo {
    /// Service name.
    pub service: String,
    /// The Permit2 spender (the relayer).
    pub router: Option<String>,
    /// The account that fronts gas (the relayer).
    pub any_gas_router: Option<String>,
    /// Always null: no ERC-4337 paymaster.
    pub token_paymaster: Option<String>,
    /// The Permit2 contract.
    pub permit2: String,
    /// Always null: no ERC-4337 EntryPoint.
    pub entry_point: Option<String>,
    /// The chain `domain` is for.
    pub chain_id: Option<u64>,
    /// Route modes.
    pub routes: Vec<String>,
    /// What each route mode means.
    pub route_modes: BTreeMap<String, String>,
    /// The recommended mode.
    pub recommended: String,
    /// Per chain id.
    pub gasless_chains: BTreeMap<String, GaslessChain>,
    /// Tokens gas can be charged in.
    pub accepted_tokens: Vec<AcceptedToken>,
    /// The EIP-712 domain.
    pub domain: Option<SigningDomain>,
    /// About the domain.
    pub domain_note: String,
    /// About each address.
    pub address_notes: BTreeMap<String, String>,
}

/// The gasless info for `chain` (must be configured; the lowest configured
/// chain when `None`). `release` is the service release per-chain entries
/// carry (spec §9).
pub fn info(config: &HostConfig, chain: Option<u64>, release: &str) -> GaslessInfo {
    let chain = chain.or_else(|| config.chain_ids().first().copied());
    let relayer = config.relayer.clone();
    let domain = chain.map(|id| SigningDomain {
        name: "Permit2".into(),
        chain_id: id,
        verifying_contract: config.permit2.clone(),
    });
    let notes = [
        ("router", "the relayer: the Permit2 spender every transfer signature names"),
        ("anyGasRouter", "the relayer: it fronts gas for any accepted token and is repaid from the token moved; no router contract is deployed"),
        ("tokenPaymaster", "null: no ERC-4337 paymaster; gas is withheld from the token in flight"),
        ("entryPoint", "null: no ERC-4337 EntryPoint; the relayer broadcasts ordinary transactions"),
    ];
    GaslessInfo {
        service: "relay".into(),
        router: relayer.clone(),
        any_gas_router: relayer,
        token_paymaster: None,
        permit2: config.permit2.clone(),
        entry_point: None,
        chain_id: chain,
        routes: ROUTE_MODES.iter().map(|(m, _)| m.to_string()).collect(),
        route_modes: ROUTE_MODES
            .iter()
            .map(|(m, what)| (m.to_string(), what.to_string()))
            .collect(),
        recommended: RECOMMENDED.into(),
        gasless_chains: gasless_chains(config, release),
        accepted_tokens: accepted_tokens(config),
        domain,
        domain_note: "Permit2's EIP-712 domain has no version field; sign PermitTransferFrom with spender = router (the relayer) under this domain, with chainId set to the source chain".into(),
        address_notes: notes
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn is_stable(config: &HostConfig, symbol: &str) -> bool {
    config
        .quote
        .stablecoins
        .iter()
        .any(|s| s.eq_ignore_ascii_case(symbol))
}

fn gasless_chains(config: &HostConfig, release: &str) -> BTreeMap<String, GaslessChain> {
    let mut out = BTreeMap::new();
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
            GaslessChain {
                name: config.chain_name(id),
                address: config.relayer.clone(),
                permit2: config.permit2.clone(),
                stable: stable.map(|(_, t)| t.address.clone()),
                stable_symbol: stable.map(|(s, _)| s.clone()),
                version: release.into(),
            },
        );
    }
    out
}

fn accepted_tokens(config: &HostConfig) -> Vec<AcceptedToken> {
    let mut by_symbol: BTreeMap<String, (Vec<u8>, BTreeMap<String, String>)> = BTreeMap::new();
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
            entry.1.insert(id.to_string(), t.address.clone());
        }
    }
    by_symbol
        .into_iter()
        .map(|(symbol, (decimals, chains))| {
            let same = decimals.windows(2).all(|w| w[0] == w[1]);
            AcceptedToken {
                stable: is_stable(config, &symbol),
                symbol,
                decimals: same.then(|| decimals[0]),
                chains,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_config::{ChainConfig, TokenConfig};
    use serde_json::{json, Value};

    fn info(c: &HostConfig, chain: Option<u64>, release: &str) -> Value {
        serde_json::to_value(super::info(c, chain, release)).unwrap()
    }

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
