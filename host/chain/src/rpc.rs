//! RPC failover for the relayer's own calls: several endpoints per chain,
//! the healthiest tried first; a transport failure or a timeout moves to the
//! next endpoint, a JSON-RPC error answer (the node understood and refused)
//! does not — retrying it elsewhere would only repeat it.

use std::{
    future::Future,
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
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
}

struct Endpoint {
    url: String,
    provider: DynProvider,
    /// Consecutive failures (the rolling health the order is decided by).
    failures: AtomicU32,
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
                    None => ProviderBuilder::new().connect_http(url).erased(),
                };
                Some(Endpoint {
                    url: u.clone(),
                    provider,
                    failures: AtomicU32::new(0),
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
                failures: AtomicU32::new(0),
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
        let mut order: Vec<&Endpoint> = self.endpoints.iter().collect();
        order.sort_by_key(|e| e.failures.load(Ordering::Relaxed));
        let mut last = "no endpoint configured".to_string();
        for e in order {
            match tokio::time::timeout(self.timeout, call(e.provider.clone())).await {
                Ok(Ok(v)) => {
                    e.failures.store(0, Ordering::Relaxed);
                    return Ok(v);
                }
                Ok(Err(RpcError::ErrorResp(resp))) => {
                    return Err(FailoverError::Rpc(resp.to_string()))
                }
                Ok(Err(err)) => last = format!("{}: {err}", e.url),
                Err(_) => last = format!("{}: timed out after {:?}", e.url, self.timeout),
            }
            e.failures.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(endpoint = %e.url, what, error = %last, "rpc endpoint failed; trying the next");
        }
        Err(FailoverError::Unreachable {
            what: what.to_string(),
            last,
        })
    }

    /// Endpoint URLs, healthiest first.
    pub fn ranked(&self) -> Vec<String> {
        let mut order: Vec<&Endpoint> = self.endpoints.iter().collect();
        order.sort_by_key(|e| e.failures.load(Ordering::Relaxed));
        order.into_iter().map(|e| e.url.clone()).collect()
    }
}
