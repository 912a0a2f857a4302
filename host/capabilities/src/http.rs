//! Outbound HTTP for rails: allowlisted hosts only, private networks blocked
//! unless the operator allows them, timeouts clipped to the call's deadline,
//! response size capped, credentials injected by reference.

use super::{CapabilityConfig, CredentialConfig, RailPolicy};
use relay_plugin_api::{HostError, HostErrorKind, HttpMethod, HttpRequest, HttpResponse};
use reqwest::Url;
use std::{net::IpAddr, time::Instant};

/// The HTTP capability.
#[derive(Debug)]
pub struct HttpCapability {
    client: reqwest::Client,
    allow_private: bool,
    max_bytes: usize,
    credentials: std::collections::BTreeMap<String, CredentialConfig>,
}

fn denied(msg: impl Into<String>) -> HostError {
    HostError::new(HostErrorKind::Denied, msg)
}

/// Whether an address is loopback, private, link-local or otherwise not on
/// the public internet.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xfe00) == 0xfc00
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_private(IpAddr::V4(v4)))
        }
    }
}

/// The HTTP client of every rail's outbound calls, one per process:
/// building one loads the system's trust store (tens of milliseconds of
/// CPU), and its settings are the same for every host. Redirects are not
/// followed (each hop would bypass the egress check).
fn rail_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(relay_config::OUTBOUND_CONNECT_TIMEOUT)
                .pool_max_idle_per_host(relay_config::OUTBOUND_MAX_IDLE_PER_HOST)
                .build()
                .expect("http client builds")
        })
        .clone()
}

impl HttpCapability {
    /// Builds the capability.
    pub fn new(config: &CapabilityConfig) -> Self {
        HttpCapability {
            client: rail_client(),
            allow_private: config.allow_private_networks,
            max_bytes: config.max_response_bytes,
            credentials: config.credentials.clone(),
        }
    }

    /// Checks `url` against the policy and returns it parsed.
    pub async fn check(&self, policy: &RailPolicy, url: &str) -> Result<Url, HostError> {
        let url = Url::parse(url).map_err(|e| denied(format!("bad url: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(denied(format!("scheme {} not allowed", url.scheme())));
        }
        let host = url.host_str().ok_or_else(|| denied("url has no host"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if !policy.egress.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Err(denied(format!(
                "host {host} is not in rail {}'s egress allowlist",
                policy.rail_id
            )));
        }
        if !self.allow_private {
            let port = url.port_or_known_default().unwrap_or(443);
            let addrs = tokio::net::lookup_host((host, port)).await.map_err(|e| {
                HostError::new(HostErrorKind::Network, format!("resolve {host}: {e}"))
            })?;
            for addr in addrs {
                if is_private(addr.ip()) {
                    return Err(denied(format!("{host} resolves to a private address")));
                }
            }
        }
        Ok(url)
    }

    /// Sends `req` for the rail of `policy`, due by `deadline`.
    pub async fn send(
        &self,
        policy: &RailPolicy,
        req: HttpRequest,
        deadline: Instant,
    ) -> Result<HttpResponse, HostError> {
        let url = self.check(policy, &req.url).await?;
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = left.min(std::time::Duration::from_millis(req.timeout_ms.max(1)));
        if timeout.is_zero() {
            return Err(HostError::new(
                HostErrorKind::Timeout,
                "call deadline already passed",
            ));
        }
        let method = match req.method {
            HttpMethod::Get => reqwest::Method::GET,
            HttpMethod::Post => reqwest::Method::POST,
        };
        let mut builder = self.client.request(method, url).timeout(timeout);
        for (k, v) in &req.headers {
            builder = builder.header(k, v);
        }
        if let Some(name) = &req.credential {
            let (header, value) = self.credential(policy, name)?;
            builder = builder.header(header, value);
        }
        if !req.body.is_empty() {
            builder = builder.body(req.body);
        }
        let fut = async {
            let resp = builder.send().await.map_err(map_reqwest)?;
            self.read(resp).await
        };
        tokio::time::timeout(timeout, fut).await.map_err(|_| {
            HostError::new(HostErrorKind::Timeout, "upstream did not answer in time")
        })?
    }

    fn credential(&self, policy: &RailPolicy, name: &str) -> Result<(String, String), HostError> {
        if !policy.credentials.iter().any(|c| c == name) {
            return Err(denied(format!(
                "credential {name} is not granted to this rail"
            )));
        }
        let cfg = self.credentials.get(name).ok_or_else(|| {
            HostError::new(
                HostErrorKind::NotConfigured,
                format!("credential {name} is not configured"),
            )
        })?;
        let value = match &cfg.value {
            Some(v) => v.expose().to_string(),
            None => std::env::var(&cfg.env).map_err(|_| {
                HostError::new(
                    HostErrorKind::NotConfigured,
                    format!(
                        "credential {name} has no value (set the environment variable {})",
                        cfg.env
                    ),
                )
            })?,
        };
        Ok((cfg.header.clone(), value))
    }

    async fn read(&self, mut resp: reqwest::Response) -> Result<HttpResponse, HostError> {
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
            .collect();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(map_reqwest)? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(HostError::new(
                    HostErrorKind::TooLarge,
                    format!("response larger than {} bytes", self.max_bytes),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

fn map_reqwest(e: reqwest::Error) -> HostError {
    let kind = if e.is_timeout() {
        HostErrorKind::Timeout
    } else {
        HostErrorKind::Network
    };
    HostError::new(kind, e.without_url().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real upstreams and RPCs are https: the client must speak TLS to an
    /// `https://` URL (its first bytes are a TLS handshake record, 0x16),
    /// not refuse the scheme.
    #[tokio::test(flavor = "multi_thread")]
    async fn an_https_url_is_spoken_to_in_tls() {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let first = tokio::spawn(async move {
            let wait = std::time::Duration::from_secs(5);
            let (mut sock, _) = tokio::time::timeout(wait, listener.accept())
                .await
                .ok()?
                .ok()?;
            let mut b = [0u8; 1];
            sock.read_exact(&mut b).await.map(|_| b[0]).ok()
        });
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(5))
            .build()
            .unwrap();
        let _ = client
            .get(format!("https://127.0.0.1:{port}/"))
            .send()
            .await;
        assert_eq!(first.await.unwrap(), Some(0x16), "a TLS ClientHello");
    }

    fn policy(egress: &[&str]) -> RailPolicy {
        RailPolicy {
            rail_id: "t".into(),
            egress: egress.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn undeclared_host_is_denied() {
        let cap = HttpCapability::new(&CapabilityConfig::default());
        let err = cap
            .check(&policy(&["li.quest"]), "https://evil.example/x")
            .await
            .unwrap_err();
        assert_eq!(err.kind, HostErrorKind::Denied);
        assert!(err.message.contains("evil.example"));
    }

    #[tokio::test]
    async fn loopback_is_denied_unless_allowed() {
        let cap = HttpCapability::new(&CapabilityConfig::default());
        let err = cap
            .check(&policy(&["127.0.0.1"]), "http://127.0.0.1:9/x")
            .await
            .unwrap_err();
        assert!(err.message.contains("private"), "{err}");
        let open = HttpCapability::new(&CapabilityConfig {
            allow_private_networks: true,
            ..Default::default()
        });
        assert!(open
            .check(&policy(&["127.0.0.1"]), "http://127.0.0.1:9/x")
            .await
            .is_ok());
    }

    #[test]
    fn private_ranges_are_recognised() {
        for ip in [
            "10.0.0.1",
            "192.168.1.1",
            "172.16.0.1",
            "169.254.1.1",
            "::1",
            "fd00::1",
            "100.64.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        assert!(!is_private("8.8.8.8".parse().unwrap()));
    }
}
