//! The engine's own chain reads (spec §2.6 fees, §4.1 membership, §4.2
//! preflight): the gas price of a chain, an ERC-721 or ERC-20 `balanceOf`,
//! an ERC-20 `allowance` and a native balance; and the simulation of a
//! transaction the relayer is about to sign ([`ChainReader::simulate`]: an
//! `eth_call` at the pending block from the relayer's address, its revert
//! data kept); the head block and ERC-20 `Transfer` logs
//! ([`crate::transfers`]). Read-only, over the operator's RPC endpoints with failover,
//! bounded by a short timeout. No key is involved.

use std::{collections::HashMap, time::Duration};

use alloy::{
    primitives::{Address, Bytes, U256},
    providers::Provider,
    rpc::types::TransactionRequest,
    sol,
    sol_types::SolCall,
    transports::RpcError,
};

use crate::rpc::FailoverProvider;
use relay_config::HostConfig;

sol! {
    /// ERC-721 and ERC-20 share this read (membership, preflight balances).
    function balanceOf(address owner) external view returns (uint256);
    /// ERC-20 allowance (preflight: has the owner approved Permit2?).
    function allowance(address owner, address spender) external view returns (uint256);
    /// Permit2's unordered-nonce bitmap word.
    function nonceBitmap(address owner, uint256 wordPos) external view returns (uint256);
}

/// Why a chain read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The chain has no configured RPC.
    #[error("no RPC configured for chain {0}")]
    NoRpc(u64),
    /// Every endpoint failed.
    #[error("chain {chain}: {reason}")]
    Failed {
        /// Chain id.
        chain: u64,
        /// Why.
        reason: String,
    },
}

/// A simulated call that reverted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revert {
    /// The revert data the node returned (empty when it gave none).
    pub data: Bytes,
    /// The node's message (`execution reverted: …`).
    pub message: String,
}

impl Revert {
    /// The reason in words: a decoded `Error(string)` or `Panic(uint256)`,
    /// else the raw data as hex, else the node's message.
    pub fn reason(&self) -> String {
        if let Some(r) = alloy::sol_types::decode_revert_reason(&self.data) {
            return r;
        }
        if self.data.is_empty() {
            return self.message.clone();
        }
        format!("revert data {}", self.data)
    }
}

/// A transaction to simulate: what the relayer would sign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimCall {
    /// The signer (the relayer).
    pub from: Address,
    /// Target.
    pub to: Address,
    /// Calldata.
    pub data: Bytes,
    /// Native value.
    pub value: U256,
    /// Gas limit the transaction would carry (`None`: the node's default).
    pub gas_limit: Option<u64>,
}

/// Read-only access to every configured EVM chain.
#[derive(Debug)]
pub struct ChainReader {
    chains: HashMap<u64, FailoverProvider>,
}

impl ChainReader {
    /// Providers for every configured chain (no signer).
    pub fn new(config: &HostConfig) -> Self {
        let timeout = Duration::from_millis(config.quote.chain_read_timeout_ms);
        let chains = config
            .chain_ids()
            .into_iter()
            .filter_map(|id| {
                let c = config.chains.get(&id.to_string())?;
                Some((id, FailoverProvider::new(&c.rpc, None, timeout)))
            })
            .collect();
        ChainReader { chains }
    }

    pub(crate) fn provider(&self, chain: u64) -> Result<&FailoverProvider, ReadError> {
        self.chains.get(&chain).ok_or(ReadError::NoRpc(chain))
    }

    /// `eth_chainId` as `chain`'s endpoints answer it (health: an endpoint
    /// that answers with another id is not this chain).
    pub async fn chain_id(&self, chain: u64) -> Result<u64, ReadError> {
        self.provider(chain)?
            .run("eth_chainId", |p| async move { p.get_chain_id().await })
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })
    }

    /// `eth_gasPrice` of `chain`, wei.
    pub async fn gas_price(&self, chain: u64) -> Result<U256, ReadError> {
        let wei = self
            .provider(chain)?
            .run("eth_gasPrice", |p| async move { p.get_gas_price().await })
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })?;
        Ok(U256::from(wei))
    }

    /// ERC-721 `balanceOf(owner)` of `collection` on `chain`.
    pub async fn nft_balance(
        &self,
        chain: u64,
        collection: Address,
        owner: Address,
    ) -> Result<U256, ReadError> {
        self.token_balance(chain, collection, owner).await
    }

    /// ERC-20 `balanceOf(owner)` of `token` on `chain`, smallest units.
    pub async fn token_balance(
        &self,
        chain: u64,
        token: Address,
        owner: Address,
    ) -> Result<U256, ReadError> {
        let raw = self
            .call(chain, token, balanceOfCall { owner }.abi_encode())
            .await?;
        balanceOfCall::abi_decode_returns(&raw).map_err(|e| ReadError::Failed {
            chain,
            reason: e.to_string(),
        })
    }

    /// ERC-20 `allowance(owner, spender)` of `token` on `chain`.
    pub async fn allowance(
        &self,
        chain: u64,
        token: Address,
        owner: Address,
        spender: Address,
    ) -> Result<U256, ReadError> {
        let raw = self
            .call(chain, token, allowanceCall { owner, spender }.abi_encode())
            .await?;
        allowanceCall::abi_decode_returns(&raw).map_err(|e| ReadError::Failed {
            chain,
            reason: e.to_string(),
        })
    }

    /// The native balance of `owner` on `chain`, wei.
    pub async fn native_balance(&self, chain: u64, owner: Address) -> Result<U256, ReadError> {
        self.provider(chain)?
            .run(
                "eth_getBalance",
                |p| async move { p.get_balance(owner).await },
            )
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })
    }

    /// Word `word` of `owner`'s unordered-nonce bitmap on `contract` (Permit2,
    /// or the router: the same scheme).
    pub async fn nonce_bitmap(
        &self,
        chain: u64,
        contract: Address,
        owner: Address,
        word: U256,
    ) -> Result<U256, ReadError> {
        let call = nonceBitmapCall {
            owner,
            wordPos: word,
        };
        let raw = self.call(chain, contract, call.abi_encode()).await?;
        nonceBitmapCall::abi_decode_returns(&raw).map_err(|e| ReadError::Failed {
            chain,
            reason: e.to_string(),
        })
    }

    /// Whether Permit2 `nonce` of `owner` is still unused on `chain`
    /// (its `nonceBitmap` bit is clear).
    pub async fn permit2_nonce_unused(
        &self,
        chain: u64,
        permit2: Address,
        owner: Address,
        nonce: U256,
    ) -> Result<bool, ReadError> {
        let (word, bit) = crate::permit2::nonce_position(nonce);
        let bitmap = self.nonce_bitmap(chain, permit2, owner, word).await?;
        Ok(bitmap & bit == U256::ZERO)
    }

    /// Simulates `call` on `chain` at the pending block (`eth_call` from
    /// its signer): `Ok(Ok(output))` when it would succeed, `Ok(Err(revert))`
    /// when it would revert, `Err` when no endpoint could answer.
    pub async fn simulate(
        &self,
        chain: u64,
        call: &SimCall,
    ) -> Result<Result<Bytes, Revert>, ReadError> {
        let mut tx = TransactionRequest::default()
            .from(call.from)
            .to(call.to)
            .value(call.value)
            .input(call.data.clone().into());
        if let Some(gas) = call.gas_limit {
            tx = tx.gas_limit(gas);
        }
        self.provider(chain)?
            .run("eth_call", |p| {
                let tx = tx.clone();
                async move {
                    match p.call(tx).pending().await {
                        Ok(out) => Ok(Ok(out)),
                        // The node ran the call and it reverted: an answer,
                        // not an endpoint failure (no failover).
                        Err(RpcError::ErrorResp(e))
                            if e.code == 3 || e.message.contains("revert") =>
                        {
                            Ok(Err(Revert {
                                data: e.as_revert_data().unwrap_or_default(),
                                message: e.message.to_string(),
                            }))
                        }
                        Err(e) => Err(e),
                    }
                }
            })
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })
    }

    /// Whether `who` on `chain` is a contract (has code): its signatures
    /// are checked with ERC-1271, not recovered.
    pub async fn has_code(&self, chain: u64, who: Address) -> Result<bool, ReadError> {
        let code = self
            .provider(chain)?
            .run("eth_getCode", |p| async move { p.get_code_at(who).await })
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })?;
        Ok(!code.is_empty())
    }

    /// An `eth_call` of `data` to `to` on `chain` at the latest block.
    pub async fn read(&self, chain: u64, to: Address, data: Vec<u8>) -> Result<Bytes, ReadError> {
        self.call(chain, to, data).await
    }

    /// An `eth_call` of `data` to `to` on `chain`.
    async fn call(
        &self,
        chain: u64,
        to: Address,
        data: Vec<u8>,
    ) -> Result<alloy::primitives::Bytes, ReadError> {
        self.provider(chain)?
            .run("eth_call", |p| {
                let tx = TransactionRequest::default()
                    .to(to)
                    .input(data.clone().into());
                async move { p.call(tx).await }
            })
            .await
            .map_err(|e| ReadError::Failed {
                chain,
                reason: e.to_string(),
            })
    }
}
