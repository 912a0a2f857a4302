//! `relay doctor --config …`: checks a configuration against the live
//! endpoints it names before it goes live — each RPC answers with its
//! chain's id, each installed rail's upstream answers its health call, the
//! relayer key loads and is the configured relayer, the relayer has gas on
//! every chain, the store connects and migrates. Each check is a small
//! function returning [`Check`] rows; nothing here prints a secret.

use alloy::primitives::{Address, U256};
use relay_capabilities::CapabilityBroker;
use relay_chain::{reader::ChainReader, signer::RelayerSigner};
use relay_config::HostConfig;
use relay_plugin_api::HealthStatus;
use relay_runtime::rails::RailSet;
use serde::Serialize;
use std::{collections::BTreeMap, sync::Arc};

/// The default least native balance the relayer needs on every chain, wei
/// (0.001 of the native asset).
pub const DEFAULT_MIN_GAS_WEI: u128 = 1_000_000_000_000_000;

/// One row of the doctor's table.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// The check's name (`rpc.chain_id`, `upstream.health`, `relayer.key`,
    /// `relayer.gas`, `store.migrate`).
    pub check: &'static str,
    /// What it looked at (a chain and RPC URL, a rail, a database).
    pub target: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// How to fix a failure (empty when it passed).
    pub fix: String,
}

impl Check {
    fn pass(check: &'static str, target: impl Into<String>, detail: impl Into<String>) -> Self {
        Check {
            check,
            target: target.into(),
            ok: true,
            detail: detail.into(),
            fix: String::new(),
        }
    }

    fn fail(
        check: &'static str,
        target: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Check {
            check,
            target: target.into(),
            ok: false,
            detail: detail.into(),
            fix: fix.into(),
        }
    }
}

/// Every check's row.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The rows, in the order they ran.
    pub checks: Vec<Check>,
    /// Whether every check passed.
    pub ok: bool,
}

/// Runs every check against `config`; the relayer needs at least
/// `min_gas_wei` on each chain.
pub async fn run(config: &HostConfig, min_gas_wei: U256) -> Report {
    let mut checks = Vec::new();
    for id in config.chain_ids() {
        checks.extend(rpc_chain_ids(config, id).await);
    }
    checks.extend(upstream_health(config).await);
    let (key_row, signer) = relayer_key(config);
    checks.push(key_row);
    let relayer = config
        .relayer
        .as_deref()
        .and_then(|a| a.parse::<Address>().ok())
        .or(signer);
    checks.extend(relayer_gas(config, relayer, min_gas_wei).await);
    if let Some(relayer) = relayer {
        checks.extend(key_pool(config, relayer, min_gas_wei).await);
    }
    checks.push(store_migrates(config).await);
    checks.push(limits_backend(config).await);
    let ok = checks.iter().all(|c| c.ok);
    Report { checks, ok }
}

/// `eth_chainId` of each of `chain`'s RPC endpoints, one by one.
pub async fn rpc_chain_ids(config: &HostConfig, chain: u64) -> Vec<Check> {
    let rpcs = config
        .chains
        .get(&chain.to_string())
        .map(|c| c.rpc.clone())
        .unwrap_or_default();
    if rpcs.is_empty() {
        return vec![Check::fail(
            "rpc.chain_id",
            format!("chain {chain}"),
            "no RPC endpoint configured",
            format!("add an endpoint of chain {chain} to chains.{chain}.rpc"),
        )];
    }
    let mut out = Vec::new();
    for url in rpcs {
        let target = format!("chain {chain} {url}");
        let reader = ChainReader::new(&single_rpc(config, chain, &url));
        out.push(match reader.chain_id(chain).await {
            Ok(id) if id == chain => Check::pass("rpc.chain_id", target, format!("chain id {id}")),
            Ok(id) => Check::fail(
                "rpc.chain_id",
                target,
                format!("answers chain id {id}, configured {chain}"),
                format!("point chains.{chain}.rpc at an endpoint of chain {chain} (this one serves chain {id})"),
            ),
            Err(e) => Check::fail(
                "rpc.chain_id",
                target,
                format!("unreachable: {e}"),
                format!("check the URL and that the endpoint is up, or remove it from chains.{chain}.rpc"),
            ),
        });
    }
    out
}

/// `config` with `chain` served by `url` alone.
fn single_rpc(config: &HostConfig, chain: u64, url: &str) -> HostConfig {
    let mut one = HostConfig {
        chains: BTreeMap::new(),
        ..config.clone()
    };
    let mut c = config
        .chains
        .get(&chain.to_string())
        .cloned()
        .unwrap_or_default();
    c.rpc = vec![url.to_string()];
    one.chains.insert(chain.to_string(), c);
    one
}

/// Each installed rail's `health()`, which calls its upstream with the
/// configured base URL and credentials.
pub async fn upstream_health(config: &HostConfig) -> Vec<Check> {
    let broker = Arc::new(CapabilityBroker::new(&config.capabilities));
    let set = match RailSet::new(config, broker) {
        Ok(s) => s,
        Err(e) => {
            return vec![Check::fail(
                "upstream.health",
                config.plugins_dir.display().to_string(),
                format!("plugin runtime: {e}"),
                "check the [runtime] settings",
            )]
        }
    };
    let snap = set.reload_from(&config.plugins_dir).await;
    let mut out: Vec<Check> = snap
        .rejected
        .iter()
        .map(|r| {
            Check::fail(
                "upstream.health",
                r.id.clone()
                    .unwrap_or_else(|| r.manifest_path.display().to_string()),
                format!("plugin refused: {}", r.reason),
                "reinstall the plugin (relay rails list shows why it was refused)",
            )
        })
        .collect();
    for rail in snap.active() {
        let target = format!("{} {}", rail.id(), upstream_of(config, rail.id()));
        let h = rail.health().await;
        let detail = format!(
            "{}{}",
            serde_json::to_value(h.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            h.detail.map(|d| format!(": {d}")).unwrap_or_default()
        );
        out.push(match h.status {
            HealthStatus::Operational | HealthStatus::Degraded => {
                Check::pass("upstream.health", target, detail)
            }
            _ => Check::fail(
                "upstream.health",
                target,
                detail,
                format!(
                    "check rails.{}.config (base URL), its credential's environment variable and egress",
                    rail.id()
                ),
            ),
        });
    }
    out
}

/// The base URLs configured for `rail` (`…base_url`, `…_base`), or the
/// rail's default.
fn upstream_of(config: &HostConfig, rail: &str) -> String {
    let urls: Vec<&str> = config
        .rails
        .get(rail)
        .map(|r| {
            r.config
                .iter()
                .filter(|(k, _)| k.ends_with("base_url") || k.ends_with("_base"))
                .map(|(_, v)| v.as_str())
                .collect()
        })
        .unwrap_or_default();
    match urls.is_empty() {
        true => "(rail default)".into(),
        false => urls.join(" "),
    }
}

/// Loads the relayer key as `relay serve` does (environment or keystore)
/// and compares its address with the configured `relayer`; the address it
/// loaded, when it did.
pub fn relayer_key(config: &HostConfig) -> (Check, Option<Address>) {
    let target = match &config.relayer_keystore {
        Some(p) => format!("keystore {}", p.display()),
        None => relay_chain::signer::RELAYER_KEY_ENV.to_string(),
    };
    match RelayerSigner::from_config(config) {
        Ok(s) if config.relayer.is_none() => (
            Check::fail(
                "relayer.key",
                target,
                format!("loads {}, but no relayer is configured", s.address()),
                format!("set relayer = \"{}\"", s.address()),
            ),
            Some(s.address()),
        ),
        Ok(s) => (
            Check::pass("relayer.key", target, format!("loads {}", s.address())),
            Some(s.address()),
        ),
        Err(e) => (
            Check::fail(
                "relayer.key",
                target,
                e.to_string(),
                "set RELAY_RELAYER_KEY, or relayer_keystore and its passphrase's variable, to the configured relayer's key",
            ),
            None,
        ),
    }
}

/// The relayer's native balance on every chain against `min_wei`.
pub async fn relayer_gas(
    config: &HostConfig,
    relayer: Option<Address>,
    min_wei: U256,
) -> Vec<Check> {
    let Some(relayer) = relayer else {
        return vec![Check::fail(
            "relayer.gas",
            "every chain",
            "no relayer address (configured or loaded)",
            "set relayer to the relayer's address",
        )];
    };
    gas_of(
        config,
        ("relayer.gas", relayer),
        &config.chain_ids(),
        min_wei,
    )
    .await
}

/// `who`'s native balance on each of `chains` against `min_wei`, as checks
/// named `name`.
async fn gas_of(
    config: &HostConfig,
    (name, who): (&'static str, Address),
    chains: &[u64],
    min_wei: U256,
) -> Vec<Check> {
    let relayer = who;
    let reader = ChainReader::new(config);
    let mut out = Vec::new();
    for &chain in chains {
        let target = format!("chain {chain} {relayer}");
        out.push(match reader.native_balance(chain, relayer).await {
            Ok(b) if b >= min_wei => Check::pass(name, target, format!("{b} wei")),
            Ok(b) => Check::fail(
                name,
                target,
                format!("{b} wei, below {min_wei}"),
                format!("send native gas to {relayer} on chain {chain}"),
            ),
            Err(e) => Check::fail(
                name,
                target,
                format!("balance unreadable: {e}"),
                format!("fix chains.{chain}.rpc (see rpc.chain_id)"),
            ),
        });
    }
    out
}

/// The relayer key pool: its keys load as `relay serve` loads them, each
/// has gas on every chain with a `relayer_account`, and each such chain's
/// relayer address runs the account code with every key registered (the
/// host enrols it at start; until then the relayer key signs alone).
pub async fn key_pool(config: &HostConfig, relayer: Address, min_wei: U256) -> Vec<Check> {
    let keys = match RelayerSigner::pool_from_config(config, relayer) {
        Ok(k) if k.is_empty() => return Vec::new(),
        Ok(k) => k.iter().map(RelayerSigner::address).collect::<Vec<_>>(),
        Err(e) => {
            let fix = "set RELAY_RELAYER_POOL_KEYS (hex keys, commas) or relayer_pool_keystores";
            return vec![Check::fail("relayer.pool", "pool keys", e.to_string(), fix)];
        }
    };
    let pooled: Vec<(u64, Address)> = config
        .chain_ids()
        .into_iter()
        .filter_map(|id| {
            let code = config
                .chains
                .get(&id.to_string())?
                .relayer_account
                .as_deref()?;
            Some((id, code.parse().ok()?))
        })
        .collect();
    let chains: Vec<u64> = pooled.iter().map(|(c, _)| *c).collect();
    let mut out = vec![Check::pass(
        "relayer.pool",
        "pool keys",
        format!("{} keys on {} chains: {keys:?}", keys.len(), chains.len()),
    )];
    for key in &keys {
        out.extend(gas_of(config, ("relayer.pool.gas", *key), &chains, min_wei).await);
    }
    for (chain, code) in pooled {
        out.push(pool_enrolment(config, (chain, code), relayer, &keys).await);
    }
    out
}

async fn pool_enrolment(
    config: &HostConfig,
    (chain, code): (u64, Address),
    relayer: Address,
    keys: &[Address],
) -> Check {
    let urls = config
        .chains
        .get(&chain.to_string())
        .map(|c| c.rpc.clone())
        .unwrap_or_default();
    let timeout = std::time::Duration::from_millis(config.execution.rpc_timeout_ms);
    let rpc = relay_chain::rpc::FailoverProvider::new(&urls, None, timeout);
    let target = format!("chain {chain} {relayer}");
    match relay_chain::account::enrolment(&rpc, relayer, code, keys).await {
        Ok(e) if e.complete() => Check::pass("relayer.pool.enrolled", target, "every key"),
        Ok(e) => Check::fail(
            "relayer.pool.enrolled",
            target,
            format!("delegated {}, keys missing {:?}", e.delegated, e.missing),
            "start relay serve with the pool keys: it enrols them",
        ),
        Err(e) => Check::fail(
            "relayer.pool.enrolled",
            target,
            format!("unreadable: {e}"),
            format!("fix chains.{chain}.rpc"),
        ),
    }
}

/// Connects to the store, which applies pending migrations.
pub async fn store_migrates(config: &HostConfig) -> Check {
    let target = redact_url(&config.database_url());
    match relay_store::Store::connect(&config.database_url()).await {
        Ok(_) => Check::pass("store.migrate", target, "connected, migrations applied"),
        Err(e) => Check::fail(
            "store.migrate",
            target,
            e.to_string(),
            "check database_url, that the database answers and that its user may create tables",
        ),
    }
}

/// Where the rate limits count (`[limits] backend`): in this process, or
/// in the store — which must then take a count (a probe cell) for the
/// replicas to share their limits.
pub async fn limits_backend(config: &HostConfig) -> Check {
    let fail = format!("{:?}", config.limits.on_backend_failure).to_lowercase();
    if config.limits.backend == relay_config::LimitsBackend::Memory {
        return Check::pass(
            "limits.backend",
            "memory",
            "each process counts its own clients: right for one node; replicas behind a balancer each give a client the whole limit (set [limits] backend = \"store\")",
        );
    }
    let target = redact_url(&config.database_url());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let counted = match relay_store::Store::connect(&config.database_url()).await {
        Ok(store) => store.gcra("doctor|probe", now, (1, 60_000)).await.map(drop),
        Err(e) => Err(e),
    };
    match counted {
        Ok(()) => Check::pass(
            "limits.backend",
            target,
            format!("shared by every replica on this database; while it cannot be reached requests are {fail}"),
        ),
        Err(e) => Check::fail(
            "limits.backend",
            target,
            format!("{e}; requests are {fail} meanwhile"),
            "check database_url and that the database answers (the shared rate limits count there)",
        ),
    }
}

/// A database URL without its password.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// The report as an aligned table: failed rows carry their fix.
pub fn table(r: &Report) -> String {
    let w = |f: fn(&Check) -> usize| r.checks.iter().map(f).max().unwrap_or(0);
    let (wc, wt) = (w(|c| c.check.len()).max(5), w(|c| c.target.len()).max(6));
    let mut s = format!(
        "{:<wc$}  {:<wt$}  {:<6}  DETAIL\n",
        "CHECK", "TARGET", "RESULT"
    );
    for c in &r.checks {
        let result = if c.ok { "pass" } else { "FAIL" };
        s.push_str(&format!(
            "{:<wc$}  {:<wt$}  {:<6}  {}\n",
            c.check, c.target, result, c.detail
        ));
        if !c.ok {
            s.push_str(&format!(
                "{:<wc$}  {:<wt$}  {:<6}  fix: {}\n",
                "", "", "", c.fix
            ));
        }
    }
    let failed = r.checks.iter().filter(|c| !c.ok).count();
    s.push_str(&format!(
        "\n{} checks, {} failed: {}\n",
        r.checks.len(),
        failed,
        if r.ok { "ready" } else { "NOT ready" }
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_password_is_not_shown() {
        assert_eq!(
            redact_url("postgres://relay:s3cret@db:5432/relay"),
            "postgres://relay:***@db:5432/relay"
        );
        assert_eq!(redact_url("sqlite://x.db"), "sqlite://x.db");
    }

    #[test]
    fn a_failed_row_carries_its_fix() {
        let r = Report {
            checks: vec![
                Check::pass("store.migrate", "sqlite://x", "ok"),
                Check::fail("rpc.chain_id", "chain 1 http://a", "answers 5", "point it"),
            ],
            ok: false,
        };
        let t = table(&r);
        assert!(t.contains("rpc.chain_id"), "{t}");
        assert!(t.contains("FAIL"), "{t}");
        assert!(t.contains("fix: point it"), "{t}");
        assert!(t.contains("2 checks, 1 failed: NOT ready"), "{t}");
    }
}
