//! The dashboard's login: a browser posts the owner token once and gets a
//! cookie that is **not** the token — when it was issued, when it expires
//! and a nonce, signed with HMAC-SHA256 under a **secret this host drew at
//! start** ([`LoginKeys::generate`]) and keeps in memory only: it is not
//! derived from the owner token or its hash (which sit in the environment
//! and the config tooling), never written to config, the store or a log.
//! So a cookie cannot be made from anything an operator's tooling holds,
//! and a restart (or a changed token) signs everyone out. Replicas do not
//! share the secret: a cookie signs in on the replica that issued it (route
//! `/admin` to one replica, or sign in again); a persisted secret would
//! let anyone who reads the store mint cookies, and the bearer token serves
//! scripts on every replica. The cookie is `HttpOnly`, `SameSite=Strict`
//! and scoped to `/admin`.
//!
//! **The server caps its age**: [`LoginKeys::verify`] refuses a cookie
//! whose signed lifetime is longer than the host's maximum (at most
//! [`MAX_SESSION_TTL_SECS`]), that was issued in the future, or that is
//! older than that maximum — whatever expiry the cookie or the browser
//! claims.
//!
//! Changes made through the cookie also need the CSRF token
//! ([`LoginKeys::csrf`]): an HMAC of the cookie value the page is given
//! when it is served and sends back as a header. API clients use
//! `Authorization: Bearer <owner token>` instead and need neither.
//!
//! **Sign-in back-off** ([`Backoff`]): an IP's first [`FREE_FAILURES`]
//! failed sign-ins in a row cost nothing (a typo); after each further one
//! that IP may not try again for 1 s, doubling per failure up to
//! [`MAX_BACKOFF_MS`]; a success clears it. An attempt during the back-off
//! is refused without checking the token.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::{collections::HashMap, hash::Hash, sync::Mutex};
use subtle::ConstantTimeEq;

/// The cookie's name.
pub const COOKIE: &str = "relay_admin";
/// The header a cookie-authenticated change carries its CSRF token in.
pub const CSRF_HEADER: &str = "x-relay-csrf";
/// The longest a login may last, whatever `[admin] session_ttl_secs` says
/// (24 h).
pub const MAX_SESSION_TTL_SECS: u64 = 24 * 3_600;
/// Failed sign-ins in a row an IP may make before it backs off.
pub const FREE_FAILURES: u32 = 2;
/// The longest back-off after failed sign-ins (15 min).
pub const MAX_BACKOFF_MS: u64 = 15 * 60_000;
/// Clients a [`Backoff`] remembers at most.
const BACKOFF_CLIENTS: usize = 10_000;

/// Signs and checks login cookies.
#[derive(Clone)]
pub struct LoginKeys {
    key: [u8; 32],
    max_age_ms: u64,
}

impl std::fmt::Debug for LoginKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoginKeys(..)")
    }
}

impl LoginKeys {
    /// Keys under a fresh random secret, for logins lasting at most
    /// `max_age_secs` (capped at [`MAX_SESSION_TTL_SECS`]).
    pub fn generate(max_age_secs: u64) -> Self {
        Self::new(rand::random(), max_age_secs)
    }

    /// Keys from a 32-byte secret, for logins lasting at most
    /// `max_age_secs` (capped at [`MAX_SESSION_TTL_SECS`]).
    pub fn new(key: [u8; 32], max_age_secs: u64) -> Self {
        LoginKeys {
            key,
            max_age_ms: max_age_secs.min(MAX_SESSION_TTL_SECS) * 1_000,
        }
    }

    /// How long a login lasts, seconds.
    pub fn max_age_secs(&self) -> u64 {
        self.max_age_ms / 1_000
    }

    fn mac(&self, label: &str, msg: &str) -> String {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        m.update(label.as_bytes());
        m.update(b"\0");
        m.update(msg.as_bytes());
        hex::encode(m.finalize().into_bytes())
    }

    /// A new cookie value issued at `now_ms`, lasting the keys' maximum
    /// age: `v2.<issued_ms>.<expires_ms>.<nonce>.<mac>`.
    pub fn issue(&self, now_ms: u64) -> String {
        let expires = now_ms + self.max_age_ms;
        let body = format!(
            "v2.{now_ms}.{expires}.{}",
            hex::encode(rand::random::<[u8; 16]>())
        );
        let mac = self.mac("session", &body);
        format!("{body}.{mac}")
    }

    /// When a cookie value expires, epoch ms (none: not a cookie's shape).
    pub fn expires_ms(value: &str) -> Option<u64> {
        value.split('.').nth(2)?.parse().ok()
    }

    /// Whether `value` is a cookie these keys signed that is live at
    /// `now_ms`: its signature holds (compared in constant time), it was
    /// not issued in the future, it has not expired, and neither its
    /// signed lifetime nor its age exceeds the keys' maximum.
    pub fn verify(&self, value: &str, now_ms: u64) -> bool {
        let Some((body, mac)) = value.rsplit_once('.') else {
            return false;
        };
        let mut parts = body.split('.');
        let (Some("v2"), Some(issued), Some(exp), Some(_nonce), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return false;
        };
        let (Ok(issued), Ok(exp)) = (issued.parse::<u64>(), exp.parse::<u64>()) else {
            return false;
        };
        let fresh = issued <= now_ms
            && now_ms < exp
            && exp.saturating_sub(issued) <= self.max_age_ms
            && now_ms - issued < self.max_age_ms;
        let expected = self.mac("session", body);
        let signed: bool = expected.as_bytes().ct_eq(mac.as_bytes()).into();
        signed && fresh
    }

    /// The CSRF token of a cookie value.
    pub fn csrf(&self, cookie: &str) -> String {
        self.mac("csrf", cookie)
    }

    /// Whether `sent` is the CSRF token of `cookie` (constant time).
    pub fn csrf_ok(&self, cookie: &str, sent: &str) -> bool {
        self.csrf(cookie).as_bytes().ct_eq(sent.as_bytes()).into()
    }
}

/// Failed sign-ins per client, and until when each must wait.
#[derive(Debug)]
pub struct Backoff<K> {
    clients: Mutex<HashMap<K, Failures>>,
}

impl<K> Default for Backoff<K> {
    fn default() -> Self {
        Backoff {
            clients: Mutex::new(HashMap::new()),
        }
    }
}

/// One client's failed sign-ins in a row and the end of its back-off.
#[derive(Clone, Copy, Debug)]
struct Failures {
    count: u32,
    until_ms: u64,
}

impl<K: Eq + Hash + Clone> Backoff<K> {
    /// How long `client` must still wait at `now_ms`, ms (none: it may try).
    pub fn wait(&self, client: &K, now_ms: u64) -> Option<u64> {
        let all = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        let f = all.get(client)?;
        (f.until_ms > now_ms).then(|| f.until_ms - now_ms)
    }

    /// Records a failed sign-in of `client` at `now_ms`; answers the
    /// back-off it now serves, ms (none for the first [`FREE_FAILURES`],
    /// then 1 s, doubling, at most [`MAX_BACKOFF_MS`]).
    pub fn failed(&self, client: &K, now_ms: u64) -> u64 {
        let mut all = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if all.len() >= BACKOFF_CLIENTS && !all.contains_key(client) {
            // forget clients whose back-off lapsed long ago, then anyone
            all.retain(|_, f| f.until_ms + MAX_BACKOFF_MS > now_ms);
            if all.len() >= BACKOFF_CLIENTS {
                all.clear();
            }
        }
        let f = all.entry(client.clone()).or_insert(Failures {
            count: 0,
            until_ms: 0,
        });
        f.count = f.count.saturating_add(1);
        let wait = match f.count.checked_sub(FREE_FAILURES + 1) {
            None => 0,
            Some(n) => relay_types::Backoff::new(1_000, MAX_BACKOFF_MS).delay_ms(n + 1),
        };
        f.until_ms = now_ms + wait;
        wait
    }

    /// Forgets `client`'s failures (it signed in).
    pub fn succeeded(&self, client: &K) {
        let mut all = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        all.remove(client);
    }
}

/// The `Set-Cookie` value that stores `value` for `max_age_secs`.
pub fn set_cookie(value: &str, max_age_secs: u64) -> String {
    format!("{COOKIE}={value}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age={max_age_secs}")
}

/// The `Set-Cookie` value that removes the cookie.
pub fn clear_cookie() -> String {
    format!("{COOKIE}=; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// The login cookie's value in a `Cookie` request header, if present.
pub fn from_cookie_header(header: &str) -> Option<&str> {
    header.split(';').find_map(|c| {
        let (name, value) = c.trim().split_once('=')?;
        (name == COOKIE && !value.is_empty()).then_some(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac(key: &[u8; 32], body: &str) -> String {
        let mut m = Hmac::<Sha256>::new_from_slice(key).unwrap();
        m.update(b"session\0");
        m.update(body.as_bytes());
        hex::encode(m.finalize().into_bytes())
    }

    #[test]
    fn a_cookie_is_accepted_until_it_expires_and_only_with_its_own_key() {
        let keys = LoginKeys::new([7; 32], 60);
        let c = keys.issue(1_000);
        assert_eq!(LoginKeys::expires_ms(&c), Some(61_000));
        assert!(keys.verify(&c, 1_000));
        assert!(keys.verify(&c, 60_999));
        assert!(!keys.verify(&c, 61_000), "expired");
        assert!(!keys.verify(&c, 999), "issued in the future");
        assert!(
            !LoginKeys::new([8; 32], 60).verify(&c, 2_000),
            "another key"
        );
        let forged = c.replacen(".61000.", ".99999.", 1);
        assert!(
            !keys.verify(&forged, 2_000),
            "a changed expiry breaks the mac"
        );
        for junk in ["", "v2", "v2.1.2.3", "x.1.2.3.4", &format!("{c}.x")] {
            assert!(!keys.verify(junk, 0), "{junk}");
        }
    }

    #[test]
    fn the_server_caps_a_cookies_age_whatever_it_claims() {
        let key = [7; 32];
        let keys = LoginKeys::new(key, 60);
        // Signed with the right key but claiming a year: refused.
        let body = format!("v2.1000.{}.00", 1_000 + 365 * 86_400_000u64);
        let long = format!("{body}.{}", mac(&key, &body));
        assert!(!keys.verify(&long, 2_000), "lifetime over the maximum");
        // A host that lowers its maximum refuses cookies issued for longer.
        let issued = LoginKeys::new(key, 3_600).issue(0);
        assert!(!keys.verify(&issued, 1_000));
        // The configured TTL is capped at a day.
        let day = LoginKeys::new(key, 10 * MAX_SESSION_TTL_SECS);
        assert_eq!(day.max_age_secs(), MAX_SESSION_TTL_SECS);
    }

    #[test]
    fn a_v1_cookie_under_any_key_is_refused() {
        let key = [7; 32];
        let body = "v1.99999999999999.00";
        let v1 = format!("{body}.{}", mac(&key, body));
        assert!(!LoginKeys::new(key, 60).verify(&v1, 1_000));
    }

    #[test]
    fn generated_keys_differ_per_start() {
        let (a, b) = (LoginKeys::generate(60), LoginKeys::generate(60));
        assert!(!b.verify(&a.issue(0), 1));
    }

    #[test]
    fn the_csrf_token_belongs_to_one_cookie() {
        let keys = LoginKeys::new([7; 32], 60);
        let (a, b) = (keys.issue(9), keys.issue(9));
        assert!(keys.csrf_ok(&a, &keys.csrf(&a)));
        assert!(!keys.csrf_ok(&a, &keys.csrf(&b)));
        assert!(!keys.csrf_ok(&a, ""));
    }

    #[test]
    fn failed_sign_ins_back_off_doubling_and_a_success_clears_it() {
        let b = Backoff::default();
        assert_eq!(b.wait(&"ip", 0), None);
        for _ in 0..FREE_FAILURES {
            assert_eq!(b.failed(&"ip", 0), 0, "a typo costs nothing");
            assert_eq!(b.wait(&"ip", 0), None);
        }
        assert_eq!(b.failed(&"ip", 0), 1_000);
        assert_eq!(b.wait(&"ip", 400), Some(600));
        assert_eq!(b.wait(&"ip", 1_000), None);
        assert_eq!(b.failed(&"ip", 1_000), 2_000);
        assert_eq!(b.failed(&"ip", 3_000), 4_000);
        assert_eq!(b.wait(&"other", 3_000), None, "per client");
        for _ in 0..30 {
            b.failed(&"ip", 10_000);
        }
        assert_eq!(b.wait(&"ip", 10_000), Some(MAX_BACKOFF_MS));
        b.succeeded(&"ip");
        assert_eq!(b.wait(&"ip", 10_000), None);
    }

    #[test]
    fn the_cookie_is_read_from_a_cookie_header() {
        let h = format!("theme=dark; {COOKIE}=v2.5.6.ab.cd; other=1");
        assert_eq!(from_cookie_header(&h), Some("v2.5.6.ab.cd"));
        assert_eq!(from_cookie_header("theme=dark"), None);
        let set = set_cookie("v", 60);
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
    }
}
