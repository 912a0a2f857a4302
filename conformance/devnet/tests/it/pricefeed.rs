//! The devnet's Chainlink-style price feeds on real anvil: the
//! `AggregatorV3Interface` answers, the native pair of a non-ETH chain, and
//! `updateAnswer` (deployer only) starting a new round.

use crate::common;

use alloy::{primitives::I256, providers::Provider, sol_types::SolEvent};
use common::devnet;
use relay_devnet::{contracts::PriceFeed, keys};

#[tokio::test]
async fn feeds_answer_like_chainlink_and_only_the_deployer_moves_them() -> anyhow::Result<()> {
    let devnet = devnet(&[8453, 56]).await?;
    let bsc = devnet.chain(56)?;
    let pairs: Vec<&str> = bsc
        .deployment
        .price_feeds
        .iter()
        .map(|f| f.pair.as_str())
        .collect();
    assert_eq!(
        pairs,
        ["ETH/USD", "BTC/USD", "USDC/USD", "USDT/USD", "BNB/USD"]
    );
    assert!(devnet.deployment(8453)?.feed("BNB/USD").is_none());

    let provider = bsc.provider();
    let bnb = PriceFeed::new(bsc.deployment.feed("bnb/usd").unwrap().address, &provider);
    assert_eq!(bnb.decimals().call().await?, 8);
    assert_eq!(bnb.description().call().await?, "BNB/USD");
    let r = bnb.latestRoundData().call().await?;
    assert_eq!(
        (r.roundId.to::<u64>(), r.answer),
        (1, I256::unchecked_from(60_000_000_000i64))
    );
    assert_eq!(r.answeredInRound, r.roundId);
    assert!(r.updatedAt.to::<u64>() > 1_700_000_000);

    // Anyone else's updateAnswer reverts (NotOwner).
    let stranger = relay_devnet::deploy::wallet_provider(bsc.url(), keys::anvil_signer(3));
    let sent = PriceFeed::new(*bnb.address(), &stranger)
        .updateAnswer(I256::ONE)
        .send()
        .await;
    assert!(sent.is_err(), "estimation reverts for a stranger");

    devnet
        .set_price(56, "BNB/USD", I256::unchecked_from(65_000_000_000i64))
        .await?;
    let r = bnb.latestRoundData().call().await?;
    assert_eq!(
        (r.roundId.to::<u64>(), r.answer),
        (2, I256::unchecked_from(65_000_000_000i64))
    );
    let old = bnb
        .getRoundData(alloy::primitives::aliases::U80::from(1))
        .call()
        .await?;
    assert_eq!(
        old.answer,
        I256::unchecked_from(60_000_000_000i64),
        "round 1 is kept"
    );
    let logs = provider
        .get_logs(
            &alloy::rpc::types::Filter::new()
                .address(*bnb.address())
                .from_block(0),
        )
        .await?;
    let updated = logs
        .iter()
        .filter(|l| l.topic0() == Some(&PriceFeed::AnswerUpdated::SIGNATURE_HASH))
        .count();
    assert_eq!(updated, 2, "AnswerUpdated at deploy and at the move");
    assert!(devnet.set_price(56, "DOGE/USD", I256::ONE).await.is_err());
    Ok(())
}
