//! On-chain price feeds (issue 14): the devnet's Chainlink-style feeds as
//! `GET /api/pricefeeds` lists them, a quote's gas conversion following a
//! moved feed, and stale or non-positive answers never used.

use crate::common;

use alloy::primitives::{I256, U256};
use common::{get, send, serve, wait_for, Answer};
use relay_devnet::{Devnet, DevnetConfig};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
/// 3000 USD with the feeds' 8 decimals.
const ETH_ANSWER: i64 = 300_000_000_000;

async fn start() -> Devnet {
    Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap()
}

async fn feeds(base: &str) -> Value {
    let (code, v) = get(&format!("{base}/api/pricefeeds")).await;
    assert_eq!(code, 200, "{v}");
    v
}

/// The on-chain feed of `pair` on `chain` in a `/api/pricefeeds` answer.
fn on_chain<'a>(v: &'a Value, chain: u64, pair: &str) -> &'a Value {
    v["feeds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"] == "chain" && f["chainId"] == chain && f["pair"] == pair)
        .unwrap_or_else(|| panic!("no on-chain {pair} feed on {chain}: {v}"))
}

/// Waits until the host has read `answer` from the `pair` feed on `chain`.
async fn until_read(base: &str, chain: u64, pair: &str, answer: &str) {
    wait_for(&format!("{pair} on {chain} read as {answer}"), async || {
        on_chain(&feeds(base).await, chain, pair)["answer"] == answer
    })
    .await;
}

async fn quote(base: &str) -> Answer {
    let body = json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "amount": "5000000", "fromAddress": relay_devnet::keys::anvil_address(1)});
    let url = format!("{base}/api/route/quote");
    send(crate::common::http().post(url).json(&body)).await
}

/// The gas charge the quote's own breakdown gives at `eth_usd_e6`: every
/// chain's units × gas price, valued in USD, plus the markup, in USDC
/// (6 decimals, 1 USD) rounded up.
fn gas_at(fees: &Value, eth_usd_e6: u64) -> u128 {
    let gas = &fees["gas"];
    let wei = gas["spent"]
        .as_array()
        .unwrap()
        .iter()
        .fold(U256::ZERO, |a, s| {
            let price: U256 = s["gasPriceWei"].as_str().unwrap().parse().unwrap();
            a + price * U256::from(s["units"].as_u64().unwrap())
        });
    let markup = U256::from(10_000 + gas["markupBps"].as_u64().unwrap());
    let num = wei * U256::from(eth_usd_e6) * markup;
    let den = U256::from(10u64).pow(U256::from(18)) * U256::from(10_000u64);
    u128::try_from(num.div_ceil(den)).unwrap()
}

fn gas_amount(fees: &Value) -> u128 {
    fees["gas"]["amount"].as_str().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn devnet_feeds_are_listed_live_and_move_the_gas_conversion() {
    let devnet = start().await;
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| c.quote.feed_refresh_ms = 200).await;

    let v = feeds(&h.base).await;
    assert_eq!(
        v["onChainFeeds"], 8,
        "four feeds on each of two chains: {v}"
    );
    for chain in [SRC, DST] {
        let d = devnet.deployment(chain).unwrap();
        for (pair, answer) in [
            ("ETH/USD", "300000000000"),
            ("BTC/USD", "6000000000000"),
            ("USDC/USD", "100000000"),
            ("USDT/USD", "100000000"),
        ] {
            let f = on_chain(&v, chain, pair);
            let address = d.feed(pair).unwrap().address.to_string();
            assert_eq!(f["address"], json!(address), "{f}");
            assert_eq!(f["answer"], answer, "{f}");
            assert_eq!(f["answerDecimals"], 8);
            assert_eq!((&f["stale"], &f["inUse"]), (&json!(false), &json!(true)));
            assert!(f["updatedAt"].as_u64().unwrap() > 1_700_000_000, "{f}");
            assert_eq!(f["heartbeatSecs"], 86_400);
        }
    }
    assert_eq!(on_chain(&v, SRC, "ETH/USD")["value"], "3000000000");
    let config_eth = v["feeds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"] == "config" && f["pair"] == "ETH/USD")
        .unwrap();
    assert_eq!(config_eth["inUse"], false, "a feed supersedes it: {v}");

    let before = quote(&h.base).await;
    assert_eq!(before.status, 200, "{}", before.body);
    let fees = &before.body["fees"];
    assert_eq!(gas_amount(fees), gas_at(fees, 3_000_000_000), "{fees}");

    for chain in [SRC, DST] {
        devnet
            .set_price(chain, "ETH/USD", I256::unchecked_from(2 * ETH_ANSWER))
            .await
            .unwrap();
        until_read(&h.base, chain, "ETH/USD", "600000000000").await;
    }
    let after = quote(&h.base).await;
    assert_eq!(after.status, 200, "{}", after.body);
    let fees = &after.body["fees"];
    assert_eq!(gas_amount(fees), gas_at(fees, 6_000_000_000), "{fees}");
    assert!(
        gas_amount(fees) > gas_amount(&before.body["fees"]) * 3 / 2,
        "doubling ETH/USD about doubles the gas charge: {} then {}",
        before.body["fees"]["gas"],
        fees["gas"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn non_positive_and_stale_answers_are_never_used() {
    let devnet = start().await;
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| c.quote.feed_refresh_ms = 200).await;

    devnet.set_price(SRC, "ETH/USD", I256::ZERO).await.unwrap();
    until_read(&h.base, SRC, "ETH/USD", "0").await;
    let f = on_chain(&feeds(&h.base).await, SRC, "ETH/USD").clone();
    assert_eq!(
        (&f["inUse"], &f["stale"]),
        (&json!(false), &json!(false)),
        "{f}"
    );
    let q = quote(&h.base).await;
    let text = q.body.to_string();
    assert!(q.status >= 400, "{text}");
    assert!(
        text.contains("price of ETH/USD unavailable") && text.contains("not a usable price"),
        "the quote says why: {text}"
    );

    // A second host over the same chains whose feeds have a 1 s heartbeat:
    // the answers go stale and are refused, never replaced by configuration.
    let dir = tempfile::tempdir().unwrap();
    let stale = serve(&devnet, dir.path(), |c| {
        c.quote.feed_refresh_ms = 200;
        for f in &mut c.pricefeeds {
            f.heartbeat_secs = 1;
        }
    })
    .await;
    // Both chains' feeds: SRC's zero answer was written after DST's last
    // one, so it goes stale later, and until it does the quote (which
    // prices SRC's gas first) would say "not a usable price" instead.
    wait_for("both ETH/USD feeds to go stale", async || {
        let all = feeds(&stale.base).await;
        [SRC, DST]
            .iter()
            .all(|c| on_chain(&all, *c, "ETH/USD")["stale"] == true)
    })
    .await;
    let f = on_chain(&feeds(&stale.base).await, DST, "ETH/USD").clone();
    assert_eq!(f["inUse"], false, "{f}");
    assert!(f["reason"].as_str().unwrap().starts_with("stale"), "{f}");
    let q = quote(&stale.base).await;
    let text = q.body.to_string();
    assert!(q.status >= 400, "{text}");
    assert!(
        text.contains("price of ETH/USD unavailable") && text.contains("stale"),
        "the quote says why: {text}"
    );
}
