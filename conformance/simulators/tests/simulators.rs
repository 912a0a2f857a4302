//! The simulators settle for real: a LI.FI quote's transaction request,
//! executed by an anvil account, is paid out on the destination chain and
//! reported DONE with the receiving hash; accept-then-fail refunds the
//! depositor; fault modes are what a client sees; Circle's attestation of a
//! real burn makes `receiveMessage` mint.

use std::time::Duration;

use alloy::{
    primitives::{Address, Bytes, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
};
use relay_devnet::{
    contracts::{MessageTransmitter, TestToken, TokenMessenger},
    keys, Devnet, DevnetConfig,
};
use relay_simulators::{
    faults::{FaultConfig, FaultMode},
    Simulators, Upstream,
};
use serde_json::Value;

const SRC: u64 = 1;
const DST: u64 = 8453;

async fn balance(p: &DynProvider, token: Address, who: Address) -> U256 {
    TestToken::new(token, p)
        .balanceOf(who)
        .call()
        .await
        .unwrap()
}

async fn get(url: &str) -> Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

async fn wait_status(base: &str, tx: B256, want: &str) -> Value {
    for _ in 0..300 {
        let v = get(&format!(
            "{base}/v1/status?txHash={tx}&fromChain={SRC}&toChain={DST}"
        ))
        .await;
        if v["status"] == want {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("status never became {want}");
}

/// Executes a LI.FI quote as a wallet would: approve, then send the transaction request.
async fn execute(devnet: &Devnet, quote: &Value, from: Address) -> B256 {
    let src = devnet.chain(SRC).unwrap();
    let p = src.provider();
    let spender: Address = quote["estimate"]["approvalAddress"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let amount: U256 = quote["estimate"]["fromAmount"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    TestToken::new(src.deployment.usdc, &p)
        .approve(spender, amount)
        .from(from)
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    let tx = &quote["transactionRequest"];
    let req = TransactionRequest::default()
        .from(from)
        .to(tx["to"].as_str().unwrap().parse().unwrap())
        .input(
            tx["data"]
                .as_str()
                .unwrap()
                .parse::<Bytes>()
                .unwrap()
                .into(),
        );
    let receipt = p
        .send_transaction(req)
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    assert!(receipt.status());
    receipt.transaction_hash
}

fn quote_url(sims: &Simulators, from: Address, amount: u64) -> String {
    format!(
        "{}/v1/quote?fromChain={SRC}&toChain={DST}&fromToken=USDC&toToken=USDC&fromAmount={amount}&fromAddress={from}",
        sims.url(Upstream::Lifi)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lifi_quote_settles_on_the_destination_chain() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    let user = keys::anvil_address(3);
    let quote = get(&quote_url(&sims, user, 10_000_000)).await;
    assert_eq!(quote["estimate"]["toAmount"], "9990000", "{quote}");
    assert_eq!(quote["estimate"]["toAmountMin"], "9940050");
    let dst = devnet.chain(DST).unwrap();
    let before = balance(&dst.provider(), dst.deployment.usdc, user).await;

    let src_tx = execute(&devnet, &quote, user).await;
    let status = wait_status(sims.url(Upstream::Lifi), src_tx, "DONE").await;
    assert_eq!(status["substatus"], "COMPLETED");
    let paid = balance(&dst.provider(), dst.deployment.usdc, user).await - before;
    assert_eq!(paid, U256::from(9_990_000u64));
    let receiving: B256 = status["receiving"]["txHash"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let r = dst
        .provider()
        .get_transaction_receipt(receiving)
        .await
        .unwrap()
        .unwrap();
    assert!(
        r.status(),
        "the receiving hash is a real, successful payout"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_then_fail_refunds_the_depositor() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    sims.faults(Upstream::Lifi).set(FaultConfig {
        mode: FaultMode::AcceptThenFail,
        latency_ms: 0,
    });
    let user = keys::anvil_address(4);
    let src = devnet.chain(SRC).unwrap();
    let before = balance(&src.provider(), src.deployment.usdc, user).await;
    let quote = get(&quote_url(&sims, user, 3_000_000)).await;
    let src_tx = execute(&devnet, &quote, user).await;
    let status = wait_status(sims.url(Upstream::Lifi), src_tx, "DONE").await;
    assert_eq!(status["substatus"], "REFUNDED");
    assert_eq!(
        balance(&src.provider(), src.deployment.usdc, user).await,
        before,
        "refunded in full"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn fault_modes_are_what_a_client_sees() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    let url = quote_url(&sims, keys::anvil_address(1), 1_000_000);
    let set = |mode| {
        let base = sims.url(Upstream::Lifi).to_string();
        async move {
            reqwest::Client::new()
                .post(format!("{base}/simulator/faults"))
                .json(&FaultConfig {
                    mode,
                    latency_ms: 0,
                })
                .send()
                .await
                .unwrap();
        }
    };
    set(FaultMode::Error).await;
    let r = reqwest::get(&url).await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], 1002);
    set(FaultMode::Garbage).await;
    let body = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert!(serde_json::from_str::<Value>(&body).is_err(), "{body}");
    set(FaultMode::Hang).await;
    let err = reqwest::Client::new()
        .get(&url)
        .timeout(Duration::from_millis(300))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    set(FaultMode::None).await;
    assert!(get(&url).await["estimate"]["toAmount"].is_string());
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn circle_attests_a_real_burn_and_receive_message_mints() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    let (src, dst) = (devnet.chain(SRC).unwrap(), devnet.chain(DST).unwrap());
    let (cs, cd) = (
        src.deployment.cctp.clone().unwrap(),
        dst.deployment.cctp.clone().unwrap(),
    );
    let user = keys::anvil_address(5);
    let recipient = Address::repeat_byte(0x42);
    let p = src.provider();
    TestToken::new(src.deployment.usdc, &p)
        .approve(cs.token_messenger, U256::from(7_000_000u64))
        .from(user)
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    let burn = TokenMessenger::new(cs.token_messenger, &p)
        .depositForBurn(
            U256::from(7_000_000u64),
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
    let url = format!(
        "{}/v2/messages/{}?transactionHash={}",
        sims.url(Upstream::Circle),
        cs.domain,
        burn.transaction_hash
    );
    let v = get(&url).await;
    let m = &v["messages"][0];
    assert_eq!(m["status"], "complete", "{v}");
    let message: Bytes = m["message"].as_str().unwrap().parse().unwrap();
    let attestation: Bytes = m["attestation"].as_str().unwrap().parse().unwrap();
    let dp = dst.provider();
    MessageTransmitter::new(cd.message_transmitter, &dp)
        .receiveMessage(message, attestation)
        .from(keys::anvil_address(6))
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    assert_eq!(
        balance(&dp, dst.deployment.usdc, recipient).await,
        U256::from(7_000_000u64)
    );
    let unknown = reqwest::get(format!(
        "{}/v2/messages/0?transactionHash={:#x}",
        sims.url(Upstream::Circle),
        B256::ZERO
    ))
    .await
    .unwrap();
    assert_eq!(unknown.status(), 404);
    devnet.stop();
}
