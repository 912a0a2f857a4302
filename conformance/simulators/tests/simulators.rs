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

/// Sends what an upstream told a wallet to send: approve `spender` for
/// `amount` of USDC on the source chain, then the call `to`/`data`.
async fn send_call(
    devnet: &Devnet,
    from: Address,
    spender: &Value,
    amount: U256,
    to: &Value,
    data: &Value,
) -> B256 {
    let src = devnet.chain(SRC).unwrap();
    let p = src.provider();
    let spender: Address = spender.as_str().unwrap().parse().unwrap();
    let token = TestToken::new(src.deployment.usdc, &p);
    let approve = token.approve(spender, amount).from(from);
    approve.send().await.unwrap().get_receipt().await.unwrap();
    let req = TransactionRequest::default()
        .from(from)
        .to(to.as_str().unwrap().parse().unwrap())
        .input(data.as_str().unwrap().parse::<Bytes>().unwrap().into());
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

/// Executes a LI.FI quote as a wallet would: approve, then send the transaction request.
async fn execute(devnet: &Devnet, quote: &Value, from: Address) -> B256 {
    let amount: U256 = quote["estimate"]["fromAmount"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let tx = &quote["transactionRequest"];
    send_call(
        devnet,
        from,
        &quote["estimate"]["approvalAddress"],
        amount,
        &tx["to"],
        &tx["data"],
    )
    .await
}

/// Polls `url` until `done` holds of its JSON body (bounded).
async fn poll(url: &str, done: impl Fn(&Value) -> bool) -> Value {
    let http = reqwest::Client::new();
    for _ in 0..300 {
        let req = http
            .get(url)
            .header("api-key", "devnet")
            .header("x-integrator-id", "devnet");
        if let Ok(r) = req.send().await {
            if let Ok(v) = r.json::<Value>().await {
                if done(&v) {
                    return v;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{url} never reached the expected state");
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

#[tokio::test(flavor = "multi_thread")]
async fn squid_and_bungee_quotes_settle_on_the_destination_chain() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    let (src, dst) = (devnet.chain(SRC).unwrap(), devnet.chain(DST).unwrap());
    let user = keys::anvil_address(7);
    let http = reqwest::Client::new();

    // Squid v2: POST /v2/route, then the transactionRequest, then /v2/status.
    let body = serde_json::json!({"fromChain": SRC.to_string(), "toChain": DST.to_string(), "fromToken": src.deployment.usdc,
        "toToken": dst.deployment.usdc, "fromAmount": "2000000", "fromAddress": user, "toAddress": user, "slippage": 1});
    let resp = http
        .post(format!("{}/v2/route", sims.url(Upstream::Squid)))
        .header("x-integrator-id", "devnet")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(resp.headers().contains_key("x-request-id"));
    let route: Value = resp.json().await.unwrap();
    let tx = &route["route"]["transactionRequest"];
    let before = balance(&dst.provider(), dst.deployment.usdc, user).await;
    let src_tx = send_call(
        &devnet,
        user,
        &tx["target"],
        U256::from(2_000_000u64),
        &tx["target"],
        &tx["data"],
    )
    .await;
    let url = format!(
        "{}/v2/status?transactionId={src_tx}&fromChainId={SRC}&toChainId={DST}",
        sims.url(Upstream::Squid)
    );
    let st = poll(&url, |v| v["squidTransactionStatus"] == "success").await;
    assert!(st["toChain"]["transactionId"].is_string());
    assert_eq!(
        balance(&dst.provider(), dst.deployment.usdc, user).await - before,
        U256::from(1_998_000u64)
    );

    // Bungee: quote, build-tx, bridge-status.
    let q: Value = http
        .get(format!("{}/v2/quote?fromChainId={SRC}&toChainId={DST}&fromTokenAddress={}&toTokenAddress={}&fromAmount=4000000&userAddress={user}",
            sims.url(Upstream::Bungee), src.deployment.usdc, dst.deployment.usdc))
        .header("api-key", "devnet").send().await.unwrap().json().await.unwrap();
    let route = q["result"]["routes"][0].clone();
    let built: Value = http
        .post(format!("{}/v2/build-tx", sims.url(Upstream::Bungee)))
        .header("api-key", "devnet")
        .json(&serde_json::json!({"route": route}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let r = &built["result"];
    let before = balance(&dst.provider(), dst.deployment.usdc, user).await;
    let src_tx = send_call(
        &devnet,
        user,
        &r["approvalData"]["allowanceTarget"],
        U256::from(4_000_000u64),
        &r["txTarget"],
        &r["txData"],
    )
    .await;
    let url = format!(
        "{}/v2/bridge-status?transactionHash={src_tx}&fromChainId={SRC}&toChainId={DST}",
        sims.url(Upstream::Bungee)
    );
    poll(&url, |v| v["result"]["destinationTxStatus"] == "COMPLETED").await;
    assert_eq!(
        balance(&dst.provider(), dst.deployment.usdc, user).await - before,
        U256::from(3_996_000u64)
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn allbridge_credits_the_simulated_solana_ledger_and_refuses_stellar_sources() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    let user = keys::anvil_address(8);
    let base = sims.url(Upstream::Allbridge);
    let sol = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
    let ask = "amount=5000000&sourceChain=ETH&sourceToken=USDC&destinationChain=SOL&destinationToken=USDC";
    let quote = get(&format!("{base}/bridge/quote?{ask}")).await;
    let pm = &quote["options"][0]["paymentMethods"][0];
    assert_eq!(pm["feePaymentMethod"], "WITH_STABLECOIN");
    assert_eq!(pm["estimatedAmount"]["min"], "4995000");
    let raw = get(&format!("{base}/raw/bridge?{ask}&sender={user}&recipient={sol}&messenger=ALLBRIDGE&feePaymentMethod=WITH_STABLECOIN")).await;
    let src_tx = send_call(
        &devnet,
        user,
        &raw["to"],
        U256::from(5_000_000u64),
        &raw["to"],
        &raw["data"],
    )
    .await;
    let st = poll(
        &format!("{base}/transfer/status?chain=ETH&txId={src_tx}"),
        |v| v["receive"]["txId"].is_string(),
    )
    .await;
    assert!(st["receive"]["txId"]
        .as_str()
        .unwrap()
        .starts_with("sim-solana-"));
    let ledger = get(&format!(
        "{base}/simulator/ledger?node=solana&address={sol}&asset=USDC"
    ))
    .await;
    assert_eq!(ledger["balance"], "4995000");
    assert_eq!(ledger["simulated"], true);
    let refused = reqwest::get(format!("{base}/bridge/quote?amount=1&sourceChain=SRB&sourceToken=USDC&destinationChain=ETH&destinationToken=USDC")).await.unwrap();
    assert_eq!(refused.status(), 400);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn chainflip_moves_usdc_to_bitcoin_and_bitcoin_back_to_evm() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    let base = sims.url(Upstream::Chainflip);
    let http = reqwest::Client::new();
    let user = keys::anvil_address(9);
    let btc_addr = "bcrt1qrelaydevnetuser0000000000000000000000";

    // EVM → bitcoin: 10 000 USDC buys 0.1 BTC less the fee.
    let q = get(&format!("{base}/v2/quote?srcChain=Ethereum&srcAsset=USDC&destChain=Bitcoin&destAsset=BTC&amount=10000000000")).await;
    assert_eq!(q[0]["egressAmount"], "9990000");
    let ch: Value = http.post(format!("{base}/v2/swaps")).json(&serde_json::json!({"srcChain": "Ethereum", "srcAsset": "USDC",
        "destChain": "Bitcoin", "destAsset": "BTC", "destAddress": btc_addr, "amount": "10000000000"})).send().await.unwrap().json().await.unwrap();
    let dep = &ch["depositTransaction"];
    send_call(
        &devnet,
        user,
        &dep["to"],
        U256::from(10_000_000_000u64),
        &dep["to"],
        &dep["data"],
    )
    .await;
    let id = ch["id"].as_str().unwrap();
    let st = poll(&format!("{base}/v2/swaps/{id}"), |v| {
        v["state"] == "COMPLETED"
    })
    .await;
    assert!(st["egress"]["txRef"]
        .as_str()
        .unwrap()
        .starts_with("sim-bitcoin-"));
    let ledger = get(&format!(
        "{base}/simulator/ledger?node=bitcoin&address={btc_addr}&asset=BTC"
    ))
    .await;
    assert_eq!(ledger["balance"], "9990000");

    // bitcoin → EVM: open a channel, "send BTC" to its address, USDC arrives on anvil.
    let ch: Value = http
        .post(format!("{base}/v2/swaps"))
        .json(
            &serde_json::json!({"srcChain": "Bitcoin", "srcAsset": "BTC",
        "destChain": "Ethereum", "destAsset": "USDC", "destAddress": user, "amount": "100000"}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let deposit_address = ch["depositAddress"].as_str().unwrap();
    let src = devnet.chain(SRC).unwrap();
    let before = balance(&src.provider(), src.deployment.usdc, user).await;
    let sent = http
        .post(format!("{base}/simulator/bitcoin/send"))
        .json(&serde_json::json!({"to": deposit_address, "amountSats": 100000}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    let id = ch["id"].as_str().unwrap();
    poll(&format!("{base}/v2/swaps/{id}"), |v| {
        v["state"] == "COMPLETED"
    })
    .await;
    // 100 000 sats = 0.001 BTC = 100 USDC, less 10 bps.
    assert_eq!(
        balance(&src.provider(), src.deployment.usdc, user).await - before,
        U256::from(99_900_000u64)
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn tron_to_evm_pays_out_after_a_simulated_ledger_send_and_mint_works() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    let base = sims.url(Upstream::Allbridge);
    let http = reqwest::Client::new();
    let user = keys::anvil_address(2);
    let src = devnet.chain(SRC).unwrap();
    let ask = "amount=8000000&sourceChain=TRX&sourceToken=USDT&destinationChain=ETH&destinationToken=USDT";
    let raw = get(&format!(
        "{base}/raw/bridge?{ask}&sender=TQ4ge2gH6bHDdYWuXKbGzS3j4ghL3eMdsR&recipient={user}"
    ))
    .await;
    assert_eq!(raw["simulated"], true, "{raw}");
    let before = balance(&src.provider(), src.deployment.usdt, user).await;
    let sent: Value = http
        .post(format!("{base}/simulator/ledger/send"))
        .json(&serde_json::json!({"node": "tron", "to": raw["depositAddress"], "asset": "USDT", "amount": "8000000"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tx = sent["txId"].as_str().unwrap();
    let st = poll(
        &format!("{base}/transfer/status?chain=TRX&txId={tx}"),
        |v| v["receive"]["txId"].is_string(),
    )
    .await;
    assert_eq!(st["receiveAmount"], "7992000");
    assert_eq!(
        balance(&src.provider(), src.deployment.usdt, user).await - before,
        U256::from(7_992_000u64)
    );

    // Minting devnet tokens to any address.
    let who = Address::repeat_byte(0x5a);
    let minted = http
        .post(format!("{base}/simulator/mint"))
        .json(&serde_json::json!({"chain": DST, "token": "WBTC", "to": who, "amount": "250000000"}))
        .send()
        .await
        .unwrap();
    assert_eq!(minted.status(), 200);
    let dst = devnet.chain(DST).unwrap();
    assert_eq!(
        balance(&dst.provider(), dst.deployment.wbtc, who).await,
        U256::from(250_000_000u64)
    );
    devnet.stop();
}
