//! Who a request comes from, as the rate limits count it (spec §8.1): the
//! TCP peer's IP — or, only when that peer is one of
//! `limits.trusted_proxies`, the right-most `X-Forwarded-For` address that
//! is not itself a trusted proxy — an IPv6 client by its /64. The limiter
//! (`relay_api::limits`) and every per-IP cap of a feature read it here.

use std::{
    fmt,
    net::{IpAddr, Ipv6Addr},
};

use axum::http::HeaderMap;
use relay_config::LimitsConfig;

/// Who a request is counted against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Client {
    /// An issued API key.
    Key(String),
    /// An IP address (an IPv6 client's /64 network).
    Ip(IpAddr),
    /// No peer address known (never the case behind the real server).
    Unknown,
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Client::Key(k) => write!(f, "key:{k}"),
            Client::Ip(ip) => write!(f, "ip:{ip}"),
            Client::Unknown => f.write_str("ip:unknown"),
        }
    }
}

/// The client IP of a request from `peer` under `config`'s trusted
/// proxies, as limits count it — also for the host's per-IP caps (MCP
/// sessions, open intents, sign-in back-off, Plus pass claims).
pub fn client_ip(config: &LimitsConfig, headers: &HeaderMap, peer: Option<IpAddr>) -> Client {
    let Some(peer) = peer else {
        return Client::Unknown;
    };
    let trusted = &config.trusted_proxies;
    if !trusted.contains(&peer) {
        return Client::Ip(counted_as(peer));
    }
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect::<Vec<_>>();
    let client = forwarded
        .iter()
        .rev()
        .map_while(|s| s.parse::<IpAddr>().ok())
        .find(|ip| !trusted.contains(ip))
        .unwrap_or(peer);
    Client::Ip(counted_as(client))
}

/// The address a client is counted as: IPv4 as is (IPv4-mapped IPv6
/// included), IPv6 by its /64 network.
fn counted_as(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(network))
        }
        v4 => v4,
    }
}
