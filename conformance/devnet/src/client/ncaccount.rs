//! The non-custodial yield account (`docs/api-yield-account.md`): an
//! agent's vault shares and the relayer's share allowance, opened on
//! chain, and the EIP-712 spend intent the agent signs for `POST
//! /api/ncaccount/spend`.

use alloy::{
    primitives::{Address, U256},
    signers::local::PrivateKeySigner,
    transports::http::reqwest::Url,
};
use relay_chain::vault::{digest, domain, Spend};
use serde_json::{json, Value};

use crate::{
    contracts::{TestToken, YieldVault},
    deploy::{confirm, set_balance, wallet_provider},
    DevnetError, Result,
};

/// A spend intent (spec §2.15) as the agent signs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intent {
    /// The agent (share holder and signer).
    pub agent: Address,
    /// The chain whose vault is redeemed.
    pub src_chain: u64,
    /// Asset base units redeemed (the fee comes out of it).
    pub amount: U256,
    /// The destination chain.
    pub to_chain: u64,
    /// The recipient there.
    pub to_address: Address,
    /// Any unused number, per agent and srcChain.
    pub nonce: U256,
    /// Unix seconds.
    pub deadline: u64,
}

/// The body of `POST /api/ncaccount/spend` (live): `intent` signed by
/// `signer` under the spend domain of chain `domain_chain` and `vault`
/// (the intent's srcChain and its vault, unless a test means otherwise).
pub fn spend_body(
    signer: &PrivateKeySigner,
    intent: &Intent,
    (domain_chain, vault): (u64, Address),
) -> Value {
    let spend = Spend {
        agent: intent.agent,
        srcChain: U256::from(intent.src_chain),
        amount: intent.amount,
        toChain: U256::from(intent.to_chain),
        toAddress: intent.to_address,
        nonce: intent.nonce,
        deadline: U256::from(intent.deadline),
    };
    let sig = super::sign(signer, &digest(&spend, &domain(domain_chain, vault)));
    json!({
        "intent": {"agent": intent.agent, "srcChain": intent.src_chain, "amount": intent.amount.to_string(),
            "toChain": intent.to_chain, "toAddress": intent.to_address,
            "nonce": intent.nonce.to_string(), "deadline": intent.deadline.to_string()},
        "signature": format!("0x{}", alloy::hex::encode(sig.as_bytes())),
        "live": true,
    })
}

/// What [`open`] left on chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The agent's vault shares.
    pub shares: U256,
    /// The shares it lets the relayer pull.
    pub allowance: U256,
}

/// Opens `agent`'s yield account on the chain at `url` (DEVNET ONLY): one
/// ETH for gas (`anvil_setBalance`), `deposit` USDC minted to it (the
/// devnet token mints openly) and deposited into `vault`, and an allowance
/// to `relayer` of the shares worth `allowed` USDC
/// (`previewWithdraw(allowed)`).
pub async fn open(
    url: Url,
    (usdc, vault): (Address, Address),
    relayer: Address,
    agent: &PrivateKeySigner,
    (deposit, allowed): (U256, U256),
) -> Result<Opened> {
    let me = agent.address();
    let p = wallet_provider(url, agent.clone());
    set_balance(&p, me, U256::from(10u128.pow(18))).await?;
    let token = TestToken::new(usdc, &p);
    confirm("TestToken.mint", token.mint(me, deposit).send().await).await?;
    confirm(
        "TestToken.approve",
        token.approve(vault, deposit).send().await,
    )
    .await?;
    let v = YieldVault::new(vault, &p);
    confirm("YieldVault.deposit", v.deposit(deposit, me).send().await).await?;
    let allowance = v
        .previewWithdraw(allowed)
        .call()
        .await
        .map_err(DevnetError::contract("YieldVault.previewWithdraw"))?;
    confirm(
        "YieldVault.approve",
        v.approve(relayer, allowance).send().await,
    )
    .await?;
    let shares = v
        .balanceOf(me)
        .call()
        .await
        .map_err(DevnetError::contract("YieldVault.balanceOf"))?;
    Ok(Opened { shares, allowance })
}
