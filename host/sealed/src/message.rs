//! The whole path: an inner sealed to a mailbox becomes rows of exactly the
//! three fields the server stores; a recipient scans rows with its viewing
//! key, opens what is theirs, and reassembles frames.
//!
//! Each row has its own one-time handle (frames of one inner too, so they
//! cannot be linked by handle), and the envelope authenticates the row's
//! handle as associated data: a `ct` moved under another handle does not
//! open.

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use serde::{Deserialize, Serialize};

use crate::{
    bucket, envelope,
    frames::{self, Frame, Reassembler},
    inner::Inner,
    stealth::{self, MetaAddress},
    SealError,
};

/// The length of a row's `ct` for each bucket.
pub const CT_LENS: [usize; 2] = [
    envelope::ENCAPPED_LEN + bucket::SMALL + envelope::TAG_LEN,
    envelope::ENCAPPED_LEN + bucket::LARGE + envelope::TAG_LEN,
];

/// One stored message: exactly what the server keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The handle's ephemeral key `R`, `0x` and 33 bytes in hex.
    pub ephemeral_pub_key: String,
    /// The view tag, `0x` and one byte in hex.
    pub view_tag: String,
    /// The envelope, base64 (1,648 or 3,184 bytes).
    pub ct: String,
}

/// A row's fields, decoded and checked.
pub struct RowBytes {
    /// `R`, compressed.
    pub ephemeral_public: [u8; 33],
    /// The view tag.
    pub view_tag: u8,
    /// The envelope.
    pub ct: Vec<u8>,
}

impl Row {
    /// Decodes and checks the three fields: a compressed secp256k1 point, a
    /// one-byte tag, an envelope of one of the two bucket sizes. The server
    /// refuses a row this refuses.
    pub fn decode(&self) -> Result<RowBytes, SealError> {
        let point = hex_field(&self.ephemeral_pub_key, "ephemeralPubKey is not 0x and hex")?;
        let ephemeral_public: [u8; 33] = point
            .try_into()
            .map_err(|_| SealError::Row("ephemeralPubKey is not 33 bytes"))?;
        k256::PublicKey::from_sec1_bytes(&ephemeral_public)
            .map_err(|_| SealError::Row("ephemeralPubKey is not a secp256k1 point"))?;
        let tag = hex_field(&self.view_tag, "viewTag is not 0x and hex")?;
        let [view_tag] = tag[..] else {
            return Err(SealError::Row("viewTag is not one byte"));
        };
        let ct = B64
            .decode(&self.ct)
            .map_err(|_| SealError::Row("ct is not base64"))?;
        if !CT_LENS.contains(&ct.len()) {
            return Err(SealError::Row("ct is not 1648 or 3184 bytes"));
        }
        Ok(RowBytes {
            ephemeral_public,
            view_tag,
            ct,
        })
    }
}

fn hex_field(s: &str, why: &'static str) -> Result<Vec<u8>, SealError> {
    s.strip_prefix("0x")
        .and_then(|h| hex::decode(h).ok())
        .ok_or(SealError::Row(why))
}

/// The associated data of a row's envelope: its handle (a domain string,
/// `R`, the view tag).
pub fn row_aad(ephemeral_public: &[u8; 33], view_tag: u8) -> Vec<u8> {
    let mut aad = b"relay/messages/v2/row".to_vec();
    aad.extend_from_slice(ephemeral_public);
    aad.push(view_tag);
    aad
}

/// A recipient as senders see it: the mailbox's meta-address and KEM key.
#[derive(Clone, Debug)]
pub struct Mailbox {
    /// Where handles are derived from.
    pub meta: MetaAddress,
    /// Who envelopes are sealed to.
    pub kem: envelope::PublicKey,
}

/// Seals `inner` (any text: an nf2 inner, or anything else) to `mailbox`:
/// one row, or one row per frame when it is longer than one message holds.
/// `ts` stamps the frames.
pub fn seal(mailbox: &Mailbox, inner: &str, ts: u64) -> Result<Vec<Row>, SealError> {
    let plaintexts = if bucket::size_for(inner.len()).is_some() {
        vec![inner.to_string()]
    } else {
        frames::split(inner, ts)?
    };
    plaintexts
        .iter()
        .map(|p| seal_one(mailbox, p.as_bytes()))
        .collect()
}

/// Seals `inner` for a group (an inner whose meta carries `g`): one sealed
/// copy per member, each row with its own handle, the rows shuffled so
/// their order does not tell whose copy is whose.
pub fn seal_group(members: &[Mailbox], inner: &str, ts: u64) -> Result<Vec<Row>, SealError> {
    use rand::seq::SliceRandom as _;
    let mut rows = Vec::new();
    for member in members {
        rows.extend(seal(member, inner, ts)?);
    }
    rows.shuffle(&mut rand::rng());
    Ok(rows)
}

fn seal_one(mailbox: &Mailbox, plaintext: &[u8]) -> Result<Row, SealError> {
    let handle = stealth::new_handle(&mailbox.meta);
    let padded = bucket::pad(plaintext)?;
    let ct = envelope::seal(
        &mailbox.kem,
        &row_aad(&handle.ephemeral_public, handle.view_tag),
        &padded,
    )?;
    Ok(Row {
        ephemeral_pub_key: format!("0x{}", hex::encode(handle.ephemeral_public)),
        view_tag: format!("0x{:02x}", handle.view_tag),
        ct: B64.encode(ct),
    })
}

/// A recipient's secrets: the stealth keys and the KEM key.
#[derive(Clone, Debug)]
pub struct Recipient {
    /// Spending and viewing keys.
    pub stealth: stealth::Keys,
    /// The X-Wing secret key.
    pub kem: envelope::SecretKey,
}

impl Recipient {
    /// Fresh keys.
    pub fn generate() -> Self {
        Recipient {
            stealth: stealth::Keys::generate(),
            kem: envelope::SecretKey::generate(),
        }
    }

    /// What senders need: the mailbox.
    pub fn mailbox(&self) -> Mailbox {
        Mailbox {
            meta: self.stealth.meta_address(),
            kem: self.kem.public_key(),
        }
    }

    /// The plaintext of `row` if it is ours: `None` when the view tag
    /// differs (255 rows in 256, no decryption tried) or the envelope does
    /// not open with our key.
    pub fn open(&self, row: &Row) -> Option<String> {
        let bytes = row.decode().ok()?;
        self.stealth
            .check(&bytes.ephemeral_public, bytes.view_tag)?;
        let padded = envelope::open(
            &self.kem,
            &row_aad(&bytes.ephemeral_public, bytes.view_tag),
            &bytes.ct,
        )
        .ok()?;
        let inner = bucket::unpad(&padded).ok()?;
        String::from_utf8(inner.to_vec()).ok()
    }
}

/// What a scan found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Received {
    /// An nf2 inner (whole, or reassembled from frames).
    Inner(Box<Inner>),
    /// A plaintext that is neither an nf2 inner nor a frame.
    Other(String),
}

/// Scans rows for one recipient, holding partial frames across calls.
pub struct Reader {
    recipient: Recipient,
    frames: Reassembler,
}

impl Reader {
    /// A reader for `recipient`.
    pub fn new(recipient: Recipient) -> Self {
        Reader {
            recipient,
            frames: Reassembler::default(),
        }
    }

    /// The messages in `rows` that are ours and whole (a framed inner once
    /// its last part has been scanned). Rows of others, decoys and broken
    /// frames are passed over.
    pub fn scan<'a>(&mut self, rows: impl IntoIterator<Item = &'a Row>) -> Vec<Received> {
        let mut found = Vec::new();
        for row in rows {
            let Some(plaintext) = self.recipient.open(row) else {
                continue;
            };
            let whole = match Frame::parse(&plaintext) {
                Some(frame) => match self.frames.push(frame) {
                    Ok(Some(whole)) => whole,
                    _ => continue,
                },
                None => plaintext,
            };
            found.push(match Inner::decode(&whole) {
                Ok(inner) => Received::Inner(Box::new(inner)),
                Err(_) => Received::Other(whole),
            });
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_and_a_long_note_reach_their_recipient_and_no_one_else() {
        let bob = Recipient::generate();
        let carol = Recipient::generate();
        let short = Inner::text("x".repeat(100));
        let long = Inner::text("y".repeat(60_000));
        let mut rows = seal(&bob.mailbox(), &short.encode(), 1).expect("short");
        assert_eq!(rows.len(), 1);
        let framed = seal(&bob.mailbox(), &long.encode(), 2).expect("long");
        assert_eq!(framed.len(), 43);
        rows.extend(framed);
        for row in &rows {
            let bytes = row.decode().expect("a valid row");
            assert!(CT_LENS.contains(&bytes.ct.len()));
        }
        let found = Reader::new(bob).scan(&rows);
        assert_eq!(
            found,
            vec![
                Received::Inner(Box::new(short)),
                Received::Inner(Box::new(long))
            ]
        );
        assert!(Reader::new(carol).scan(&rows).is_empty());
    }

    #[test]
    fn every_group_member_reads_its_own_copy() {
        use crate::inner::{Group, Meta};
        let members: Vec<Recipient> = (0..3).map(|_| Recipient::generate()).collect();
        let mailboxes: Vec<Mailbox> = members.iter().map(Recipient::mailbox).collect();
        let inner = Inner {
            meta: Meta {
                c: Some("gggggggg".into()),
                g: Some(Group {
                    id: "team".into(),
                    n: "Team".into(),
                    m: vec!["a".into(), "b".into(), "c".into()],
                }),
                ..Meta::default()
            },
            text: "to all".into(),
        };
        let rows = seal_group(&mailboxes, &inner.encode(), 1).expect("group");
        assert_eq!(rows.len(), 3);
        for member in members {
            let found = Reader::new(member).scan(&rows);
            assert_eq!(found, vec![Received::Inner(Box::new(inner.clone()))]);
        }
    }

    #[test]
    fn a_ct_moved_under_another_handle_does_not_open() {
        let bob = Recipient::generate();
        let a = seal(&bob.mailbox(), "one", 1).expect("a").remove(0);
        let b = seal(&bob.mailbox(), "two", 1).expect("b").remove(0);
        let swapped = Row {
            ct: b.ct.clone(),
            ..a.clone()
        };
        assert_eq!(bob.open(&a).as_deref(), Some("one"));
        assert_eq!(bob.open(&swapped), None);
    }

    #[test]
    fn malformed_rows_are_named() {
        let bob = Recipient::generate();
        let good = seal(&bob.mailbox(), "hi", 1).expect("row").remove(0);
        let cases = [
            (
                Row {
                    ephemeral_pub_key: "02ab".into(),
                    ..good.clone()
                },
                "ephemeralPubKey is not 0x and hex",
            ),
            (
                Row {
                    ephemeral_pub_key: format!("0x05{}", "11".repeat(32)),
                    ..good.clone()
                },
                "ephemeralPubKey is not a secp256k1 point",
            ),
            (
                Row {
                    view_tag: "0xabcd".into(),
                    ..good.clone()
                },
                "viewTag is not one byte",
            ),
            (
                Row {
                    ct: B64.encode([0; 100]),
                    ..good.clone()
                },
                "ct is not 1648 or 3184 bytes",
            ),
        ];
        for (row, why) in cases {
            assert_eq!(row.decode().err(), Some(SealError::Row(why)));
        }
    }
}
