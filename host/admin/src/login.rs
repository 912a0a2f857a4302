//! The dashboard's login: a browser posts the owner token once and gets a
//! cookie that is **not** the token — an expiry time and a nonce, signed
//! with HMAC-SHA256 under a key derived from the owner token's hash (so
//! every replica configured with the same token accepts it, and changing
//! the token signs everyone out). The cookie is `HttpOnly`,
//! `SameSite=Strict` and scoped to `/admin`.
//!
//! Changes made through the cookie also need the CSRF token
//! ([`LoginKeys::csrf`]): an HMAC of the cookie value the page is given
//! when it is served and sends back as a header. API clients use
//! `Authorization: Bearer <owner token>` instead and need neither.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// The cookie's name.
pub const COOKIE: &str = "relay_admin";
/// The header a cookie-authenticated change carries its CSRF token in.
pub const CSRF_HEADER: &str = "x-relay-csrf";

/// Signs and checks login cookies.
#[derive(Clone)]
pub struct LoginKeys {
    key: [u8; 32],
}

impl std::fmt::Debug for LoginKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoginKeys(..)")
    }
}

impl LoginKeys {
    /// Keys from a 32-byte secret (derived from the owner token's hash).
    pub fn new(key: [u8; 32]) -> Self {
        LoginKeys { key }
    }

    fn mac(&self, label: &str, msg: &str) -> String {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        m.update(label.as_bytes());
        m.update(b"\0");
        m.update(msg.as_bytes());
        hex::encode(m.finalize().into_bytes())
    }

    /// A new cookie value valid until `expires_ms`:
    /// `v1.<expires_ms>.<nonce>.<mac>`.
    pub fn issue(&self, expires_ms: u64) -> String {
        let body = format!(
            "v1.{expires_ms}.{}",
            hex::encode(rand::random::<[u8; 16]>())
        );
        let mac = self.mac("session", &body);
        format!("{body}.{mac}")
    }

    /// Whether `value` is a cookie these keys signed that has not expired
    /// at `now_ms` (the signature compared in constant time).
    pub fn verify(&self, value: &str, now_ms: u64) -> bool {
        let Some((body, mac)) = value.rsplit_once('.') else {
            return false;
        };
        let mut parts = body.split('.');
        let (Some("v1"), Some(exp), Some(_nonce), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let fresh = exp.parse::<u64>().is_ok_and(|e| e > now_ms);
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

    #[test]
    fn a_cookie_is_accepted_until_it_expires_and_only_with_its_own_key() {
        let keys = LoginKeys::new([7; 32]);
        let c = keys.issue(2_000);
        assert!(keys.verify(&c, 1_999));
        assert!(!keys.verify(&c, 2_000), "expired");
        assert!(!LoginKeys::new([8; 32]).verify(&c, 1_000), "another key");
        let forged = c.replacen("v1.2000.", "v1.9999.", 1);
        assert!(
            !keys.verify(&forged, 1_000),
            "a changed expiry breaks the mac"
        );
        for junk in ["", "v1", "v1.1.2", "x.1.2.3", &format!("{c}.x")] {
            assert!(!keys.verify(junk, 0), "{junk}");
        }
    }

    #[test]
    fn the_csrf_token_belongs_to_one_cookie() {
        let keys = LoginKeys::new([7; 32]);
        let (a, b) = (keys.issue(9), keys.issue(9));
        assert!(keys.csrf_ok(&a, &keys.csrf(&a)));
        assert!(!keys.csrf_ok(&a, &keys.csrf(&b)));
        assert!(!keys.csrf_ok(&a, ""));
    }

    #[test]
    fn the_cookie_is_read_from_a_cookie_header() {
        let h = format!("theme=dark; {COOKIE}=v1.5.ab.cd; other=1");
        assert_eq!(from_cookie_header(&h), Some("v1.5.ab.cd"));
        assert_eq!(from_cookie_header("theme=dark"), None);
        let set = set_cookie("v", 60);
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
    }
}
