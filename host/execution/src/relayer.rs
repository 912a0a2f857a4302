//! The relayer: its key (inside the host only) and one crash-safe sender
//! per configured chain, over every RPC endpoint configured for it.

use alloy::primitives::Address;
use relay_chain::{
    rpc::FailoverProvider,
    sender::{SendPolicy, Sender, Senders},
    signer::RelayerSigner,
};
use relay_config::HostConfig;
use relay_store::Store;
use std::{collections::HashMap, sync::Arc, time::Duration};

/// The relayer's signing side.
#[derive(Debug)]
pub struct Relayer {
    signer: RelayerSigner,
    senders: HashMap<u64, Arc<Sender>>,
}

impl Relayer {
    /// One sender per configured chain (its first RPC endpoint).
    pub fn new(signer: RelayerSigner, config: &HostConfig, store: &Store) -> Self {
        let e = &config.execution;
        let policy = SendPolicy {
            bump_after: Duration::from_millis(e.gas_bump_after_ms),
            receipt_timeout: Duration::from_millis(e.receipt_timeout_ms),
        };
        let timeout = Duration::from_millis(e.rpc_timeout_ms);
        let senders = config
            .chain_ids()
            .into_iter()
            .filter_map(|id| {
                let urls = &config.chains.get(&id.to_string())?.rpc;
                let rpc = FailoverProvider::new(urls, Some(&signer), timeout);
                let sender = Sender::new(id, Arc::new(rpc), &signer, store.clone(), policy);
                Some((id, Arc::new(sender)))
            })
            .collect();
        Relayer { signer, senders }
    }

    /// The relayer address.
    pub fn address(&self) -> Address {
        self.signer.address()
    }

    /// The relayer's signer (attestations; the key never leaves it).
    pub fn signer(&self) -> &RelayerSigner {
        &self.signer
    }

    /// Every chain's sender.
    pub fn senders(&self) -> impl Iterator<Item = &Arc<Sender>> {
        self.senders.values()
    }

    /// The sender for a chain.
    pub fn sender(&self, chain: u64) -> Option<&Arc<Sender>> {
        self.senders.get(&chain)
    }

    /// Its address and senders, as features take them.
    pub fn sending(&self) -> Senders {
        Senders {
            relayer: self.address(),
            by_chain: self.senders.clone(),
        }
    }
}
