//! Read-only chain RPC for rails: declared chains only, a fixed allowlist of
//! read methods, failover across the operator's endpoints for the chain.

use super::{CapabilityConfig, RailPolicy};
use relay_chain::rpc::{FailoverError, FailoverProvider};
use relay_plugin_api::{ChainRef, HostError, HostErrorKind};
use serde_json::value::RawValue;
use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

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

/// Longest one endpoint may take before the next is tried (the call's own
/// deadline clips it further).
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);

/// The RPC capability: one failover provider per chain (the host's one
/// failover policy, [`relay_chain::rpc::FailoverProvider`]).
pub struct RpcCapability {
    chains: BTreeMap<String, FailoverProvider>,
}

impl std::fmt::Debug for RpcCapability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcCapability")
            .field("chains", &self.chains.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl RpcCapability {
    /// Builds the capability.
    pub fn new(config: &CapabilityConfig) -> Self {
        let chains = config
            .rpc
            .iter()
            .map(|(id, urls)| {
                let p = FailoverProvider::new(urls, None, ENDPOINT_TIMEOUT);
                (id.clone(), p)
            })
            .collect();
        RpcCapability { chains }
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
        let params: Box<RawValue> = serde_json::from_str(params)
            .map_err(|e| HostError::new(HostErrorKind::Rpc, format!("params are not JSON: {e}")))?;
        let provider = self.chains.get(&chain.to_string()).ok_or_else(|| {
            HostError::new(
                HostErrorKind::NotConfigured,
                format!("no RPC endpoint for chain {chain}"),
            )
        })?;
        provider
            .raw(method, &params, Some(deadline))
            .await
            .map_err(|e| match e {
                FailoverError::Rpc(m) => HostError::new(HostErrorKind::Rpc, m),
                FailoverError::Deadline(_) => {
                    HostError::new(HostErrorKind::Timeout, "call deadline passed")
                }
                FailoverError::Unreachable { .. } => {
                    HostError::new(HostErrorKind::Network, e.to_string())
                }
            })
    }
}
