//! EIP-3009 `transferWithAuthorization` on the devnet USDC (what x402's
//! `exact` scheme pays with): a signed authorization moves the tokens once;
//! a replay, an expired one, a tampered one and a high-s one revert.

use crate::common;

use alloy::{
    primitives::{keccak256, Address, Signature, U256},
    providers::Provider,
};
use common::{balance_of, devnet};
use relay_devnet::{
    contracts::{eip712, sign_typed, token_domain, TestToken},
    keys, Token,
};

#[tokio::test]
async fn a_transfer_authorization_moves_tokens_once() -> anyhow::Result<()> {
    let devnet = devnet(&[8453]).await?;
    let chain = devnet.chain(8453)?;
    let provider = chain.provider();
    let usdc = chain.deployment.usdc;
    let token = TestToken::new(usdc, &provider);
    let payer = keys::anvil_signer(6);
    let payee = Address::repeat_byte(0x3d);
    let now = provider.get_block_number().await?;
    let now = provider
        .get_block_by_number(now.into())
        .await?
        .expect("the head block")
        .header
        .timestamp;
    let auth = |value: u64, before: u64, nonce: &[u8]| eip712::TransferWithAuthorization {
        from: payer.address(),
        to: payee,
        value: U256::from(value),
        validAfter: U256::ZERO,
        validBefore: U256::from(before),
        nonce: keccak256(nonce),
    };
    let submit = |a: eip712::TransferWithAuthorization, sig: [u8; 65]| {
        let sig = Signature::try_from(&sig[..]).expect("65 bytes");
        let token = token.clone();
        async move {
            token
                .transferWithAuthorization(
                    a.from,
                    a.to,
                    a.value,
                    a.validAfter,
                    a.validBefore,
                    a.nonce,
                    27 + sig.v() as u8,
                    sig.r().into(),
                    sig.s().into(),
                )
                .from(keys::anvil_address(7))
                .send()
                .await
        }
    };
    let domain = token_domain(Token::Usdc.name(), 8453, usdc);
    let good = auth(2_500_000, now + 600, b"one");
    let sig = sign_typed(&payer, &good, &domain);
    let before = balance_of(&provider, usdc, payer.address()).await?;
    let receipt = submit(good.clone(), sig).await?.get_receipt().await?;
    assert!(receipt.status());
    assert_eq!(
        balance_of(&provider, usdc, payee).await?,
        U256::from(2_500_000u64)
    );
    assert_eq!(
        balance_of(&provider, usdc, payer.address()).await?,
        before - U256::from(2_500_000u64)
    );
    assert!(
        token
            .authorizationState(payer.address(), good.nonce)
            .call()
            .await?
    );

    // a replay, an expired authorization, a changed amount, a high-s signature
    let expired = auth(1, now - 1, b"two");
    let expired_sig = sign_typed(&payer, &expired, &domain);
    let mut tampered = auth(1, now + 600, b"three");
    let tampered_sig = sign_typed(&payer, &tampered, &domain);
    tampered.value = U256::from(2u8);
    let high = auth(1, now + 600, b"four");
    let mut high_sig = sign_typed(&payer, &high, &domain);
    let n = U256::from_str_radix(
        "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
        16,
    )?;
    let s = U256::from_be_slice(&high_sig[32..64]);
    high_sig[32..64].copy_from_slice(&(n - s).to_be_bytes::<32>());
    high_sig[64] = if high_sig[64] == 27 { 28 } else { 27 };
    for (what, a, sig) in [
        ("replay", good, sig),
        ("expired", expired, expired_sig),
        ("tampered", tampered, tampered_sig),
        ("high-s", high, high_sig),
    ] {
        assert!(submit(a, sig).await.is_err(), "{what} must revert");
    }
    assert_eq!(
        balance_of(&provider, usdc, payee).await?,
        U256::from(2_500_000u64)
    );
    Ok(())
}
