//! Deploying and funding the devnet contracts on one chain.
//!
//! Every function here takes a provider whose wallet is the devnet deployer
//! ([`crate::keys::deployer`]) and expects an automining node. Because the deployer is fresh
//! on every chain and deploys in the same order, each contract has the same address on every
//! devnet chain; callers should still read addresses from [`ChainDeployment`].

use std::{fmt, str::FromStr};

use alloy::{
    network::EthereumWallet,
    primitives::{Address, U256},
    providers::{DynProvider, PendingTransactionBuilder, Provider, ProviderBuilder},
    rpc::types::TransactionReceipt,
    signers::local::PrivateKeySigner,
    transports::http::reqwest::Url,
};
use serde::{Deserialize, Serialize};

use crate::{
    chains,
    contracts::{
        address_to_bytes32, BridgeDeposit, Membership, MessageTransmitter, Permit2, PoolVerifier,
        PoseidonT3, PriceFeed, PrivacyPool, RelayDelegate, RelayRouter, RelayerAccount, TestToken,
        TokenMessenger, YieldVault, DELEGATE_ADDRESS, PERMIT2_ADDRESS, POSEIDON_T3_ADDRESS,
        RELAYER_ACCOUNT_ADDRESS,
    },
    keys, DevnetError, Result,
};

/// One ether, in wei.
const ETHER: u128 = 1_000_000_000_000_000_000;
/// ETH given to the deployer, the bridge operator and the relayer on every chain.
pub const ROLE_ETH: u128 = 1_000 * ETHER;
/// ETH held by `BridgeDeposit` for native payouts on every chain.
pub const BRIDGE_ETH: u128 = 10_000 * ETHER;

/// The devnet's ERC-20 test tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Token {
    /// "USD Coin", 6 decimals, EIP-2612 permit; the CCTP token.
    Usdc,
    /// "Tether USD", 6 decimals.
    Usdt,
    /// "Wrapped BTC", 8 decimals.
    Wbtc,
}

/// Whole-token amounts minted on every chain, per token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grants {
    /// To the relayer (its float-lane inventory).
    pub relayer: u64,
    /// To each of anvil's ten test accounts.
    pub test_account: u64,
    /// To `BridgeDeposit` (the aggregator simulators' payout inventory).
    pub bridge: u64,
}

impl Token {
    /// Every token, in deployment order.
    pub const ALL: [Token; 3] = [Token::Usdc, Token::Usdt, Token::Wbtc];

    /// The ERC-20 symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            Token::Usdc => "USDC",
            Token::Usdt => "USDT",
            Token::Wbtc => "WBTC",
        }
    }

    /// The ERC-20 name (also the EIP-2612 domain name).
    pub fn name(self) -> &'static str {
        match self {
            Token::Usdc => "USD Coin",
            Token::Usdt => "Tether USD",
            Token::Wbtc => "Wrapped BTC",
        }
    }

    /// The ERC-20 decimals.
    pub fn decimals(self) -> u8 {
        match self {
            Token::Usdc | Token::Usdt => 6,
            Token::Wbtc => 8,
        }
    }

    /// `whole` tokens in base units.
    pub fn units(self, whole: u64) -> U256 {
        U256::from(whole) * U256::from(10u64).pow(U256::from(self.decimals()))
    }

    /// What the devnet mints of this token on every chain.
    pub fn grants(self) -> Grants {
        match self {
            Token::Usdc | Token::Usdt => Grants {
                relayer: 10_000_000,
                test_account: 1_000_000,
                bridge: 100_000_000,
            },
            Token::Wbtc => Grants {
                relayer: 100,
                test_account: 10,
                bridge: 1_000,
            },
        }
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl FromStr for Token {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Token::ALL
            .into_iter()
            .find(|t| t.symbol().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown devnet token {s:?} (expected USDC, USDT or WBTC)"))
    }
}

/// The CCTP-style contracts on a CCTP chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CctpDeployment {
    /// Circle's domain id for this chain.
    pub domain: u32,
    /// `TokenMessenger` (depositForBurn).
    pub token_messenger: Address,
    /// `MessageTransmitter` (receiveMessage, emits MessageSent).
    pub message_transmitter: Address,
    /// The attester whose signature `receiveMessage` accepts.
    pub attester: Address,
}

/// Decimals of every devnet price feed (Chainlink's USD feeds use 8).
pub const FEED_DECIMALS: u8 = 8;

/// One devnet price feed (DEVNET ONLY: its deployer moves the answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedDeployment {
    /// `<ASSET>/USD`.
    pub pair: String,
    /// The `AggregatorV3Interface` contract.
    pub address: Address,
    /// Decimals of its answer ([`FEED_DECIMALS`]).
    pub decimals: u8,
}

/// The feeds every devnet chain gets, as (pair, initial answer with [`FEED_DECIMALS`]):
/// ETH/USD 3000, BTC/USD 60000, USDC/USD and USDT/USD 1, and the chain's native asset
/// when it is not ETH ([`chains::native_asset`]).
pub fn devnet_feeds(chain_id: u64) -> Vec<(String, i64)> {
    const USD: i64 = 100_000_000;
    let mut feeds: Vec<(String, i64)> = [
        ("ETH/USD", 3_000 * USD),
        ("BTC/USD", 60_000 * USD),
        ("USDC/USD", USD),
        ("USDT/USD", USD),
    ]
    .map(|(p, a)| (p.to_string(), a))
    .to_vec();
    let (native, price) = chains::native_asset(chain_id);
    if native != "ETH" {
        feeds.push((format!("{native}/USD"), price));
    }
    feeds
}

/// The addresses of everything deployed on one devnet chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChainDeployment {
    /// The chain id.
    pub chain_id: u64,
    /// The Permit2-compatible contract (always [`PERMIT2_ADDRESS`]).
    pub permit2: Address,
    /// USD Coin.
    pub usdc: Address,
    /// Tether USD.
    pub usdt: Address,
    /// Wrapped BTC.
    pub wbtc: Address,
    /// The aggregator simulators' deposit/payout contract, owned by the bridge operator.
    pub bridge_deposit: Address,
    /// The ERC-721 membership collection, owned by the deployer.
    pub membership: Address,
    /// The `RelayRouter` (Permit2 = [`PERMIT2_ADDRESS`]), owned by the deployer, with the
    /// devnet relayer as its only relayer.
    pub router: Address,
    /// The CCTP-style contracts, on CCTP chains only.
    pub cctp: Option<CctpDeployment>,
    /// The Chainlink-style price feeds ([`devnet_feeds`]), owned by the deployer.
    #[serde(default)]
    pub price_feeds: Vec<FeedDeployment>,
    /// The EIP-7702 batch executor (always [`DELEGATE_ADDRESS`]).
    #[serde(default)]
    pub delegate: Address,
    /// The ERC-4626 yield vault over USDC (always [`vault_address`]; see [`deploy_vault`]).
    #[serde(default)]
    pub vault: Address,
    /// The privacy pool (on the pool's chain only, [`pool_chain`]; see [`deploy_pool`]).
    #[serde(default)]
    pub pool: Option<Address>,
}

impl ChainDeployment {
    /// The address of `token` on this chain.
    pub fn token(&self, token: Token) -> Address {
        match token {
            Token::Usdc => self.usdc,
            Token::Usdt => self.usdt,
            Token::Wbtc => self.wbtc,
        }
    }

    /// The price feed of `pair` (`ETH/USD`, any case) on this chain.
    pub fn feed(&self, pair: &str) -> Option<&FeedDeployment> {
        self.price_feeds
            .iter()
            .find(|f| f.pair.eq_ignore_ascii_case(pair.trim()))
    }
}

/// A provider for `url` that signs with `signer` (type-erased).
pub fn wallet_provider(url: Url, signer: PrivateKeySigner) -> DynProvider {
    ProviderBuilder::new()
        .wallet(EthereumWallet::from(signer))
        .connect_reqwest(crate::rpc_client(), url)
        .erased()
}

/// Waits for a sent transaction's receipt and fails if it reverted.
pub async fn confirm(
    context: &str,
    sent: Result<PendingTransactionBuilder<alloy::network::Ethereum>, alloy::contract::Error>,
) -> Result<TransactionReceipt> {
    let receipt = sent
        .map_err(DevnetError::contract(context))?
        .get_receipt()
        .await
        .map_err(DevnetError::pending(context))?;
    if !receipt.status() {
        return Err(DevnetError::Reverted {
            context: context.to_owned(),
            tx_hash: receipt.transaction_hash,
        });
    }
    Ok(receipt)
}

/// Sets the ETH balance of `who` (anvil_setBalance).
pub async fn set_balance(provider: &DynProvider, who: Address, wei: U256) -> Result<()> {
    provider
        .raw_request::<_, ()>("anvil_setBalance".into(), (who, wei))
        .await
        .map_err(DevnetError::rpc(format!("anvil_setBalance {who}")))
}

/// Deploys every devnet contract on one chain (see the module docs for the provider);
/// `relayer` is the only address allowed to submit to the `RelayRouter`.
pub async fn deploy_chain(
    provider: &DynProvider,
    chain_id: u64,
    relayer: Address,
) -> Result<ChainDeployment> {
    let deployer = keys::deployer().address();
    set_balance(provider, deployer, U256::from(ROLE_ETH)).await?;
    provider
        .raw_request::<_, ()>(
            "anvil_setCode".into(),
            (PERMIT2_ADDRESS, Permit2::DEPLOYED_BYTECODE.clone()),
        )
        .await
        .map_err(DevnetError::rpc("anvil_setCode Permit2"))?;
    provider
        .raw_request::<_, ()>(
            "anvil_setCode".into(),
            (DELEGATE_ADDRESS, RelayDelegate::DEPLOYED_BYTECODE.clone()),
        )
        .await
        .map_err(DevnetError::rpc("anvil_setCode RelayDelegate"))?;
    provider
        .raw_request::<_, ()>(
            "anvil_setCode".into(),
            (
                RELAYER_ACCOUNT_ADDRESS,
                RelayerAccount::DEPLOYED_BYTECODE.clone(),
            ),
        )
        .await
        .map_err(DevnetError::rpc("anvil_setCode RelayerAccount"))?;

    let mut tokens = Vec::with_capacity(Token::ALL.len());
    for token in Token::ALL {
        let deployed = TestToken::deploy(
            provider,
            token.name().into(),
            token.symbol().into(),
            token.decimals(),
        )
        .await
        .map_err(DevnetError::contract(format!(
            "deploying {token} on chain {chain_id}"
        )))?;
        tokens.push(*deployed.address());
    }
    let bridge = BridgeDeposit::deploy(provider)
        .await
        .map_err(DevnetError::contract(format!(
            "deploying BridgeDeposit on chain {chain_id}"
        )))?;
    let membership =
        Membership::deploy(provider, "Relay Devnet Membership".into(), "RELAYM".into())
            .await
            .map_err(DevnetError::contract(format!(
                "deploying Membership on chain {chain_id}"
            )))?;
    // before the CCTP contracts, which only some chains get: same address on every chain
    let router = RelayRouter::deploy(provider, PERMIT2_ADDRESS, vec![relayer])
        .await
        .map_err(DevnetError::contract(format!(
            "deploying RelayRouter on chain {chain_id}"
        )))?;
    let cctp = match chains::cctp_domain(chain_id) {
        Some(domain) => Some(deploy_cctp(provider, domain).await?),
        None => None,
    };
    let operator = keys::bridge_operator().address();
    confirm(
        "BridgeDeposit.transferOwnership",
        bridge.transferOwnership(operator).send().await,
    )
    .await?;
    // last: feeds differ per chain (the native pair), so nothing after them shares an address
    let price_feeds = deploy_feeds(provider, chain_id).await?;

    tracing::debug!(chain_id, "devnet contracts deployed");
    Ok(ChainDeployment {
        chain_id,
        permit2: PERMIT2_ADDRESS,
        usdc: tokens[0],
        usdt: tokens[1],
        wbtc: tokens[2],
        bridge_deposit: *bridge.address(),
        membership: *membership.address(),
        router: *router.address(),
        cctp,
        price_feeds,
        delegate: DELEGATE_ADDRESS,
        vault: vault_address(),
        pool: None,
    })
}

async fn deploy_feeds(provider: &DynProvider, chain_id: u64) -> Result<Vec<FeedDeployment>> {
    let mut out = Vec::new();
    for (pair, answer) in devnet_feeds(chain_id) {
        let feed = PriceFeed::deploy(
            provider,
            FEED_DECIMALS,
            pair.clone(),
            alloy::primitives::I256::unchecked_from(answer),
        )
        .await
        .map_err(DevnetError::contract(format!(
            "deploying the {pair} feed on chain {chain_id}"
        )))?;
        out.push(FeedDeployment {
            pair,
            address: *feed.address(),
            decimals: FEED_DECIMALS,
        });
    }
    Ok(out)
}

/// Moves the answer of the feed at `feed` (a new round, `AnswerUpdated`); the provider's
/// wallet must be the deployer (DEVNET ONLY).
pub async fn update_answer(
    provider: &DynProvider,
    feed: Address,
    answer: alloy::primitives::I256,
) -> Result<TransactionReceipt> {
    let feed = PriceFeed::new(feed, provider);
    confirm(
        "PriceFeed.updateAnswer",
        feed.updateAnswer(answer).send().await,
    )
    .await
}

async fn deploy_cctp(provider: &DynProvider, domain: u32) -> Result<CctpDeployment> {
    let attester = keys::attester().address();
    let transmitter = MessageTransmitter::deploy(provider, domain, attester)
        .await
        .map_err(DevnetError::contract("deploying MessageTransmitter"))?;
    let messenger = TokenMessenger::deploy(provider, *transmitter.address())
        .await
        .map_err(DevnetError::contract("deploying TokenMessenger"))?;
    confirm(
        "MessageTransmitter.setTokenMessenger",
        transmitter
            .setTokenMessenger(*messenger.address())
            .send()
            .await,
    )
    .await?;
    Ok(CctpDeployment {
        domain,
        token_messenger: *messenger.address(),
        message_transmitter: *transmitter.address(),
        attester,
    })
}

/// Registers every other CCTP chain of `all` with `local`'s TokenMessenger, and links each
/// remote USDC to the local USDC. Does nothing on a chain without CCTP.
pub async fn link_cctp(
    provider: &DynProvider,
    local: &ChainDeployment,
    all: &[ChainDeployment],
) -> Result<()> {
    let Some(local_cctp) = &local.cctp else {
        return Ok(());
    };
    let messenger = TokenMessenger::new(local_cctp.token_messenger, provider);
    for remote in all.iter().filter(|d| d.chain_id != local.chain_id) {
        let Some(remote_cctp) = &remote.cctp else {
            continue;
        };
        let domain = remote_cctp.domain;
        confirm(
            "TokenMessenger.addRemoteTokenMessenger",
            messenger
                .addRemoteTokenMessenger(domain, address_to_bytes32(remote_cctp.token_messenger))
                .send()
                .await,
        )
        .await?;
        confirm(
            "TokenMessenger.linkToken",
            messenger
                .linkToken(domain, address_to_bytes32(remote.usdc), local.usdc)
                .send()
                .await,
        )
        .await?;
    }
    Ok(())
}

/// Funds one chain: ETH for the roles and `BridgeDeposit`, and every token's [`Grants`] to
/// `relayer`, anvil's ten test accounts and `BridgeDeposit`.
pub async fn fund_chain(
    provider: &DynProvider,
    deployment: &ChainDeployment,
    relayer: Address,
) -> Result<()> {
    for who in [relayer, keys::bridge_operator().address()] {
        set_balance(provider, who, U256::from(ROLE_ETH)).await?;
    }
    for index in 0..keys::RELAYER_POOL_KEYS {
        let who = keys::relayer_pool(index).address();
        set_balance(provider, who, U256::from(ROLE_ETH)).await?;
    }
    set_balance(provider, deployment.bridge_deposit, U256::from(BRIDGE_ETH)).await?;
    for token in Token::ALL {
        let grants = token.grants();
        let address = deployment.token(token);
        mint(provider, address, relayer, token.units(grants.relayer)).await?;
        mint(
            provider,
            address,
            deployment.bridge_deposit,
            token.units(grants.bridge),
        )
        .await?;
        for index in 0..keys::ANVIL_PRIVATE_KEYS.len() {
            mint(
                provider,
                address,
                keys::anvil_address(index),
                token.units(grants.test_account),
            )
            .await?;
        }
    }
    tracing::debug!(chain_id = deployment.chain_id, %relayer, "devnet chain funded");
    Ok(())
}

/// The vault's seed deposit, kept by its deployer for good (inflation-attack mitigation).
pub const VAULT_SEED_USDC: u64 = 10_000;
/// The reward pool the vault releases linearly.
pub const VAULT_REWARDS_USDC: u64 = 1_000_000;
/// Gas of `fundRewards` (it uses about 100,000).
const FUND_REWARDS_GAS: u64 = 250_000;
/// Rewards released per second, in USDC base units: about 5 % a year on the seed alone
/// (16 × 31,536,000 / 10,000 USDC), less as deposits grow.
pub const VAULT_REWARD_RATE: u64 = 16;

/// Where [`deploy_vault`] puts the yield vault on every chain: the first contract of
/// [`keys::vault_deployer`], a key used for nothing else.
pub fn vault_address() -> Address {
    keys::vault_deployer().address().create(0)
}

/// Deploys the ERC-4626 yield vault over `usdc` at [`vault_address`] (DEVNET ONLY), seeds it
/// with [`VAULT_SEED_USDC`] and funds [`VAULT_REWARDS_USDC`] of rewards released at
/// [`VAULT_REWARD_RATE`] per second, so its share price rises with block time.
pub async fn deploy_vault(url: Url, usdc: Address) -> Result<Address> {
    let owner = keys::vault_deployer();
    let who = owner.address();
    let provider = wallet_provider(url, owner);
    set_balance(&provider, who, U256::from(ROLE_ETH)).await?;
    let vault = YieldVault::deploy(&provider, usdc, "Relay Yield USDC".into(), "ryUSDC".into())
        .await
        .map_err(DevnetError::contract("deploying YieldVault"))?;
    let seed = Token::Usdc.units(VAULT_SEED_USDC);
    let rewards = Token::Usdc.units(VAULT_REWARDS_USDC);
    mint(&provider, usdc, who, seed + rewards).await?;
    let token = TestToken::new(usdc, &provider);
    confirm(
        "USDC.approve(vault)",
        token.approve(*vault.address(), seed + rewards).send().await,
    )
    .await?;
    confirm("YieldVault.deposit", vault.deposit(seed, who).send().await).await?;
    // A fixed gas limit: an estimate made in the deploy block's second
    // finds `rewardUpdated` unchanged (a cheap no-op store) and runs short
    // when the transaction lands in a later second.
    confirm(
        "YieldVault.fundRewards",
        vault
            .fundRewards(rewards, U256::from(VAULT_REWARD_RATE))
            .gas(FUND_REWARDS_GAS)
            .send()
            .await,
    )
    .await?;
    Ok(*vault.address())
}

/// Wei per privacy pool note: 0.00002 ETH (spec §8.2).
pub const POOL_DENOMINATION_WEI: u64 = 20_000_000_000_000;
/// The privacy pool's hard cap of notes (spec §8.2).
pub const POOL_CAP: u64 = 250;

/// The chain of `chain_ids` the privacy pool lives on: base (8453) when it is one of them,
/// else the lowest id.
pub fn pool_chain(chain_ids: &[u64]) -> Option<u64> {
    match chain_ids.contains(&8453) {
        true => Some(8453),
        false => chain_ids.iter().copied().min(),
    }
}

/// Where [`deploy_pool`] puts the privacy pool: the second contract of
/// [`keys::pool_deployer`] (its verifier is the first).
pub fn pool_address() -> Address {
    keys::pool_deployer().address().create(1)
}

/// Deploys the privacy pool at [`pool_address`] (BETA AND UNAUDITED): PoseidonT3's code at its
/// canonical address, the Groth16 verifier, then the pool (0.00002 ETH notes, at most 250).
pub async fn deploy_pool(url: Url) -> Result<Address> {
    let owner = keys::pool_deployer();
    let who = owner.address();
    let provider = wallet_provider(url, owner);
    set_balance(&provider, who, U256::from(ROLE_ETH)).await?;
    provider
        .raw_request::<_, ()>(
            "anvil_setCode".into(),
            (POSEIDON_T3_ADDRESS, PoseidonT3::DEPLOYED_BYTECODE.clone()),
        )
        .await
        .map_err(DevnetError::rpc("anvil_setCode PoseidonT3"))?;
    let verifier = PoolVerifier::deploy(&provider)
        .await
        .map_err(DevnetError::contract("deploying PoolVerifier"))?;
    let denomination = U256::from(POOL_DENOMINATION_WEI);
    let pool = PrivacyPool::deploy(
        &provider,
        *verifier.address(),
        denomination,
        U256::from(POOL_CAP),
    )
    .await
    .map_err(DevnetError::contract("deploying PrivacyPool"))?;
    Ok(*pool.address())
}

/// Mints `amount` base units of the test token at `token` to `to` (devnet tokens mint openly).
pub async fn mint(provider: &DynProvider, token: Address, to: Address, amount: U256) -> Result<()> {
    let token = TestToken::new(token, provider);
    confirm("TestToken.mint", token.mint(to, amount).send().await)
        .await
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_units_follow_decimals() {
        assert_eq!(Token::Usdc.units(1), U256::from(1_000_000u64));
        assert_eq!(Token::Wbtc.units(2), U256::from(200_000_000u64));
    }

    #[test]
    fn every_chain_gets_the_usd_feeds_and_its_native_pair() {
        let pairs = |id| {
            devnet_feeds(id)
                .into_iter()
                .map(|f| f.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(pairs(8453), ["ETH/USD", "BTC/USD", "USDC/USD", "USDT/USD"]);
        assert_eq!(pairs(56).last().map(String::as_str), Some("BNB/USD"));
        assert_eq!(devnet_feeds(1)[0].1, 300_000_000_000);
    }

    #[test]
    fn the_vault_has_its_documented_address() {
        let want: Address = "0xC4426a4B3FB8D98bbEF97Fd4140Ed09045C16175"
            .parse()
            .unwrap();
        assert_eq!(vault_address(), want);
    }

    #[test]
    fn token_parses_case_insensitively() {
        assert_eq!("usdc".parse::<Token>(), Ok(Token::Usdc));
        assert_eq!("WBTC".parse::<Token>(), Ok(Token::Wbtc));
        assert!("DAI".parse::<Token>().is_err());
    }

    #[test]
    fn deployment_serializes_camel_case() {
        let d = ChainDeployment {
            chain_id: 1,
            permit2: PERMIT2_ADDRESS,
            usdc: Address::ZERO,
            usdt: Address::ZERO,
            wbtc: Address::ZERO,
            bridge_deposit: Address::ZERO,
            membership: Address::ZERO,
            router: Address::repeat_byte(0x11),
            cctp: None,
            price_feeds: vec![FeedDeployment {
                pair: "ETH/USD".into(),
                address: Address::repeat_byte(0x22),
                decimals: FEED_DECIMALS,
            }],
            delegate: DELEGATE_ADDRESS,
            vault: vault_address(),
            pool: None,
        };
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["chainId"], 1);
        assert!(v.get("bridgeDeposit").is_some());
        assert_eq!(v["router"], "0x1111111111111111111111111111111111111111");
        assert_eq!(v["priceFeeds"][0]["pair"], "ETH/USD");
        assert_eq!(d.feed("eth/usd").map(|f| f.decimals), Some(8));
        let back: ChainDeployment = serde_json::from_value(v).unwrap();
        assert_eq!(back, d);
    }
}
