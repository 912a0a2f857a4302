//! One webhook delivery attempt: `POST` the body to the target, pinned to
//! the address [`pin`] checked, within a total time limit.
//!
//! The connection is made here, by hand, so that nothing between the check
//! and the socket can change where it goes: a TCP connection to exactly the
//! pinned address (no second DNS lookup, no proxy), TLS for `https` with
//! the URL's host name as SNI and verified against the platform's trust
//! roots (rustls with the `ring` provider, [`rustls_platform_verifier`]),
//! then one HTTP/1.1 request. Redirects are never followed: a 3xx is a
//! failed attempt naming its `Location`. At most `max_response_bytes` of the
//! answer are read. Every failure — DNS, refusal, connect, TLS, timeout —
//! becomes [`Attempt::error`]; nothing here panics on a receiver's behalf.

use std::{fmt, net::SocketAddr, sync::Arc, time::Duration};

use http_body_util::{BodyExt, Full};
use hyper::{body::Bytes, header, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use relay_config::NotifyConfig;
use rustls::pki_types::ServerName;
use tokio::{
    net::TcpStream,
    task::JoinHandle,
    time::{timeout_at, Instant},
};
use tokio_rustls::TlsConnector;
use url::Host;

use crate::ssrf::{pin, OutboundPolicy, Resolve, SystemResolver, Target};

/// The `user-agent` of every delivery.
pub const USER_AGENT: &str = concat!("relay-webhooks/", env!("CARGO_PKG_VERSION"));

/// Most characters of a `Location` or an error body quoted in an error.
const QUOTE_MAX: usize = 200;

/// What one attempt came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Why the attempt failed (absent on success).
    pub error: Option<String>,
    /// From the start of the attempt to its end, ms.
    pub duration_ms: u64,
    /// Whether the receiver answered 2xx.
    pub ok: bool,
}

impl Attempt {
    /// An attempt refused before anything was sent.
    pub fn refused(error: impl Into<String>) -> Self {
        Attempt {
            status: None,
            error: Some(error.into()),
            duration_ms: 0,
            ok: false,
        }
    }
}

/// Makes delivery attempts (module docs).
#[derive(Clone)]
pub struct Sender {
    timeout: Duration,
    max_response_bytes: usize,
    policy: OutboundPolicy,
    resolver: Arc<dyn Resolve>,
    tls: Result<TlsConnector, String>,
}

impl fmt::Debug for Sender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("timeout", &self.timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("policy", &self.policy)
            .field("tls", &self.tls.as_ref().map(|_| "platform roots"))
            .finish_non_exhaustive()
    }
}

/// The process-wide rustls provider (`ring`), installed once; a provider
/// another part of the process installed first is left alone.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A TLS client trusting the platform's roots (the system store on Linux).
fn platform_tls() -> Result<TlsConnector, String> {
    install_crypto_provider();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| format!("TLS trust roots unavailable: {e}"))?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

impl Sender {
    /// A sender using the system resolver and the platform's trust roots.
    pub fn new(config: &NotifyConfig) -> Self {
        Sender::with_resolver(config, Arc::new(SystemResolver))
    }

    /// A sender resolving names with `resolver`.
    pub fn with_resolver(config: &NotifyConfig, resolver: Arc<dyn Resolve>) -> Self {
        let tls = platform_tls();
        if let Err(e) = &tls {
            tracing::error!(error = %e, "https webhooks will fail");
        }
        Sender {
            timeout: Duration::from_millis(config.timeout_ms),
            max_response_bytes: config.max_response_bytes,
            policy: OutboundPolicy::from_config(config),
            resolver,
            tls,
        }
    }

    /// Trusts exactly this TLS client configuration instead (a private CA,
    /// tests).
    pub fn with_tls(mut self, tls: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Ok(TlsConnector::from(tls));
        self
    }

    /// One attempt: `POST` `body` with `headers` (plus `content-type:
    /// application/json` and the [`USER_AGENT`]) to `target`.
    #[tracing::instrument(skip_all, fields(host = %target.host(), port = target.port()))]
    pub async fn post(
        &self,
        target: &Target,
        body: Vec<u8>,
        headers: Vec<(&'static str, String)>,
    ) -> Attempt {
        let started = Instant::now();
        let deadline = started + self.timeout;
        let sent = timeout_at(deadline, self.send(target, body, headers)).await;
        let (status, error) = match sent {
            // The answer is read within what is left of the same deadline.
            Ok(Ok((_conn, response))) => {
                let status = response.status();
                let error = self.judge(status, response, deadline).await;
                (Some(status.as_u16()), error)
            }
            Ok(Err(e)) => (None, Some(e)),
            Err(_) => (
                None,
                Some(format!("timed out after {} ms", self.timeout.as_millis())),
            ),
        };
        Attempt {
            ok: error.is_none() && status.is_some_and(|s| (200..300).contains(&s)),
            status,
            error,
            duration_ms: started.elapsed().as_millis() as u64,
        }
    }

    /// Pins, connects and sends; the connection (kept open while the
    /// answer is read) and the answer's head.
    async fn send(
        &self,
        target: &Target,
        body: Vec<u8>,
        headers: Vec<(&'static str, String)>,
    ) -> Result<(Connection, Response<hyper::body::Incoming>), String> {
        let addr = pin(target, &self.policy, self.resolver.as_ref())
            .await
            .map_err(|e| e.to_string())?;
        let request = build_request(target, body, headers)?;
        let mut conn = self.connect(target, addr).await?;
        let response = conn
            .sender
            .send_request(request)
            .await
            .map_err(|e| format!("{addr}: {}", chain(&e)))?;
        Ok((conn, response))
    }

    /// A connection to exactly `addr`, TLS for https.
    async fn connect(&self, target: &Target, addr: SocketAddr) -> Result<Connection, String> {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect to {addr}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        if target.url().scheme() != "https" {
            return Connection::handshake(TokioIo::new(tcp), addr).await;
        }
        let tls = self.tls.as_ref().map_err(Clone::clone)?;
        let name = match target.host() {
            Host::Domain(d) => ServerName::try_from(d.clone()).map_err(|e| e.to_string())?,
            Host::Ipv4(ip) => ServerName::from(std::net::IpAddr::V4(*ip)),
            Host::Ipv6(ip) => ServerName::from(std::net::IpAddr::V6(*ip)),
        };
        let stream = tls
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS with {} at {addr}: {e}", target.host()))?;
        Connection::handshake(TokioIo::new(stream), addr).await
    }

    /// Reads (a bounded part of) the answer; why it is a failure, if it is.
    async fn judge(
        &self,
        status: StatusCode,
        response: Response<hyper::body::Incoming>,
        deadline: Instant,
    ) -> Option<String> {
        if status.is_redirection() {
            let location = response
                .headers()
                .get(header::LOCATION)
                .map(|v| quote(v.as_bytes()))
                .unwrap_or_else(|| "none".into());
            return Some(format!("redirect refused ({status}, Location {location})"));
        }
        let body = read_bounded(response.into_body(), self.max_response_bytes, deadline).await;
        if status.is_success() {
            return None;
        }
        match body.is_empty() {
            true => Some(format!("receiver answered {status}")),
            false => Some(format!("receiver answered {status}: {}", quote(&body))),
        }
    }
}

/// An HTTP/1.1 connection; its driver task ends with it.
struct Connection {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    driver: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

impl Connection {
    async fn handshake<T>(io: TokioIo<T>, addr: SocketAddr) -> Result<Self, String>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let (sender, conn) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| format!("{addr}: {}", chain(&e)))?;
        let driver = tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Connection { sender, driver })
    }
}

fn build_request(
    target: &Target,
    body: Vec<u8>,
    headers: Vec<(&'static str, String)>,
) -> Result<Request<Full<Bytes>>, String> {
    let url = target.url();
    let host = url.host_str().unwrap_or_default();
    let authority = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut b = Request::post(path)
        .header(header::HOST, authority)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::USER_AGENT, USER_AGENT);
    for (name, value) in headers {
        b = b.header(name, value);
    }
    b.body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("request: {e}"))
}

/// At most `max` bytes of `body`, stopping at the deadline, the end, or
/// the first error (none of which fails the attempt).
async fn read_bounded<B>(mut body: B, max: usize, deadline: Instant) -> Vec<u8>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    let mut buf = Vec::new();
    while buf.len() < max {
        let frame = match timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => frame,
            _ => break,
        };
        if let Ok(data) = frame.into_data() {
            let take = data.len().min(max - buf.len());
            buf.extend_from_slice(&data[..take]);
        }
    }
    buf
}

/// Up to [`QUOTE_MAX`] characters of `bytes`, control characters blanked.
fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut q: String = text
        .chars()
        .take(QUOTE_MAX)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > QUOTE_MAX {
        q.push('…');
    }
    q
}

/// An error and its sources, `: `-joined.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(c) = source {
        s.push_str(": ");
        s.push_str(&c.to_string());
        source = c.source();
    }
    s
}

#[cfg(test)]
#[path = "send_tests.rs"]
mod tests;
