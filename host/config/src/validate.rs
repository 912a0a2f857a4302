//! Checks a loaded configuration once, at start: every chain id, address
//! and URL is parsed here, and a bad value refuses to start with its key
//! named (`chains.8453.rpc[0]: "htp://x" is not an http(s) or ws(s) URL`),
//! so nothing later meets a malformed value.

use super::{ConfigError, HostConfig};

fn bad(key: impl std::fmt::Display, why: impl std::fmt::Display) -> ConfigError {
    ConfigError(format!("{key}: {why}"))
}

/// Whether `s` is a 0x-prefixed 20-byte hex address.
pub fn is_address(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn address(key: impl std::fmt::Display, s: &str) -> Result<(), ConfigError> {
    is_address(s).then_some(()).ok_or_else(|| {
        bad(
            key,
            format!("{s:?} is not a 0x-prefixed 20-byte hex address"),
        )
    })
}

fn chain_id(key: impl std::fmt::Display, s: &str) -> Result<u64, ConfigError> {
    s.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| bad(key, format!("{s:?} is not a chain id")))
}

fn rpc_url(key: impl std::fmt::Display, s: &str) -> Result<(), ConfigError> {
    let ok = url::Url::parse(s)
        .is_ok_and(|u| ["http", "https", "ws", "wss"].contains(&u.scheme()) && u.has_host());
    ok.then_some(())
        .ok_or_else(|| bad(key, format!("{s:?} is not an http(s) or ws(s) URL")))
}

/// Every check; the first failure names its key.
pub fn validate(c: &HostConfig) -> Result<(), ConfigError> {
    if let Some(r) = &c.relayer {
        address("relayer", r)?;
    }
    address("permit2", &c.permit2)?;
    if let Some(db) = &c.database_url {
        let known = ["sqlite:", "postgres:", "postgresql:"];
        if !known.iter().any(|p| db.starts_with(p)) {
            return Err(bad(
                "database_url",
                "must start with sqlite:, postgres: or postgresql:",
            ));
        }
    }
    for (id, chain) in &c.chains {
        chain_id(format!("chains.{id}"), id)?;
        for (i, u) in chain.rpc.iter().enumerate() {
            rpc_url(format!("chains.{id}.rpc[{i}]"), u)?;
        }
        if let Some(r) = &chain.relayer_account {
            address(format!("chains.{id}.relayer_account"), r)?;
        }
        if let Some(r) = &chain.router {
            address(format!("chains.{id}.router"), r)?;
        }
        for (symbol, t) in &chain.tokens {
            address(format!("chains.{id}.tokens.{symbol}.address"), &t.address)?;
        }
    }
    for (id, urls) in &c.capabilities.rpc {
        chain_id(format!("capabilities.rpc.{id}"), id)?;
        for (i, u) in urls.iter().enumerate() {
            rpc_url(format!("capabilities.rpc.{id}[{i}]"), u)?;
        }
    }
    for (rail, rc) in &c.rails {
        for (i, entry) in rc.contracts.iter().enumerate() {
            let key = format!("rails.{rail}.contracts[{i}]");
            let addr = match entry.split_once(':') {
                Some((ch, a)) => {
                    chain_id(&key, ch)?;
                    a
                }
                None => entry.as_str(),
            };
            if addr != "*" {
                address(&key, addr)?;
            }
        }
    }
    for (i, v) in c.vip.registry.iter().enumerate() {
        address(format!("vip.registry[{i}].address"), &v.address)?;
    }
    c.notify.check()?;
    c.sessions.check()?;
    c.primitives.check()?;
    c.retention.check()?;
    c.quote_book.check()?;
    let chains = c.chain_ids();
    for (i, f) in c.pricefeeds.iter().enumerate() {
        f.check(i, &chains)?;
    }
    if let Some(u) = &c.telemetry.otlp_endpoint {
        let ok = url::Url::parse(u).is_ok_and(|u| ["http", "https"].contains(&u.scheme()));
        if !ok {
            return Err(bad(
                "telemetry.otlp_endpoint",
                format!("{u:?} is not an http(s) URL"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChainConfig, RailConfig, TokenConfig};

    fn with_chain(rpc: &str, token: &str) -> HostConfig {
        let mut c = HostConfig::default();
        let mut chain = ChainConfig {
            rpc: vec![rpc.into()],
            ..ChainConfig::default()
        };
        chain.tokens.insert(
            "USDC".into(),
            TokenConfig {
                address: token.into(),
                decimals: 6,
            },
        );
        c.chains.insert("8453".into(), chain);
        c
    }

    const OK_TOKEN: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

    #[test]
    fn a_good_configuration_passes() {
        let mut c = with_chain("http://127.0.0.1:8545", OK_TOKEN);
        c.relayer = Some(OK_TOKEN.into());
        c.rails.insert(
            "lifi".into(),
            RailConfig {
                contracts: vec!["*".into(), format!("8453:{OK_TOKEN}")],
                ..RailConfig::default()
            },
        );
        assert!(validate(&c).is_ok());
        assert!(validate(&HostConfig::default()).is_ok());
    }

    #[test]
    fn every_bad_value_is_refused_with_its_key_named() {
        let cases: Vec<(HostConfig, &str)> = vec![
            (with_chain("htp://x", OK_TOKEN), "chains.8453.rpc[0]"),
            (
                with_chain("http://127.0.0.1:8545", "0x12"),
                "chains.8453.tokens.USDC.address",
            ),
            (
                {
                    let mut c = HostConfig::default();
                    c.chains.insert("base".into(), ChainConfig::default());
                    c
                },
                "chains.base",
            ),
            (
                HostConfig {
                    relayer: Some("0xnothex".into()),
                    ..HostConfig::default()
                },
                "relayer",
            ),
            (
                HostConfig {
                    database_url: Some("mysql://x".into()),
                    ..HostConfig::default()
                },
                "database_url",
            ),
        ];
        for (c, key) in cases {
            let e = validate(&c).expect_err(key).to_string();
            assert!(e.contains(key), "{e} names {key}");
        }
    }
}
