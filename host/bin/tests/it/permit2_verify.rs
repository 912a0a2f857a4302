//! The host's off-chain Permit2 check against signatures made with alloy's
//! EIP-712 signer (independently of the host's own type definitions): a
//! good permit verifies and the very same signature then moves the tokens
//! on chain; each bad one is refused with the variant naming what is wrong.

use alloy::{
    primitives::{Address, Bytes, U256},
    providers::Provider,
};
use relay_chain::permit2::{verify, verify_offline, Expected, Permit2Error, SignedPermit};
use relay_devnet::{
    contracts::{eip712, permit2_domain, sign_typed, Permit2, TestToken, PERMIT2_ADDRESS},
    keys, Devnet, DevnetConfig,
};

const CHAIN: u64 = 8453;
const NOW: u64 = 1_800_000_000;

fn sign(
    chain: u64,
    spender: Address,
    token: Address,
    amount: u64,
    nonce: u64,
    deadline: u64,
) -> SignedPermit {
    let owner = keys::anvil_signer(1);
    let msg = eip712::PermitTransferFrom {
        permitted: eip712::TokenPermissions {
            token,
            amount: U256::from(amount),
        },
        spender,
        nonce: U256::from(nonce),
        deadline: U256::from(deadline),
    };
    let sig = sign_typed(&owner, &msg, &permit2_domain(chain));
    SignedPermit {
        owner: owner.address(),
        token,
        amount: U256::from(amount),
        nonce: U256::from(nonce),
        deadline: U256::from(deadline),
        signature: Bytes::copy_from_slice(&sig),
    }
}

fn expected(token: Address, amount: u64) -> Expected {
    Expected {
        chain_id: CHAIN,
        permit2: PERMIT2_ADDRESS,
        spender: keys::relayer().address(),
        token,
        amount: U256::from(amount),
        now_secs: NOW,
    }
}

#[test]
fn each_bad_permit_is_refused_with_its_reason() {
    let (relayer, token) = (keys::relayer().address(), Address::repeat_byte(0xaa));
    let e = expected(token, 5_000_000);
    assert_eq!(
        verify_offline(&sign(CHAIN, relayer, token, 5_000_000, 1, NOW + 600), &e),
        Ok(())
    );

    let other_spender = sign(
        CHAIN,
        keys::anvil_address(7),
        token,
        5_000_000,
        1,
        NOW + 600,
    );
    assert!(matches!(
        verify_offline(&other_spender, &e),
        Err(Permit2Error::BadSigner { .. })
    ));
    let other_chain = sign(42161, relayer, token, 5_000_000, 1, NOW + 600);
    assert!(matches!(
        verify_offline(&other_chain, &e),
        Err(Permit2Error::BadSigner { .. })
    ));
    let expired = sign(CHAIN, relayer, token, 5_000_000, 1, NOW);
    assert!(matches!(
        verify_offline(&expired, &e),
        Err(Permit2Error::Expired { .. })
    ));
    let short = sign(CHAIN, relayer, token, 4_999_999, 1, NOW + 600);
    assert!(matches!(
        verify_offline(&short, &e),
        Err(Permit2Error::AmountTooLow { .. })
    ));
    let wrong_token = sign(
        CHAIN,
        relayer,
        Address::repeat_byte(0xbb),
        5_000_000,
        1,
        NOW + 600,
    );
    assert!(matches!(
        verify_offline(&wrong_token, &e),
        Err(Permit2Error::WrongToken { .. })
    ));
    let mut forged = sign(CHAIN, relayer, token, 5_000_000, 1, NOW + 600);
    forged.owner = keys::anvil_address(2);
    assert!(matches!(
        verify_offline(&forged, &e),
        Err(Permit2Error::BadSigner { .. })
    ));

    // The malleable twin of a good signature: s' = n - s, v flipped.
    let good = sign(CHAIN, relayer, token, 5_000_000, 1, NOW + 600);
    let n = U256::from_str_radix(
        "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
        16,
    )
    .unwrap();
    let s = U256::from_be_slice(&good.signature[32..64]);
    let mut high = good.signature.to_vec();
    high[32..64].copy_from_slice(&(n - s).to_be_bytes::<32>());
    high[64] = if high[64] == 27 { 28 } else { 27 };
    let high_s = SignedPermit {
        signature: Bytes::from(high),
        ..good.clone()
    };
    assert_eq!(verify_offline(&high_s, &e), Err(Permit2Error::HighS));

    // EIP-2098 compact form of the good one verifies; garbage does not.
    let compact =
        relay_devnet::contracts::compact_signature(&good.signature[..].try_into().unwrap());
    assert_eq!(
        verify_offline(
            &SignedPermit {
                signature: Bytes::copy_from_slice(&compact),
                ..good.clone()
            },
            &e
        ),
        Ok(())
    );
    let garbage = SignedPermit {
        signature: Bytes::from(vec![1u8; 10]),
        ..good
    };
    assert!(matches!(
        verify_offline(&garbage, &e),
        Err(Permit2Error::Malformed(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_verified_permit_moves_tokens_and_its_nonce_is_then_refused() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let chain = devnet.chain(CHAIN).unwrap();
    let p = chain.provider();
    let (owner, relayer, usdc) = (
        keys::anvil_address(1),
        keys::relayer().address(),
        chain.deployment.usdc,
    );
    TestToken::new(usdc, &p)
        .approve(PERMIT2_ADDRESS, U256::MAX)
        .from(owner)
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    let now = p
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await
        .unwrap()
        .unwrap()
        .header
        .timestamp;
    let permit = sign(CHAIN, relayer, usdc, 5_000_000, 42, now + 600);
    let e = Expected {
        now_secs: now,
        ..expected(usdc, 5_000_000)
    };
    verify(&p, &permit, &e)
        .await
        .expect("a good permit verifies");

    let before = TestToken::new(usdc, &p)
        .balanceOf(relayer)
        .call()
        .await
        .unwrap();
    // The relayer submits with its own key, as the host's signer will.
    let relayer_provider = relay_devnet::deploy::wallet_provider(chain.url(), keys::relayer());
    Permit2::new(PERMIT2_ADDRESS, &relayer_provider)
        .permitTransferFrom_0(
            Permit2::PermitTransferFrom {
                permitted: Permit2::TokenPermissions {
                    token: usdc,
                    amount: permit.amount,
                },
                nonce: permit.nonce,
                deadline: permit.deadline,
            },
            Permit2::SignatureTransferDetails {
                to: relayer,
                requestedAmount: U256::from(5_000_000u64),
            },
            owner,
            permit.signature.clone(),
        )
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    let after = TestToken::new(usdc, &p)
        .balanceOf(relayer)
        .call()
        .await
        .unwrap();
    assert_eq!(
        after - before,
        U256::from(5_000_000u64),
        "the same signature is accepted on chain"
    );
    assert_eq!(
        verify(&p, &permit, &e).await,
        Err(Permit2Error::NonceUsed(U256::from(42u64)))
    );
    devnet.stop();
}
