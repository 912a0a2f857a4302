//! Devnet funding, the EIP-2612 permit on USDC, the bridge-deposit contract, membership NFTs
//! and node lifecycle, on real anvil.

use crate::common;

use alloy::{
    primitives::{Address, FixedBytes, Signature, U256},
    providers::Provider,
};
use common::{approve_max, balance_of, devnet};
use relay_devnet::{
    contracts::{
        eip712, far_deadline, sign_typed, token_domain, BridgeDeposit, Membership, TestToken,
    },
    deploy::ROLE_ETH,
    keys, Token,
};

#[tokio::test]
async fn every_chain_funds_the_relayer_and_the_test_accounts() -> anyhow::Result<()> {
    let devnet = devnet(&[8453, 56]).await?;
    for chain in devnet.chains() {
        let provider = chain.provider();
        assert_eq!(
            provider.get_balance(devnet.relayer).await?,
            U256::from(ROLE_ETH)
        );
        for token in Token::ALL {
            let address = chain.deployment.token(token);
            let relayer = balance_of(&provider, address, devnet.relayer).await?;
            assert_eq!(
                relayer,
                token.units(token.grants().relayer),
                "{token} on {}",
                chain.chain_id
            );
            for i in 0..10 {
                let bal = balance_of(&provider, address, keys::anvil_address(i)).await?;
                assert_eq!(
                    bal,
                    token.units(token.grants().test_account),
                    "{token} #{i}"
                );
            }
            let decimals = TestToken::new(address, &provider).decimals().call().await?;
            assert_eq!(decimals, token.decimals());
        }
    }
    assert!(
        devnet.deployment(56)?.cctp.is_none(),
        "BNB chain is not a CCTP chain"
    );
    assert_eq!(
        devnet.deployment(8453)?.cctp.as_ref().map(|c| c.domain),
        Some(6)
    );
    Ok(())
}

#[tokio::test]
async fn anvil_keys_match_the_node_accounts() -> anyhow::Result<()> {
    let devnet = devnet(&[1]).await?;
    let accounts = devnet.chain(1)?.provider().get_accounts().await?;
    let ours: Vec<Address> = (0..10).map(keys::anvil_address).collect();
    assert_eq!(accounts, ours);
    Ok(())
}

#[tokio::test]
async fn eip2612_permit_on_usdc_sets_the_allowance() -> anyhow::Result<()> {
    let devnet = devnet(&[10]).await?;
    let chain = devnet.chain(10)?;
    let provider = chain.provider();
    let usdc = chain.deployment.usdc;
    let owner = keys::anvil_signer(3);
    let spender = keys::anvil_address(4);
    let value = Token::Usdc.units(12);
    let permit = eip712::Permit {
        owner: owner.address(),
        spender,
        value,
        nonce: U256::ZERO,
        deadline: far_deadline(),
    };
    let sig =
        Signature::try_from(&sign_typed(&owner, &permit, &token_domain("USD Coin", 10, usdc))[..])?;

    let receipt = TestToken::new(usdc, &provider)
        .permit(
            owner.address(),
            spender,
            value,
            far_deadline(),
            27 + sig.v() as u8,
            sig.r().into(),
            sig.s().into(),
        )
        .from(keys::anvil_address(5))
        .send()
        .await?
        .get_receipt()
        .await?;
    assert!(receipt.status());
    let token = TestToken::new(usdc, &provider);
    assert_eq!(
        token.allowance(owner.address(), spender).call().await?,
        value
    );
    assert_eq!(token.nonces(owner.address()).call().await?, U256::from(1));
    Ok(())
}

#[tokio::test]
async fn mint_helper_credits_any_address() -> anyhow::Result<()> {
    let devnet = devnet(&[42161]).await?;
    let who = Address::repeat_byte(0x55);
    devnet
        .mint(42161, Token::Wbtc, who, Token::Wbtc.units(3))
        .await?;
    let wbtc = devnet.deployment(42161)?.wbtc;
    assert_eq!(
        balance_of(&devnet.chain(42161)?.provider(), wbtc, who).await?,
        Token::Wbtc.units(3)
    );
    assert!(
        devnet
            .mint(1, Token::Usdc, who, U256::from(1))
            .await
            .is_err(),
        "chain 1 is not running"
    );
    Ok(())
}

#[tokio::test]
async fn bridge_deposit_takes_deposits_and_pays_out_each_quote_once() -> anyhow::Result<()> {
    let devnet = devnet(&[1]).await?;
    let chain = devnet.chain(1)?;
    let provider = chain.provider();
    let d = &chain.deployment;
    let user = keys::anvil_address(6);
    let quote = FixedBytes::repeat_byte(0x01);
    approve_max(&provider, d.usdt, user, d.bridge_deposit).await?;
    let bridge_before = balance_of(&provider, d.usdt, d.bridge_deposit).await?;

    let receipt = BridgeDeposit::new(d.bridge_deposit, &provider)
        .deposit(d.usdt, Token::Usdt.units(40), U256::from(8453), user, quote)
        .from(user)
        .send()
        .await?
        .get_receipt()
        .await?;
    let deposited = receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| l.log_decode::<BridgeDeposit::Deposited>().ok())
        .expect("Deposited event");
    assert_eq!(deposited.inner.data.quoteId, quote);
    assert_eq!(deposited.inner.data.amount, Token::Usdt.units(40));
    assert_eq!(
        balance_of(&provider, d.usdt, d.bridge_deposit).await?,
        bridge_before + Token::Usdt.units(40)
    );

    let operator = relay_devnet::deploy::wallet_provider(chain.url(), keys::bridge_operator());
    let bridge = BridgeDeposit::new(d.bridge_deposit, &operator);
    let to = Address::repeat_byte(0x66);
    bridge
        .payout(d.usdt, to, Token::Usdt.units(39), quote)
        .send()
        .await?
        .get_receipt()
        .await?;
    assert_eq!(
        balance_of(&provider, d.usdt, to).await?,
        Token::Usdt.units(39)
    );
    let again = bridge
        .payout(d.usdt, to, Token::Usdt.units(39), quote)
        .send()
        .await
        .unwrap_err();
    assert!(
        again
            .as_decoded_error::<BridgeDeposit::AlreadySettled>()
            .is_some(),
        "{again}"
    );
    let stranger = BridgeDeposit::new(d.bridge_deposit, &provider);
    let err = stranger
        .payout(d.usdt, to, U256::from(1), FixedBytes::ZERO)
        .from(user)
        .send()
        .await
        .unwrap_err();
    assert!(
        err.as_decoded_error::<BridgeDeposit::NotOwner>().is_some(),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn membership_mint_gives_a_balance() -> anyhow::Result<()> {
    let devnet = devnet(&[130]).await?;
    let member = keys::anvil_address(7);
    devnet.mint_membership(130, member).await?;
    let chain = devnet.chain(130)?;
    let membership = Membership::new(chain.deployment.membership, chain.provider());
    assert_eq!(membership.balanceOf(member).call().await?, U256::from(1));
    assert_eq!(membership.ownerOf(U256::from(1)).call().await?, member);
    Ok(())
}

#[tokio::test]
async fn dropping_the_devnet_stops_its_nodes() -> anyhow::Result<()> {
    let devnet = devnet(&[1]).await?;
    let provider = devnet.chain(1)?.provider();
    assert_eq!(provider.get_chain_id().await?, 1);
    devnet.stop();
    assert!(provider.get_chain_id().await.is_err());
    Ok(())
}

#[tokio::test]
async fn block_time_switches_to_interval_mining_after_deployment() -> anyhow::Result<()> {
    let config = relay_devnet::DevnetConfig {
        block_time_secs: Some(1),
        ..relay_devnet::DevnetConfig::with_chains([1])
    };
    let devnet = relay_devnet::Devnet::start(config).await?;
    let provider = devnet.chain(1)?.provider();
    let usdc = devnet.deployment(1)?.usdc;
    let pending = TestToken::new(usdc, &provider)
        .transfer(Address::repeat_byte(0x11), U256::from(1))
        .from(keys::anvil_address(0))
        .send()
        .await?;
    let receipt = pending.get_receipt().await?;
    assert!(receipt.status());
    // Interval mining produces blocks without transactions; automining never would.
    let mined_in = receipt.block_number.expect("mined");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while provider.get_block_number().await? <= mined_in {
        assert!(
            std::time::Instant::now() < deadline,
            "no empty block within 10 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Ok(())
}
