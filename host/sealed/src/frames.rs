//! Long inners (spec §4.10 rule 2): an inner above [`MAX_INNER`] bytes
//! rides as `{v:4, cid, i, n, ts, p}` frames, each sealed on its own in the
//! 2048-byte bucket with its own one-time handle; the receiver reassembles
//! by `cid`. At most [`MAX_PARTS`] parts of [`PART_BYTES`] bytes (89,600
//! bytes, "about 90 KB"). A frame is a JSON object where an inner starts
//! with `␞nf2␞`, so readers that predate v4 pass over it.

use std::collections::{HashMap, VecDeque};

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use serde::{Deserialize, Serialize};

use crate::{bucket::MAX_INNER, SealError};

/// The frame format's version.
pub const VERSION: u8 = 4;
/// The most parts one inner is cut into.
pub const MAX_PARTS: usize = 64;
/// Bytes of the inner per part (base64 in `p`, the frame under
/// [`MAX_INNER`]).
pub const PART_BYTES: usize = 1400;
/// The longest inner frames carry.
pub const MAX_FRAMED: usize = MAX_PARTS * PART_BYTES;
/// Incomplete inners a [`Reassembler`] keeps before dropping the oldest.
pub const MAX_PENDING: usize = 256;

/// One frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// Always [`VERSION`].
    pub v: u8,
    /// The inner's id (16 hex digits, random).
    pub cid: String,
    /// This part's index, from 0.
    pub i: u16,
    /// The number of parts.
    pub n: u16,
    /// When the sender cut the inner, ms since the epoch.
    pub ts: u64,
    /// The part, base64.
    pub p: String,
}

impl Frame {
    /// `plaintext` as a v4 frame, if it is one (`None` for an nf2 inner or
    /// a frame of another version).
    pub fn parse(plaintext: &str) -> Option<Frame> {
        if !plaintext.starts_with('{') {
            return None;
        }
        serde_json::from_str::<Frame>(plaintext)
            .ok()
            .filter(|f| f.v == VERSION)
    }
}

/// Cuts `inner` (longer than one message holds) into frame plaintexts.
pub fn split(inner: &str, ts: u64) -> Result<Vec<String>, SealError> {
    let bytes = inner.as_bytes();
    if bytes.len() > MAX_FRAMED {
        return Err(SealError::TooManyParts {
            len: bytes.len(),
            max_parts: MAX_PARTS,
        });
    }
    let cid = hex::encode(rand::random::<[u8; 8]>());
    let parts: Vec<&[u8]> = bytes.chunks(PART_BYTES).collect();
    let n = parts.len() as u16;
    parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            let frame = Frame {
                v: VERSION,
                cid: cid.clone(),
                i: i as u16,
                n,
                ts,
                p: B64.encode(part),
            };
            let json = serde_json::to_string(&frame).map_err(|_| SealError::Frame("encoding"))?;
            debug_assert!(json.len() <= MAX_INNER);
            Ok(json)
        })
        .collect()
}

struct Pending {
    n: u16,
    ts: u64,
    parts: Vec<Option<Vec<u8>>>,
    have: usize,
}

/// Collects frames until an inner is whole. Bounded: at most
/// [`MAX_PENDING`] incomplete inners, the oldest dropped first.
#[derive(Default)]
pub struct Reassembler {
    pending: HashMap<String, Pending>,
    order: VecDeque<String>,
}

impl Reassembler {
    /// Adds `frame`; the whole inner once its last part arrives. A part
    /// seen twice is ignored; a frame that contradicts its inner's earlier
    /// frames (another `n` or `ts`), an index out of range, more than
    /// [`MAX_PARTS`] parts or a `p` that is not base64 is refused.
    pub fn push(&mut self, frame: Frame) -> Result<Option<String>, SealError> {
        let n = usize::from(frame.n);
        if n == 0 || n > MAX_PARTS || usize::from(frame.i) >= n {
            return Err(SealError::Frame("index or count out of range"));
        }
        if frame.cid.is_empty() || frame.cid.len() > 64 {
            return Err(SealError::Frame("cid"));
        }
        let part = B64
            .decode(&frame.p)
            .map_err(|_| SealError::Frame("p is not base64"))?;
        if part.len() > PART_BYTES {
            return Err(SealError::Frame("part too long"));
        }
        if !self.pending.contains_key(&frame.cid) {
            self.make_room();
            self.order.push_back(frame.cid.clone());
        }
        let pending = self
            .pending
            .entry(frame.cid.clone())
            .or_insert_with(|| Pending {
                n: frame.n,
                ts: frame.ts,
                parts: vec![None; n],
                have: 0,
            });
        if pending.n != frame.n || pending.ts != frame.ts {
            return Err(SealError::Frame("contradicts the inner's other frames"));
        }
        let slot = &mut pending.parts[usize::from(frame.i)];
        if slot.is_none() {
            *slot = Some(part);
            pending.have += 1;
        }
        if pending.have < n {
            return Ok(None);
        }
        let whole: Vec<u8> = self
            .pending
            .remove(&frame.cid)
            .map(|p| p.parts.into_iter().flatten().flatten().collect())
            .unwrap_or_default();
        self.order.retain(|c| c != &frame.cid);
        String::from_utf8(whole)
            .map(Some)
            .map_err(|_| SealError::Frame("reassembled inner is not UTF-8"))
    }

    /// Incomplete inners held.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    fn make_room(&mut self) {
        while self.pending.len() >= MAX_PENDING {
            match self.order.pop_front() {
                Some(oldest) => {
                    self.pending.remove(&oldest);
                }
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames_of(inner: &str) -> Vec<Frame> {
        split(inner, 7)
            .expect("split")
            .iter()
            .map(|s| Frame::parse(s).expect("a frame"))
            .collect()
    }

    #[test]
    fn a_long_inner_reassembles_in_any_order() {
        let inner = "ü".repeat(30_000); // 60,000 bytes
        let mut frames = frames_of(&inner);
        assert_eq!(frames.len(), 60_000usize.div_ceil(PART_BYTES));
        for f in split(&inner, 7).expect("split") {
            assert!(f.len() <= MAX_INNER, "{}", f.len());
        }
        frames.reverse();
        let mut r = Reassembler::default();
        let last = frames.pop().expect("one");
        for f in frames.iter().cloned().chain(frames.iter().take(1).cloned()) {
            assert_eq!(r.push(f).expect("part"), None);
        }
        assert_eq!(r.push(last).expect("last"), Some(inner));
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn the_limit_is_sixty_four_parts() {
        assert_eq!(split(&"a".repeat(MAX_FRAMED), 1).expect("max").len(), 64);
        assert_eq!(
            split(&"a".repeat(MAX_FRAMED + 1), 1),
            Err(SealError::TooManyParts {
                len: MAX_FRAMED + 1,
                max_parts: 64
            })
        );
    }

    #[test]
    fn contradicting_or_out_of_range_frames_are_refused() {
        let mut frames = frames_of(&"x".repeat(3000));
        let mut r = Reassembler::default();
        r.push(frames[0].clone()).expect("first");
        let mut other_n = frames[1].clone();
        other_n.n += 1;
        assert!(r.push(other_n).is_err());
        frames[1].i = 99;
        assert!(r.push(frames[1].clone()).is_err());
        let mut bad = frames[2].clone();
        bad.p = "!!".into();
        assert!(r.push(bad).is_err());
        assert_eq!(Frame::parse("␞nf2␞{}␞x"), None);
        assert_eq!(
            Frame::parse("{\"v\":5,\"cid\":\"a\",\"i\":0,\"n\":1,\"ts\":0,\"p\":\"\"}"),
            None
        );
    }

    #[test]
    fn pending_inners_are_bounded() {
        let mut r = Reassembler::default();
        for _ in 0..MAX_PENDING + 10 {
            let f = frames_of(&"y".repeat(2000)).remove(0);
            r.push(f).expect("part");
        }
        assert_eq!(r.pending(), MAX_PENDING);
    }
}
