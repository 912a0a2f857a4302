//! Outbound safety (issue #13 item 3): which URLs may receive webhooks.
//!
//! Two checks, both needed:
//! - [`check_url`], on the URL's face, at registration and again before
//!   each attempt: `https` only (`http` only for hosts the operator lists in
//!   `notify.allow_http`), no user name or password, at most
//!   [`MAX_URL_LEN`] bytes, and an IP-literal host must be public
//!   ([`classify`]); the names `localhost` and `*.localhost` are refused.
//!   The WHATWG parser of the `url` crate normalises every IPv4 spelling
//!   (`127.1`, `0x7f.1`, `2130706433`) to its dotted form first, so none
//!   slips past as a "name".
//! - [`pin`], at delivery: the name is resolved **once**; if any address it
//!   gives is not public the attempt is refused, otherwise the connection
//!   goes to exactly the address returned — never to a second lookup that
//!   DNS rebinding could steer.
//!
//! Hosts the operator allows may use `http` and may be loopback addresses
//! (how the devnet's local receivers work); every other non-public range
//! stays refused for them too. This module never connects anywhere.

use std::{
    collections::HashMap,
    io,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
};

use async_trait::async_trait;
use relay_config::{parse_allow_entry, AllowPort, NotifyConfig};
use url::{Host, Url};

/// The longest webhook URL accepted, bytes.
pub const MAX_URL_LEN: usize = 2048;

/// Why a URL may not receive webhooks. Each message names what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefused {
    /// Longer than [`MAX_URL_LEN`].
    #[error("the URL is {len} bytes long; at most {max} are accepted")]
    TooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Not a URL at all.
    #[error("{url:?} is not a valid URL ({why})")]
    Malformed {
        /// What was given (cut to 100 characters).
        url: String,
        /// The parser's complaint.
        why: String,
    },
    /// A scheme other than http(s).
    #[error("scheme {0:?} is not allowed: webhook URLs must be https")]
    Scheme(String),
    /// Plain http to a host the operator does not allow.
    #[error("http is not allowed for {0}: webhook URLs must be https (http only for hosts the operator lists in notify.allow_http)")]
    PlainHttp(String),
    /// A user name or password in the URL.
    #[error("the URL carries a user name or password; put credentials elsewhere (e.g. a secret)")]
    Credentials,
    /// No host.
    #[error("the URL has no host")]
    NoHost,
    /// `localhost` or `*.localhost`.
    #[error("{0} is a local name: webhooks go to public hosts only")]
    LocalName(String),
    /// An IP-literal host in a forbidden range.
    #[error("{ip} is not a public address ({range}): webhooks go to public addresses only")]
    Address {
        /// The address.
        ip: IpAddr,
        /// Its range ([`classify`]).
        range: &'static str,
    },
    /// A name that DNS resolves (at least partly) to a forbidden range.
    #[error("{host} resolves to {ip} ({range}): webhooks go to public addresses only")]
    Resolves {
        /// The name.
        host: String,
        /// The first forbidden address it gave.
        ip: IpAddr,
        /// Its range ([`classify`]).
        range: &'static str,
    },
    /// The name could not be resolved.
    #[error("{host} could not be resolved: {why}")]
    Dns {
        /// The name.
        host: String,
        /// The resolver's complaint.
        why: String,
    },
}

/// One `notify.allow_http` entry: a host (IP literal or name) and the
/// ports it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPattern {
    host: PatternHost,
    port: AllowPort,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum PatternHost {
    Ip(IpAddr),
    Name(String),
}

impl HostPattern {
    /// Parses `host`, `host:port` or `host:*` (IPv6 in brackets).
    pub fn parse(entry: &str) -> Result<Self, String> {
        let (host, port) = parse_allow_entry(entry)?;
        let host = match host.parse::<IpAddr>() {
            Ok(ip) => PatternHost::Ip(ip),
            Err(_) => PatternHost::Name(host.trim_end_matches('.').to_string()),
        };
        Ok(HostPattern { host, port })
    }

    /// Whether a URL's host and port are covered.
    pub fn matches(&self, host: &Host<&str>, port: u16) -> bool {
        let host_ok = match (&self.host, host) {
            (PatternHost::Ip(ip), Host::Ipv4(h)) => *ip == IpAddr::V4(*h),
            (PatternHost::Ip(ip), Host::Ipv6(h)) => *ip == IpAddr::V6(*h),
            (PatternHost::Name(n), Host::Domain(d)) => {
                n.eq_ignore_ascii_case(d.trim_end_matches('.'))
            }
            _ => false,
        };
        host_ok
            && match self.port {
                AllowPort::Any => true,
                AllowPort::Exact(p) => p == port,
            }
    }
}

/// Where webhooks may go (module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutboundPolicy {
    allow_http: Vec<HostPattern>,
}

impl OutboundPolicy {
    /// The policy `notify.allow_http` describes. Entries are checked when
    /// the configuration loads; one that still does not parse is skipped
    /// (allowing less, never more).
    pub fn from_config(config: &NotifyConfig) -> Self {
        let allow_http = config
            .allow_http
            .iter()
            .filter_map(|e| match HostPattern::parse(e) {
                Ok(p) => Some(p),
                Err(why) => {
                    tracing::warn!(entry = %e, %why, "notify.allow_http entry ignored");
                    None
                }
            })
            .collect();
        OutboundPolicy { allow_http }
    }

    /// A policy allowing exactly these entries (`host`, `host:port`,
    /// `host:*`).
    pub fn allowing<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let allow_http = entries
            .into_iter()
            .map(HostPattern::parse)
            .collect::<Result<_, _>>()?;
        Ok(OutboundPolicy { allow_http })
    }

    /// Whether the operator allows this host and port (http, loopback).
    pub fn allows(&self, host: &Host<&str>, port: u16) -> bool {
        self.allow_http.iter().any(|p| p.matches(host, port))
    }

    /// Whether `ip` may be connected to for a host (`allowed`: the
    /// operator lists it); the refused range otherwise.
    fn forbidden(&self, ip: IpAddr, allowed: bool) -> Option<&'static str> {
        classify(ip).filter(|range| !(allowed && *range == LOOPBACK))
    }
}

/// A URL that passed [`check_url`]: what a delivery connects to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    url: Url,
    host: Host<String>,
    port: u16,
}

impl Target {
    /// The parsed (normalised) URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Its host: a name or an IP literal.
    pub fn host(&self) -> &Host<String> {
        &self.host
    }

    /// Its port (the scheme's default when the URL names none).
    pub fn port(&self) -> u16 {
        self.port
    }

    fn host_ref(&self) -> Host<&str> {
        match &self.host {
            Host::Domain(d) => Host::Domain(d.as_str()),
            Host::Ipv4(ip) => Host::Ipv4(*ip),
            Host::Ipv6(ip) => Host::Ipv6(*ip),
        }
    }
}

/// The check on a URL's face (module docs).
pub fn check_url(raw: &str, policy: &OutboundPolicy) -> Result<Target, UrlRefused> {
    if raw.len() > MAX_URL_LEN {
        return Err(UrlRefused::TooLong {
            len: raw.len(),
            max: MAX_URL_LEN,
        });
    }
    let url = Url::parse(raw.trim()).map_err(|e| UrlRefused::Malformed {
        url: raw.chars().take(100).collect(),
        why: e.to_string(),
    })?;
    let scheme = url.scheme();
    if scheme != "https" && scheme != "http" {
        return Err(UrlRefused::Scheme(scheme.to_string()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRefused::Credentials);
    }
    let host = url.host().ok_or(UrlRefused::NoHost)?;
    let port = url.port_or_known_default().ok_or(UrlRefused::NoHost)?;
    let allowed = policy.allows(&host, port);
    if scheme == "http" && !allowed {
        return Err(UrlRefused::PlainHttp(host.to_string()));
    }
    match host {
        Host::Ipv4(ip) => refuse_ip(policy, ip.into(), allowed)?,
        Host::Ipv6(ip) => refuse_ip(policy, ip.into(), allowed)?,
        Host::Domain(name) if !allowed && is_local_name(name) => {
            return Err(UrlRefused::LocalName(name.to_string()));
        }
        Host::Domain(_) => {}
    }
    let host = host.to_owned();
    Ok(Target { url, host, port })
}

fn refuse_ip(policy: &OutboundPolicy, ip: IpAddr, allowed: bool) -> Result<(), UrlRefused> {
    match policy.forbidden(ip, allowed) {
        Some(range) => Err(UrlRefused::Address { ip, range }),
        None => Ok(()),
    }
}

fn is_local_name(name: &str) -> bool {
    let n = name.trim_end_matches('.').to_ascii_lowercase();
    n == "localhost" || n.ends_with(".localhost")
}

/// Resolves host names for [`pin`].
#[async_trait]
pub trait Resolve: Send + Sync {
    /// Every address `host` has (for connecting to `port`).
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver (`getaddrinfo`, through tokio).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

#[async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>> {
        let addrs = tokio::net::lookup_host((host, port)).await?;
        Ok(addrs.map(|a| a.ip()).collect())
    }
}

/// A fixed name → addresses table (tests, or a host that must not use
/// DNS); an unknown name does not resolve.
#[derive(Clone, Debug, Default)]
pub struct StaticResolver(HashMap<String, Vec<IpAddr>>);

impl StaticResolver {
    /// Adds (or replaces) a name's addresses.
    pub fn with(mut self, host: &str, ips: impl IntoIterator<Item = IpAddr>) -> Self {
        self.0
            .insert(host.to_ascii_lowercase(), ips.into_iter().collect());
        self
    }
}

#[async_trait]
impl Resolve for StaticResolver {
    async fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
        self.0
            .get(&host.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such host"))
    }
}

/// Resolves the target once and returns the one address to connect to,
/// refusing if any address the name has is forbidden (module docs).
pub async fn pin(
    target: &Target,
    policy: &OutboundPolicy,
    resolver: &dyn Resolve,
) -> Result<SocketAddr, UrlRefused> {
    let host = target.host_ref();
    let allowed = policy.allows(&host, target.port);
    let name = match host {
        Host::Ipv4(ip) => return pinned(policy, ip.into(), allowed, target.port),
        Host::Ipv6(ip) => return pinned(policy, ip.into(), allowed, target.port),
        Host::Domain(name) => name,
    };
    let dns = |why: String| UrlRefused::Dns {
        host: name.to_string(),
        why,
    };
    let ips = resolver
        .resolve(name, target.port)
        .await
        .map_err(|e| dns(e.to_string()))?;
    if let Some((ip, range)) = ips
        .iter()
        .find_map(|ip| policy.forbidden(*ip, allowed).map(|r| (*ip, r)))
    {
        return Err(UrlRefused::Resolves {
            host: name.to_string(),
            ip,
            range,
        });
    }
    let ip = ips.first().ok_or_else(|| dns("no addresses".into()))?;
    Ok(SocketAddr::new(*ip, target.port))
}

fn pinned(
    policy: &OutboundPolicy,
    ip: IpAddr,
    allowed: bool,
    port: u16,
) -> Result<SocketAddr, UrlRefused> {
    refuse_ip(policy, ip, allowed)?;
    Ok(SocketAddr::new(ip, port))
}

const LOOPBACK: &str = "loopback";

/// The non-public range `ip` is in (a short name), or `None` for a public
/// address. IPv4-mapped and IPv4-compatible IPv6 addresses are refused as
/// such, whatever they embed; so are 6to4, Teredo and NAT64 prefixes.
pub fn classify(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// `(network, prefix length, range name)`, most specific first.
const V4_RANGES: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 32, "unspecified"),
    ([255, 255, 255, 255], 32, "broadcast"),
    ([0, 0, 0, 0], 8, "this-network"),
    ([127, 0, 0, 0], 8, LOOPBACK),
    ([10, 0, 0, 0], 8, "private"),
    ([172, 16, 0, 0], 12, "private"),
    ([192, 168, 0, 0], 16, "private"),
    ([169, 254, 0, 0], 16, "link-local"),
    ([100, 64, 0, 0], 10, "cgnat"),
    ([192, 0, 0, 0], 24, "ietf-protocol"),
    ([192, 0, 2, 0], 24, "documentation"),
    ([198, 51, 100, 0], 24, "documentation"),
    ([203, 0, 113, 0], 24, "documentation"),
    ([192, 88, 99, 0], 24, "6to4"),
    ([198, 18, 0, 0], 15, "benchmarking"),
    ([224, 0, 0, 0], 4, "multicast"),
    ([240, 0, 0, 0], 4, "reserved"),
];

fn classify_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4_RANGES.iter().find_map(|(net, len, name)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
        (bits & mask == u32::from_be_bytes(*net)).then_some(*name)
    })
}

/// `(network, prefix length, range name)`, most specific first.
const V6_RANGES: &[(u128, u8, &str)] = &[
    (0, 128, "unspecified"),
    (1, 128, LOOPBACK),
    (0xffff_0000_0000, 96, "ipv4-mapped"),
    (0, 96, "ipv4-compatible"),
    (0x0064_ff9b_u128 << 96, 96, "nat64"),
    (0x0064_ff9b_0001_u128 << 80, 48, "nat64"),
    (0x0100_u128 << 112, 64, "discard"),
    (0x2001_0000_u128 << 96, 32, "teredo"),
    (0x2001_0002_u128 << 96, 48, "benchmarking"),
    (0x2001_0db8_u128 << 96, 32, "documentation"),
    (0x3fff_u128 << 112, 20, "documentation"),
    (0x2001_u128 << 112, 23, "ietf-protocol"),
    (0x2002_u128 << 112, 16, "6to4"),
    (0xfc00_u128 << 112, 7, "ula"),
    (0xfe80_u128 << 112, 10, "link-local"),
    (0xfec0_u128 << 112, 10, "site-local"),
    (0xff00_u128 << 112, 8, "multicast"),
];

fn classify_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(ip);
    let named = V6_RANGES.iter().find_map(|(net, len, name)| {
        let mask = u128::MAX.checked_shl(128 - u32::from(*len)).unwrap_or(0);
        (bits & mask == *net).then_some(*name)
    });
    // Public unicast is allocated from 2000::/3 only.
    named.or_else(|| (ip.segments()[0] & 0xe000 != 0x2000).then_some("reserved"))
}

#[cfg(test)]
#[path = "ssrf_tests.rs"]
mod tests;
