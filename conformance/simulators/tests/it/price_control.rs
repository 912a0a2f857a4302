//! DEVNET ONLY control: `POST /simulator/price` moves a devnet price feed
//! (a new round from the deployer) and refuses an unknown pair or a bad
//! answer.

use crate::common;

use alloy::primitives::I256;
use common::{mesh, DST};
use relay_devnet::contracts::PriceFeed;
use relay_simulators::Upstream;
use serde_json::json;

#[tokio::test]
async fn the_price_control_moves_a_devnet_feed() {
    let m = mesh().await;
    let url = format!("{}/simulator/price", m.url(Upstream::Lifi));
    let body = json!({"chain": DST, "pair": "eth/usd", "answer": "350000000000"});
    let (status, v, _) = m.post(&url, &[], &body).await;
    assert_eq!(status, 200, "{v}");
    let feed = m.devnet.deployment(DST).unwrap().feed("ETH/USD").unwrap();
    assert_eq!(v["feed"], json!(feed.address), "{v}");
    assert_eq!(
        (&v["pair"], &v["answer"]),
        (&json!("ETH/USD"), &json!("350000000000"))
    );
    let round = PriceFeed::new(feed.address, m.provider(DST))
        .latestRoundData()
        .call()
        .await
        .unwrap();
    assert_eq!(round.answer, I256::unchecked_from(350_000_000_000i64));

    for bad in [
        json!({"chain": DST, "pair": "DOGE/USD", "answer": "1"}),
        json!({"chain": DST, "pair": "ETH/USD", "answer": "3500.5"}),
        json!({"chain": 5, "pair": "ETH/USD", "answer": "1"}),
    ] {
        let (status, v, _) = m.post(&url, &[], &bad).await;
        assert_eq!(status, 400, "{bad}: {v}");
        assert_eq!(v["simulator"], true);
    }
}
