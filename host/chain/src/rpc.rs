//! The one RPC failover policy of the host, for the relayer's sends, the
//! host's own reads and the rails' read-only RPC capability alike: several
//! endpoints per chain, the healthiest tried first — health is the number of
//! failures in a rolling window ([`HEALTH_WINDOW`]), ties in configured
//! order — a transport failure or a timeout moves to the next endpoint, a
//! JSON-RPC error answer (the node understood and refused) does not:
//! retrying it elsewhere would only repeat it.

use std::{
    collections::VecDeque,
    future::Future,
    sync::Mutex,
    time::{Duration, Instant},
};

use alloy::{
    providers::{DynProvider, Provider, ProviderBuilder},
    transports::{RpcError, TransportErrorKind},
};

use super::signer::RelayerSigner;

/// Why every endpoint failed.
#[derive(Debug, thiserror::Error)]
pub enum FailoverError {
    /// The node answered with a JSON-RPC error.
    #[error("rpc error: {0}")]
    Rpc(String),
    /// No endpoint answered.
    #[error("no endpoint answered {what}: {last}")]
    Unreachable {
        /// The call.
        what: String,
        /// The last failure.
        last: String,
    },
    /// The caller's deadline passed before an endpoint answered.
    #[error("{0}: deadline passed")]
    Deadline(String),
}

/// How far back an endpoint's failures count when endpoints are ordered.
pub const HEALTH_WINDOW: Duration = Duration::from_secs(60);

/// Most outcomes kept per endpoint.
const HEALTH_SAMPLES: usize = 64;

/// An endpoint's recent outcomes (the rolling health window).
#[derive(Debug, Default)]
struct Health(Mutex<VecDeque<(Instant, bool)>>);

impl Health {
    fn record(&self, ok: bool) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if s.len() == HEALTH_SAMPLES {
            s.pop_front();
        }
        s.push_back((Instant::now(), ok));
    }

    /// Failures within the window.
    fn failures(&self) -> usize {
        let s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        s.iter()
            .filter(|(at, ok)| !ok && at.elapsed() < HEALTH_WINDOW)
            .count()
    }
}

struct Endpoint {
    url: String,
    provider: DynProvider,
    health: Health,
}

/// The HTTP client of every chain RPC provider: one bounded pool
/// (connect timeout, idle connections per endpoint) shared by all.
pub fn outbound_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(relay_config::OUTBOUND_CONNECT_TIMEOUT)
                .pool_max_idle_per_host(relay_config::OUTBOUND_MAX_IDLE_PER_HOST)
                .build()
                .expect("rpc client builds")
        })
        .clone()
}

/// Providers for one chain with failover between them.
pub struct FailoverProvider {
    endpoints: Vec<Endpoint>,
    timeout: Duration,
}

impl std::fmt::Debug for FailoverProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let urls: Vec<&str> = self.endpoints.iter().map(|e| e.url.as_str()).collect();
        f.debug_struct("FailoverProvider")
            .field("endpoints", &urls)
            .finish()
    }
}

impl FailoverProvider {
    /// Endpoints in configured order; each signs as `signer` when given.
    /// Unparsable URLs are skipped.
    pub fn new(urls: &[String], signer: Option<&RelayerSigner>, timeout: Duration) -> Self {
        let endpoints = urls
            .iter()
            .filter_map(|u| {
                let url: reqwest::Url = u.parse().ok()?;
                let provider = match signer {
                    Some(s) => s.provider(url),
                    None => ProviderBuilder::new()
                        .connect_reqwest(outbound_client(), url)
                        .erased(),
                };
                Some(Endpoint {
                    url: u.clone(),
                    provider,
                    health: Health::default(),
                })
            })
            .collect();
        FailoverProvider { endpoints, timeout }
    }

    /// One endpoint: `provider`, named `name` in logs.
    pub fn single(name: &str, provider: DynProvider, timeout: Duration) -> Self {
        FailoverProvider {
            endpoints: vec![Endpoint {
                url: name.to_string(),
                provider,
                health: Health::default(),
            }],
            timeout,
        }
    }

    /// Runs `call` against the healthiest endpoint, failing over on
    /// transport errors and timeouts.
    pub async fn run<T, F, Fut>(&self, what: &str, call: F) -> Result<T, FailoverError>
    where
        F: Fn(DynProvider) -> Fut,
        Fut: Future<Output = Result<T, RpcError<TransportErrorKind>>>,
    {
        self.run_until(None, what, call).await
    }

    /// [`FailoverProvider::run`] within `deadline`: each endpoint gets the
    /// provider's timeout or what is left, whichever is shorter.
    pub async fn run_until<T, F, Fut>(
        &self,
        deadline: Option<Instant>,
        what: &str,
        call: F,
    ) -> Result<T, FailoverError>
    where
        F: Fn(DynProvider) -> Fut,
        Fut: Future<Output = Result<T, RpcError<TransportErrorKind>>>,
    {
        let mut last = "no endpoint configured".to_string();
        for e in self.order() {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                return Err(FailoverError::Deadline(what.to_string()));
            }
            let timeout = left.map_or(self.timeout, |l| l.min(self.timeout));
            match tokio::time::timeout(timeout, call(e.provider.clone())).await {
                Ok(Ok(v)) => {
                    e.health.record(true);
                    return Ok(v);
                }
                Ok(Err(RpcError::ErrorResp(resp))) => {
                    e.health.record(true);
                    return Err(FailoverError::Rpc(resp.to_string()));
                }
                Ok(Err(err)) => last = format!("{}: {err}", e.url),
                Err(_) => last = format!("{}: timed out after {timeout:?}", e.url),
            }
            e.health.record(false);
            tracing::warn!(endpoint = %e.url, what, error = %last, "rpc endpoint failed; trying the next");
        }
        Err(FailoverError::Unreachable {
            what: what.to_string(),
            last,
        })
    }

    /// A raw JSON-RPC call (`params` a JSON array or object), answered with
    /// the JSON `result`, within `deadline`.
    pub async fn raw(
        &self,
        method: &str,
        params: &serde_json::value::RawValue,
        deadline: Option<Instant>,
    ) -> Result<String, FailoverError> {
        let name: std::borrow::Cow<'static, str> = method.to_string().into();
        self.run_until(deadline, method, |p| {
            let name = name.clone();
            async move { p.raw_request_dyn(name, params).await }
        })
        .await
        .map(|v| v.get().to_string())
    }

    /// Endpoints, healthiest first (fewest failures in the window; ties in
    /// configured order).
    fn order(&self) -> Vec<&Endpoint> {
        let mut order: Vec<&Endpoint> = self.endpoints.iter().collect();
        order.sort_by_cached_key(|e| e.health.failures());
        order
    }

    /// Endpoint URLs, healthiest first.
    pub fn ranked(&self) -> Vec<String> {
        self.order().into_iter().map(|e| e.url.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_count_only_inside_the_window_and_samples_stay_bounded() {
        let h = Health::default();
        for _ in 0..100 {
            h.record(false);
        }
        assert_eq!(h.failures(), HEALTH_SAMPLES);
        h.0.lock()
            .unwrap()
            .iter_mut()
            .for_each(|(at, _)| *at = Instant::now() - HEALTH_WINDOW - Duration::from_secs(1));
        h.record(true);
        assert_eq!(h.failures(), 0, "old failures no longer count");
    }
}
