//! The Permit2-compatible SignatureTransfer at the canonical address, on real anvil.

use crate::common;

use alloy::{
    primitives::{Address, Bytes, FixedBytes, U256},
    providers::DynProvider,
    signers::local::PrivateKeySigner,
    sol,
    sol_types::SolStruct,
};
use common::{approve_max, balance_of, devnet, latest_timestamp};
use relay_devnet::{
    contracts::{
        compact_signature, eip712, far_deadline, permit2_domain, sign_typed,
        Permit2::{self, Permit2Errors},
    },
    keys, PERMIT2_ADDRESS,
};

const CHAIN: u64 = 1;

/// One scenario: owner = anvil #1 (signs), spender = anvil #2 (submits), a fresh recipient.
struct Scene {
    provider: DynProvider,
    usdc: Address,
    owner: PrivateKeySigner,
    spender: Address,
    recipient: Address,
}

impl Scene {
    async fn new(devnet: &relay_devnet::Devnet) -> anyhow::Result<Self> {
        let chain = devnet.chain(CHAIN)?;
        let provider = chain.provider();
        let owner = keys::anvil_signer(1);
        let usdc = chain.deployment.usdc;
        approve_max(&provider, usdc, owner.address(), PERMIT2_ADDRESS).await?;
        Ok(Self {
            provider,
            usdc,
            owner,
            spender: keys::anvil_address(2),
            recipient: Address::repeat_byte(0x42),
        })
    }

    fn signed(&self, amount: U256, nonce: U256, deadline: U256) -> eip712::PermitTransferFrom {
        eip712::PermitTransferFrom {
            permitted: eip712::TokenPermissions {
                token: self.usdc,
                amount,
            },
            spender: self.spender,
            nonce,
            deadline,
        }
    }

    /// Submits `permit` with `signature` from `submitter`, asking for `requested`.
    async fn submit(
        &self,
        permit: &eip712::PermitTransferFrom,
        requested: U256,
        signature: &[u8],
        submitter: Address,
    ) -> Result<(), alloy::contract::Error> {
        let call_permit = Permit2::PermitTransferFrom {
            permitted: Permit2::TokenPermissions {
                token: permit.permitted.token,
                amount: permit.permitted.amount,
            },
            nonce: permit.nonce,
            deadline: permit.deadline,
        };
        let details = Permit2::SignatureTransferDetails {
            to: self.recipient,
            requestedAmount: requested,
        };
        let permit2 = Permit2::new(PERMIT2_ADDRESS, &self.provider);
        let call = permit2.permitTransferFrom_0(
            call_permit,
            details,
            self.owner.address(),
            Bytes::copy_from_slice(signature),
        );
        let receipt = call
            .from(submitter)
            .send()
            .await?
            .get_receipt()
            .await
            .expect("receipt");
        assert!(receipt.status(), "permitTransferFrom reverted on chain");
        Ok(())
    }
}

fn usdc(whole: u64) -> U256 {
    U256::from(whole) * U256::from(1_000_000u64)
}

fn revert_of(err: &alloy::contract::Error) -> Permit2Errors {
    err.as_decoded_interface_error::<Permit2Errors>()
        .unwrap_or_else(|| panic!("not a Permit2 revert: {err}"))
}

#[tokio::test]
async fn eip712_signed_permit_transfers_usdc_through_the_canonical_address() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    let owner_before = balance_of(&s.provider, s.usdc, s.owner.address()).await?;
    let permit = s.signed(usdc(100), U256::from(7), far_deadline());
    let sig = sign_typed(&s.owner, &permit, &permit2_domain(CHAIN));

    s.submit(&permit, usdc(60), &sig, s.spender).await?;

    assert_eq!(
        balance_of(&s.provider, s.usdc, s.recipient).await?,
        usdc(60)
    );
    assert_eq!(
        balance_of(&s.provider, s.usdc, s.owner.address()).await?,
        owner_before - usdc(60)
    );
    Ok(())
}

#[tokio::test]
async fn domain_separator_matches_alloys_permit2_domain() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let provider = devnet.chain(CHAIN)?.provider();
    let onchain = Permit2::new(PERMIT2_ADDRESS, &provider)
        .DOMAIN_SEPARATOR()
        .call()
        .await?;
    assert_eq!(onchain, permit2_domain(CHAIN).hash_struct());
    Ok(())
}

#[tokio::test]
async fn replayed_nonce_reverts_with_invalid_nonce() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    let permit = s.signed(usdc(10), U256::from(1), far_deadline());
    let sig = sign_typed(&s.owner, &permit, &permit2_domain(CHAIN));
    s.submit(&permit, usdc(10), &sig, s.spender).await?;

    let err = s
        .submit(&permit, usdc(10), &sig, s.spender)
        .await
        .unwrap_err();
    assert!(
        matches!(revert_of(&err), Permit2Errors::InvalidNonce(_)),
        "{err}"
    );
    assert_eq!(
        balance_of(&s.provider, s.usdc, s.recipient).await?,
        usdc(10)
    );
    Ok(())
}

#[tokio::test]
async fn expired_deadline_reverts_with_signature_expired() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    let deadline = U256::from(latest_timestamp(&s.provider).await? - 1);
    let permit = s.signed(usdc(10), U256::from(2), deadline);
    let sig = sign_typed(&s.owner, &permit, &permit2_domain(CHAIN));

    let err = s
        .submit(&permit, usdc(10), &sig, s.spender)
        .await
        .unwrap_err();
    match revert_of(&err) {
        Permit2Errors::SignatureExpired(e) => assert_eq!(e.signatureDeadline, deadline),
        other => panic!("unexpected revert {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn wrong_spender_reverts_with_invalid_signer() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    let permit = s.signed(usdc(10), U256::from(3), far_deadline());
    let sig = sign_typed(&s.owner, &permit, &permit2_domain(CHAIN));

    let err = s
        .submit(&permit, usdc(10), &sig, keys::anvil_address(3))
        .await
        .unwrap_err();
    assert!(
        matches!(revert_of(&err), Permit2Errors::InvalidSigner(_)),
        "{err}"
    );
    assert_eq!(
        balance_of(&s.provider, s.usdc, s.recipient).await?,
        U256::ZERO
    );
    Ok(())
}

#[tokio::test]
async fn signature_for_another_chain_id_reverts_with_invalid_signer() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    let permit = s.signed(usdc(10), U256::from(4), far_deadline());
    let sig = sign_typed(&s.owner, &permit, &permit2_domain(8453));

    let err = s
        .submit(&permit, usdc(10), &sig, s.spender)
        .await
        .unwrap_err();
    assert!(
        matches!(revert_of(&err), Permit2Errors::InvalidSigner(_)),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn requesting_more_than_permitted_reverts_with_invalid_amount() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    let permit = s.signed(usdc(10), U256::from(5), far_deadline());
    let sig = sign_typed(&s.owner, &permit, &permit2_domain(CHAIN));

    let err = s
        .submit(&permit, usdc(11), &sig, s.spender)
        .await
        .unwrap_err();
    match revert_of(&err) {
        Permit2Errors::InvalidAmount(e) => assert_eq!(e.maxAmount, usdc(10)),
        other => panic!("unexpected revert {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn compact_64_byte_signature_transfers_and_sets_the_nonce_bit() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    // nonce 258 = word 1, bit 2
    let permit = s.signed(usdc(5), U256::from(258), far_deadline());
    let compact = compact_signature(&sign_typed(&s.owner, &permit, &permit2_domain(CHAIN)));

    s.submit(&permit, usdc(5), &compact, s.spender).await?;

    assert_eq!(balance_of(&s.provider, s.usdc, s.recipient).await?, usdc(5));
    let permit2 = Permit2::new(PERMIT2_ADDRESS, &s.provider);
    assert_eq!(
        permit2
            .nonceBitmap(s.owner.address(), U256::from(1))
            .call()
            .await?,
        U256::from(4)
    );
    assert_eq!(
        permit2
            .nonceBitmap(s.owner.address(), U256::ZERO)
            .call()
            .await?,
        U256::ZERO
    );
    Ok(())
}

#[tokio::test]
async fn invalidated_nonce_cannot_be_used() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    let permit2 = Permit2::new(PERMIT2_ADDRESS, &s.provider);
    let receipt = permit2
        .invalidateUnorderedNonces(U256::ZERO, U256::from(1u64 << 9))
        .from(s.owner.address())
        .send()
        .await?
        .get_receipt()
        .await?;
    assert!(receipt.status());

    let permit = s.signed(usdc(1), U256::from(9), far_deadline());
    let sig = sign_typed(&s.owner, &permit, &permit2_domain(CHAIN));
    let err = s
        .submit(&permit, usdc(1), &sig, s.spender)
        .await
        .unwrap_err();
    assert!(
        matches!(revert_of(&err), Permit2Errors::InvalidNonce(_)),
        "{err}"
    );
    Ok(())
}

sol! {
    /// Permit2's TokenPermissions (redeclared so the witness struct can refer to it).
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    /// An example witness, as a relay quote would bind one.
    struct RelayWitness {
        bytes32 quoteId;
        address recipient;
    }

    /// The EIP-712 form of a witness transfer with `RelayWitness`.
    struct PermitWitnessTransferFrom {
        TokenPermissions permitted;
        address spender;
        uint256 nonce;
        uint256 deadline;
        RelayWitness witness;
    }
}

#[tokio::test]
async fn witness_transfer_verifies_an_alloy_eip712_signature() -> anyhow::Result<()> {
    let devnet = devnet(&[CHAIN]).await?;
    let s = Scene::new(&devnet).await?;
    let witness = RelayWitness {
        quoteId: FixedBytes::repeat_byte(0xab),
        recipient: s.recipient,
    };
    let signed = PermitWitnessTransferFrom {
        permitted: TokenPermissions {
            token: s.usdc,
            amount: usdc(3),
        },
        spender: s.spender,
        nonce: U256::from(77),
        deadline: far_deadline(),
        witness: witness.clone(),
    };
    let sig = sign_typed(&s.owner, &signed, &permit2_domain(CHAIN));
    // Permit2's witnessTypeString: everything after "...uint256 deadline," in the encoded type.
    let encoded = PermitWitnessTransferFrom::eip712_encode_type();
    let witness_type = encoded
        .split_once("uint256 deadline,")
        .expect("stub")
        .1
        .to_owned();
    assert_eq!(
        witness_type,
        "RelayWitness witness)RelayWitness(bytes32 quoteId,address recipient)TokenPermissions(address token,uint256 amount)"
    );

    let receipt = Permit2::new(PERMIT2_ADDRESS, &s.provider)
        .permitWitnessTransferFrom_0(
            Permit2::PermitTransferFrom {
                permitted: Permit2::TokenPermissions {
                    token: s.usdc,
                    amount: usdc(3),
                },
                nonce: signed.nonce,
                deadline: signed.deadline,
            },
            Permit2::SignatureTransferDetails {
                to: s.recipient,
                requestedAmount: usdc(3),
            },
            s.owner.address(),
            witness.eip712_hash_struct(),
            witness_type,
            Bytes::copy_from_slice(&sig),
        )
        .from(s.spender)
        .send()
        .await?
        .get_receipt()
        .await?;
    assert!(receipt.status());
    assert_eq!(balance_of(&s.provider, s.usdc, s.recipient).await?, usdc(3));
    Ok(())
}
