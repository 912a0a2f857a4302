//! The relayer: its key (inside the host only), its key pool, and one
//! crash-safe sender per key and configured chain, over every RPC endpoint
//! configured for it.
//!
//! With pool keys (executors) configured, a chain whose `relayer_account`
//! is set is enrolled at start ([`Relayer::enrol`]): the relayer's address
//! delegates to the account code and registers the executors. On an
//! enrolled chain each route is assigned one key — the relayer key or an
//! executor, by its id, so every replica assigns the same — and every
//! transaction of the route is signed by that key from its own nonce
//! stream. A step journaled before stays with the key that signed it, so a
//! resumed route finishes on its own key.

use alloy::primitives::{keccak256, Address};
use relay_chain::{
    account::enrolment,
    rpc::FailoverProvider,
    sender::{SendPolicy, Sender, Senders},
    signer::RelayerSigner,
};
use relay_config::HostConfig;
use relay_store::Store;
use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, RwLock},
    time::Duration,
};

/// One chain's pool: its executors' senders and the account code.
#[derive(Debug)]
struct ChainPool {
    code: Address,
    executors: Vec<Arc<Sender>>,
}

/// The relayer's signing side.
#[derive(Debug)]
pub struct Relayer {
    signer: RelayerSigner,
    senders: HashMap<u64, Arc<Sender>>,
    pools: HashMap<u64, ChainPool>,
    rpcs: HashMap<u64, Arc<FailoverProvider>>,
    /// Chains whose account is enrolled (routes spread over the pool).
    enrolled: RwLock<HashSet<u64>>,
    /// The pool keys' addresses, sorted.
    pool_keys: Vec<Address>,
}

/// What one enrolment pass did on a chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Enrolled {
    /// Already enrolled (read from the chain).
    Already,
    /// Enrolled by this pass (the transaction's hash).
    Now(String),
    /// Not enrolled (why); routes use the relayer key alone.
    Failed(String),
}

impl Relayer {
    /// One sender per key and configured chain (the pool's only on chains
    /// with a `relayer_account`).
    pub fn new(
        (signer, pool): (RelayerSigner, Vec<RelayerSigner>),
        config: &HostConfig,
        store: &Store,
    ) -> Self {
        let e = &config.execution;
        let policy = SendPolicy {
            bump_after: Duration::from_millis(e.gas_bump_after_ms),
            receipt_timeout: Duration::from_millis(e.receipt_timeout_ms),
            max_pending: e.max_pending_per_key,
        };
        let timeout = Duration::from_millis(e.rpc_timeout_ms);
        let (mut senders, mut pools, mut rpcs) = (HashMap::new(), HashMap::new(), HashMap::new());
        for id in config.chain_ids() {
            let Some(chain) = config.chains.get(&id.to_string()) else {
                continue;
            };
            let rpc = Arc::new(FailoverProvider::new(&chain.rpc, Some(&signer), timeout));
            let sender = Sender::new(id, rpc.clone(), &signer, store.clone(), policy);
            senders.insert(id, Arc::new(sender));
            rpcs.insert(id, rpc);
            let code = chain
                .relayer_account
                .as_deref()
                .and_then(|a| a.parse().ok());
            let (Some(code), false) = (code, pool.is_empty()) else {
                continue;
            };
            let executors = pool
                .iter()
                .map(|k| {
                    let rpc = Arc::new(FailoverProvider::new(&chain.rpc, Some(k), timeout));
                    let account = (k, signer.address());
                    Arc::new(Sender::executor(id, rpc, account, store.clone(), policy))
                })
                .collect();
            pools.insert(id, ChainPool { code, executors });
        }
        let mut pool_keys: Vec<Address> = pool.iter().map(RelayerSigner::address).collect();
        pool_keys.sort();
        Relayer {
            signer,
            senders,
            pools,
            rpcs,
            enrolled: RwLock::default(),
            pool_keys,
        }
    }

    /// The relayer address.
    pub fn address(&self) -> Address {
        self.signer.address()
    }

    /// The relayer's signer (attestations; the key never leaves it).
    pub fn signer(&self) -> &RelayerSigner {
        &self.signer
    }

    /// Every sender: the relayer key's on every chain, and every pool
    /// key's (nonce gaps are looked for on each).
    pub fn senders(&self) -> impl Iterator<Item = &Arc<Sender>> {
        let pooled = self.pools.values().flat_map(|p| p.executors.iter());
        self.senders.values().chain(pooled)
    }

    /// The relayer key's sender for a chain.
    pub fn sender(&self, chain: u64) -> Option<&Arc<Sender>> {
        self.senders.get(&chain)
    }

    /// The keys a route on `chain` may be assigned: the relayer key, and
    /// the pool's once the chain is enrolled.
    pub fn keys(&self, chain: u64) -> Vec<&Arc<Sender>> {
        let mut keys: Vec<_> = self.senders.get(&chain).into_iter().collect();
        let enrolled = self
            .enrolled
            .read()
            .expect("enrolled lock")
            .contains(&chain);
        if let (true, Some(pool)) = (enrolled, self.pools.get(&chain)) {
            keys.extend(pool.executors.iter());
        }
        keys
    }

    /// Each chain with a pool, in order, and whether this replica has
    /// found it enrolled (its routes there spread over the pool).
    pub fn pool_chains(&self) -> Vec<(u64, bool)> {
        let enrolled = self.enrolled.read().expect("enrolled lock");
        let mut chains: Vec<_> = self
            .pools
            .keys()
            .map(|c| (*c, enrolled.contains(c)))
            .collect();
        chains.sort_unstable();
        chains
    }

    /// The pool keys' addresses (the relayer key not included).
    pub fn pool_keys(&self) -> &[Address] {
        &self.pool_keys
    }

    /// The sender of route `route_id`'s transactions on `chain`: the key
    /// that signed its journaled transactions there (`journaled`, the
    /// journal's signer), else the key its id is assigned.
    pub fn route_sender(
        &self,
        chain: u64,
        route_id: &str,
        journaled: Option<&str>,
    ) -> Option<&Arc<Sender>> {
        if let Some(key) = journaled.and_then(|k| k.parse::<Address>().ok()) {
            let all = self.senders.get(&chain).into_iter();
            let pooled = self
                .pools
                .get(&chain)
                .into_iter()
                .flat_map(|p| &p.executors);
            if let Some(s) = all.chain(pooled).find(|s| s.key() == key) {
                return Some(s);
            }
        }
        let keys = self.keys(chain);
        let slot = u64::from_be_bytes(keccak256(route_id.as_bytes())[..8].try_into().ok()?);
        keys.get((slot % keys.len().max(1) as u64) as usize)
            .copied()
    }

    /// Enrols every chain with a pool that is not yet enrolled, each chain
    /// on its own (a slow chain holds no other): reads the account's code
    /// and executors, and when either is missing sends the enrolment
    /// transaction with the relayer key. A chain that fails stays on the
    /// relayer key alone until a later pass.
    pub async fn enrol(&self) -> Vec<(u64, Enrolled)> {
        let open: Vec<_> = {
            let enrolled = self.enrolled.read().expect("enrolled lock");
            let mut open: Vec<_> = self
                .pools
                .iter()
                .filter(|(chain, _)| !enrolled.contains(chain))
                .collect();
            open.sort_unstable_by_key(|(chain, _)| **chain);
            open
        };
        let passes = open.into_iter().map(|(&chain, pool)| async move {
            let outcome = self.enrol_chain(chain, pool).await;
            if !matches!(outcome, Enrolled::Failed(_)) {
                self.enrolled.write().expect("enrolled lock").insert(chain);
            }
            (chain, outcome)
        });
        futures::future::join_all(passes).await
    }

    async fn enrol_chain(&self, chain: u64, pool: &ChainPool) -> Enrolled {
        let (Some(rpc), Some(sender)) = (self.rpcs.get(&chain), self.senders.get(&chain)) else {
            return Enrolled::Failed("no RPC for the chain".into());
        };
        let keys: Vec<Address> = pool.executors.iter().map(|s| s.key()).collect();
        let account = self.address();
        let before = match enrolment(rpc, account, pool.code, &keys).await {
            Ok(e) if e.complete() => return Enrolled::Already,
            Ok(e) => e,
            Err(e) => return Enrolled::Failed(e),
        };
        let sent = sender.enrol(&self.signer, pool.code, &before.missing).await;
        let after = enrolment(rpc, account, pool.code, &keys).await;
        match (sent, after) {
            (Ok(r), Ok(e)) if e.complete() => Enrolled::Now(format!("{:#x}", r.transaction_hash)),
            // Another replica's enrolment took the nonce first: the chain
            // is enrolled all the same.
            (Err(_), Ok(e)) if e.complete() => Enrolled::Already,
            (Err(e), _) => Enrolled::Failed(e.to_string()),
            (Ok(r), Ok(e)) => Enrolled::Failed(format!(
                "after {:#x}: still missing {:?}",
                r.transaction_hash, e.missing
            )),
            (Ok(_), Err(e)) => Enrolled::Failed(e),
        }
    }

    /// Its address and the relayer key's senders, as features take them.
    pub fn sending(&self) -> Senders {
        Senders {
            relayer: self.address(),
            by_chain: self.senders.clone(),
        }
    }
}
