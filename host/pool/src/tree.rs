//! The pool's tree as the host serves it (`GET /api/pool/tree`): the
//! contract's leaves, mirrored, re-hashed here with Poseidon and checked
//! against the contract's root read at the same block — a tree the host
//! cannot reproduce is never served. Each new root is written to the
//! witness log (when this host keeps one) before it is served, so a client
//! can check that everyone is shown the same tree.

use alloy::{
    primitives::{Address, U256},
    sol_types::SolCall,
};
use relay_chain::reader::ChainReader;
use serde::Serialize;
use tokio::sync::Mutex;
use utoipa::ToSchema;

use crate::{
    config::{CAP, DENOMINATION_WEI, DEPTH},
    contract::PrivacyPool,
    zk, Pool, PoolError, PoolService,
};

/// Why the pool could not be read at start.
#[derive(Debug, thiserror::Error)]
pub enum ReadPoolError {
    /// The chain did not answer, or the address holds no pool.
    #[error("the pool {0} could not be read: {1}")]
    Unreadable(Address, String),
    /// The contract's figures are not the spec's.
    #[error("the pool {0} holds notes of {1} wei up to {2}; this host serves only the spec's pool (20000000000000 wei, 250 notes)")]
    NotTheSpecs(Address, U256, U256),
    /// The contract's external nullifier is not keccak256(chainId ‖ pool) >> 8.
    #[error("the pool {0} binds proofs to another external nullifier than keccak256(chainId, pool) >> 8")]
    ForeignNullifier(Address),
}

async fn call<C: SolCall>(
    reader: &ChainReader,
    (chain, to): (u64, Address),
    call: C,
) -> Result<C::Return, String> {
    let out = reader
        .read(chain, to, call.abi_encode())
        .await
        .map_err(|e| e.to_string())?;
    C::abi_decode_returns(&out).map_err(|e| e.to_string())
}

/// Reads the pool's figures at `(chain, address)` and checks them.
pub async fn read_pool(
    reader: &ChainReader,
    at: (u64, Address),
    (relayer, fee): (Address, U256),
) -> Result<Pool, ReadPoolError> {
    let unreadable = |e: String| ReadPoolError::Unreadable(at.1, e);
    let denomination = call(reader, at, PrivacyPool::denominationCall {})
        .await
        .map_err(unreadable)?;
    let cap = call(reader, at, PrivacyPool::capCall {})
        .await
        .map_err(unreadable)?;
    if denomination != U256::from(DENOMINATION_WEI) || cap != U256::from(CAP) {
        return Err(ReadPoolError::NotTheSpecs(at.1, denomination, cap));
    }
    let ext = call(reader, at, PrivacyPool::EXTERNAL_NULLIFIERCall {})
        .await
        .map_err(unreadable)?;
    if ext != zk::external_nullifier(at.0, at.1) {
        return Err(ReadPoolError::ForeignNullifier(at.1));
    }
    Ok(Pool {
        chain_id: at.0,
        address: at.1,
        denomination,
        cap: CAP,
        relayer,
        fee,
        external_nullifier: ext,
    })
}

/// The leaves seen so far and the root they hash to.
#[derive(Debug, Default)]
pub struct Mirror(Mutex<(Vec<U256>, U256)>);

/// The tree as served.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolTree {
    /// The pool's chain.
    pub chain_id: u64,
    /// The pool contract.
    pub pool: String,
    /// BETA AND UNAUDITED: always true.
    pub beta: bool,
    /// Always false.
    pub audited: bool,
    /// Wei per note (0.00002 ETH).
    pub denomination: String,
    /// The most notes the pool takes (250).
    pub cap: u64,
    /// The tree's depth (20; empty leaves are 0, nodes Poseidon(left, right)).
    pub depth: usize,
    /// Notes deposited.
    pub size: usize,
    /// Whether the pool holds its cap (deposits revert `PoolFull`).
    pub full: bool,
    /// The root of the leaves below, equal to the contract's at one block.
    #[schema(value_type = String)]
    pub root: String,
    /// Every leaf (identity commitment), in insertion order, `0x…`.
    pub leaves: Vec<String>,
    /// The relayer that sends withdrawals: a proof must name it.
    pub relayer: String,
    /// The flat fee a proof must name, wei.
    pub fee: String,
    /// What the recipient receives: denomination − fee, wei.
    pub payout: String,
    /// keccak256(chainId ‖ pool) >> 8, the proofs' external nullifier.
    pub external_nullifier: String,
    /// The witness log entry of this root (`{s, body}`; absent when this
    /// host keeps no witness log).
    pub witnessed: Option<PoolWitnessed>,
}

/// A root's witness log entry.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct PoolWitnessed {
    /// The entry's number.
    pub s: u64,
    /// Its exact body (`{"id","chainId","pool","size","root"}`); the
    /// entry's hash is sha256 of it.
    pub body: String,
}

fn hex(v: U256) -> String {
    format!("{v:#066x}")
}

impl PoolService {
    /// The leaves and root as the contract has them now, checked.
    pub async fn leaves(&self) -> Result<(Vec<U256>, U256), PoolError> {
        let at = (self.pool.chain_id, self.pool.address);
        let mut mirror = self.mirror.0.lock().await;
        let start = U256::from(mirror.0.len());
        let snap = call(&self.parts.reader, at, PrivacyPool::snapshotCall { start })
            .await
            .map_err(PoolError::Chain)?;
        if !snap.fresh.is_empty() {
            let mut leaves = mirror.0.clone();
            leaves.extend(snap.fresh);
            let root = zk::tree_of(&leaves).root();
            *mirror = (leaves, root);
        }
        if mirror.1 != snap.root_ && !mirror.0.is_empty() {
            return Err(PoolError::Chain(format!(
                "the contract's root {} is not the hash of its {} leaves",
                hex(snap.root_),
                mirror.0.len()
            )));
        }
        Ok((mirror.0.clone(), snap.root_))
    }

    /// The whole tree, its root logged in the witness log first.
    pub async fn tree(&self) -> Result<PoolTree, PoolError> {
        let (leaves, root) = self.leaves().await?;
        let witnessed = self.witness_root(leaves.len(), root).await?;
        let p = &self.pool;
        Ok(PoolTree {
            chain_id: p.chain_id,
            pool: p.address.to_checksum(None),
            beta: true,
            audited: false,
            denomination: p.denomination.to_string(),
            cap: p.cap,
            depth: DEPTH,
            size: leaves.len(),
            full: leaves.len() as u64 >= p.cap,
            root: hex(root),
            leaves: leaves.into_iter().map(hex).collect(),
            relayer: p.relayer.to_checksum(None),
            fee: p.fee.to_string(),
            payout: (p.denomination - p.fee).to_string(),
            external_nullifier: hex(p.external_nullifier),
            witnessed,
        })
    }

    /// Logs the root of `size` leaves (once per size) in the witness log.
    async fn witness_root(
        &self,
        size: usize,
        root: U256,
    ) -> Result<Option<PoolWitnessed>, PoolError> {
        let Some(m) = &self.witness else {
            return Ok(None);
        };
        let p = &self.pool;
        let id = format!("pool:{}:{:#x}:{size}", p.chain_id, p.address);
        let body = serde_json::json!({
            "id": id, "chainId": p.chain_id, "pool": format!("{:#x}", p.address),
            "size": size, "root": hex(root),
        });
        let (s, body) = m
            .witness()
            .log_key(&id, body.to_string(), self.now_ms())
            .await
            .map_err(|e| PoolError::Chain(format!("the witness log: {e}")))?;
        Ok(Some(PoolWitnessed { s, body }))
    }
}
