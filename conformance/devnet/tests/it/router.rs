//! The `RelayRouter` on real anvil: the Permit2-witness path (gasless, with an EIP-2612
//! permit to Permit2), the deposit-call path into `BridgeDeposit`, the router's own
//! `RelayOrder` (EOA and ERC-1271 owners), and every refusal by its custom error.

use crate::common;

use alloy::{
    primitives::{keccak256, Address, Bytes, FixedBytes, Signature, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionReceipt,
    signers::local::PrivateKeySigner,
    sol,
    sol_types::{SolCall, SolStruct, SolValue},
};
use common::{balance_of, devnet, latest_timestamp};
use relay_devnet::{
    contracts::{
        compact_signature, eip712, far_deadline, permit2_domain, router_domain, sign_hash,
        sign_typed, token_domain, BridgeDeposit,
        Permit2::Permit2Errors,
        RelayRouter::{self, RelayRouterErrors},
        TestToken, TestWallet,
    },
    deploy::{self, set_balance, wallet_provider},
    keys, Devnet, Token, PERMIT2_ADDRESS,
};

const CHAIN: u64 = 1;
/// The destination chain named in the intents.
const DEST_CHAIN: u64 = 42161;

sol! {
    /// Permit2's TokenPermissions, for the EIP-712 witness type.
    #[derive(Debug)]
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    /// The router's intent: the Permit2 witness and the core of a RelayOrder.
    #[derive(Debug)]
    struct RelayIntent {
        string recipient;
        string toChain;
        string toToken;
        uint256 minOut;
        string rail;
        bytes32 planHash;
        uint256 feeCap;
        uint256 deadline;
    }

    /// What the owner signs for `relayPermit2` (spender = the router).
    #[derive(Debug)]
    struct PermitWitnessTransferFrom {
        TokenPermissions permitted;
        address spender;
        uint256 nonce;
        uint256 deadline;
        RelayIntent witness;
    }

    /// What the owner signs for `relayOrder`, under the router's own domain.
    #[derive(Debug)]
    struct RelayOrder {
        address owner;
        address token;
        uint256 amount;
        uint256 nonce;
        RelayIntent intent;
    }
}

fn usdc(whole: u64) -> U256 {
    Token::Usdc.units(whole)
}

/// keccak256(abi.encode(target, spender, value, keccak256(data))), as the router hashes a Deposit.
fn plan_hash(d: &RelayRouter::Deposit) -> B256 {
    keccak256((d.target, d.spender, d.value, keccak256(&d.data)).abi_encode())
}

/// An intake deposit: the net amount is transferred to `to`.
fn intake(to: Address) -> RelayRouter::Deposit {
    RelayRouter::Deposit {
        target: to,
        spender: Address::ZERO,
        value: U256::ZERO,
        data: Bytes::new(),
    }
}

fn intent_for(deposit: &RelayRouter::Deposit, fee_cap: U256, deadline: U256) -> RelayIntent {
    RelayIntent {
        recipient: "0x00000000000000000000000000000000000000a1".into(),
        toChain: DEST_CHAIN.to_string(),
        toToken: "USDC".into(),
        minOut: usdc(90),
        rail: "lifi".into(),
        planHash: plan_hash(deposit),
        feeCap: fee_cap,
        deadline,
    }
}

fn to_call(i: &RelayIntent) -> RelayRouter::RelayIntent {
    RelayRouter::RelayIntent {
        recipient: i.recipient.clone(),
        toChain: i.toChain.clone(),
        toToken: i.toToken.clone(),
        minOut: i.minOut,
        rail: i.rail.clone(),
        planHash: i.planHash,
        feeCap: i.feeCap,
        deadline: i.deadline,
    }
}

fn order_to_call(o: &RelayOrder) -> RelayRouter::RelayOrder {
    RelayRouter::RelayOrder {
        owner: o.owner,
        token: o.token,
        amount: o.amount,
        nonce: o.nonce,
        intent: to_call(&o.intent),
    }
}

fn no_token_permit() -> RelayRouter::TokenPermit {
    RelayRouter::TokenPermit {
        value: U256::ZERO,
        deadline: U256::ZERO,
        v: 0,
        r: B256::ZERO,
        s: B256::ZERO,
    }
}

fn settlement(fee: U256, to: Address) -> RelayRouter::Settlement {
    RelayRouter::Settlement {
        fee,
        feeRecipient: to,
    }
}

/// The router's custom error in a failed call (Permit2's errors bubble up through it too).
fn revert_of(err: &alloy::contract::Error) -> RelayRouterErrors {
    err.as_decoded_interface_error::<RelayRouterErrors>()
        .unwrap_or_else(|| panic!("not a RelayRouter revert: {err}"))
}

/// The flipped (high-s) twin of a 65-byte signature: same signer for ecrecover, refused by
/// every contract that enforces low s.
fn high_s(sig: &[u8; 65]) -> [u8; 65] {
    const N: U256 = U256::from_be_slice(&[
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36,
        0x41, 0x41,
    ]);
    let s = U256::from_be_slice(&sig[32..64]);
    let mut out = *sig;
    out[32..64].copy_from_slice(&(N - s).to_be_bytes::<32>());
    out[64] = if sig[64] == 27 { 28 } else { 27 };
    out
}

/// One chain of a devnet, seen by the relayer.
struct Scene {
    devnet: Devnet,
    /// Reads, and anvil's unlocked accounts.
    provider: DynProvider,
    router: Address,
    usdc: Address,
    bridge: Address,
}

impl Scene {
    async fn new() -> anyhow::Result<Self> {
        let devnet = devnet(&[CHAIN]).await?;
        let chain = devnet.chain(CHAIN)?;
        let d = &chain.deployment;
        let (router, usdc, bridge) = (d.router, d.usdc, d.bridge_deposit);
        anyhow::ensure!(router == devnet.router, "the devnet carries the router");
        Ok(Self {
            provider: chain.provider(),
            router,
            usdc,
            bridge,
            devnet,
        })
    }

    /// The router, called by the devnet relayer (the router's only relayer) through a new
    /// wallet provider each time: alloy's default nonce filler reserves a nonce even when gas
    /// estimation then fails, so one provider reused after a refused call would leave a gap.
    fn router(&self) -> RelayRouter::RelayRouterInstance<DynProvider> {
        let relayer = wallet_provider(self.devnet.rpc_url(CHAIN).expect("chain"), keys::relayer());
        RelayRouter::new(self.router, relayer)
    }

    async fn balance(&self, who: Address) -> anyhow::Result<U256> {
        balance_of(&self.provider, self.usdc, who).await
    }

    /// A fresh owner (deterministic per seed) holding `amount` minted USDC and no ETH.
    async fn fresh_owner(&self, seed: &str, amount: U256) -> anyhow::Result<PrivateKeySigner> {
        let owner = keys::seeded_signer(&format!("router test owner {seed}"));
        self.devnet
            .mint(CHAIN, Token::Usdc, owner.address(), amount)
            .await?;
        anyhow::ensure!(self.provider.get_balance(owner.address()).await? == U256::ZERO);
        Ok(owner)
    }

    /// `owner`'s EIP-2612 permit (nonce `nonce`) letting `spender` take `value` USDC.
    fn token_permit(
        &self,
        owner: &PrivateKeySigner,
        spender: Address,
        value: U256,
        nonce: u64,
    ) -> anyhow::Result<RelayRouter::TokenPermit> {
        let permit = eip712::Permit {
            owner: owner.address(),
            spender,
            value,
            nonce: U256::from(nonce),
            deadline: far_deadline(),
        };
        let domain = token_domain(Token::Usdc.name(), CHAIN, self.usdc);
        let sig = Signature::try_from(&sign_typed(owner, &permit, &domain)[..])?;
        Ok(RelayRouter::TokenPermit {
            value,
            deadline: far_deadline(),
            v: 27 + sig.v() as u8,
            r: sig.r().into(),
            s: sig.s().into(),
        })
    }

    /// `owner`'s Permit2 witness signature over `intent`, spender = the router.
    fn witness_signature(
        &self,
        owner: &PrivateKeySigner,
        amount: U256,
        nonce: U256,
        intent: &RelayIntent,
    ) -> [u8; 65] {
        let signed = PermitWitnessTransferFrom {
            permitted: TokenPermissions {
                token: self.usdc,
                amount,
            },
            spender: self.router,
            nonce,
            deadline: far_deadline(),
            witness: intent.clone(),
        };
        sign_typed(owner, &signed, &permit2_domain(CHAIN))
    }

    /// Submits relayPermit2 as `from` (the relayer's wallet unless an unlocked account is named).
    #[allow(clippy::too_many_arguments)]
    async fn relay_permit2(
        &self,
        owner: Address,
        amount: U256,
        nonce: U256,
        intent: &RelayIntent,
        signature: &[u8],
        token_permit: RelayRouter::TokenPermit,
        deposit: RelayRouter::Deposit,
        settlement: RelayRouter::Settlement,
        from: Option<Address>,
    ) -> Result<TransactionReceipt, alloy::contract::Error> {
        let permit = RelayRouter::PermitTransferFrom {
            permitted: RelayRouter::TokenPermissions {
                token: self.usdc,
                amount,
            },
            nonce,
            deadline: far_deadline(),
        };
        let args = (
            permit,
            owner,
            to_call(intent),
            Bytes::copy_from_slice(signature),
            token_permit,
            deposit,
            settlement,
        );
        let receipt = match from {
            None => {
                self.router()
                    .relayPermit2(args.0, args.1, args.2, args.3, args.4, args.5, args.6)
                    .send()
                    .await?
                    .get_receipt()
                    .await?
            }
            Some(from) => {
                RelayRouter::new(self.router, &self.provider)
                    .relayPermit2(args.0, args.1, args.2, args.3, args.4, args.5, args.6)
                    .from(from)
                    .send()
                    .await?
                    .get_receipt()
                    .await?
            }
        };
        assert!(receipt.status(), "relayPermit2 reverted on chain");
        Ok(receipt)
    }

    async fn relay_order(
        &self,
        order: &RelayOrder,
        signature: &[u8],
        token_permit: RelayRouter::TokenPermit,
        deposit: RelayRouter::Deposit,
        settlement: RelayRouter::Settlement,
    ) -> Result<TransactionReceipt, alloy::contract::Error> {
        let receipt = self
            .router()
            .relayOrder(
                order_to_call(order),
                Bytes::copy_from_slice(signature),
                token_permit,
                deposit,
                settlement,
            )
            .send()
            .await?
            .get_receipt()
            .await?;
        assert!(receipt.status(), "relayOrder reverted on chain");
        Ok(receipt)
    }

    /// Gives `who` ETH (for the few tests where the owner sends its own approve).
    async fn give_eth(&self, who: Address) -> anyhow::Result<()> {
        set_balance(&self.provider, who, U256::from(10u128.pow(18))).await?;
        Ok(())
    }
}

#[tokio::test]
async fn router_constants_and_domain_match_alloys_eip712() -> anyhow::Result<()> {
    let s = Scene::new().await?;
    let router = s.router();
    assert_eq!(router.permit2().call().await?, PERMIT2_ADDRESS);
    assert!(router.relayers(s.devnet.relayer).call().await?);
    assert_eq!(router.owner().call().await?, keys::deployer().address());
    assert_eq!(
        router.DOMAIN_SEPARATOR().call().await?,
        router_domain(CHAIN, s.router).hash_struct()
    );
    let domain = router.eip712Domain().call().await?;
    assert_eq!(domain.fields, FixedBytes([0x0f]));
    assert_eq!(
        (domain.name.as_str(), domain.version.as_str()),
        ("RelayRouter", "3.1")
    );
    assert_eq!(domain.chainId, U256::from(CHAIN));
    assert_eq!(domain.verifyingContract, s.router);

    assert_eq!(
        router.RELAY_INTENT_TYPE().call().await?,
        RelayIntent::eip712_encode_type()
    );
    assert_eq!(
        router.RELAY_ORDER_TYPE().call().await?,
        RelayOrder::eip712_encode_type()
    );
    let witness_type = PermitWitnessTransferFrom::eip712_encode_type()
        .split_once("uint256 deadline,")
        .expect("stub")
        .1
        .to_owned();
    assert_eq!(router.WITNESS_TYPE_STRING().call().await?, witness_type);

    let deposit = intake(Address::repeat_byte(0x77));
    let intent = intent_for(&deposit, usdc(1), far_deadline());
    assert_eq!(router.planHashOf(deposit).call().await?, intent.planHash);
    assert_eq!(
        router.hashIntent(to_call(&intent)).call().await?,
        intent.eip712_hash_struct()
    );
    let order = RelayOrder {
        owner: Address::repeat_byte(1),
        token: s.usdc,
        amount: usdc(5),
        nonce: U256::from(3),
        intent,
    };
    assert_eq!(
        router.hashOrder(order_to_call(&order)).call().await?,
        order.eip712_hash_struct()
    );
    Ok(())
}

#[tokio::test]
async fn permit2_witness_with_eip2612_moves_usdc_from_an_owner_without_eth() -> anyhow::Result<()> {
    let s = Scene::new().await?;
    let amount = usdc(100);
    let fee = usdc(2);
    let owner = s.fresh_owner("witness intake", amount).await?;
    let (x, y) = (Address::repeat_byte(0x58), Address::repeat_byte(0x59));
    let deposit = intake(x);
    let intent = intent_for(&deposit, usdc(3), far_deadline());
    let nonce = U256::from(11);
    let sig = s.witness_signature(&owner, amount, nonce, &intent);
    let token_permit = s.token_permit(&owner, PERMIT2_ADDRESS, amount, 0)?;

    let receipt = s
        .relay_permit2(
            owner.address(),
            amount,
            nonce,
            &intent,
            &sig,
            token_permit,
            deposit,
            settlement(fee, y),
            None,
        )
        .await?;
    println!(
        "gas relayPermit2 (intake, with EIP-2612): {}",
        receipt.gas_used
    );

    assert_eq!(s.balance(owner.address()).await?, U256::ZERO);
    assert_eq!(s.balance(x).await?, amount - fee);
    assert_eq!(s.balance(y).await?, fee);
    assert_eq!(s.balance(s.router).await?, U256::ZERO);
    assert_eq!(
        s.provider.get_balance(owner.address()).await?,
        U256::ZERO,
        "the owner paid no gas"
    );
    let relayed = receipt
        .decoded_log::<RelayRouter::Relayed>()
        .expect("Relayed event");
    assert_eq!(relayed.owner, owner.address());
    assert_eq!((relayed.amount, relayed.fee), (amount, fee));
    assert_eq!(relayed.planHash, intent.planHash);
    Ok(())
}

#[tokio::test]
async fn permit2_witness_calls_the_bridge_deposit_and_survives_a_front_run_permit(
) -> anyhow::Result<()> {
    let s = Scene::new().await?;
    let amount = usdc(50);
    let fee = usdc(1);
    let net = amount - fee;
    let owner = s.fresh_owner("witness deposit", amount).await?;
    let fee_to = Address::repeat_byte(0x5a);
    let quote_id = FixedBytes::repeat_byte(0xcd);
    let dest_recipient = Address::repeat_byte(0xa1);
    let deposit = RelayRouter::Deposit {
        target: s.bridge,
        spender: s.bridge,
        value: U256::ZERO,
        data: BridgeDeposit::depositCall {
            token: s.usdc,
            amount: net,
            destChainId: U256::from(DEST_CHAIN),
            recipient: dest_recipient,
            quoteId: quote_id,
        }
        .abi_encode()
        .into(),
    };
    let intent = intent_for(&deposit, fee, far_deadline());
    let nonce = U256::from(12);
    let sig = s.witness_signature(&owner, amount, nonce, &intent);
    let token_permit = s.token_permit(&owner, PERMIT2_ADDRESS, amount, 0)?;

    // someone submits the owner's EIP-2612 permit first: the router's own permit call fails,
    // the allowance is there, and the route goes on
    let front_run = TestToken::new(s.usdc, &s.provider)
        .permit(
            owner.address(),
            PERMIT2_ADDRESS,
            token_permit.value,
            token_permit.deadline,
            token_permit.v,
            token_permit.r,
            token_permit.s,
        )
        .from(keys::anvil_address(3))
        .send()
        .await?
        .get_receipt()
        .await?;
    assert!(front_run.status());

    let bridge_before = s.balance(s.bridge).await?;
    let receipt = s
        .relay_permit2(
            owner.address(),
            amount,
            nonce,
            &intent,
            &sig,
            token_permit,
            deposit,
            settlement(fee, fee_to),
            None,
        )
        .await?;
    println!(
        "gas relayPermit2 (BridgeDeposit.deposit call, permit front-run): {}",
        receipt.gas_used
    );

    assert_eq!(s.balance(s.bridge).await? - bridge_before, net);
    assert_eq!(s.balance(fee_to).await?, fee);
    assert_eq!(s.balance(owner.address()).await?, U256::ZERO);
    assert_eq!(s.balance(s.router).await?, U256::ZERO);
    let allowance = TestToken::new(s.usdc, &s.provider)
        .allowance(s.router, s.bridge)
        .call()
        .await?;
    assert_eq!(
        allowance,
        U256::MAX,
        "one standing approval of the declared spender (the router holds nothing between calls)"
    );
    let deposited = receipt
        .decoded_log::<BridgeDeposit::Deposited>()
        .expect("Deposited event");
    assert_eq!(deposited.sender, s.router);
    assert_eq!((deposited.amount, deposited.quoteId), (net, quote_id));
    assert_eq!(deposited.recipient, dest_recipient);
    Ok(())
}

#[tokio::test]
async fn relay_order_pulls_approved_tokens_once() -> anyhow::Result<()> {
    let s = Scene::new().await?;
    let amount = usdc(40);
    let fee = usdc(1);
    let owner = s.fresh_owner("order", amount * U256::from(2)).await?;
    s.give_eth(owner.address()).await?;
    let owner_wallet = wallet_provider(s.devnet.rpc_url(CHAIN)?, owner.clone());
    deploy::confirm(
        "approve the router",
        TestToken::new(s.usdc, &owner_wallet)
            .approve(s.router, amount)
            .send()
            .await,
    )
    .await?;

    let (x, y) = (Address::repeat_byte(0x61), Address::repeat_byte(0x62));
    let deposit = intake(x);
    let order = RelayOrder {
        owner: owner.address(),
        token: s.usdc,
        amount,
        nonce: U256::from(5),
        intent: intent_for(&deposit, fee, far_deadline()),
    };
    let sig = sign_typed(&owner, &order, &router_domain(CHAIN, s.router));
    let receipt = s
        .relay_order(
            &order,
            &sig,
            no_token_permit(),
            deposit.clone(),
            settlement(fee, y),
        )
        .await?;
    println!("gas relayOrder (approved, intake): {}", receipt.gas_used);
    assert_eq!(s.balance(owner.address()).await?, amount);
    assert_eq!(s.balance(x).await?, amount - fee);
    assert_eq!(s.balance(y).await?, fee);
    assert_eq!(s.balance(s.router).await?, U256::ZERO);
    let bitmap = s
        .router()
        .nonceBitmap(owner.address(), U256::ZERO)
        .call()
        .await?;
    assert_eq!(bitmap, U256::from(1u64 << 5));

    // the same call again: the nonce is spent
    let err = s
        .relay_order(
            &order,
            &sig,
            no_token_permit(),
            deposit.clone(),
            settlement(fee, y),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(revert_of(&err), RelayRouterErrors::InvalidNonce(_)),
        "{err}"
    );

    // a second order, gasless: an EIP-2612 permit to the router and a 64-byte signature
    let order2 = RelayOrder {
        nonce: U256::from(300),
        ..order
    };
    let sig2 = compact_signature(&sign_typed(
        &owner,
        &order2,
        &router_domain(CHAIN, s.router),
    ));
    let token_permit = s.token_permit(&owner, s.router, amount, 0)?;
    let receipt = s
        .relay_order(&order2, &sig2, token_permit, deposit, settlement(fee, y))
        .await?;
    println!(
        "gas relayOrder (EIP-2612 to the router, compact signature): {}",
        receipt.gas_used
    );
    assert_eq!(s.balance(owner.address()).await?, U256::ZERO);
    assert_eq!(s.balance(x).await?, (amount - fee) * U256::from(2));
    assert_eq!(s.balance(s.router).await?, U256::ZERO);
    Ok(())
}

#[tokio::test]
async fn relay_order_accepts_an_erc1271_wallet() -> anyhow::Result<()> {
    let s = Scene::new().await?;
    let amount = usdc(20);
    let signer = keys::seeded_signer("router test wallet owner");
    s.give_eth(signer.address()).await?;
    let owner_wallet = wallet_provider(s.devnet.rpc_url(CHAIN)?, signer.clone());
    let wallet = TestWallet::deploy(&owner_wallet, signer.address()).await?;
    s.devnet
        .mint(CHAIN, Token::Usdc, *wallet.address(), amount)
        .await?;
    let approve = TestToken::approveCall {
        spender: s.router,
        value: amount,
    }
    .abi_encode();
    deploy::confirm(
        "TestWallet.execute(approve)",
        wallet
            .execute(s.usdc, U256::ZERO, approve.into())
            .send()
            .await,
    )
    .await?;

    let x = Address::repeat_byte(0x63);
    let deposit = intake(x);
    let order = RelayOrder {
        owner: *wallet.address(),
        token: s.usdc,
        amount,
        nonce: U256::ZERO,
        intent: intent_for(&deposit, U256::ZERO, far_deadline()),
    };
    let sig = sign_typed(&signer, &order, &router_domain(CHAIN, s.router));
    let receipt = s
        .relay_order(
            &order,
            &sig,
            no_token_permit(),
            deposit,
            settlement(U256::ZERO, Address::ZERO),
        )
        .await?;
    println!(
        "gas relayOrder (ERC-1271 owner, no fee): {}",
        receipt.gas_used
    );
    assert_eq!(s.balance(x).await?, amount);
    assert_eq!(s.balance(*wallet.address()).await?, U256::ZERO);
    Ok(())
}

#[tokio::test]
async fn refusals_revert_with_their_custom_errors() -> anyhow::Result<()> {
    let s = Scene::new().await?;
    let amount = usdc(10);
    let fee = usdc(1);
    let owner = s.fresh_owner("refusals", amount).await?;
    let (x, y) = (Address::repeat_byte(0x64), Address::repeat_byte(0x65));
    let deposit = intake(x);
    let intent = intent_for(&deposit, fee, far_deadline());
    let nonce = U256::from(21);
    let sig = s.witness_signature(&owner, amount, nonce, &intent);
    let token_permit = s.token_permit(&owner, PERMIT2_ADDRESS, amount, 0)?;
    let submit = |intent: RelayIntent,
                  sig: [u8; 65],
                  deposit: RelayRouter::Deposit,
                  fee: U256,
                  from: Option<Address>| {
        let token_permit = token_permit.clone();
        let s = &s;
        let owner = owner.address();
        async move {
            s.relay_permit2(
                owner,
                amount,
                nonce,
                &intent,
                &sig,
                token_permit,
                deposit,
                settlement(fee, y),
                from,
            )
            .await
            .unwrap_err()
        }
    };

    // tampered intent: another recipient than signed -> Permit2's witness check fails
    let tampered = RelayIntent {
        recipient: "0x00000000000000000000000000000000000000b2".into(),
        ..intent.clone()
    };
    let err = submit(tampered, sig, deposit.clone(), fee, None).await;
    let permit2_err = err
        .as_decoded_interface_error::<Permit2Errors>()
        .unwrap_or_else(|| panic!("not a Permit2 revert: {err}"));
    assert!(
        matches!(permit2_err, Permit2Errors::InvalidSigner(_)),
        "{err}"
    );

    // another deposit than the signed plan
    let other = intake(Address::repeat_byte(0x66));
    let err = submit(intent.clone(), sig, other.clone(), fee, None).await;
    match revert_of(&err) {
        RelayRouterErrors::PlanMismatch(e) => {
            assert_eq!(e.signed, intent.planHash);
            assert_eq!(e.given, plan_hash(&other));
        }
        other => panic!("unexpected revert {other:?}"),
    }

    // a fee above the signed cap
    let err = submit(
        intent.clone(),
        sig,
        deposit.clone(),
        fee + U256::from(1),
        None,
    )
    .await;
    match revert_of(&err) {
        RelayRouterErrors::FeeAboveCap(e) => assert_eq!((e.fee, e.cap), (fee + U256::from(1), fee)),
        other => panic!("unexpected revert {other:?}"),
    }

    // an expired intent (signed as such)
    let deadline = U256::from(latest_timestamp(&s.provider).await? - 1);
    let expired = RelayIntent {
        deadline,
        ..intent.clone()
    };
    let expired_sig = s.witness_signature(&owner, amount, nonce, &expired);
    let err = submit(expired, expired_sig, deposit.clone(), fee, None).await;
    match revert_of(&err) {
        RelayRouterErrors::IntentExpired(e) => assert_eq!(e.deadline, deadline),
        other => panic!("unexpected revert {other:?}"),
    }

    // anyone but a relayer
    let outsider = keys::anvil_address(4);
    let err = submit(intent.clone(), sig, deposit.clone(), fee, Some(outsider)).await;
    match revert_of(&err) {
        RelayRouterErrors::NotRelayer(e) => assert_eq!(e.caller, outsider),
        other => panic!("unexpected revert {other:?}"),
    }

    // a signed deposit call that would spend someone's allowance to the router
    let hostile = RelayRouter::Deposit {
        target: s.usdc,
        spender: Address::ZERO,
        value: U256::ZERO,
        data: TestToken::transferFromCall {
            from: keys::anvil_address(6),
            to: y,
            value: amount,
        }
        .abi_encode()
        .into(),
    };
    let hostile_intent = intent_for(&hostile, fee, far_deadline());
    let hostile_sig = s.witness_signature(&owner, amount, nonce, &hostile_intent);
    let err = submit(hostile_intent, hostile_sig, hostile, fee, None).await;
    match revert_of(&err) {
        RelayRouterErrors::ForbiddenCall(e) => {
            assert_eq!(e.target, s.usdc);
            assert_eq!(e.selector, TestToken::transferFromCall::SELECTOR);
        }
        other => panic!("unexpected revert {other:?}"),
    }

    // native value on an intake transfer (it would stay in the router)
    let valued = RelayRouter::Deposit {
        value: U256::from(1),
        ..deposit.clone()
    };
    let valued_intent = intent_for(&valued, fee, far_deadline());
    let valued_sig = s.witness_signature(&owner, amount, nonce, &valued_intent);
    let err = submit(valued_intent, valued_sig, valued, fee, None).await;
    assert!(
        matches!(revert_of(&err), RelayRouterErrors::ValueMismatch(_)),
        "{err}"
    );

    // nothing moved; the genuine call still goes through afterwards
    assert_eq!(s.balance(owner.address()).await?, amount);
    s.relay_permit2(
        owner.address(),
        amount,
        nonce,
        &intent,
        &sig,
        token_permit,
        deposit.clone(),
        settlement(fee, y),
        None,
    )
    .await?;
    assert_eq!(s.balance(x).await?, amount - fee);

    // relayOrder with a high-s twin of a valid signature
    let order = RelayOrder {
        owner: owner.address(),
        token: s.usdc,
        amount,
        nonce: U256::ZERO,
        intent: intent.clone(),
    };
    let good = sign_typed(&owner, &order, &router_domain(CHAIN, s.router));
    let err = s
        .relay_order(
            &order,
            &high_s(&good),
            no_token_permit(),
            deposit.clone(),
            settlement(fee, y),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(revert_of(&err), RelayRouterErrors::InvalidSignature(_)),
        "{err}"
    );

    // relayOrder for an ERC-1271 wallet whose owner did not sign
    let wallet_owner = keys::seeded_signer("router test refused wallet owner");
    let deployer = wallet_provider(s.devnet.rpc_url(CHAIN)?, keys::anvil_signer(5));
    let wallet = TestWallet::deploy(&deployer, wallet_owner.address()).await?;
    let wallet_order = RelayOrder {
        owner: *wallet.address(),
        ..order
    };
    let digest = wallet_order.eip712_signing_hash(&router_domain(CHAIN, s.router));
    let not_the_owner = sign_hash(&owner, digest);
    let err = s
        .relay_order(
            &wallet_order,
            &not_the_owner,
            no_token_permit(),
            deposit,
            settlement(fee, y),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            revert_of(&err),
            RelayRouterErrors::InvalidContractSignature(_)
        ),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn the_router_has_one_address_on_cctp_and_non_cctp_chains() -> anyhow::Result<()> {
    let devnet = devnet(&[8453, 56]).await?;
    for chain in devnet.chains() {
        assert_eq!(chain.deployment.router, devnet.router, "{}", chain.chain_id);
        let provider = chain.provider();
        let router = RelayRouter::new(devnet.router, &provider);
        assert!(router.relayers(devnet.relayer).call().await?);
        assert!(!router.relayers(keys::anvil_address(0)).call().await?);
        assert_eq!(
            router.DOMAIN_SEPARATOR().call().await?,
            router_domain(chain.chain_id, devnet.router).hash_struct()
        );
    }
    Ok(())
}
