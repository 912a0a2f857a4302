//! Outbound notifications (`[notify]`, spec §6): completion webhooks and
//! event subscriptions — where they may go, how long one attempt may take,
//! and how retries are spread.

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// Webhook delivery settings (`[notify]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NotifyConfig {
    /// Receivers that may use plain `http` and may be loopback addresses:
    /// `host`, `host:port` or `host:*` entries, the host an IP literal
    /// (`127.0.0.1`, `[::1]`) or a name (`localhost`); `host` alone or
    /// `host:*` allows any port. Default none: every webhook URL must be
    /// `https` to a public address. The devnet allows `127.0.0.1`,
    /// `localhost` and `[::1]`.
    pub allow_http: Vec<String>,
    /// Total time one delivery attempt may take (DNS, connect, TLS, the
    /// request and reading the response), ms (default 10000).
    pub timeout_ms: u64,
    /// Most bytes of a receiver's response body read; the rest is dropped
    /// unread (default 16384).
    pub max_response_bytes: usize,
    /// Wait before the second attempt, ms (default 5000); each further
    /// wait doubles, with ±20 % jitter.
    pub base_delay_ms: u64,
    /// Attempts before a delivery is `failed` (default 15: with the
    /// default base delay, about a day from first to last).
    pub max_attempts: u32,
    /// How often each replica looks for deliveries that are due, ms
    /// (default 500).
    pub poll_interval_ms: u64,
    /// How often price and balance subscriptions are observed, ms
    /// (default 5000).
    pub watch_interval_ms: u64,
    /// How long a replica holds an attempt it claimed; an attempt whose
    /// replica died is retried by another once it lapses, ms (default
    /// 30000; must exceed `timeout_ms`).
    pub lease_ms: u64,
    /// Completion webhooks one route may have (default 10).
    pub max_hooks_per_route: u32,
    /// Active event subscriptions one caller (its IP, as the rate limiter
    /// counts it) may hold at once, across every replica on one database
    /// (default 50); past it `POST /api/events/subscribe` is 409
    /// `SUBSCRIPTION_LIMIT` until one is cancelled.
    pub max_subscriptions_per_caller: u32,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            allow_http: Vec::new(),
            timeout_ms: 10_000,
            max_response_bytes: 16 * 1024,
            base_delay_ms: 5_000,
            max_attempts: 15,
            poll_interval_ms: 500,
            watch_interval_ms: 5_000,
            lease_ms: 30_000,
            max_hooks_per_route: 10,
            max_subscriptions_per_caller: 50,
        }
    }
}

impl NotifyConfig {
    /// Refuses zero limits, a lease no longer than an attempt, and
    /// malformed `allow_http` entries, naming the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let keys = [
            ("notify.timeout_ms", self.timeout_ms),
            ("notify.max_response_bytes", self.max_response_bytes as u64),
            ("notify.base_delay_ms", self.base_delay_ms),
            ("notify.max_attempts", u64::from(self.max_attempts)),
            ("notify.poll_interval_ms", self.poll_interval_ms),
            ("notify.watch_interval_ms", self.watch_interval_ms),
            ("notify.lease_ms", self.lease_ms),
            (
                "notify.max_hooks_per_route",
                u64::from(self.max_hooks_per_route),
            ),
        ];
        if let Some((key, _)) = keys.iter().find(|(_, v)| *v == 0) {
            return Err(ConfigError(format!("{key} must be greater than 0")));
        }
        if self.lease_ms <= self.timeout_ms {
            return Err(ConfigError(format!(
                "notify.lease_ms ({}) must exceed notify.timeout_ms ({})",
                self.lease_ms, self.timeout_ms
            )));
        }
        for (i, entry) in self.allow_http.iter().enumerate() {
            if let Err(why) = parse_allow_entry(entry) {
                return Err(ConfigError(format!("notify.allow_http[{i}]: {why}")));
            }
        }
        Ok(())
    }
}

/// Which ports an `allow_http` entry admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllowPort {
    /// Any port (`host` or `host:*`).
    Any,
    /// Exactly this port (`host:port`).
    Exact(u16),
}

/// Splits an `allow_http` entry into its lowercased host (IPv6 without
/// brackets) and port, or says why it is malformed.
pub fn parse_allow_entry(entry: &str) -> Result<(String, AllowPort), String> {
    let e = entry.trim();
    let (host, port) = if let Some(rest) = e.strip_prefix('[') {
        let (h, tail) = rest
            .split_once(']')
            .ok_or_else(|| format!("{entry:?}: unclosed '['"))?;
        if h.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("{entry:?}: {h:?} is not an IPv6 address"));
        }
        let port = match tail {
            "" => None,
            t => Some(
                t.strip_prefix(':')
                    .ok_or_else(|| format!("{entry:?}: expected ':port' after ']'"))?,
            ),
        };
        (h.to_string(), port)
    } else {
        match e.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (e.to_string(), None),
        }
    };
    let valid_host = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:".contains(&b));
    if !valid_host || (host.contains(':') && !e.starts_with('[')) {
        return Err(format!(
            "{entry:?} is not host, host:port or host:* (IPv6 in brackets)"
        ));
    }
    let port = match port {
        None | Some("*") => AllowPort::Any,
        Some(p) => AllowPort::Exact(
            p.parse()
                .map_err(|_| format!("{entry:?}: {p:?} is not a port or '*'"))?,
        ),
    };
    Ok((host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_entries_parse_host_and_port() {
        let cases = [
            ("127.0.0.1", "127.0.0.1", AllowPort::Any),
            ("localhost:8080", "localhost", AllowPort::Exact(8080)),
            ("LocalHost:*", "localhost", AllowPort::Any),
            ("[::1]", "::1", AllowPort::Any),
            ("[::1]:*", "::1", AllowPort::Any),
            ("[::1]:9000", "::1", AllowPort::Exact(9000)),
        ];
        for (entry, host, port) in cases {
            assert_eq!(
                parse_allow_entry(entry),
                Ok((host.to_string(), port)),
                "{entry}"
            );
        }
    }

    #[test]
    fn malformed_allow_entries_are_refused() {
        for entry in [
            "",
            "::1",
            "[::1",
            "[zz]",
            "[::1]9",
            "host:99999",
            "a b",
            "h:x",
        ] {
            assert!(parse_allow_entry(entry).is_err(), "{entry:?} accepted");
        }
    }

    #[test]
    fn defaults_pass_and_bad_values_name_their_key() {
        assert!(NotifyConfig::default().check().is_ok());
        let cases = [
            (
                NotifyConfig {
                    timeout_ms: 0,
                    ..NotifyConfig::default()
                },
                "notify.timeout_ms",
            ),
            (
                NotifyConfig {
                    lease_ms: 5_000,
                    ..NotifyConfig::default()
                },
                "notify.lease_ms",
            ),
            (
                NotifyConfig {
                    allow_http: vec!["localhost".into(), "[::1".into()],
                    ..NotifyConfig::default()
                },
                "notify.allow_http[1]",
            ),
        ];
        for (c, key) in cases {
            let e = c.check().expect_err(key).to_string();
            assert!(e.contains(key), "{e} names {key}");
        }
    }
}
