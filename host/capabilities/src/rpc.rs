//! Read-only chain RPC for rails: declared chains only, a fixed allowlist of
//! read methods, failover across the operator's endpoints for the chain.

use super::{CapabilityConfig, RailPolicy};
use relay_plugin_api::{ChainRef, HostError, HostErrorKind};
use serde_json::{json, Value};
use std::{collections::BTreeMap, time::Instant};

/// JSON-RPC methods a rail may call: reads only, never a send or a sign.
pub const READ_ONLY_METHODS: &[&str] = &[
    "eth_blockNumber",
    "eth_call",
    "eth_chainId",
    "eth_estimateGas",
    "eth_feeHistory",
    "eth_gasPrice",
    "eth_getBalance",
    "eth_getBlockByNumber",
    "eth_getCode",
    "eth_getLogs",
    "eth_getTransactionByHash",
    "eth_getTransactionCount",
    "eth_getTransactionReceipt",
    "eth_maxPriorityFeePerGas",
];

/// The RPC capability.
#[derive(Debug)]
pub struct RpcCapability {
    client: reqwest::Client,
    endpoints: BTreeMap<String, Vec<String>>,
}

impl RpcCapability {
    /// Builds the capability.
    pub fn new(config: &CapabilityConfig) -> Self {
        RpcCapability {
            client: reqwest::Client::new(),
            endpoints: config.rpc.clone(),
        }
    }

    /// Calls `method` with JSON `params` on `chain`; returns the JSON result.
    pub async fn call(
        &self,
        policy: &RailPolicy,
        chain: ChainRef,
        method: &str,
        params: &str,
        deadline: Instant,
    ) -> Result<String, HostError> {
        if !policy.rpc_chains.contains(&chain) {
            return Err(HostError::new(
                HostErrorKind::Denied,
                format!("chain {chain} is not declared by rail {}", policy.rail_id),
            ));
        }
        if !READ_ONLY_METHODS.contains(&method) {
            return Err(HostError::new(
                HostErrorKind::Denied,
                format!("{method} is not a read-only method"),
            ));
        }
        let params: Value = serde_json::from_str(params)
            .map_err(|e| HostError::new(HostErrorKind::Rpc, format!("params are not JSON: {e}")))?;
        let urls = self.endpoints.get(&chain.to_string()).ok_or_else(|| {
            HostError::new(
                HostErrorKind::NotConfigured,
                format!("no RPC endpoint for chain {chain}"),
            )
        })?;
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut last = HostError::new(HostErrorKind::Network, "no endpoint answered");
        for url in urls {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(HostError::new(
                    HostErrorKind::Timeout,
                    "call deadline passed",
                ));
            }
            match self.post(url, &body, left).await {
                Ok(v) => return Ok(v),
                Err(e) if e.kind == HostErrorKind::Rpc => return Err(e),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    async fn post(
        &self,
        url: &str,
        body: &Value,
        timeout: std::time::Duration,
    ) -> Result<String, HostError> {
        let resp = self
            .client
            .post(url)
            .json(body)
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| HostError::new(HostErrorKind::Network, e.without_url().to_string()))?;
        let v: Value = resp
            .json()
            .await
            .map_err(|e| HostError::new(HostErrorKind::Network, e.without_url().to_string()))?;
        if let Some(err) = v.get("error") {
            return Err(HostError::new(HostErrorKind::Rpc, err.to_string()));
        }
        Ok(v.get("result").cloned().unwrap_or(Value::Null).to_string())
    }
}
