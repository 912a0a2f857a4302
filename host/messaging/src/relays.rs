//! The relay directory (spec §4.10: `GET /api/relay/directory`, `POST
//! /api/relay/announce`): operators of oblivious relays announce a relay —
//! its URL, its public key, until when — signed with their Ed25519 key.
//! Every accepted announcement is appended to the witness log (kind
//! `relay`), so the directory, the latest unexpired announcement of each
//! announcer key, is the same for every reader and provable from the log.
//!
//! The text an announcer signs (Ed25519 over the UTF-8 bytes, lines
//! joined by `\n`, no final newline):
//!
//! ```text
//! relay/relay-directory/v1 announce
//! url: https://relay.example/ohttp
//! key: <the relay's public key, base64>
//! expires: 1767000000000
//! ts: 1764480000000
//! ```

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The longest time an announcement may run, ms (30 days).
pub const MAX_LIFETIME_MS: u64 = 30 * 86_400_000;
/// The longest relay URL.
pub const MAX_URL: usize = 256;
/// The largest relay key, bytes.
pub const MAX_KEY: usize = 2_048;

/// An announcement as the operator sends it (and as the log keeps it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Announcement {
    /// Where the relay listens (`https://`, or `http://` on loopback).
    pub url: String,
    /// The relay's public key (e.g. its OHTTP key configuration), base64.
    pub key: String,
    /// Until when the relay is offered, ms since the epoch.
    pub expires: u64,
    /// When it was signed, ms since the epoch.
    pub ts: u64,
    /// The announcer's Ed25519 public key, base64 (32 bytes).
    pub announcer: String,
    /// The announcer's Ed25519 signature of [`Announcement::text`], base64 (64 bytes).
    pub sig: String,
}

/// A listed relay: the announcement in effect and its witness entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelayListed {
    /// The announcement.
    #[serde(flatten)]
    #[schema(inline)]
    pub announcement: Announcement,
    /// Its witness entry.
    pub s: u64,
}

impl RelayListed {
    /// `a` at entry `s`.
    pub fn of(announcement: Announcement, s: u64) -> Self {
        RelayListed { announcement, s }
    }
}

/// Why an announcement is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AnnounceError {
    /// A field is malformed.
    #[error("{field}: {why}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        why: String,
    },
    /// `ts` is too far from the host's clock.
    #[error("ts: {ts} is more than {max_skew_ms} ms from the host's clock ({now_ms})")]
    Stale {
        /// The announcement's.
        ts: u64,
        /// The host's.
        now_ms: u64,
        /// The bound.
        max_skew_ms: u64,
    },
    /// `expires` is past, or too far ahead.
    #[error("expires: must be after now ({now_ms}) and at most 30 days ahead")]
    Expired {
        /// The host's clock.
        now_ms: u64,
    },
    /// The signature is not the announcer's.
    #[error("sig: not the announcer's Ed25519 signature of the announcement text")]
    Signature,
}

fn invalid(field: &'static str, why: &str) -> AnnounceError {
    AnnounceError::Invalid {
        field,
        why: why.into(),
    }
}

fn url_ok(url: &str) -> bool {
    let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"];
    let https = url.strip_prefix("https://").is_some_and(|rest| {
        let host = rest.split(['/', ':', '?', '#']).next().unwrap_or_default();
        !host.is_empty() && host.contains('.')
    });
    url.len() <= MAX_URL
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
        && (https || loopback.iter().any(|p| url.starts_with(p)))
}

impl Announcement {
    /// The text the announcer signs (module docs).
    pub fn text(&self) -> String {
        format!(
            "relay/relay-directory/v1 announce\nurl: {}\nkey: {}\nexpires: {}\nts: {}",
            self.url, self.key, self.expires, self.ts
        )
    }

    /// The log's body: its canonical JSON.
    pub fn body(&self) -> String {
        serde_json::to_string(self).expect("an announcement serializes")
    }

    /// Checks it at `now_ms`: fields well formed, `ts` within
    /// `max_skew_ms`, `expires` ahead and within 30 days, signed by its
    /// announcer.
    pub fn verify(&self, now_ms: u64, max_skew_ms: u64) -> Result<(), AnnounceError> {
        if !url_ok(&self.url) {
            return Err(invalid(
                "url",
                "an https:// URL (http:// only on loopback) of at most 256 characters",
            ));
        }
        match B64.decode(&self.key) {
            Ok(k) if !k.is_empty() && k.len() <= MAX_KEY => {}
            _ => return Err(invalid("key", "base64 of 1 to 2048 bytes")),
        }
        let announcer: [u8; 32] = B64
            .decode(&self.announcer)
            .ok()
            .and_then(|k| k.try_into().ok())
            .ok_or_else(|| invalid("announcer", "base64 of a 32-byte Ed25519 public key"))?;
        let announcer = VerifyingKey::from_bytes(&announcer)
            .map_err(|_| invalid("announcer", "not an Ed25519 public key"))?;
        let sig: [u8; 64] = B64
            .decode(&self.sig)
            .ok()
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| invalid("sig", "base64 of a 64-byte Ed25519 signature"))?;
        if now_ms.abs_diff(self.ts) > max_skew_ms {
            return Err(AnnounceError::Stale {
                ts: self.ts,
                now_ms,
                max_skew_ms,
            });
        }
        if self.expires <= now_ms || self.expires > now_ms.saturating_add(MAX_LIFETIME_MS) {
            return Err(AnnounceError::Expired { now_ms });
        }
        announcer
            .verify_strict(self.text().as_bytes(), &Signature::from_bytes(&sig))
            .map_err(|_| AnnounceError::Signature)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ed25519_dalek::{Signer as _, SigningKey};

    /// `url` announced by `key` at `ts`, for a day.
    pub(crate) fn announced(key: &SigningKey, url: &str, ts: u64) -> Announcement {
        announced_until(key, url, ts, ts + 86_400_000)
    }

    /// `url` announced by `key` at `ts`, until `expires`.
    pub(crate) fn announced_until(
        key: &SigningKey,
        url: &str,
        ts: u64,
        expires: u64,
    ) -> Announcement {
        let mut a = Announcement {
            url: url.into(),
            key: B64.encode([7u8; 41]),
            expires,
            ts,
            announcer: B64.encode(key.verifying_key().as_bytes()),
            sig: String::new(),
        };
        a.sig = B64.encode(key.sign(a.text().as_bytes()).to_bytes());
        a
    }

    #[test]
    fn a_signed_announcement_verifies_and_every_fault_is_named() {
        let key = SigningKey::from_bytes(&[5; 32]);
        let now = 1_764_480_000_000;
        let a = announced(&key, "https://relay.example/ohttp", now);
        a.verify(now, 300_000).unwrap();
        assert!(matches!(
            a.verify(now + 300_001, 300_000),
            Err(AnnounceError::Stale { .. })
        ));
        assert!(matches!(
            a.verify(now + 86_400_000, 300_000 + 86_400_000),
            Err(AnnounceError::Expired { .. })
        ));
        let mut moved = a.clone();
        moved.url = "https://evil.example/ohttp".into();
        assert_eq!(moved.verify(now, 300_000), Err(AnnounceError::Signature));
        let mut other = announced(&SigningKey::from_bytes(&[6; 32]), &a.url, now);
        other.announcer = a.announcer.clone();
        assert_eq!(other.verify(now, 300_000), Err(AnnounceError::Signature));
        for url in [
            "http://relay.example",
            "ftp://x.y",
            "https://",
            "https://nodot/x",
            "https://a.b/ c",
        ] {
            let bad = announced(&key, url, now);
            assert!(
                matches!(
                    bad.verify(now, 300_000),
                    Err(AnnounceError::Invalid { field: "url", .. })
                ),
                "{url}"
            );
        }
        announced(&key, "http://127.0.0.1:9000/relay", now)
            .verify(now, 300_000)
            .unwrap();
        let mut long = announced(&key, &a.url, now);
        long.expires = now + MAX_LIFETIME_MS + 1;
        assert!(matches!(
            long.verify(now, 300_000),
            Err(AnnounceError::Expired { .. })
        ));
    }
}
