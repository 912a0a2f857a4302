//! Signing quote attestations in batches (group commit): quotes that reach
//! the signer together share one signature over the Merkle root of their
//! hashes, and each carries its proof. Under load this divides the
//! relayer's ECDSA work by the batch size; alone, a quote is a batch of one
//! (root = hash, empty proof) and waits for nobody.
//!
//! The first quote to arrive leads: it yields to the runtime once — every
//! task already runnable gets to run, and may join — then signs whatever
//! has gathered. No dedicated task and no timer: a batch never waits for
//! work that is not already in progress. The lead flushes on drop as well,
//! so a quote whose client went away never strands the ones that joined.

use std::sync::Mutex;

use alloy::primitives::B256;
use relay_chain::signer::RelayerSigner;
use tokio::sync::oneshot;

use super::{merkle, personal_sign, AttestError, Attestation, QuoteTerms, SCHEME};

/// What a batch gives each of its quotes.
#[derive(Clone, Debug)]
struct Signed {
    root: B256,
    proof: Vec<B256>,
    signature: Result<Option<String>, AttestError>,
}

/// Quotes waiting for the batch's signature, and whether one leads it.
#[derive(Default)]
struct Gathering {
    waiting: Vec<(B256, oneshot::Sender<Signed>)>,
    led: bool,
}

/// The relayer's quote signer (unsigned, unbatched attestations when the
/// host has no key).
pub struct QuoteSigner {
    key: Option<RelayerSigner>,
    gathering: Mutex<Gathering>,
}

impl QuoteSigner {
    /// A signer with `key` (`None`: attestations are hashed, not signed).
    pub fn new(key: Option<RelayerSigner>) -> Self {
        QuoteSigner {
            key,
            gathering: Mutex::new(Gathering::default()),
        }
    }

    /// Attests `terms`, in the batch of whatever quotes reach the signer
    /// at the same time.
    pub async fn sign(&self, terms: QuoteTerms) -> Result<Attestation, AttestError> {
        let hash = terms.hash();
        let signed = match &self.key {
            None => Signed {
                root: hash,
                proof: Vec::new(),
                signature: Ok(None),
            },
            Some(_) => self.join(hash).await?,
        };
        Ok(Attestation {
            scheme: SCHEME,
            hash,
            root: signed.root,
            proof: signed.proof,
            signer: self.key.as_ref().map(RelayerSigner::address),
            signature: signed.signature?,
            expires_at: terms.expires_at,
            terms,
        })
    }

    /// Adds `hash` to the gathering batch (leading it when none is led)
    /// and waits for its signature.
    async fn join(&self, hash: B256) -> Result<Signed, AttestError> {
        let (tx, rx) = oneshot::channel();
        let leads = {
            let mut g = self.lock();
            g.waiting.push((hash, tx));
            !std::mem::replace(&mut g.led, true)
        };
        if leads {
            let lead = Lead(self);
            tokio::task::yield_now().await;
            drop(lead);
        }
        rx.await
            .map_err(|_| AttestError::Sign("the batch was dropped unsigned".into()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Gathering> {
        self.gathering.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Signs every waiting hash under one root and answers each.
    #[tracing::instrument(skip_all, fields(batch))]
    fn flush(&self) {
        let waiting = {
            let mut g = self.lock();
            g.led = false;
            std::mem::take(&mut g.waiting)
        };
        tracing::Span::current().record("batch", waiting.len());
        let (hashes, answers): (Vec<B256>, Vec<_>) = waiting.into_iter().unzip();
        let (root, proofs) = merkle::tree(&hashes);
        let signature = personal_sign(self.key.as_ref(), root.as_slice()).map(|s| s.signature);
        metrics::counter!("relay_quote_attestations_total").increment(hashes.len() as u64);
        metrics::counter!("relay_quote_attestation_signatures_total").increment(1);
        for (answer, proof) in answers.into_iter().zip(proofs) {
            // A quote whose client went away no longer listens.
            let _ = answer.send(Signed {
                root,
                proof,
                signature: signature.clone(),
            });
        }
    }
}

/// The leading quote's duty: flush the batch, also when its own request is
/// dropped while it yields.
struct Lead<'a>(&'a QuoteSigner);

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.0.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::super::{
        tests::{key, terms},
        verify,
    };
    use super::*;
    use relay_plugin_api::Amount;
    use std::{future::Future as _, sync::Arc};

    #[tokio::test]
    async fn a_quote_alone_is_a_batch_of_one() {
        let a = QuoteSigner::new(Some(key())).sign(terms()).await.unwrap();
        assert_eq!((a.root, a.proof.len()), (a.hash, 0));
        let sig = a.signature.unwrap();
        assert_eq!(verify(&terms(), &[], &sig, key().address(), 1_000), Ok(()));
    }

    #[tokio::test]
    async fn quotes_arriving_together_share_one_signature_and_each_verifies() {
        let signer = Arc::new(QuoteSigner::new(Some(key())));
        let quotes = (0..5u128).map(|i| {
            let mut t = terms();
            t.amount = Amount::from_u128(1_000 + i);
            let signer = signer.clone();
            async move { (t.clone(), signer.sign(t).await.unwrap()) }
        });
        let signed = futures::future::join_all(quotes).await;
        let first = &signed[0].1;
        let depths: Vec<usize> = signed.iter().map(|(_, a)| a.proof.len()).collect();
        assert_eq!(depths, [3, 3, 3, 3, 1], "the fifth leaf is raised twice");
        for (t, a) in &signed {
            assert_eq!((a.root, &a.signature), (first.root, &first.signature));
            let sig = a.signature.as_deref().unwrap();
            assert_eq!(verify(t, &a.proof, sig, key().address(), 1_000), Ok(()));
            let mut other = t.clone();
            other.min_out = Amount::from_u128(1);
            assert!(verify(&other, &a.proof, sig, key().address(), 1_000).is_err());
        }
    }

    #[tokio::test]
    async fn a_lead_dropped_while_it_gathers_still_answers_the_batch() {
        let signer = QuoteSigner::new(Some(key()));
        let mut lead = Box::pin(signer.sign(terms()));
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(
            lead.as_mut().poll(&mut cx).is_pending(),
            "the lead yields once"
        );
        let mut other = terms();
        other.amount = Amount::from_u128(1);
        let mut joined = Box::pin(signer.sign(other.clone()));
        assert!(
            joined.as_mut().poll(&mut cx).is_pending(),
            "it joins the lead's batch"
        );
        drop(lead);
        let a = tokio::time::timeout(std::time::Duration::from_secs(10), joined)
            .await
            .expect("the dropped lead signed the batch")
            .unwrap();
        assert_eq!(
            verify(
                &other,
                &a.proof,
                a.signature.as_deref().unwrap(),
                key().address(),
                1_000
            ),
            Ok(())
        );
    }

    #[tokio::test]
    async fn without_a_key_nothing_is_signed_or_batched() {
        let a = QuoteSigner::new(None).sign(terms()).await.unwrap();
        assert_eq!((a.signer, a.signature, a.root), (None, None, a.hash));
    }
}
