//! The relayer: its key (inside the host only) and one crash-safe sender
//! per configured chain.

use std::{collections::HashMap, sync::Arc};

use alloy::primitives::Address;

use crate::{
    chain::{sender::Sender, signer::RelayerSigner},
    config::HostConfig,
    store::Store,
};

/// The relayer's signing side.
#[derive(Debug)]
pub struct Relayer {
    signer: RelayerSigner,
    senders: HashMap<u64, Arc<Sender>>,
}

impl Relayer {
    /// One sender per configured chain (its first RPC endpoint).
    pub fn new(signer: RelayerSigner, config: &HostConfig, store: &Store) -> Self {
        let senders = config
            .chain_ids()
            .into_iter()
            .filter_map(|id| {
                let url = config
                    .chains
                    .get(&id.to_string())?
                    .rpc
                    .first()?
                    .parse()
                    .ok()?;
                let provider = signer.provider(url);
                Some((
                    id,
                    Arc::new(Sender::new(id, provider, &signer, store.clone())),
                ))
            })
            .collect();
        Relayer { signer, senders }
    }

    /// The relayer address.
    pub fn address(&self) -> Address {
        self.signer.address()
    }

    /// The sender for a chain.
    pub fn sender(&self, chain: u64) -> Option<&Arc<Sender>> {
        self.senders.get(&chain)
    }
}
