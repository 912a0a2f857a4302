//! Fixed sizes (spec §8.2): every inner request is padded to a multiple of
//! 16,384 bytes and every inner response to a multiple of 8,192, so the
//! bytes on the wire say nothing of what was asked or answered beyond a
//! size class. BHTTP's padding (RFC 9292 §3.8) is zero bytes after a
//! known-length message; the `bhttp` crate reads past it but never writes
//! it, so the lane writes it here, on both sides.

/// The size every inner request is padded to (a multiple of it when
/// larger).
pub const REQUEST_FLOOR: usize = 16_384;
/// The size every inner response is padded to (a multiple of it when
/// larger).
pub const RESPONSE_FLOOR: usize = 8_192;

/// `message` padded with zeros to the next multiple of `floor` (at least
/// one `floor`).
pub fn pad(mut message: Vec<u8>, floor: usize) -> Vec<u8> {
    message.resize(padded_len(message.len(), floor), 0);
    message
}

/// The length a message of `len` bytes is padded to.
pub fn padded_len(len: usize, floor: usize) -> usize {
    len.div_ceil(floor).max(1) * floor
}

/// Whether `len` is a padded length.
pub fn is_padded(len: usize, floor: usize) -> bool {
    len > 0 && len.is_multiple_of(floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_to_the_floor_and_its_multiples() {
        assert_eq!(pad(vec![1; 10], RESPONSE_FLOOR).len(), 8_192);
        assert_eq!(pad(Vec::new(), RESPONSE_FLOOR).len(), 8_192);
        assert_eq!(pad(vec![1; 8_192], RESPONSE_FLOOR).len(), 8_192);
        assert_eq!(pad(vec![1; 8_193], RESPONSE_FLOOR).len(), 16_384);
        let p = pad(vec![7; 3], REQUEST_FLOOR);
        assert_eq!(
            (&p[..3], p[3..].iter().all(|b| *b == 0)),
            (&[7u8; 3][..], true)
        );
        assert!(is_padded(32_768, REQUEST_FLOOR) && !is_padded(16_385, REQUEST_FLOOR));
    }
}
