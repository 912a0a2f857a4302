//! Retention (spec §8.2): a settled route's counterparty addresses become
//! keyed tags after `retention.after_days` (30). A tag is
//! `tag_` + the first 20 bytes of HMAC-SHA256(key, address) in hex, the
//! address lower-cased when it is a 0x address; the key comes from the
//! host's environment (`RELAY_RETENTION_SECRET`). The same address always
//! gives the same tag, so spend statements still group an address's old
//! routes — the host recomputes the tag of the address asked about — while
//! the store no longer holds the address itself.
//!
//! [`scrub`] is what a route keeps: sender and recipient as tags, and
//! nothing that names or recovers to an address — the user's Permit2 or
//! router signature (a signature recovers its signer) and the plan (its
//! payouts and calldata name recipients) are dropped. The store blanks the
//! route's journal payloads, outbox payloads and idempotent response the
//! same way ([`relay_store::Store::scrub_route`]).

use hmac::{Hmac, Mac};
use relay_plugin_api::ExecutionPlan;
use relay_types::route::RouteRecord;
use sha2::Sha256;

/// The prefix of every tag.
pub const TAG_PREFIX: &str = "tag_";

/// Turns addresses into tags under one key.
#[derive(Clone)]
pub struct Tagger {
    key: Vec<u8>,
}

impl std::fmt::Debug for Tagger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tagger(..)")
    }
}

impl Tagger {
    /// A tagger under `key`.
    pub fn new(key: &[u8]) -> Self {
        Tagger { key: key.to_vec() }
    }

    /// The tag of `address` (a tag stays itself; empty stays empty).
    pub fn tag(&self, address: &str) -> String {
        if address.is_empty() || is_tag(address) {
            return address.to_string();
        }
        let normal = if address.starts_with("0x") || address.starts_with("0X") {
            address.to_ascii_lowercase()
        } else {
            address.to_string()
        };
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(normal.as_bytes());
        let digest = mac.finalize().into_bytes();
        format!("{TAG_PREFIX}{}", hex::encode(&digest[..20]))
    }

    /// Whether `stored` (a route's sender: an address or a tag) is
    /// `address`.
    pub fn matches(&self, stored: &str, address: &str) -> bool {
        if is_tag(stored) {
            stored == self.tag(address)
        } else {
            stored.eq_ignore_ascii_case(address)
        }
    }
}

/// Whether `s` is a tag.
pub fn is_tag(s: &str) -> bool {
    s.starts_with(TAG_PREFIX)
}

/// Routes scrubbed per store round trip.
const BATCH: u32 = 200;

/// Scrubs every route settled more than `after_ms` before `now_ms` (the
/// retention job's tick; the clock is the caller's, so tests advance it).
/// Returns how many routes were scrubbed. A route that moved on between
/// read and write is left for the next tick.
pub async fn sweep(
    store: &relay_store::Store,
    t: &Tagger,
    now_ms: u64,
    after_ms: u64,
) -> Result<usize, relay_store::StoreError> {
    let before = now_ms.saturating_sub(after_ms);
    let mut total = 0;
    loop {
        let due = store.routes_to_tag(before, BATCH).await?;
        let mut done = 0;
        for (r, version) in &due {
            if store.scrub_route(&scrub(r, t), *version).await? {
                done += 1;
            }
        }
        total += done;
        if due.len() < BATCH as usize || done == 0 {
            return Ok(total);
        }
    }
}

/// What `r` keeps once its retention period has passed.
pub fn scrub(r: &RouteRecord, t: &Tagger) -> RouteRecord {
    scrub_with(r, |who| t.tag(who))
}

/// `r` without what names or recovers to an address, its counterparties
/// rewritten by `counterparty`.
pub fn scrub_with(r: &RouteRecord, counterparty: impl Fn(&str) -> String) -> RouteRecord {
    RouteRecord {
        sender: counterparty(&r.sender),
        recipient: counterparty(&r.recipient),
        permit: None,
        router: None,
        plan: ExecutionPlan::default(),
        ..r.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_one_tag_under_one_key_and_none_of_the_address_left() {
        let t = Tagger::new(b"k1");
        let a = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
        let tag = t.tag(a);
        assert_eq!(tag, t.tag(&a.to_lowercase()));
        assert!(tag.starts_with(TAG_PREFIX) && tag.len() == 4 + 40);
        assert!(!tag.contains(&a[2..].to_lowercase()));
        assert_ne!(tag, Tagger::new(b"k2").tag(a));
        assert_eq!(t.tag(&tag), tag);
        assert!(t.matches(&tag, a) && t.matches(a, &a.to_lowercase()));
        assert!(!t.matches(&tag, "0x0000000000000000000000000000000000000001"));
    }

    #[test]
    fn a_scrubbed_route_names_no_address() {
        let t = Tagger::new(b"k");
        let r = crate::outcome::tests_support::route();
        let s = scrub(&r, &t);
        let text = serde_json::to_string(&s).unwrap().to_lowercase();
        assert!(!text.contains(&r.sender[2..].to_lowercase()), "{text}");
        assert_eq!(s.sender, t.tag(&r.sender));
        assert_eq!((s.amount, s.status), (r.amount, r.status));
    }
}
