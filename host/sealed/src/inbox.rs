//! A reader's side of the feed, kept between scans (what `relay msg scan`
//! stores): the feed cursor, the frames of long messages not yet whole,
//! the messages received, and the witness head the reader holds — pinned
//! on first use, and only ever replaced by a head signed by the same key
//! that a consistency proof shows extends it. A head that does not is a
//! forked or forged log, and the scan stops there.

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use crate::{
    frames::{Frame, Reassembler, MAX_PENDING},
    message::{Recipient, Row},
    witness::{verify_consistency, Checkpoint},
    SealError,
};

/// A message received.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivered {
    /// The feed number of the row that completed it.
    pub seq: u64,
    /// The plaintext (an nf2 inner, or other text).
    pub text: String,
    /// When it was scanned, ms.
    pub received_ms: u64,
}

/// The head a reader holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pinned {
    /// The witness key, base64 (Ed25519).
    pub key: String,
    /// The checkpoint's origin.
    pub origin: String,
    /// The tree size.
    pub size: u64,
    /// The Merkle root, hex.
    pub root: String,
}

/// A sent message's delivery state (spec §4.10 rule 7): `pending` once
/// every row is stored, `sent` once all of them are in the feed, `failed`
/// when a row was refused or never stored. There is no delivered or read
/// state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// Stored, waiting for its release slot.
    Pending,
    /// Released: every row is in the public feed.
    Sent,
    /// Not stored.
    Failed,
}

/// A message this client sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outgoing {
    /// Its client id (`c`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<String>,
    /// The recipient, as the sender named it.
    pub to: String,
    /// The ephemeral keys of its rows not yet seen in the feed.
    pub waiting: Vec<String>,
    /// When its last row is released, ms (0 when failed).
    pub release_at: u64,
    /// Its state.
    pub state: DeliveryState,
    /// For a failed one: whether sending it again can succeed.
    #[serde(default)]
    pub retryable: bool,
}

/// The reader's state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Inbox {
    /// The last feed number scanned.
    pub cursor: u64,
    /// Our frames of messages not yet whole.
    pub frames: Vec<Frame>,
    /// Messages received, in order.
    pub messages: Vec<Delivered>,
    /// The witness head held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<Pinned>,
    /// Messages sent, with their delivery states.
    #[serde(default)]
    pub outbox: Vec<Outgoing>,
}

impl Inbox {
    /// Scans `rows` (feed number and row, in feed order, after the
    /// cursor) with `recipient`'s keys: ours are opened, frames collected
    /// until whole; the cursor moves past every row. The messages
    /// completed.
    pub fn take(
        &mut self,
        recipient: &Recipient,
        rows: &[(u64, Row)],
        now_ms: u64,
    ) -> Vec<Delivered> {
        let mut frames = Reassembler::default();
        for f in self.frames.drain(..) {
            let _ = frames.push(f);
        }
        let mut held: Vec<Frame> = Vec::new();
        let mut done = Vec::new();
        let from = self.cursor;
        for (seq, row) in rows.iter().filter(|(s, _)| *s > from) {
            self.cursor = *seq;
            self.mark_seen(&row.ephemeral_pub_key);
            let Some(plaintext) = recipient.open(row) else {
                continue;
            };
            let text = match Frame::parse(&plaintext) {
                Some(frame) => match frames.push(frame.clone()) {
                    Ok(Some(whole)) => {
                        held.retain(|f| f.cid != frame.cid);
                        whole
                    }
                    Ok(None) => {
                        held.push(frame);
                        continue;
                    }
                    Err(_) => continue,
                },
                None => plaintext,
            };
            done.push(Delivered {
                seq: *seq,
                text,
                received_ms: now_ms,
            });
        }
        self.frames.extend(held);
        let keep = MAX_PENDING * crate::frames::MAX_PARTS;
        if self.frames.len() > keep {
            self.frames.drain(..self.frames.len() - keep);
        }
        self.messages.extend(done.iter().cloned());
        done
    }

    /// A row of ours appeared in the feed: a pending message whose rows
    /// have all appeared is sent.
    fn mark_seen(&mut self, handle: &str) {
        for out in self
            .outbox
            .iter_mut()
            .filter(|o| o.state == DeliveryState::Pending)
        {
            let before = out.waiting.len();
            out.waiting.retain(|h| h != handle);
            if out.waiting.is_empty() && before > 0 {
                out.state = DeliveryState::Sent;
            }
        }
    }

    /// Checks the server's signed head `note` (by `key`) against the head
    /// held: the first one is pinned; a later one must be signed by the
    /// pinned key under the same origin, no smaller, and — `proof` being
    /// the server's consistency proof from the held size — extend it.
    /// On success the new head is held.
    pub fn check_head(
        &mut self,
        note: &str,
        key: &VerifyingKey,
        proof: &[u8],
    ) -> Result<Checkpoint, SealError> {
        let key_b64 =
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, key.as_bytes());
        let held_key = self.head.as_ref().map(|h| h.key.clone());
        if held_key.as_ref().is_some_and(|k| *k != key_b64) {
            return Err(SealError::Witness("the witness key changed"));
        }
        let cp = Checkpoint::verify(note, key)?;
        if let Some(held) = &self.head {
            let root: [u8; 32] = hex::decode(&held.root)
                .ok()
                .and_then(|r| r.try_into().ok())
                .ok_or(SealError::Witness("the held root is not 32 bytes"))?;
            if cp.origin != held.origin || cp.size < held.size {
                return Err(SealError::Witness(
                    "the head is not a later head of the same log",
                ));
            }
            if held.size > 0 {
                verify_consistency(&root, held.size, &cp.root, cp.size, proof)?;
            }
        }
        self.head = Some(Pinned {
            key: key_b64,
            origin: cp.origin.clone(),
            size: cp.size,
            root: hex::encode(cp.root),
        });
        Ok(cp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        message::seal,
        witness::{binding_hash, Log, SigningKey},
    };

    #[test]
    fn a_long_message_split_across_two_scans_arrives_once() {
        let me = Recipient::generate();
        let rows = seal(&me.mailbox(), &"z".repeat(5_000), 7).unwrap();
        assert!(rows.len() >= 3);
        let numbered: Vec<(u64, Row)> = rows
            .into_iter()
            .enumerate()
            .map(|(i, r)| (i as u64 + 1, r))
            .collect();
        let mut inbox = Inbox::default();
        assert!(inbox.take(&me, &numbered[..2], 1).is_empty());
        assert_eq!((inbox.cursor, inbox.frames.len()), (2, 2));
        let stored: Inbox = serde_json::from_str(&serde_json::to_string(&inbox).unwrap()).unwrap();
        let mut inbox = stored;
        let got = inbox.take(&me, &numbered, 2);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].text, "z".repeat(5_000));
        assert!(inbox.frames.is_empty());
        assert!(
            inbox.take(&me, &numbered, 3).is_empty(),
            "rows behind the cursor are not read again"
        );
    }

    #[test]
    fn a_sent_message_is_pending_until_every_row_is_in_the_feed() {
        let rows = seal(&Recipient::generate().mailbox(), &"q".repeat(3_000), 1).unwrap();
        let mut inbox = Inbox::default();
        inbox.outbox.push(Outgoing {
            c: None,
            to: "0xb0b".into(),
            waiting: rows.iter().map(|r| r.ephemeral_pub_key.clone()).collect(),
            release_at: 60_000,
            state: DeliveryState::Pending,
            retryable: false,
        });
        let me = Recipient::generate();
        let numbered: Vec<(u64, Row)> = rows
            .into_iter()
            .enumerate()
            .map(|(i, r)| (i as u64 + 1, r))
            .collect();
        inbox.take(&me, &numbered[..1], 0);
        assert_eq!(inbox.outbox[0].state, DeliveryState::Pending);
        inbox.take(&me, &numbered, 0);
        assert_eq!(inbox.outbox[0].state, DeliveryState::Sent);
        assert!(inbox.outbox[0].waiting.is_empty());
    }

    fn note(log: &Log, key: &SigningKey) -> String {
        Checkpoint {
            origin: "o".into(),
            size: log.len(),
            root: log.merkle_root(),
            extensions: vec![],
        }
        .sign(key)
    }

    #[test]
    fn a_held_head_accepts_only_extensions_signed_by_its_key() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let mut log = Log::default();
        for i in 0..4 {
            log.append(binding_hash(&format!("e{i}")), 0);
        }
        let mut inbox = Inbox::default();
        inbox
            .check_head(&note(&log, &key), &key.verifying_key(), &[])
            .unwrap();
        for i in 4..9 {
            log.append(binding_hash(&format!("e{i}")), 0);
        }
        let proof = log.prove_consistency(4).unwrap();
        let mut fork = Log::default();
        for i in 0..9 {
            fork.append(binding_hash(&format!("f{i}")), 0);
        }
        let mut forked = inbox.clone();
        assert!(forked
            .check_head(
                &note(&fork, &key),
                &key.verifying_key(),
                &fork.prove_consistency(4).unwrap()
            )
            .is_err());
        let other = SigningKey::from_bytes(&[4; 32]);
        assert!(inbox
            .clone()
            .check_head(&note(&log, &other), &other.verifying_key(), &proof)
            .is_err());
        inbox
            .check_head(&note(&log, &key), &key.verifying_key(), &proof)
            .unwrap();
        assert_eq!(inbox.head.as_ref().unwrap().size, 9);
    }
}
