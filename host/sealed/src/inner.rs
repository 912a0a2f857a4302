//! The inner format (spec §4.10 rules 4–5): `␞nf2␞{meta}␞text`, the record
//! separator U+241E, the literal `nf2`, a JSON object of meta keys, the
//! text.
//!
//! Reading never fails on meta: an unknown key is ignored, and so is a
//! known key whose value breaks its rule (a `c` that is not eight base-36
//! characters, an `rv` that is not 64 hex digits, a value of the wrong
//! shape) — the message still reads, without that key.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::SealError;

/// The separator, U+241E (SYMBOL FOR RECORD SEPARATOR).
pub const SEP: char = '\u{241E}';
/// The format's tag.
pub const TAG: &str = "nf2";

/// A reply (`r`): the quoted text `t`, who wrote it `w`, its client id `c`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// The quoted text.
    pub t: String,
    /// Who wrote the quoted message.
    pub w: String,
    /// The quoted message's client id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<String>,
}

/// A reaction (`x`) to message `c` with `e`; `u: 1` undoes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reaction {
    /// The message reacted to.
    pub c: String,
    /// The reaction.
    pub e: String,
    /// 1 to undo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u: Option<u8>,
}

/// An edit (`e`) of message `c` to the text `t`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// The message edited.
    pub c: String,
    /// Its new text.
    pub t: String,
}

/// A delete (`z`) of message `c`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delete {
    /// The message deleted.
    pub c: String,
}

/// A group (`g`): its id, name and members (one sealed copy per member).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// The group's id.
    pub id: String,
    /// Its name.
    pub n: String,
    /// Its members (addresses or names).
    pub m: Vec<String>,
}

/// A voice note (`vn`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoiceNote {
    /// The encoding's version.
    pub v: u32,
    /// Duration, ms.
    pub d: u64,
    /// The codec.
    pub c: String,
    /// The audio, base64.
    pub a: String,
}

/// The meta keys. Absent keys are `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Meta {
    /// The self-declared sender (only a signature proves it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f: Option<String>,
    /// The client message id: eight base-36 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c: Option<String>,
    /// A reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r: Option<Reply>,
    /// A reaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<Reaction>,
    /// Disappearing: the time to live, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d: Option<u64>,
    /// An edit (applies only to the original sender's message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e: Option<Edit>,
    /// A delete (applies only to the original sender's message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub z: Option<Delete>,
    /// A group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub g: Option<Group>,
    /// A voice note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vn: Option<VoiceNote>,
    /// The reply seed: 64 hex digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rv: Option<String>,
}

impl Meta {
    /// The known keys of `map`, each kept only if it follows its rule.
    fn from_map(map: &Map<String, Value>) -> Self {
        Meta {
            f: known(map, "f"),
            c: known(map, "c").filter(|c: &String| is_client_id(c)),
            r: known(map, "r"),
            x: known(map, "x"),
            d: known(map, "d"),
            e: known(map, "e"),
            z: known(map, "z"),
            g: known(map, "g"),
            vn: known(map, "vn"),
            rv: known(map, "rv")
                .filter(|rv: &String| rv.len() == 64 && rv.bytes().all(|b| b.is_ascii_hexdigit())),
        }
    }
}

fn known<T: DeserializeOwned>(map: &Map<String, Value>, key: &str) -> Option<T> {
    map.get(key)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// Whether `c` is a client message id: eight characters of `0-9a-z`.
pub fn is_client_id(c: &str) -> bool {
    c.len() == 8
        && c.bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

/// A fresh client message id.
pub fn new_client_id() -> String {
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    (0..8)
        .map(|_| char::from(ALPHABET[usize::from(rand::random::<u8>() % 36)]))
        .collect()
}

/// One inner: meta and text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inner {
    /// The meta keys.
    pub meta: Meta,
    /// The text.
    pub text: String,
}

impl Inner {
    /// A plain text message with a fresh client id.
    pub fn text(text: impl Into<String>) -> Self {
        Inner {
            meta: Meta {
                c: Some(new_client_id()),
                ..Meta::default()
            },
            text: text.into(),
        }
    }

    /// The wire form, `␞nf2␞{meta}␞text`.
    pub fn encode(&self) -> String {
        let meta = serde_json::to_string(&self.meta).unwrap_or_else(|_| "{}".into());
        format!("{SEP}{TAG}{SEP}{meta}{SEP}{}", self.text)
    }

    /// Reads the wire form. Fails only when the frame of the format is
    /// missing (no `␞nf2␞`, no JSON object, no separator before the text);
    /// meta never makes it fail.
    pub fn decode(wire: &str) -> Result<Self, SealError> {
        let (map, text) = split::<Map<String, Value>>(wire)?;
        Ok(Inner {
            meta: Meta::from_map(&map),
            text: text.to_string(),
        })
    }
}

/// An inner's wire form cut into its meta object (read as `T`) and text.
pub(crate) fn split<T: DeserializeOwned>(wire: &str) -> Result<(T, &str), SealError> {
    let rest = wire
        .strip_prefix(SEP)
        .and_then(|r| r.strip_prefix(TAG))
        .and_then(|r| r.strip_prefix(SEP))
        .ok_or(SealError::Inner("does not start with ␞nf2␞"))?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
    let Some(Ok(meta)) = values.next() else {
        return Err(SealError::Inner("meta is not a JSON object"));
    };
    let text = rest[values.byte_offset()..]
        .strip_prefix(SEP)
        .ok_or(SealError::Inner("no ␞ between meta and text"))?;
    Ok((meta, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inner_round_trips_with_every_meta_key() {
        let inner = Inner {
            meta: Meta {
                f: Some("0xabc".into()),
                c: Some("k3j9x0aa".into()),
                r: Some(Reply {
                    t: "quoted".into(),
                    w: "0xdef".into(),
                    c: Some("aaaaaaaa".into()),
                }),
                x: Some(Reaction {
                    c: "bbbbbbbb".into(),
                    e: "👍".into(),
                    u: Some(1),
                }),
                d: Some(60_000),
                e: Some(Edit {
                    c: "cccccccc".into(),
                    t: "fixed".into(),
                }),
                z: Some(Delete {
                    c: "dddddddd".into(),
                }),
                g: Some(Group {
                    id: "g1".into(),
                    n: "team".into(),
                    m: vec!["0x1".into(), "0x2".into()],
                }),
                vn: Some(VoiceNote {
                    v: 1,
                    d: 1500,
                    c: "opus".into(),
                    a: "AAAA".into(),
                }),
                rv: Some("ab".repeat(32)),
            },
            text: "hello ␞ world".into(),
        };
        let wire = inner.encode();
        assert!(wire.starts_with("␞nf2␞{"), "{wire}");
        assert_eq!(Inner::decode(&wire).expect("decode"), inner);
    }

    #[test]
    fn unknown_keys_and_broken_known_keys_are_ignored_never_fatal() {
        let wire = "␞nf2␞{\"c\":\"NOT-OK\",\"rv\":\"xyz\",\"d\":\"soon\",\"future\":{\"a\":[1]},\"f\":\"0xabc\",\"x\":{\"c\":1}}␞hi";
        let inner = Inner::decode(wire).expect("decode");
        assert_eq!(inner.text, "hi");
        assert_eq!(
            inner.meta,
            Meta {
                f: Some("0xabc".into()),
                ..Meta::default()
            }
        );
    }

    #[test]
    fn a_separator_inside_meta_strings_does_not_split_the_inner() {
        let wire = "␞nf2␞{\"f\":\"a␞b\"}␞text";
        let inner = Inner::decode(wire).expect("decode");
        assert_eq!(inner.meta.f.as_deref(), Some("a␞b"));
        assert_eq!(inner.text, "text");
    }

    #[test]
    fn what_is_not_an_nf2_inner_is_named() {
        for (wire, why) in [
            ("hello", "does not start with ␞nf2␞"),
            ("␞nf1␞{}␞x", "does not start with ␞nf2␞"),
            ("␞nf2␞[1]␞x", "meta is not a JSON object"),
            ("␞nf2␞{}x", "no ␞ between meta and text"),
        ] {
            assert_eq!(Inner::decode(wire), Err(SealError::Inner(why)), "{wire}");
        }
    }

    #[test]
    fn client_ids_are_eight_base36_characters() {
        for _ in 0..100 {
            assert!(is_client_id(&new_client_id()));
        }
        assert!(!is_client_id("ABCDEFGH"));
        assert!(!is_client_id("abc"));
    }
}
