use super::*;
use alloy::{
    primitives::address,
    signers::{local::PrivateKeySigner, SignerSync},
};
use relay_chain::typed::{self, Domain};

const RELAYER: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const USER: &str = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
const TOKEN: Address = address!("0x00000000000000000000000000000000000000aa");
const RECIPIENT: Address = address!("0x00000000000000000000000000000000000000bb");

fn relayer() -> RelayerSigner {
    RelayerSigner::from_hex(RELAYER).unwrap()
}

fn topic(a: Address) -> B256 {
    a.into_word()
}

fn transfer_log(index: u64, from: Address, to: Address, amount: u64) -> LogEvidence {
    LogEvidence {
        log_index: index,
        address: TOKEN,
        topics: vec![TRANSFER_TOPIC, topic(from), topic(to)],
        data: format!("0x{}", hex::encode(U256::from(amount).to_be_bytes::<32>())),
    }
}

fn tx(role: &str, chain: u64, n: u8, log: LogEvidence) -> TxEvidence {
    TxEvidence {
        role: role.into(),
        chain,
        hash: B256::repeat_byte(n),
        step: None,
        receipt: Some(ReceiptEvidence {
            block_number: 7,
            block_hash: B256::repeat_byte(0x77),
            success: true,
            from: Address::repeat_byte(1),
            to: Some(TOKEN),
            gas_used: 50_000,
            logs: vec![log],
        }),
    }
}

fn transfer(chain: u64, n: u8, from: Address, to: Address, amount: u64) -> TransferRef {
    TransferRef {
        chain,
        tx: B256::repeat_byte(n),
        log_index: 0,
        token: TOKEN,
        from,
        to,
        amount: amount.to_string(),
    }
}

/// A payload for a 5 USDC route whose user signed an EIP-2612 permit,
/// delivered 4.9 USDC (minOut 4.8).
fn payload(user: &PrivateKeySigner, credited: u64) -> Payload {
    let sender = user.address();
    let domain = Domain {
        name: "USD Coin".into(),
        version: Some("2".into()),
        chain_id: 8453,
        verifying_contract: TOKEN,
    };
    let typed_data = typed::permit(
        &domain,
        (sender, Address::repeat_byte(9)),
        U256::from(5_000_000u64),
        U256::ZERO,
        U256::from(u64::MAX),
    );
    let digest = typed::signing_hash(&typed_data).unwrap();
    let sig = user.sign_hash_sync(&digest).unwrap();
    Payload {
        issued_at: 1_700_000_000_000,
        route: RouteFacts {
            id: "rt_1".into(),
            status: "DONE".into(),
            rail: "floatlane".into(),
            lane: "evm->evm".into(),
            from_chain: "8453".into(),
            to_chain: "42161".into(),
            amount: "5000000".into(),
            min_out: "4800000".into(),
            sender: sender.to_string(),
            recipient: RECIPIENT.to_string(),
            ..RouteFacts::default()
        },
        authorization: Some(Authorization {
            kind: "erc2612".into(),
            typed_data,
            digest,
            signature: format!("0x{}", hex::encode(sig.as_bytes())),
            signer: sender,
        }),
        attestation: None,
        plan: serde_json::json!({"actions": []}),
        transactions: vec![
            tx(
                "source",
                8453,
                1,
                transfer_log(0, sender, Address::repeat_byte(9), 5_000_000),
            ),
            tx(
                "destination",
                42161,
                2,
                transfer_log(0, Address::repeat_byte(9), RECIPIENT, credited),
            ),
        ],
        outcome: OutcomeEvidence {
            verdict: Verdict::Verified,
            source_debit: Some(transfer(
                8453,
                1,
                sender,
                Address::repeat_byte(9),
                5_000_000,
            )),
            destination_credit: Some(transfer(
                42161,
                2,
                Address::repeat_byte(9),
                RECIPIENT,
                credited,
            )),
            reasons: vec![],
        },
    }
}

fn user() -> PrivateKeySigner {
    USER.parse().unwrap()
}

fn file(p: Payload) -> String {
    to_file(&seal(p, Some(&relayer())).unwrap())
}

#[test]
fn a_sealed_bundle_verifies_offline_and_names_its_signer() {
    let f = file(payload(&user(), 4_900_000));
    let v = verify_file(f.as_bytes(), Some(relayer().address())).unwrap();
    assert_eq!(v.signer, relayer().address());
    assert_eq!(v.route_id, "rt_1");
    assert_eq!(v.verdict, Verdict::Verified);
    assert_eq!(v.checks.len(), 4, "{:?}", v.checks);
}

#[test]
fn any_changed_byte_fails() {
    let f = file(payload(&user(), 4_900_000));
    // a signed value
    let edited = f.replacen("\"5000000\"", "\"6000000\"", 1);
    assert!(matches!(
        verify_file(edited.as_bytes(), None),
        Err(EvidenceError::Seal(_))
    ));
    // layout only: still refused
    let spaced = f.replacen(",", ", ", 1);
    assert_eq!(
        verify_file(spaced.as_bytes(), None).unwrap_err(),
        EvidenceError::NotCanonical
    );
    // every single-byte flip is refused
    for i in (0..f.len() - 1).step_by(37) {
        let mut b = f.clone().into_bytes();
        b[i] ^= 0x01;
        assert!(
            verify_file(&b, None).is_err(),
            "byte {i} flipped still verifies"
        );
    }
}

#[test]
fn the_expected_relayer_is_enforced() {
    let f = file(payload(&user(), 4_900_000));
    let stranger = Address::repeat_byte(0x42);
    assert!(matches!(
        verify_file(f.as_bytes(), Some(stranger)),
        Err(EvidenceError::Seal(_))
    ));
    let unsigned = to_file(&seal(payload(&user(), 4_900_000), None).unwrap());
    assert_eq!(
        verify_file(unsigned.as_bytes(), None).unwrap_err(),
        EvidenceError::Unsigned
    );
}

#[test]
fn an_authorization_by_someone_else_or_a_short_credit_fails() {
    let mut p = payload(&user(), 4_900_000);
    p.route.sender = Address::repeat_byte(0x33).to_string();
    assert!(matches!(
        verify_file(file(p).as_bytes(), None),
        Err(EvidenceError::Authorization(_))
    ));
    assert!(matches!(
        verify_file(file(payload(&user(), 4_700_000)).as_bytes(), None),
        Err(EvidenceError::Outcome(_))
    ));
    let mut p = payload(&user(), 4_900_000);
    p.transactions.pop();
    assert!(matches!(
        verify_file(file(p).as_bytes(), None),
        Err(EvidenceError::Outcome(_))
    ));
}
