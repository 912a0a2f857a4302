//! What can go wrong sealing, opening or parsing.

/// A sealed-messaging failure. None carries key material.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SealError {
    /// A key's bytes are not a key of that kind.
    #[error("invalid {0}")]
    InvalidKey(&'static str),
    /// The meta-address is not `st:eth:0x` and two 33-byte compressed
    /// secp256k1 points.
    #[error("invalid stealth meta-address: {0}")]
    InvalidMetaAddress(&'static str),
    /// A plaintext does not fit the largest bucket.
    #[error("inner of {len} bytes exceeds {max}; send it as frames")]
    TooLarge {
        /// The inner's length.
        len: usize,
        /// The most one sealed message carries.
        max: usize,
    },
    /// An inner too long even for [`crate::frames::MAX_PARTS`] frames.
    #[error("inner of {len} bytes needs more than {max_parts} frames")]
    TooManyParts {
        /// The inner's length.
        len: usize,
        /// The frame limit.
        max_parts: usize,
    },
    /// Sealing failed inside HPKE (an invalid recipient key).
    #[error("sealing failed")]
    Seal,
    /// The envelope does not open with this key (not ours, or tampered).
    #[error("does not open with this key")]
    Open,
    /// The opened plaintext is not a padded bucket.
    #[error("malformed bucket: {0}")]
    Bucket(&'static str),
    /// The text is not an `nf2` inner.
    #[error("not an nf2 inner: {0}")]
    Inner(&'static str),
    /// A frame breaks the v4 rules.
    #[error("bad frame: {0}")]
    Frame(&'static str),
    /// A row's fields are malformed.
    #[error("bad row: {0}")]
    Row(&'static str),
    /// A witness entry, proof or checkpoint does not verify.
    #[error("witness: {0}")]
    Witness(&'static str),
}
