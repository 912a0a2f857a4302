//! The non-custodial yield account (spec §4.6) end to end on the devnet:
//! an agent deposits USDC into the ERC-4626 vault, approves the relayer for
//! some shares and spends across chains with one EIP-712 signature. The
//! relayer redeems and routes `amount − fee` through the engine: the
//! delivery is an ordinary route (`routeId`) that the recipient's USDC
//! shows arriving, and the agent's shares fall;
//! every refusal (allowance exceeded, expired, reused nonce, wrong chain id
//! in the domain, wrong signer) is typed and broadcasts nothing; the same
//! idempotency key spends once; the views show the chain's own figures and
//! a positive APY once yield accrues.

use crate::common::{self, serve, until_terminal, usdc_balance};
use relay_types::{Clock as _, SystemClock};

use alloy::{
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
    signers::local::PrivateKeySigner,
};
use relay_devnet::{client::ncaccount, contracts::YieldVault, Devnet, DevnetConfig};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 10;
/// What the agent deposits: 100 USDC.
const DEPOSIT: u64 = 100_000_000;
/// What it lets the relayer pull: the shares of 25 USDC.
const ALLOWED_USDC: u64 = 25_000_000;
/// What it spends: 20 USDC (fee 0.15 % = 0.03 USDC).
const AMOUNT: u64 = 20_000_000;
const FEE: u64 = 30_000;

/// A fresh agent with 100 USDC in the vault on [`SRC`] and a share
/// allowance to the relayer worth 25 USDC.
async fn agent(devnet: &Devnet) -> PrivateKeySigner {
    let agent = PrivateKeySigner::random();
    let d = devnet.deployment(SRC).unwrap();
    ncaccount::open(
        devnet.rpc_url(SRC).unwrap(),
        (d.usdc, d.vault),
        devnet.relayer,
        &agent,
        (U256::from(DEPOSIT), U256::from(ALLOWED_USDC)),
    )
    .await
    .unwrap();
    agent
}

async fn shares(devnet: &Devnet, who: Address) -> U256 {
    let c = devnet.chain(SRC).unwrap();
    YieldVault::new(c.deployment.vault, c.provider())
        .balanceOf(who)
        .call()
        .await
        .unwrap()
}

async fn nonce(p: &DynProvider, who: Address) -> u64 {
    p.get_transaction_count(who).await.unwrap()
}

/// The intent to [`DST`] and its signature (by `signer`, under `chain`'s
/// domain).
fn signed(
    devnet: &Devnet,
    (agent, signer): (Address, &PrivateKeySigner),
    (amount, nonce, deadline): (u64, u64, u64),
    chain: u64,
    to: Address,
) -> Value {
    signed_to(
        devnet,
        (agent, signer),
        (amount, nonce, deadline),
        (chain, DST),
        to,
    )
}

/// The intent to `to_chain` and its signature (by `signer`, under
/// `chain`'s domain).
fn signed_to(
    devnet: &Devnet,
    (agent, signer): (Address, &PrivateKeySigner),
    (amount, nonce, deadline): (u64, u64, u64),
    (chain, to_chain): (u64, u64),
    to: Address,
) -> Value {
    let vault = devnet.deployment(SRC).unwrap().vault;
    let intent = ncaccount::Intent {
        agent,
        src_chain: SRC,
        amount: U256::from(amount),
        to_chain,
        to_address: to,
        nonce: U256::from(nonce),
        deadline,
    };
    ncaccount::spend_body(signer, &intent, (chain, vault))
}

/// The entry of `list` (a JSON array) for `chain`.
fn on_chain(list: &Value, chain: u64) -> &Value {
    let found = list
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["chainId"] == chain);
    found.unwrap_or_else(|| panic!("no chain {chain} in {list}"))
}

/// A devnet of [`SRC`] and [`DST`], a host over it, and a funded agent.
async fn setup() -> (Devnet, tempfile::TempDir, common::Running, PrivateKeySigner) {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = serve(&devnet, dir.path(), |_| {}).await;
    let a = agent(&devnet).await;
    (devnet, dir, host, a)
}

fn soon() -> u64 {
    SystemClock.now_ms() / 1_000 + 600
}

/// Spend `id` once it left `ROUTING`.
async fn settled(base: &str, id: &str) -> Value {
    for _ in 0..600 {
        let (status, r) = common::get(&format!("{base}/api/ncaccount/spend/{id}")).await;
        assert_eq!(status, 200, "{r}");
        if r["state"] != "ROUTING" {
            return r;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("spend {id} never settled");
}

async fn spend(base: &str, body: &Value, key: Option<&str>) -> (u16, Value) {
    let headers: Vec<(&str, &str)> = key.map(|k| ("x-idempotency-key", k)).into_iter().collect();
    let (status, text) = common::post(base, "/api/ncaccount/spend", body, &headers).await;
    (status, serde_json::from_str(&text).unwrap())
}

#[tokio::test]
async fn a_signed_spend_delivers_once_and_every_refusal_broadcasts_nothing() {
    let (devnet, _dir, host, a) = setup().await;
    let (base, me) = (&host.base, a.address());
    let to = PrivateKeySigner::random().address();
    let (src_p, dst_p) = (
        devnet.chain(SRC).unwrap().provider(),
        devnet.chain(DST).unwrap().provider(),
    );
    let before = (
        nonce(&src_p, devnet.relayer).await,
        nonce(&dst_p, devnet.relayer).await,
        shares(&devnet, me).await,
    );

    // the quote: fee, delivered, shares, allowance
    let ask = json!({"agent": me, "srcChain": SRC, "amount": AMOUNT.to_string(), "toChain": DST, "toAddress": to});
    let (status, text) = common::post(base, "/api/ncaccount/quote", &ask, &[]).await;
    let q: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(status, 200, "{q}");
    assert_eq!(q["fee"], FEE.to_string());
    assert_eq!(q["routed"], (AMOUNT - FEE).to_string());
    let estimated: U256 = q["delivered"].as_str().unwrap().parse().unwrap();
    let least: U256 = q["minDelivered"].as_str().unwrap().parse().unwrap();
    assert!(
        least <= estimated && estimated <= U256::from(AMOUNT - FEE),
        "{q}"
    );
    assert!(
        q["route"]["via"].is_string(),
        "the engine's first rail: {q}"
    );
    assert_eq!(q["allowanceSuffices"], true);
    assert_eq!(q["wouldSucceed"], true);

    // refusals, each typed, none broadcast
    let far = soon();
    let other = PrivateKeySigner::random();
    let cases = [
        (
            signed(&devnet, (me, &a), (30_000_000, 1, far), SRC, to),
            "NCACCOUNT_ALLOWANCE_EXCEEDED",
        ),
        (
            signed(&devnet, (me, &a), (AMOUNT, 2, far - 1_200), SRC, to),
            "NCACCOUNT_INTENT_EXPIRED",
        ),
        (
            signed(&devnet, (me, &a), (AMOUNT, 3, far), DST, to),
            "NCACCOUNT_DOMAIN_CHAIN",
        ),
        (
            signed(&devnet, (me, &other), (AMOUNT, 4, far), SRC, to),
            "NCACCOUNT_SIGNATURE_INVALID",
        ),
        // no rail routes USDC to USDC on one chain: refused before the redeem
        (
            signed_to(&devnet, (me, &a), (AMOUNT, 5, far), (SRC, SRC), to),
            "NCACCOUNT_NO_ROUTE",
        ),
    ];
    for (body, code) in &cases {
        let (status, r) = spend(base, body, None).await;
        assert!((400..500).contains(&status), "{code}: {status} {r}");
        assert_eq!(r["errorCode"], *code, "{r}");
    }
    // live false: the dry answer, nothing sent
    let mut dry = signed(&devnet, (me, &a), (AMOUNT, 7, far), SRC, to);
    dry["live"] = json!(false);
    let (status, r) = spend(base, &dry, None).await;
    assert_eq!((status, r["state"].as_str()), (200, Some("DRY")), "{r}");
    assert_eq!(r["broadcast"], false);
    let after_refusals = (
        nonce(&src_p, devnet.relayer).await,
        nonce(&dst_p, devnet.relayer).await,
        shares(&devnet, me).await,
    );
    assert_eq!(after_refusals, before, "a refusal broadcast something");

    // the spend, twice under one key: delivered once
    let dst_before = usdc_balance(&devnet, DST, to).await;
    let body = signed(&devnet, (me, &a), (AMOUNT, 7, far), SRC, to);
    let (status, first) = spend(base, &body, Some("nc-key-1")).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["state"], "ROUTING", "{first}");
    assert!(first["redeemTx"].is_string(), "{first}");
    let (status, again) = spend(base, &body, Some("nc-key-1")).await;
    assert_eq!((status, &again), (200, &first));
    // the delivery is an engine route: it runs and is tracked like any other
    let route_id = first["routeId"].as_str().expect("routeId");
    let route = until_terminal(base, route_id).await;
    assert_eq!(route["status"], "DONE", "{route}");
    assert_eq!(
        route["from"]["amount"],
        (AMOUNT - FEE).to_string(),
        "{route}"
    );
    let done = settled(base, first["id"].as_str().unwrap()).await;
    assert_eq!(done["state"], "DELIVERED", "{done}");
    assert!(done["deliverTx"].is_string(), "{done}");
    assert_eq!(done["routeId"], first["routeId"]);
    let delivered = usdc_balance(&devnet, DST, to).await - dst_before;
    let paid: U256 = route["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(delivered, paid, "{route}");
    assert!(!delivered.is_zero() && delivered <= U256::from(AMOUNT - FEE));
    // The redeem burns what the quote said, or a hair less when the vault
    // accrued between the quote's block and the redeem's (shares only gain).
    let burnt = before.2 - shares(&devnet, me).await;
    let quoted: U256 = first["quote"]["sharesToRedeem"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        burnt <= quoted && burnt >= quoted - quoted / U256::from(1_000_000u64),
        "burnt {burnt} shares, quoted {quoted}"
    );
    let (status, r) = common::get(&format!("{base}/api/ncaccount/spend/nc_nope")).await;
    assert_eq!(
        (status, r["errorCode"].as_str()),
        (404, Some("UNKNOWN_SPEND"))
    );

    // the same nonce again (another amount, another key): refused, nothing sent
    let nonces = (
        nonce(&src_p, devnet.relayer).await,
        nonce(&dst_p, devnet.relayer).await,
    );
    let held = shares(&devnet, me).await;
    let reuse = signed(&devnet, (me, &a), (1_000_000, 7, far), SRC, to);
    let (status, r) = spend(base, &reuse, Some("nc-key-2")).await;
    assert_eq!(
        (status, r["errorCode"].as_str()),
        (409, Some("NCACCOUNT_NONCE_USED")),
        "{r}"
    );
    let (status, r) = spend(base, &body, None).await;
    assert_eq!(
        (status, r["errorCode"].as_str()),
        (409, Some("NCACCOUNT_NONCE_USED")),
        "{r}"
    );
    assert_eq!(
        (
            nonce(&src_p, devnet.relayer).await,
            nonce(&dst_p, devnet.relayer).await
        ),
        nonces
    );
    assert_eq!(shares(&devnet, me).await, held);
    assert_eq!(usdc_balance(&devnet, DST, to).await - dst_before, delivered);
}

/// `answer` (a decimal string) is `value` plus at most a few seconds of
/// yield: the vault accrues by the second, so a later read is worth a
/// little more.
fn accrued_since(answer: &Value, value: U256) {
    let got: U256 = answer.as_str().unwrap().parse().unwrap();
    assert!(
        got >= value && got <= value + U256::from(100u64),
        "{got} vs {value}"
    );
}

#[tokio::test]
async fn views_show_the_chain_figures_and_a_positive_apy_after_accrual() {
    let (devnet, _dir, host, a) = setup().await;
    let (base, me) = (&host.base, a.address());
    let c = devnet.chain(SRC).unwrap();
    let vault = YieldVault::new(c.deployment.vault, c.provider());
    let held = vault.balanceOf(me).call().await.unwrap();
    let value = vault.convertToAssets(held).call().await.unwrap();
    let allowance = vault.allowance(me, devnet.relayer).call().await.unwrap();

    let (status, nc) = common::get(&format!("{base}/api/ncaccount/{me}")).await;
    assert_eq!(status, 200, "{nc}");
    let src = on_chain(&nc["chains"], SRC);
    assert_eq!(src["shares"], held.to_string());
    accrued_since(&src["assets"], value);
    assert_eq!(src["allowance"], allowance.to_string());
    assert_eq!(nc["signing"]["name"], "RelayNCAccount");

    let (status, bal) = common::get(&format!("{base}/api/balance/{me}")).await;
    assert_eq!(status, 200, "{bal}");
    let chain = on_chain(&bal["chains"], SRC);
    let usdc = chain["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["symbol"] == "USDC")
        .unwrap();
    assert_eq!(
        usdc["units"],
        usdc_balance(&devnet, SRC, me).await.to_string()
    );
    accrued_since(&chain["vault"]["assets"], value);
    // 100 USDC in the vault at 1 USD, in integer micro-USD
    accrued_since(&chain["vault"]["usdE6"], value);
    let wallet = usdc_balance(&devnet, DST, me).await + usdc_balance(&devnet, SRC, me).await;
    let total: U256 = bal["totals"]["USDC"].as_str().unwrap().parse().unwrap();
    accrued_since(&json!((total - wallet).to_string()), value);

    let (status, bad) = common::get(&format!("{base}/api/balance/0x1234")).await;
    assert_eq!(
        (status, bad["errorCode"].as_str()),
        (400, Some("INVALID_ADDRESS"))
    );

    // an hour of yield: the share price rises, the APY is positive
    c.provider()
        .raw_request::<_, Value>("evm_increaseTime".into(), (3_600,))
        .await
        .unwrap();
    c.provider()
        .raw_request::<_, Value>("evm_mine".into(), ())
        .await
        .unwrap();
    let (status, v) = common::get(&format!("{base}/api/account/venues")).await;
    assert_eq!(status, 200, "{v}");
    let venue = on_chain(&v["venues"], SRC);
    let bps = venue["apy"]["bps"].as_i64().unwrap_or_default();
    // 16 units a second on ~10,100 USDC: about 5 %
    assert!((300..700).contains(&bps), "{venue}");
    let (status, acct) = common::get(&format!("{base}/api/account/{me}")).await;
    assert_eq!(status, 200, "{acct}");
    let chain = on_chain(&acct["chains"], SRC);
    assert!(
        chain["vault"]["apy"]["bps"].as_i64().unwrap() > 0,
        "{chain}"
    );
    let grown: U256 = chain["vault"]["assets"].as_str().unwrap().parse().unwrap();
    assert!(grown > value, "the shares' value rose: {grown} > {value}");
}

/// Twenty copies of one signed spend sent at once, without a key and then
/// with one: one redeem, one delivery, no 5xx.
#[tokio::test(flavor = "multi_thread")]
async fn twenty_copies_of_one_signed_spend_redeem_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = serve(&devnet, dir.path(), |c| c.limits.enabled = false).await;
    let a = agent(&devnet).await;
    let (base, me) = (&host.base, a.address());
    let src_p = devnet.chain(SRC).unwrap().provider();
    let shares0 = shares(&devnet, me).await;
    let spent = 5_000_000;
    for (nonce_, key) in [(11, None), (12, Some("nc-twenty"))] {
        let to = PrivateKeySigner::random().address();
        let relayer0 = nonce(&src_p, devnet.relayer).await;
        let body = signed(&devnet, (me, &a), (spent, nonce_, soon()), SRC, to);
        let answers = futures::future::join_all((0..20).map(|_| spend(base, &body, key))).await;
        let ids: std::collections::BTreeSet<_> = answers
            .iter()
            .inspect(|(s, r)| {
                assert!(
                    *s < 500 && (*s == 200 || r["errorCode"].is_string()),
                    "{s} {r}"
                )
            })
            .filter(|(s, _)| *s == 200)
            .map(|(_, r)| r["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids.len(), 1, "{answers:?}");
        let done = settled(base, ids.first().unwrap()).await;
        assert_eq!(done["state"], "DELIVERED", "{done}");
        assert!(usdc_balance(&devnet, DST, to).await > U256::ZERO);
        let sent = nonce(&src_p, devnet.relayer).await - relayer0;
        assert!(
            (1..=2).contains(&sent),
            "one redeem (and at most the route's own step) on the source chain, not {sent}"
        );
    }
    let burnt = shares0 - shares(&devnet, me).await;
    let vault = devnet.deployment(SRC).unwrap().vault;
    let worth = YieldVault::new(vault, devnet.chain(SRC).unwrap().provider())
        .previewWithdraw(U256::from(2 * spent))
        .call()
        .await
        .unwrap();
    // (the vault accrues between the redeems and this read: a hair of slack,
    // far below a third spend's shares)
    assert!(
        burnt <= worth + worth / U256::from(1_000u64),
        "two spends' shares at most: {burnt} > {worth}"
    );
    devnet.stop();
}
