//! Plaintext buckets (spec §4.10 rule 2, §8.2): every sealed plaintext is
//! exactly [`SMALL`] or [`LARGE`] bytes, so an envelope's size tells an
//! observer which of two buckets it is and nothing finer.
//!
//! Layout: the inner's length as two big-endian bytes, the inner, zeros to
//! the bucket's size. An inner of at most [`SMALL`] − 2 bytes takes the
//! small bucket; one of at most [`MAX_INNER`] bytes the large one; a longer
//! one is sent as frames ([`crate::frames`]).

use crate::SealError;

/// The small bucket, bytes.
pub const SMALL: usize = 512;
/// The large bucket, bytes.
pub const LARGE: usize = 2048;
/// The longest inner one message carries (spec: "inners above 1980 bytes
/// ride as frames").
pub const MAX_INNER: usize = 1980;
const PREFIX: usize = 2;

/// The bucket an inner of `len` bytes takes, if it fits one message.
pub fn size_for(len: usize) -> Option<usize> {
    if len + PREFIX <= SMALL {
        Some(SMALL)
    } else if len <= MAX_INNER {
        Some(LARGE)
    } else {
        None
    }
}

/// Pads `inner` into its bucket.
pub fn pad(inner: &[u8]) -> Result<Vec<u8>, SealError> {
    let size = size_for(inner.len()).ok_or(SealError::TooLarge {
        len: inner.len(),
        max: MAX_INNER,
    })?;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&(inner.len() as u16).to_be_bytes());
    out.extend_from_slice(inner);
    out.resize(size, 0);
    Ok(out)
}

/// The inner inside a padded bucket. Refuses a size that is not a bucket,
/// a length past the end, and padding that is not all zeros.
pub fn unpad(padded: &[u8]) -> Result<&[u8], SealError> {
    if padded.len() != SMALL && padded.len() != LARGE {
        return Err(SealError::Bucket("not 512 or 2048 bytes"));
    }
    let len = usize::from(u16::from_be_bytes([padded[0], padded[1]]));
    let max = if padded.len() == SMALL {
        SMALL - PREFIX
    } else {
        MAX_INNER
    };
    if len > max {
        return Err(SealError::Bucket("length past the bucket"));
    }
    let (inner, padding) = padded[PREFIX..].split_at(len);
    if padding.iter().any(|&b| b != 0) {
        return Err(SealError::Bucket("padding is not zeros"));
    }
    Ok(inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn inners_take_the_smallest_bucket_they_fit() {
        assert_eq!(pad(b"").expect("empty").len(), SMALL);
        assert_eq!(pad(&[7; 510]).expect("510").len(), SMALL);
        assert_eq!(pad(&[7; 511]).expect("511").len(), LARGE);
        assert_eq!(pad(&[7; MAX_INNER]).expect("max").len(), LARGE);
        assert_eq!(
            pad(&[7; MAX_INNER + 1]),
            Err(SealError::TooLarge {
                len: MAX_INNER + 1,
                max: MAX_INNER
            })
        );
    }

    #[test]
    fn malformed_buckets_are_refused() {
        assert!(unpad(&[0; 100]).is_err());
        let mut long = vec![0; SMALL];
        long[0] = 0x02; // 512 > 510
        assert!(unpad(&long).is_err());
        let mut dirty = pad(b"hi").expect("pad");
        dirty[SMALL - 1] = 1;
        assert!(unpad(&dirty).is_err());
        let mut large = vec![0; LARGE];
        large[..2].copy_from_slice(&(MAX_INNER as u16 + 1).to_be_bytes());
        assert!(unpad(&large).is_err());
    }

    proptest! {
        #[test]
        fn every_inner_that_fits_round_trips(inner in proptest::collection::vec(any::<u8>(), 0..=MAX_INNER)) {
            let padded = pad(&inner).expect("fits");
            prop_assert!(padded.len() == SMALL || padded.len() == LARGE);
            prop_assert_eq!(unpad(&padded).expect("unpad"), &inner[..]);
        }
    }
}
