//! CCTP-style burn on one devnet chain, attested mint on another, on real anvil.

use crate::common;

use alloy::{
    primitives::{Address, Bytes, B256, U256},
    providers::DynProvider,
    rpc::types::TransactionReceipt,
};
use common::{approve_max, balance_of, devnet};
use relay_devnet::{
    contracts::{
        address_to_bytes32, attest_cctp_message,
        MessageTransmitter::{self, MessageTransmitterErrors},
        TestToken, TokenMessenger,
    },
    keys, ChainDeployment, Devnet,
};

const SOURCE: u64 = 1; // Circle domain 0
const DEST: u64 = 8453; // Circle domain 6

fn usdc(whole: u64) -> U256 {
    U256::from(whole) * U256::from(1_000_000u64)
}

/// Burns `amount` USDC on SOURCE from anvil #1 towards `recipient` on DEST; returns the
/// MessageSent bytes and the receipt.
async fn burn(
    devnet: &Devnet,
    amount: U256,
    recipient: Address,
    caller: B256,
) -> anyhow::Result<(Bytes, TransactionReceipt)> {
    let source = devnet.chain(SOURCE)?;
    let provider = source.provider();
    let cctp = source
        .deployment
        .cctp
        .as_ref()
        .expect("Ethereum is a CCTP chain");
    let depositor = keys::anvil_address(1);
    approve_max(
        &provider,
        source.deployment.usdc,
        depositor,
        cctp.token_messenger,
    )
    .await?;
    let receipt = TokenMessenger::new(cctp.token_messenger, &provider)
        .depositForBurn(
            amount,
            6,
            address_to_bytes32(recipient),
            source.deployment.usdc,
            caller,
            U256::ZERO,
            2000,
        )
        .from(depositor)
        .send()
        .await?
        .get_receipt()
        .await?;
    anyhow::ensure!(receipt.status(), "depositForBurn reverted");
    let message = receipt
        .inner
        .logs()
        .iter()
        .find_map(|log| log.log_decode::<MessageTransmitter::MessageSent>().ok())
        .ok_or_else(|| anyhow::anyhow!("no MessageSent log"))?
        .inner
        .data
        .message;
    Ok((message, receipt))
}

async fn receive(
    provider: &DynProvider,
    dest: &ChainDeployment,
    message: &Bytes,
    attestation: &[u8],
    caller: Address,
) -> Result<(), alloy::contract::Error> {
    let transmitter = dest
        .cctp
        .as_ref()
        .expect("Base is a CCTP chain")
        .message_transmitter;
    let receipt = MessageTransmitter::new(transmitter, provider)
        .receiveMessage(message.clone(), Bytes::copy_from_slice(attestation))
        .from(caller)
        .send()
        .await?
        .get_receipt()
        .await
        .expect("receipt");
    assert!(receipt.status(), "receiveMessage reverted on chain");
    Ok(())
}

fn revert_of(err: &alloy::contract::Error) -> MessageTransmitterErrors {
    err.as_decoded_interface_error::<MessageTransmitterErrors>()
        .unwrap_or_else(|| panic!("not a MessageTransmitter revert: {err}"))
}

#[tokio::test]
async fn burn_then_attested_receive_mints_exactly_the_amount_once() -> anyhow::Result<()> {
    let devnet = devnet(&[SOURCE, DEST]).await?;
    let recipient = Address::repeat_byte(0x77);
    let source = devnet.chain(SOURCE)?;
    let supply_before = TestToken::new(source.deployment.usdc, source.provider())
        .totalSupply()
        .call()
        .await?;

    let (message, _) = burn(&devnet, usdc(250), recipient, B256::ZERO).await?;

    let supply_after = TestToken::new(source.deployment.usdc, source.provider())
        .totalSupply()
        .call()
        .await?;
    assert_eq!(supply_before - supply_after, usdc(250), "the source burns");
    // header: version 1, source domain 0, destination domain 6; body amount at 148 + 68
    assert_eq!(&message[0..12], &[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 6]);
    assert_eq!(U256::from_be_slice(&message[216..248]), usdc(250));

    let dest = devnet.chain(DEST)?;
    let provider = dest.provider();
    let attestation = attest_cctp_message(&keys::attester(), &message);
    receive(
        &provider,
        &dest.deployment,
        &message,
        &attestation,
        keys::anvil_address(2),
    )
    .await?;
    assert_eq!(
        balance_of(&provider, dest.deployment.usdc, recipient).await?,
        usdc(250)
    );

    let err = receive(
        &provider,
        &dest.deployment,
        &message,
        &attestation,
        keys::anvil_address(2),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            revert_of(&err),
            MessageTransmitterErrors::NonceAlreadyUsed(_)
        ),
        "{err}"
    );
    assert_eq!(
        balance_of(&provider, dest.deployment.usdc, recipient).await?,
        usdc(250)
    );
    Ok(())
}

#[tokio::test]
async fn attestation_by_another_key_is_rejected() -> anyhow::Result<()> {
    let devnet = devnet(&[SOURCE, DEST]).await?;
    let (message, _) = burn(&devnet, usdc(1), Address::repeat_byte(0x78), B256::ZERO).await?;
    let dest = devnet.chain(DEST)?;
    let forged = attest_cctp_message(&keys::anvil_signer(0), &message);

    let err = receive(
        &dest.provider(),
        &dest.deployment,
        &message,
        &forged,
        keys::anvil_address(2),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            revert_of(&err),
            MessageTransmitterErrors::InvalidAttestation(_)
        ),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn destination_caller_restricts_who_may_receive() -> anyhow::Result<()> {
    let devnet = devnet(&[SOURCE, DEST]).await?;
    let allowed = keys::anvil_address(4);
    let recipient = Address::repeat_byte(0x79);
    let (message, _) = burn(&devnet, usdc(2), recipient, address_to_bytes32(allowed)).await?;
    let dest = devnet.chain(DEST)?;
    let provider = dest.provider();
    let attestation = attest_cctp_message(&keys::attester(), &message);

    let err = receive(
        &provider,
        &dest.deployment,
        &message,
        &attestation,
        keys::anvil_address(5),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(revert_of(&err), MessageTransmitterErrors::InvalidCaller(_)),
        "{err}"
    );
    receive(&provider, &dest.deployment, &message, &attestation, allowed).await?;
    assert_eq!(
        balance_of(&provider, dest.deployment.usdc, recipient).await?,
        usdc(2)
    );
    Ok(())
}

#[tokio::test]
async fn message_for_another_domain_is_rejected() -> anyhow::Result<()> {
    // A burn towards Base (domain 6) cannot be received on Arbitrum (domain 3).
    let devnet = devnet(&[SOURCE, DEST, 42161]).await?;
    let (message, _) = burn(&devnet, usdc(1), Address::repeat_byte(0x7a), B256::ZERO).await?;
    let arb = devnet.chain(42161)?;
    let attestation = attest_cctp_message(&keys::attester(), &message);

    let err = receive(
        &arb.provider(),
        &arb.deployment,
        &message,
        &attestation,
        keys::anvil_address(2),
    )
    .await
    .unwrap_err();
    match revert_of(&err) {
        MessageTransmitterErrors::InvalidDestinationDomain(e) => assert_eq!(e.destinationDomain, 6),
        other => panic!("unexpected revert {other:?}"),
    }
    Ok(())
}
