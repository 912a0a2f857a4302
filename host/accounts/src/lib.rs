//! Accounts: developer keys ([`keys`]: issue, tag, usage) and
//! policy-gated agent sessions ([`sessions`]). Typed services over the
//! store traits; the HTTP adapters live in `relay-api`.

pub mod keys;
pub mod sessions;
