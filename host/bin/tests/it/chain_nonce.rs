//! The relayer's nonce allocator on a real chain: concurrent sends get
//! consecutive nonces and all mine; an injected gap is detected and filled,
//! after which the stuck transaction mines; a nonce still in flight (handed
//! out, not yet journaled) or seen missing for less than the grace is left
//! alone.

use std::{sync::Arc, time::Duration};

use alloy::{
    network::TransactionBuilder,
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
};
use relay_chain::{nonce::NonceManager, signer::RelayerSigner};
use relay_devnet::{keys, Devnet, DevnetConfig};

const CHAIN: u64 = 8453;

fn noop(relayer: Address, nonce: u64) -> TransactionRequest {
    TransactionRequest::default()
        .with_from(relayer)
        .with_to(relayer)
        .with_value(U256::ZERO)
        .with_nonce(nonce)
        .with_gas_limit(21_000)
}

/// A devnet chain and a provider that signs as the relayer.
async fn relayer_on_devnet() -> (Devnet, DynProvider, Address) {
    let devnet = Devnet::start(DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let signer = RelayerSigner::from_signer(keys::relayer());
    let provider = signer.provider(devnet.chain(CHAIN).unwrap().url());
    let relayer = signer.address();
    (devnet, provider, relayer)
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_concurrent_sends_get_consecutive_nonces_and_all_mine() {
    let (devnet, provider, relayer) = relayer_on_devnet().await;
    let start = provider
        .get_transaction_count(relayer)
        .pending()
        .await
        .unwrap();
    let nonces = Arc::new(NonceManager::new(provider.clone(), relayer));
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (nonces, provider) = (nonces.clone(), provider.clone());
            tokio::spawn(async move {
                let n = nonces.allocate().await.unwrap();
                let receipt = provider
                    .send_transaction(noop(relayer, n))
                    .await
                    .unwrap()
                    .get_receipt()
                    .await
                    .unwrap();
                assert!(receipt.status());
                n
            })
        })
        .collect();
    let mut used = Vec::new();
    for t in tasks {
        used.push(t.await.unwrap());
    }
    used.sort_unstable();
    assert_eq!(
        used,
        (start..start + 20).collect::<Vec<_>>(),
        "consecutive, none twice"
    );
    assert_eq!(
        provider
            .get_transaction_count(relayer)
            .latest()
            .await
            .unwrap(),
        start + 20
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_injected_nonce_gap_is_detected_and_repaired() {
    let (devnet, provider, relayer) = relayer_on_devnet().await;
    let base = provider
        .get_transaction_count(relayer)
        .latest()
        .await
        .unwrap();
    // Something outside the allocator sends at base + 2: it queues behind a gap.
    let stuck = provider
        .send_transaction(noop(relayer, base + 2))
        .await
        .unwrap();
    let stuck_hash = *stuck.tx_hash();
    assert!(
        provider
            .get_transaction_receipt(stuck_hash)
            .await
            .unwrap()
            .is_none(),
        "queued, not mined"
    );

    let nonces = NonceManager::new(provider.clone(), relayer);
    let repair = nonces
        .repair_gaps(&Default::default(), Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(repair.missing, vec![base, base + 1]);
    assert_eq!(repair.fills.len(), 2);
    let receipt = stuck.get_receipt().await.unwrap();
    assert!(
        receipt.status(),
        "the stuck transaction mined once the gap was filled"
    );
    assert_eq!(
        provider
            .get_transaction_count(relayer)
            .latest()
            .await
            .unwrap(),
        base + 3
    );
    // Nothing is left to repair, and the allocator continues after the gap.
    assert_eq!(
        nonces
            .repair_gaps(&Default::default(), Duration::ZERO)
            .await
            .unwrap()
            .missing,
        Vec::<u64>::new()
    );
    assert_eq!(nonces.allocate().await.unwrap(), base + 3);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nonce_in_flight_or_missing_for_less_than_the_grace_is_not_filled() {
    let (devnet, provider, relayer) = relayer_on_devnet().await;
    let nonces = NonceManager::new(provider.clone(), relayer);
    // A route took `taken` and is still signing and journaling it, while
    // another route's transaction at taken + 1 already waits in the pool.
    let taken = nonces.allocate().await.unwrap();
    let next = provider
        .send_transaction(noop(relayer, taken + 1))
        .await
        .unwrap();
    let none = Vec::<u64>::new();
    let reserved = Default::default();
    let repair = |grace| nonces.repair_gaps(&reserved, grace);
    assert_eq!(
        repair(Duration::ZERO).await.unwrap().missing,
        none,
        "in flight"
    );
    // Released without a journal entry: a real gap, filled once it has been
    // missing for the grace (here: on the next look).
    nonces.release(taken);
    let hour = Duration::from_secs(3600);
    assert_eq!(repair(hour).await.unwrap().missing, none, "first seen");
    assert_eq!(repair(Duration::ZERO).await.unwrap().missing, vec![taken]);
    let receipt = next.get_receipt().await.unwrap();
    assert!(
        receipt.status(),
        "the queued transaction mined behind the fill"
    );
    devnet.stop();
}
