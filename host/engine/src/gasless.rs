//! The gasless configuration clients sign against (spec §2.4
//! `GET /api/gasless/info`), derived from the host configuration alone:
//! chains, tokens, Permit2, the relayer and the `RelayRouter` per chain.
//!
//! - `router` is the `RelayRouter` on `chainId` (the one-signature forms'
//!   contract: it pulls, withholds the fee and makes the rail's deposit call
//!   in one transaction, holding nothing after it); on a chain without a
//!   router it falls back to the relayer, the Permit2 spender of plain
//!   `mode: "permit2"`. `anyGasRouter` is the same contract: it carries any
//!   accepted token and the relayer fronts the gas.
//! - `relayer` is the Permit2 spender a plain `mode: "permit2"` signature
//!   names (`PermitTransferFrom`, spender = relayer).
//! - `tokenPaymaster` and `entryPoint` are `null`: gas is repaid out of the
//!   token in flight, not by an ERC-4337 paymaster.
//! - `domain` is the router's EIP-712 domain `{name: "RelayRouter",
//!   version: "3.1", chainId, verifyingContract: router}` (the `intent` and
//!   `erc2612` forms sign `RelayOrder` under it); without a router, Permit2's
//!   `{name: "Permit2", chainId, verifyingContract}` (no version).
//! - `signatureForms` lists every execute mode with what it signs, and
//!   `witnessTypeString` the Permit2 witness type of `permit2-witness`.
//!
//! `gaslessChains` is keyed by chain id: `address` (the router there, else
//! the relayer), `router`, `relayer`, `permit2`, `domain`, `stable` (the
//! contract of the chain's repayment stablecoin: USDC, else USDT, else the
//! first configured stablecoin; `null` if none) with `stableSymbol`, and
//! `version` (the service release, spec §9). `acceptedTokens` are the
//! configured tokens the host can price (stablecoins at par,
//! `token_usd_e6`): gas can be charged in them. A chain's native asset is
//! not listed: the router and Permit2 pull ERC-20 tokens only.

use super::prices::configured_usd_e6;
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
    /// Domain version (`3.1` for the router; Permit2's domain has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
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
    /// The router there, else the relayer.
    pub address: Option<String>,
    /// The `RelayRouter` there (null: only `mode: "permit2"`).
    pub router: Option<String>,
    /// The relayer (the Permit2 spender of `mode: "permit2"`).
    pub relayer: Option<String>,
    /// The router's EIP-712 domain there, else Permit2's.
    pub domain: SigningDomain,
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
    /// The Permit2 spender of `mode: "permit2"`.
    pub relayer: Option<String>,
    /// Every execute mode and what it signs.
    pub signature_forms: Vec<SignatureForm>,
    /// The Permit2 witness type string of `permit2-witness`.
    pub witness_type_string: String,
}

/// One accepted signature form (an execute `mode`).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignatureForm {
    /// The execute `mode`.
    pub mode: String,
    /// What the client signs.
    pub signs: String,
    /// Whether it needs the `RelayRouter` on the source chain.
    pub needs_router: bool,
}

/// The signature forms (`signatureForms`).
pub const SIGNATURE_FORMS: [(&str, &str, bool); 4] = [
    ("permit2", "Permit2 PermitTransferFrom, spender = the relayer (the Uniswap permit2-sdk shape); the relayer pulls, then deposits in a second transaction", false),
    ("permit2-witness", "Permit2 PermitWitnessTransferFrom, spender = the router, witness = RelayIntent (recipient, toChain, toToken, minOut, rail, planHash, feeCap, deadline); plus an EIP-2612 Permit for Permit2 when the owner never approved it", true),
    ("erc2612", "an EIP-2612 Permit for the router, then the router's RelayOrder (domain RelayRouter 3.1)", true),
    ("intent", "the router's RelayOrder (domain RelayRouter 3.1), for an owner who already approved the router", true),
];

/// The signing domain on chain `id`: the router's, else Permit2's.
fn domain_of(config: &HostConfig, id: u64) -> SigningDomain {
    match config.router(id) {
        Some(router) => SigningDomain {
            name: relay_chain::router::DOMAIN_NAME.into(),
            version: Some(relay_chain::router::DOMAIN_VERSION.into()),
            chain_id: id,
            verifying_contract: router.into(),
        },
        None => SigningDomain {
            name: "Permit2".into(),
            version: None,
            chain_id: id,
            verifying_contract: config.permit2.clone(),
        },
    }
}

/// The gasless info for `chain` (must be configured; the lowest configured
/// chain when `None`). `release` is the service release per-chain entries
/// carry (spec §9).
pub fn info(config: &HostConfig, chain: Option<u64>, release: &str) -> GaslessInfo {
    let chain = chain.or_else(|| config.chain_ids().first().copied());
    let relayer = config.relayer.clone();
    let router = chain
        .and_then(|id| config.router(id))
        .map(str::to_string)
        .or_else(|| relayer.clone());
    let notes = [
        ("router", "the RelayRouter on chainId (the one-signature forms: it pulls, withholds the fee and makes the rail's deposit call in one transaction, holding nothing after it); the relayer where no router is deployed"),
        ("anyGasRouter", "the same contract: it carries any accepted token; the relayer fronts the gas and is repaid from the token moved"),
        ("relayer", "the Permit2 spender of mode permit2 (PermitTransferFrom, spender = relayer)"),
        ("tokenPaymaster", "null: no ERC-4337 paymaster; gas is withheld from the token in flight"),
        ("entryPoint", "null: no ERC-4337 EntryPoint; the relayer broadcasts ordinary transactions"),
    ];
    GaslessInfo {
        service: "relay".into(),
        router: router.clone(),
        any_gas_router: router,
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
        domain: chain.map(|id| domain_of(config, id)),
        domain_note: "the router's domain {name RelayRouter, version 3.1, chainId, verifyingContract router} signs RelayOrder (modes intent, erc2612); a permit2-witness signature is under Permit2's domain {name Permit2, chainId, verifyingContract permit2} (no version); POST /api/route/intent serves the exact typed data of every form".into(),
        address_notes: notes
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        relayer,
        signature_forms: SIGNATURE_FORMS
            .iter()
            .map(|(mode, signs, needs_router)| SignatureForm {
                mode: mode.to_string(),
                signs: signs.to_string(),
                needs_router: *needs_router,
            })
            .collect(),
        witness_type_string: relay_chain::router::WITNESS_TYPE_STRING.into(),
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
                address: config
                    .router(id)
                    .map(str::to_string)
                    .or_else(|| config.relayer.clone()),
                router: config.router(id).map(str::to_string),
                relayer: config.relayer.clone(),
                domain: domain_of(config, id),
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
            if configured_usd_e6(&config.quote, ChainRef::Evm(id), &token).is_none() {
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

    #[test]
    fn a_chain_with_a_router_signs_under_the_routers_versioned_domain() {
        let mut c = config();
        let router = "0x00000000000000000000000000000000000000d0";
        c.chains.get_mut("8453").unwrap().router = Some(router.into());
        let i = info(&c, Some(8453), "3.1");
        assert_eq!(
            i["domain"],
            json!({"name": "RelayRouter", "version": "3.1", "chainId": 8453, "verifyingContract": router})
        );
        assert_eq!(
            (&i["router"], &i["anyGasRouter"]),
            (&json!(router), &json!(router))
        );
        assert_eq!(i["relayer"], "0x00000000000000000000000000000000000000aa");
        assert_eq!(i["gaslessChains"]["8453"]["address"], router);
        assert_eq!(
            i["gaslessChains"]["10"]["address"], i["relayer"],
            "no router on 10"
        );
        assert_eq!(i["gaslessChains"]["10"]["domain"]["name"], "Permit2");
        let modes: Vec<&str> = i["signatureForms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["mode"].as_str().unwrap())
            .collect();
        assert_eq!(modes, ["permit2", "permit2-witness", "erc2612", "intent"]);
        assert!(i["witnessTypeString"]
            .as_str()
            .unwrap()
            .starts_with("RelayIntent witness)"));
    }
}
