//! Sponsored EIP-7702 transactions paid with x402 (spec §4.8), end to end
//! on the devnet: an EOA with zero ETH signs an authorization delegating to
//! the relay's batch executor and an `executeSigned` batch of two token
//! transfers; the relay checks, invoices (402), takes an EIP-3009 payment,
//! settles it and sends the type-4 transaction — once per payment, across
//! repeats, refusals and a `kill -9` between settling and sponsoring.

use crate::common::{self, serve, token_balance, usdc_balance};
use relay_types::{Clock as _, SystemClock};

use alloy::{
    primitives::{Address, Bytes, U256},
    providers::Provider,
    signers::local::PrivateKeySigner,
};
use base64::{engine::general_purpose::STANDARD, Engine};
use relay_chain::eip7702::designator;
use relay_devnet::{
    client::{
        self,
        sponsor::{authorization, Transfer},
        x402::Exact,
    },
    Devnet, DevnetConfig, Token,
};
use serde_json::{json, Value};

pub(crate) const CHAIN: u64 = 8453;
/// What the batch moves: 1.5 USDC and 2 USDT.
pub(crate) const USDC_OUT: u64 = 1_500_000;
pub(crate) const USDT_OUT: u64 = 2_000_000;

/// A fresh EOA with no ETH, 10 USDC and 5 USDT on [`CHAIN`].
pub(crate) async fn funded_user(devnet: &Devnet) -> PrivateKeySigner {
    let user = PrivateKeySigner::random();
    for (token, amount) in [(Token::Usdc, 10_000_000u64), (Token::Usdt, 5_000_000)] {
        devnet
            .mint(CHAIN, token, user.address(), U256::from(amount))
            .await
            .unwrap();
    }
    user
}

/// An x402 v1 `X-PAYMENT` header: `payer` authorizes `value` USDC to `pay_to`,
/// valid until `before` (unix seconds).
pub(crate) fn x_payment(
    devnet: &Devnet,
    payer: &PrivateKeySigner,
    pay_to: Address,
    value: U256,
    before: u64,
) -> String {
    let usdc = devnet.deployment(CHAIN).unwrap().usdc;
    let exact = Exact::usdc((CHAIN, "base", usdc), pay_to, value, before);
    client::x402::x_payment(payer, &exact)
}

/// POSTs `body` to `url` through the reference x402 Python client
/// (`conformance/tools/x402_pay.py`, PyPI `x402`) paying as `payer` under
/// idempotency key `idem`, allowed at most `cap` units of the devnet USDC
/// on [`CHAIN`]: the client's JSON line `{status, body, receipt}`.
pub(crate) async fn pay_with_python_x402(
    devnet: &Devnet,
    url: &str,
    body: &Value,
    payer: &PrivateKeySigner,
    (idem, cap): (&str, u64),
) -> Value {
    let py = std::env::var("RELAY_X402_PY")
        .expect("RELAY_X402_PY (conformance/tools/x402.sh prints it)");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body.json");
    std::fs::write(&path, body.to_string()).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../conformance/tools/x402_pay.py"
    );
    let key = format!("0x{}", hex::encode(payer.to_bytes()));
    let usdc = devnet.deployment(CHAIN).unwrap().usdc.to_string();
    let args = [
        url.to_string(),
        key,
        idem.to_string(),
        usdc,
        cap.to_string(),
    ];
    let out = tokio::task::spawn_blocking(move || {
        let [url, key, idem, usdc, cap] = &args;
        std::process::Command::new(py)
            .args([script, url, path.to_str().unwrap(), key, idem])
            .args(["eip155:8453", usdc, cap])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

pub(crate) fn random_address() -> Address {
    PrivateKeySigner::random().address()
}

pub(crate) fn now_secs() -> u64 {
    SystemClock.now_ms() / 1000
}

pub(crate) async fn post(
    base: &str,
    path: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> common::Answer {
    let mut req = crate::common::http()
        .post(format!("{base}{path}"))
        .json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    common::send(req).await
}

pub(crate) async fn code_of(devnet: &Devnet, who: Address) -> Bytes {
    devnet
        .chain(CHAIN)
        .unwrap()
        .provider()
        .get_code_at(who)
        .await
        .unwrap()
}

pub(crate) async fn tx_count(devnet: &Devnet, who: Address) -> u64 {
    devnet
        .chain(CHAIN)
        .unwrap()
        .provider()
        .get_transaction_count(who)
        .await
        .unwrap()
}

/// The sponsorship ask of `user`: delegate, then run the batch — pay `r1`
/// 1.5 USDC and `r2` 2 USDT.
pub(crate) fn ask(devnet: &Devnet, user: &PrivateKeySigner, (r1, r2): (Address, Address)) -> Value {
    let d = devnet.deployment(CHAIN).unwrap();
    let transfers = [
        Transfer {
            token: d.usdc,
            to: r1,
            amount: U256::from(USDC_OUT),
        },
        Transfer {
            token: d.usdt,
            to: r2,
            amount: U256::from(USDT_OUT),
        },
    ];
    client::sponsor::ask(user, (CHAIN, d.delegate), &transfers, now_secs() + 3_600)
}

/// Asserts the batch ran once: `r1` holds [`USDC_OUT`] USDC and `r2`
/// [`USDT_OUT`] USDT.
pub(crate) async fn assert_batch_ran(devnet: &Devnet, (r1, r2): (Address, Address)) {
    assert_eq!(usdc_balance(devnet, CHAIN, r1).await, U256::from(USDC_OUT));
    assert_eq!(
        token_balance(devnet, CHAIN, Token::Usdt, r2).await,
        U256::from(USDT_OUT)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_zero_eth_eoa_is_sponsored_once_when_it_pays_the_x402_invoice() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = serve(&devnet, dir.path(), |_| {}).await;
    let base = &host.base;
    let d = devnet.deployment(CHAIN).unwrap().clone();
    let relayer = devnet.relayer;
    let user = funded_user(&devnet).await;
    let (r1, r2) = (random_address(), random_address());
    let body = ask(&devnet, &user, (r1, r2));

    // the executor is described, and its code is on chain
    let (status, info) = common::get(&format!("{base}/api/7702/delegate")).await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(
        info["deployments"][CHAIN.to_string()],
        d.delegate.to_string()
    );
    assert!(info["abi"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "executeSigned"));
    assert_eq!(info["eip712"]["primaryType"], "Batch");
    let names = |abi: &Value| {
        let mut n: Vec<String> = abi
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| Some(format!("{}:{}", e["type"].as_str()?, e["name"].as_str()?)))
            .collect();
        n.sort();
        n
    };
    let artifact = relay_devnet::contracts::ARTIFACTS
        .iter()
        .find(|(n, _)| *n == "RelayDelegate")
        .unwrap();
    let artifact: Value = serde_json::from_str(artifact.1).unwrap();
    assert_eq!(
        names(&info["abi"]),
        names(&artifact["abi"]),
        "the served ABI is the compiled contract's"
    );
    assert!(!code_of(&devnet, d.delegate).await.is_empty());

    // the free check: valid, and it names the authority
    let checked = post(
        base,
        "/api/7702/check",
        &json!({"chainId": CHAIN, "authorization": body["authorization"]}),
        &[],
    )
    .await;
    assert_eq!(checked.status, 200, "{}", checked.body);
    assert_eq!(checked.body["valid"], true, "{}", checked.body);
    assert_eq!(checked.body["authority"], user.address().to_string());
    assert_eq!(
        (
            checked.body["nonceMatches"].clone(),
            checked.body["knownDelegate"].clone()
        ),
        (json!(true), json!(true))
    );

    // dry: the envelope and its price, nothing sent
    let mut dry_body = body.clone();
    dry_body["dry"] = json!(true);
    let dry = post(base, "/api/7702/sponsor", &dry_body, &[]).await;
    assert_eq!(dry.status, 200, "{}", dry.body);
    assert_eq!(dry.body["envelope"]["type"], "0x4");
    assert_eq!(dry.body["envelope"]["authorizationList"][0]["nonce"], 0);
    assert!(
        dry.body["estGas"].as_u64().unwrap() > 25_000,
        "{}",
        dry.body
    );
    assert!(
        dry.body["priceUsd"]
            .as_str()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            > 0.0
    );

    // no payment: 402 with a well-formed x402 invoice and the plan
    let unpaid = post(base, "/api/7702/sponsor", &body, &[]).await;
    assert_eq!(unpaid.status, 402, "{}", unpaid.body);
    assert_eq!(unpaid.body["x402Version"], 1);
    assert_eq!(unpaid.body["errorCode"], "PAYMENT_REQUIRED");
    let accept = &unpaid.body["accepts"][0];
    for k in [
        "scheme",
        "network",
        "maxAmountRequired",
        "asset",
        "payTo",
        "resource",
        "description",
        "mimeType",
        "maxTimeoutSeconds",
    ] {
        assert!(!accept[k].is_null(), "accepts[0].{k} missing: {accept}");
    }
    assert_eq!(
        (accept["scheme"].as_str(), accept["network"].as_str()),
        (Some("exact"), Some("base"))
    );
    assert_eq!(accept["asset"], d.usdc.to_string());
    assert_eq!(accept["payTo"], relayer.to_string());
    assert_eq!(accept["extra"], json!({"name": "USD Coin", "version": "2"}));
    assert_eq!(unpaid.body["plan"]["authority"], user.address().to_string());
    let v2: Value = serde_json::from_slice(
        &STANDARD
            .decode(unpaid.headers["payment-required"].to_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (
            v2["x402Version"].as_u64(),
            v2["accepts"][0]["network"].as_str()
        ),
        (Some(2), Some("eip155:8453"))
    );
    eprintln!(
        "sponsorship plan: estGas {} settleGas {} gasPriceWei {} priceUsd {} price {} units",
        unpaid.body["plan"]["estGas"],
        unpaid.body["plan"]["settleGas"],
        unpaid.body["plan"]["gasPriceWei"],
        unpaid.body["plan"]["priceUsd"],
        accept["maxAmountRequired"]
    );
    let price: U256 = accept["maxAmountRequired"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(price > U256::ZERO);

    // paid: settled, sponsored, the batch ran
    let (user0, relayer0) = (
        usdc_balance(&devnet, CHAIN, user.address()).await,
        usdc_balance(&devnet, CHAIN, relayer).await,
    );
    let pay = x_payment(&devnet, &user, relayer, price, now_secs() + 300);
    let headers = [
        ("x-payment", pay.as_str()),
        ("x-idempotency-key", "sponsor-once"),
        ("origin", "http://wallet.example"),
    ];
    let done = post(base, "/api/7702/sponsor", &body, &headers).await;
    assert_eq!(done.status, 200, "{}", done.body);
    let exposed = done.headers["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        exposed.contains("x-payment-response") && exposed.contains("payment-response"),
        "{exposed}"
    );
    assert_eq!(done.body["state"], "SPONSORED", "{}", done.body);
    let tx = done.body["txHash"].as_str().unwrap().to_string();
    let receipt: Value = serde_json::from_slice(
        &STANDARD
            .decode(done.headers["x-payment-response"].to_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(receipt["success"], true, "{receipt}");
    assert_eq!(receipt["transaction"], done.body["settleTx"]);
    assert_eq!(
        done.headers["payment-response"],
        done.headers["x-payment-response"]
    );
    let check_balances = async || {
        assert_batch_ran(&devnet, (r1, r2)).await;
        assert_eq!(
            (
                usdc_balance(&devnet, CHAIN, user.address()).await,
                usdc_balance(&devnet, CHAIN, relayer).await
            ),
            (user0 - price - U256::from(USDC_OUT), relayer0 + price),
            "the payer's USDC moved to payTo once"
        );
        assert_eq!(
            code_of(&devnet, user.address()).await,
            designator(d.delegate)
        );
    };
    check_balances().await;
    let chain_tx = devnet
        .chain(CHAIN)
        .unwrap()
        .provider()
        .get_transaction_by_hash(tx.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        alloy::consensus::Typed2718::ty(&chain_tx),
        4,
        "a type-4 transaction"
    );
    let eth = devnet
        .chain(CHAIN)
        .unwrap()
        .provider()
        .get_balance(user.address())
        .await
        .unwrap();
    assert_eq!(eth, U256::ZERO, "the user never held ETH");

    // the same key again: the same answer, nothing charged or sent twice
    let relayer_nonce = tx_count(&devnet, relayer).await;
    let again = post(base, "/api/7702/sponsor", &body, &headers).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["txHash"], tx.as_str());
    check_balances().await;
    assert_eq!(tx_count(&devnet, relayer).await, relayer_nonce);

    // the used tuple (nonce 0) is refused now, before anything is sent
    let fresh = x_payment(&devnet, &user, relayer, price, now_secs() + 300);
    let reused = post(
        base,
        "/api/7702/sponsor",
        &body,
        &[("x-payment", fresh.as_str())],
    )
    .await;
    assert_eq!(
        (reused.status, reused.body["errorCode"].as_str()),
        (409, Some("AUTHORIZATION_NONCE")),
        "{}",
        reused.body
    );
    assert_eq!(tx_count(&devnet, relayer).await, relayer_nonce);
    drop(host);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_tuples_and_bad_payments_are_refused_before_anything_is_sent() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = serve(&devnet, dir.path(), |_| {}).await;
    let base = &host.base;
    let d = devnet.deployment(CHAIN).unwrap().clone();
    let relayer = devnet.relayer;
    let user = funded_user(&devnet).await;
    let good = ask(&devnet, &user, (random_address(), random_address()));
    let unpaid = post(base, "/api/7702/sponsor", &good, &[]).await;
    let price: U256 = unpaid.body["accepts"][0]["maxAmountRequired"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let (nonce0, user0) = (
        tx_count(&devnet, relayer).await,
        usdc_balance(&devnet, CHAIN, user.address()).await,
    );

    let with_tuple = |t: Value| {
        let mut b = good.clone();
        b["authorization"] = t;
        b
    };
    let mut high_s = authorization(&user, CHAIN, d.delegate, 0);
    let n = U256::from_str_radix(
        "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
        16,
    )
    .unwrap();
    let s: U256 = high_s["s"].as_str().unwrap().parse().unwrap();
    high_s["s"] = json!(format!("{:#066x}", n - s));
    high_s["yParity"] = json!(1 - high_s["yParity"].as_u64().unwrap());
    let cases = [
        ("high-s", with_tuple(high_s), 400, "AUTHORIZATION_SIGNATURE"),
        (
            "wrong chain id",
            with_tuple(authorization(&user, 1, d.delegate, 0)),
            400,
            "AUTHORIZATION_CHAIN",
        ),
        (
            "chain id 0",
            with_tuple(authorization(&user, 0, d.delegate, 0)),
            400,
            "AUTHORIZATION_ANY_CHAIN",
        ),
        (
            "future nonce",
            with_tuple(authorization(&user, CHAIN, d.delegate, 7)),
            409,
            "AUTHORIZATION_NONCE",
        ),
        (
            "unknown delegate",
            with_tuple(authorization(&user, CHAIN, random_address(), 0)),
            400,
            "AUTHORIZATION_DELEGATE",
        ),
        (
            "another target",
            {
                let mut b = good.clone();
                b["to"] = json!(d.usdc);
                b
            },
            400,
            "SPONSOR_TARGET_INVALID",
        ),
    ];
    let pay = x_payment(&devnet, &user, relayer, price, now_secs() + 300);
    for (what, body, status, code) in cases {
        let a = post(
            base,
            "/api/7702/sponsor",
            &body,
            &[("x-payment", pay.as_str())],
        )
        .await;
        assert_eq!(
            (a.status, a.body["errorCode"].as_str()),
            (status, Some(code)),
            "{what}: {}",
            a.body
        );
        let c = post(
            base,
            "/api/7702/check",
            &json!({"chainId": CHAIN, "authorization": body["authorization"]}),
            &[],
        )
        .await;
        if code.starts_with("AUTHORIZATION") {
            assert_eq!(c.body["valid"], false, "{what}: {}", c.body);
            assert_eq!(c.body["problems"][0]["code"], code, "{what}: {}", c.body);
        }
    }
    let payments = [
        (
            "underpaid",
            x_payment(
                &devnet,
                &user,
                relayer,
                price - U256::from(1u8),
                now_secs() + 300,
            ),
            "PAYMENT_INSUFFICIENT",
        ),
        (
            "expired",
            x_payment(&devnet, &user, relayer, price, now_secs() - 1),
            "PAYMENT_EXPIRED",
        ),
        (
            "to someone else",
            x_payment(&devnet, &user, random_address(), price, now_secs() + 300),
            "PAYMENT_INVALID",
        ),
        ("not base64", "%%%".to_string(), "PAYMENT_INVALID"),
    ];
    for (what, header, code) in payments {
        let a = post(
            base,
            "/api/7702/sponsor",
            &good,
            &[("x-payment", header.as_str())],
        )
        .await;
        assert_eq!(
            (a.status, a.body["errorCode"].as_str()),
            (402, Some(code)),
            "{what}: {}",
            a.body
        );
        assert!(
            a.body["accepts"][0]["payTo"].is_string(),
            "{what}: the invoice comes again"
        );
    }
    assert_eq!(tx_count(&devnet, relayer).await, nonce0, "nothing was sent");
    assert_eq!(
        usdc_balance(&devnet, CHAIN, user.address()).await,
        user0,
        "nothing was charged"
    );
    assert!(
        code_of(&devnet, user.address()).await.is_empty(),
        "nothing was delegated"
    );

    // malformed fields are typed too
    let mut bad = good.clone();
    bad["authorization"]["r"] = json!("0xzz");
    let a = post(
        base,
        "/api/7702/check",
        &json!({"chainId": CHAIN, "authorization": bad["authorization"]}),
        &[],
    )
    .await;
    assert_eq!(
        (
            a.status,
            a.body["errorCode"].as_str(),
            a.body["field"].as_str()
        ),
        (400, Some("INVALID_FIELD"), Some("authorization.r")),
        "{}",
        a.body
    );
    let a = post(
        base,
        "/api/7702/check",
        &json!({"chainId": 999_999, "authorization": good["authorization"]}),
        &[],
    )
    .await;
    assert_eq!(
        (a.status, a.body["errorCode"].as_str()),
        (400, Some("SPONSOR_CHAIN_UNSUPPORTED")),
        "{}",
        a.body
    );
    drop(host);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_x402_python_client_pays_the_invoice() {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = serve(&devnet, dir.path(), |_| {}).await;
    let user = funded_user(&devnet).await;
    let (r1, r2) = (random_address(), random_address());
    let body = ask(&devnet, &user, (r1, r2));
    let url = format!("{}/api/7702/sponsor", host.base);
    // the SDK pays only assets it is told to: the devnet USDC, at most 5 USDC
    let answer = pay_with_python_x402(&devnet, &url, &body, &user, ("py-x402", 5_000_000)).await;
    assert_eq!(answer["status"], 200, "{answer}");
    assert_eq!(answer["body"]["state"], "SPONSORED", "{answer}");
    assert_eq!(answer["receipt"]["success"], true, "{answer}");
    assert_eq!(answer["receipt"]["network"], "base", "{answer}");
    assert_eq!(usdc_balance(&devnet, CHAIN, r1).await, U256::from(USDC_OUT));
    assert_eq!(
        token_balance(&devnet, CHAIN, Token::Usdt, r2).await,
        U256::from(USDT_OUT)
    );
    let d = devnet.deployment(CHAIN).unwrap();
    assert_eq!(
        code_of(&devnet, user.address()).await,
        designator(d.delegate)
    );
    drop(host);
    devnet.stop();
}
