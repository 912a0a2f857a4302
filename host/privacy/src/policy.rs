//! The policy log (spec §4.11): a hash-chained, signed log of changes to
//! the lane's privacy promises. Each promise is a number with a direction
//! (lower or higher is tighter); at start the host compares the promises
//! its configuration makes with the last entry's and, when they differ,
//! appends an entry saying what changed and whether each change tightened,
//! loosened or was neutral.
//!
//! A tightening takes effect at once. A loosening takes effect only after
//! the notice period in force before it (`policy.noticeDays`, default 30
//! days): its entry's `effectiveAt` says when, and until then the lane
//! keeps the old value — the host runs with the value in force when it
//! starts, so a loosened setting is used from the first start after its
//! `effectiveAt`.
//!
//! Entry `n`'s `hash` is SHA-256 of entry `n-1`'s hash (32 zero bytes for
//! the first) followed by the entry's `body`, byte for byte; `sig` is the
//! policy key's Ed25519 signature of the 32-byte hash. The key is derived
//! from the relayer key, so every replica signs alike and a reader pins
//! `publicKey`.

use std::collections::BTreeMap;

use relay_sealed::witness::SigningKey;
use relay_store::StoreError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{
    pad::{REQUEST_FLOOR, RESPONSE_FLOOR},
    store::{PolicyRow, Privacy},
    PrivacyConfig,
};

/// Which way a promise gets tighter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tighter {
    /// A lower value promises more.
    Lower,
    /// A higher value promises more.
    Higher,
}

/// One promise.
#[derive(Clone, Copy, Debug, Serialize, utoipa::ToSchema)]
pub struct Promise {
    /// Its id.
    pub id: &'static str,
    /// What it promises.
    pub meaning: &'static str,
    /// Which way is tighter.
    pub tighter: Tighter,
}

/// The promises, in the order the log lists them.
pub const PROMISES: &[Promise] = &[
    Promise {
        id: "ohttp.outerAddressKept",
        meaning: "1 if the gateway keeps or logs the outer request's address or headers; 0: never",
        tighter: Tighter::Lower,
    },
    Promise {
        id: "noop.logged",
        meaning: "1 if the no-op leaves a log line or a stored record; 0: never",
        tighter: Tighter::Lower,
    },
    Promise {
        id: "ohttp.requestFloorBytes",
        meaning: "every inner request is padded to a multiple of this many bytes",
        tighter: Tighter::Higher,
    },
    Promise {
        id: "ohttp.responseFloorBytes",
        meaning: "every inner response is padded to a multiple of this many bytes",
        tighter: Tighter::Higher,
    },
    Promise {
        id: "ohttp.keyEpochHours",
        meaning: "the gateway's keys rotate at least this often, hours",
        tighter: Tighter::Lower,
    },
    Promise {
        id: "ohttp.replayWindowMs",
        meaning: "an encapsulated key's hash is kept at most this long, ms",
        tighter: Tighter::Lower,
    },
    Promise {
        id: "policy.noticeDays",
        meaning: "a loosening takes effect this many days after it is logged",
        tighter: Tighter::Higher,
    },
];

/// Promise values by id.
pub type Values = BTreeMap<String, u64>;

/// What the configuration promises.
pub fn promised(c: &PrivacyConfig) -> Values {
    [
        ("ohttp.outerAddressKept", 0),
        ("noop.logged", 0),
        ("ohttp.requestFloorBytes", REQUEST_FLOOR as u64),
        ("ohttp.responseFloorBytes", RESPONSE_FLOOR as u64),
        ("ohttp.keyEpochHours", c.key_epoch_hours),
        ("ohttp.replayWindowMs", c.replay_window_ms),
        ("policy.noticeDays", u64::from(c.notice_days)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// One change an entry records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Change {
    /// The promise.
    pub promise: String,
    /// Its value before (none in the first entry).
    pub from: Option<u64>,
    /// Its value after.
    pub to: u64,
    /// `tightened`, `loosened` or `neutral`.
    pub effect: String,
}

/// An entry's body: what its hash covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Body {
    /// Its number, from 1.
    pub seq: u64,
    /// When it was appended, epoch ms.
    pub at: u64,
    /// `loosened` if any change loosened, else `tightened` if any
    /// tightened, else `neutral`.
    pub kind: String,
    /// What changed.
    pub changes: Vec<Change>,
    /// Every promise after this entry.
    pub promises: Values,
    /// When the changes take effect, epoch ms (a loosening: `at` plus the
    /// notice in force before it).
    pub effective_at: u64,
}

/// Why the log does not verify.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// An entry breaks the chain or its signature.
    #[error("policy entry {0}: {1}")]
    Broken(u64, &'static str),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The entry hash after `prev` of `body`.
pub fn chain(prev: &[u8; 32], body: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(body.as_bytes());
    h.finalize().into()
}

/// The log, checked: each entry's body, number, chain and signature.
pub fn verify(
    rows: &[PolicyRow],
    key: &relay_sealed::witness::VerifyingKey,
) -> Result<Vec<Body>, PolicyError> {
    let mut prev = [0u8; 32];
    let mut bodies = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let n = i as u64 + 1;
        let body: Body = serde_json::from_str(&r.body)
            .map_err(|_| PolicyError::Broken(n, "body is not an entry"))?;
        if body.seq != n || r.seq != n {
            return Err(PolicyError::Broken(n, "out of order"));
        }
        let hash = chain(&prev, &r.body);
        if hex::encode(hash) != r.hash {
            return Err(PolicyError::Broken(n, "hash does not chain"));
        }
        let sig = hex::decode(&r.sig)
            .ok()
            .and_then(|s| ed25519_dalek::Signature::from_slice(&s).ok())
            .ok_or(PolicyError::Broken(n, "signature malformed"))?;
        key.verify_strict(&hash, &sig)
            .map_err(|_| PolicyError::Broken(n, "signature does not verify"))?;
        prev = hash;
        bodies.push(body);
    }
    Ok(bodies)
}

fn effect(p: &str, from: Option<u64>, to: u64) -> &'static str {
    let Some(from) = from else {
        return "neutral";
    };
    let lower = PROMISES
        .iter()
        .find(|x| x.id == p)
        .is_none_or(|x| x.tighter == Tighter::Lower);
    match (to.cmp(&from), lower) {
        (std::cmp::Ordering::Equal, _) => "neutral",
        (std::cmp::Ordering::Less, true) | (std::cmp::Ordering::Greater, false) => "tightened",
        _ => "loosened",
    }
}

/// The entry that follows `last` when the configuration promises `now`
/// at `at_ms` (none: nothing changed).
pub fn next_entry(last: Option<&Body>, now: &Values, at_ms: u64) -> Option<Body> {
    let before = last.map(|b| &b.promises);
    let changes: Vec<Change> = now
        .iter()
        .filter(|(k, v)| before.and_then(|b| b.get(*k)) != Some(v))
        .map(|(k, v)| {
            let from = before.and_then(|b| b.get(k)).copied();
            Change {
                promise: k.clone(),
                from,
                to: *v,
                effect: effect(k, from, *v).into(),
            }
        })
        .collect();
    if changes.is_empty() {
        return None;
    }
    let has = |e: &str| changes.iter().any(|c| c.effect == e);
    let kind = if has("loosened") {
        "loosened"
    } else if has("tightened") {
        "tightened"
    } else {
        "neutral"
    };
    let notice_days = before
        .and_then(|b| b.get("policy.noticeDays"))
        .copied()
        .unwrap_or(0);
    let effective_at = match kind {
        "loosened" => at_ms + notice_days * 86_400_000,
        _ => at_ms,
    };
    Some(Body {
        seq: last.map_or(1, |b| b.seq + 1),
        at: at_ms,
        kind: kind.into(),
        changes,
        promises: now.clone(),
        effective_at,
    })
}

/// The value of each promise in force at `t_ms`: for each, the value of
/// its latest-logged change that has taken effect.
pub fn effective(bodies: &[Body], t_ms: u64) -> Values {
    let mut out = Values::new();
    for b in bodies.iter().filter(|b| b.effective_at <= t_ms) {
        for c in &b.changes {
            out.insert(c.promise.clone(), c.to);
        }
    }
    out
}

/// Appends the entry the configuration's promises call for (retrying when
/// another replica appended first); the verified log after it.
pub async fn sync(
    store: &Privacy,
    key: &SigningKey,
    promised: &Values,
    now_ms: u64,
) -> Result<Vec<Body>, PolicyError> {
    for _ in 0..8 {
        let rows = store.policy().await?;
        let bodies = verify(&rows, &key.verifying_key())?;
        let Some(next) = next_entry(bodies.last(), promised, now_ms) else {
            return Ok(bodies);
        };
        let body = serde_json::to_string(&next).expect("an entry serializes");
        let prev = rows
            .last()
            .and_then(|r| hex::decode(&r.hash).ok())
            .and_then(|h| <[u8; 32]>::try_from(h).ok())
            .unwrap_or([0; 32]);
        let hash = chain(&prev, &body);
        let sig = ed25519_dalek::Signer::sign(key, &hash);
        let row = PolicyRow {
            seq: next.seq,
            body,
            hash: hex::encode(hash),
            sig: hex::encode(sig.to_bytes()),
        };
        store.append_policy(&row).await?;
    }
    let rows = store.policy().await?;
    verify(&rows, &key.verifying_key())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(epoch: u64, notice: u64) -> Values {
        let mut v = promised(&PrivacyConfig::default());
        v.insert("ohttp.keyEpochHours".into(), epoch);
        v.insert("policy.noticeDays".into(), notice);
        v
    }

    #[test]
    fn a_loosening_waits_for_the_notice_and_a_later_tightening_wins() {
        let day = 86_400_000;
        let first = next_entry(None, &values(24, 30), 1_000).unwrap();
        assert_eq!(
            (first.seq, first.kind.as_str(), first.effective_at),
            (1, "neutral", 1_000)
        );
        assert!(
            next_entry(Some(&first), &values(24, 30), 2_000).is_none(),
            "nothing changed"
        );
        let looser = next_entry(Some(&first), &values(48, 30), 2_000).unwrap();
        assert_eq!(
            (looser.kind.as_str(), looser.effective_at),
            ("loosened", 2_000 + 30 * day)
        );
        let log = vec![first.clone(), looser.clone()];
        assert_eq!(effective(&log, 3_000)["ohttp.keyEpochHours"], 24, "not yet");
        assert_eq!(effective(&log, 2_000 + 30 * day)["ohttp.keyEpochHours"], 48);
        let tighter = next_entry(Some(&looser), &values(12, 30), 4_000).unwrap();
        assert_eq!(
            (tighter.kind.as_str(), tighter.effective_at),
            ("tightened", 4_000)
        );
        let log = vec![first, looser, tighter];
        assert_eq!(effective(&log, 5_000)["ohttp.keyEpochHours"], 12);
        assert_eq!(
            effective(&log, 40 * day)["ohttp.keyEpochHours"],
            12,
            "the later entry wins"
        );
        // shortening the notice is itself a loosening, under the old notice
        let shorter = next_entry(Some(&log[2]), &values(12, 1), 6_000).unwrap();
        assert_eq!(
            (shorter.kind.as_str(), shorter.effective_at),
            ("loosened", 6_000 + 30 * day)
        );
    }
}
