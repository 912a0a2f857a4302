//! The Circle attestation simulator attests real burns: a `depositForBurn`
//! on one anvil, the simulator's v2 answer (pending first, then complete),
//! and `receiveMessage` with its attestation mints 1:1 on the other.

use crate::common;

use alloy::{
    primitives::{Address, Bytes, B256, U256},
    providers::Provider,
};
use common::{mesh, mesh_with, wait_for, Mesh, DST, SRC};
use relay_devnet::{
    contracts::{MessageTransmitter, TestToken, TokenMessenger},
    keys, Token,
};
use relay_simulators::{CircleConfig, SimConfig, Upstream};
use serde_json::Value;

/// Burns `amount` USDC on [`SRC`] for `recipient` on [`DST`]; the burn's hash
/// and the source domain.
async fn burn(m: &Mesh, amount: u64, recipient: Address) -> (B256, u32) {
    let (src, dst) = (m.devnet.chain(SRC).unwrap(), m.devnet.chain(DST).unwrap());
    let (cs, cd) = (
        src.deployment.cctp.clone().unwrap(),
        dst.deployment.cctp.clone().unwrap(),
    );
    let user = keys::anvil_address(5);
    let p = src.provider();
    let amount = U256::from(amount);
    TestToken::new(src.deployment.usdc, &p)
        .approve(cs.token_messenger, amount)
        .from(user)
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    let receipt = TokenMessenger::new(cs.token_messenger, &p)
        .depositForBurn(
            amount,
            cd.domain,
            recipient.into_word(),
            src.deployment.usdc,
            B256::ZERO,
            U256::ZERO,
            2000,
        )
        .from(user)
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    (receipt.transaction_hash, cs.domain)
}

fn messages_url(m: &Mesh, domain: u32, tx: B256) -> String {
    format!(
        "{}/v2/messages/{domain}?transactionHash={tx}",
        m.url(Upstream::Circle)
    )
}

/// Polls until the burn is indexed (Circle answers 404 until then).
async fn first_answer(m: &Mesh, url: &str) -> Value {
    wait_for("the burn to be indexed", || async {
        let (status, v) = m.get(url, &[]).await;
        (status == 200).then_some(v)
    })
    .await
}

async fn complete(m: &Mesh, url: &str) -> Value {
    wait_for("a complete attestation", || async {
        let (_, v) = m.get(url, &[]).await;
        (v["messages"][0]["status"] == "complete").then_some(v)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn circle_attests_a_real_burn_and_receive_message_mints() {
    let m = mesh().await;
    let recipient = Address::repeat_byte(0x42);
    let (tx, domain) = burn(&m, 7_000_000, recipient).await;
    let url = messages_url(&m, domain, tx);
    let pending = first_answer(&m, &url).await;
    common::assert_shape("circle/messages_pending.json", &pending);
    assert_eq!(pending["messages"][0]["status"], "pending_confirmations");
    assert_eq!(pending["messages"][0]["attestation"], "PENDING");

    let done = complete(&m, &url).await;
    common::assert_shape("circle/messages_complete.json", &done);
    let msg = &done["messages"][0];
    assert_eq!(
        msg["decodedMessage"]["decodedMessageBody"]["amount"],
        "7000000"
    );
    let message: Bytes = msg["message"].as_str().unwrap().parse().unwrap();
    let attestation: Bytes = msg["attestation"].as_str().unwrap().parse().unwrap();
    let dst = m.devnet.chain(DST).unwrap();
    let transmitter = dst.deployment.cctp.clone().unwrap().message_transmitter;
    let receipt = MessageTransmitter::new(transmitter, dst.provider())
        .receiveMessage(message, attestation)
        .from(keys::anvil_address(6))
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    assert!(receipt.status());
    assert_eq!(
        m.balance(DST, Token::Usdc, recipient).await,
        U256::from(7_000_000u64)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn circle_stays_pending_until_the_confirmations_are_mined() {
    let config = SimConfig {
        circle: CircleConfig {
            confirmations: 3,
            pending_polls: 0,
        },
        ..SimConfig::default()
    };
    let m = mesh_with(config).await;
    let (tx, domain) = burn(&m, 1_000_000, Address::repeat_byte(0x43)).await;
    let url = messages_url(&m, domain, tx);
    let first = first_answer(&m, &url).await;
    assert_eq!(first["messages"][0]["status"], "pending_confirmations");
    m.provider(SRC)
        .raw_request::<_, Value>("anvil_mine".into(), (3u64,))
        .await
        .unwrap();
    complete(&m, &url).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn circle_answers_404_in_its_shape_for_an_unknown_transaction() {
    let m = mesh().await;
    let (status, body) = m.get(&messages_url(&m, 0, B256::ZERO), &[]).await;
    assert_eq!(status, 404);
    common::assert_shape("circle/error_not_found.json", &body);
    let (status, _) = m
        .get(
            &format!(
                "{}/v2/messages/0?transactionHash=0x12",
                m.url(Upstream::Circle)
            ),
            &[],
        )
        .await;
    assert_eq!(status, 400);
}
