//! Webhook signatures (spec §5.9, §6.1).
//!
//! With a secret, every delivery carries two signatures over the exact
//! bytes sent:
//! - `x-relay-signature: sha256=<hex HMAC-SHA256(secret's UTF-8 bytes, body)>`
//!   (the spec's own);
//! - the [Standard Webhooks](https://www.standardwebhooks.com) headers, so
//!   receivers verify with an off-the-shelf library and reject replays:
//!   `webhook-id` (the logical delivery id, the same on every retry),
//!   `webhook-timestamp` (unix seconds of this attempt) and
//!   `webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`,
//!   the key from [`standard_key`].
//!
//! Without a secret only `webhook-id` and `webhook-timestamp` are sent.
//! Secrets and signatures are never logged.

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The spec's signature header.
pub const RELAY_SIGNATURE: &str = "x-relay-signature";
/// Standard Webhooks: the logical delivery id.
pub const WEBHOOK_ID: &str = "webhook-id";
/// Standard Webhooks: unix seconds of the attempt.
pub const WEBHOOK_TIMESTAMP: &str = "webhook-timestamp";
/// Standard Webhooks: `v1,<base64 signature>`.
pub const WEBHOOK_SIGNATURE: &str = "webhook-signature";

/// The Standard Webhooks secret prefix.
const WHSEC: &str = "whsec_";

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// `sha256=<lowercase hex HMAC-SHA256(secret's UTF-8 bytes, body)>`.
pub fn relay_signature(secret: &str, body: &[u8]) -> String {
    format!(
        "sha256={}",
        hex::encode(hmac_sha256(secret.as_bytes(), &[body]))
    )
}

/// The Standard Webhooks key of a secret: a `whsec_…` secret's
/// base64-decoded remainder, any other secret's UTF-8 bytes (a receiver
/// then verifies with `"whsec_" + base64(secret)`).
pub fn standard_key(secret: &str) -> Vec<u8> {
    secret
        .strip_prefix(WHSEC)
        .and_then(|rest| B64.decode(rest).ok())
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

/// `v1,<base64 HMAC-SHA256(key, "{id}.{ts_secs}.{body}")>`.
pub fn standard_signature(key: &[u8], id: &str, ts_secs: u64, body: &[u8]) -> String {
    let ts = ts_secs.to_string();
    let mac = hmac_sha256(key, &[id.as_bytes(), b".", ts.as_bytes(), b".", body]);
    format!("v1,{}", B64.encode(mac))
}

/// Every signing header of one attempt (module docs).
pub fn headers(
    id: &str,
    ts_secs: u64,
    body: &[u8],
    secret: Option<&str>,
) -> Vec<(&'static str, String)> {
    let mut h = vec![
        (WEBHOOK_ID, id.to_string()),
        (WEBHOOK_TIMESTAMP, ts_secs.to_string()),
    ];
    if let Some(secret) = secret {
        let key = standard_key(secret);
        h.push((
            WEBHOOK_SIGNATURE,
            standard_signature(&key, id, ts_secs, body),
        ));
        h.push((RELAY_SIGNATURE, relay_signature(secret, body)));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(h: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
        h.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn relay_signature_is_hex_hmac_of_the_body() {
        // HMAC-SHA256("key", "The quick brown fox…"), the well-known vector.
        assert_eq!(
            relay_signature("key", b"The quick brown fox jumps over the lazy dog"),
            "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
        );
    }

    #[test]
    fn standard_signature_matches_the_reference_vector() {
        // The vector the Standard Webhooks reference libraries test with.
        let key = standard_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        let sig = standard_signature(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_raw_secret_and_its_whsec_form_sign_alike() {
        let raw = "s3cret-for-relay";
        let whsec = format!("whsec_{}", B64.encode(raw));
        assert_eq!(whsec, "whsec_czNjcmV0LWZvci1yZWxheQ==");
        assert_eq!(standard_key(raw), standard_key(&whsec));
        let body = br#"{"event":"route.done"}"#;
        let a = headers("msg_abc", 1_700_000_000, body, Some(raw));
        let b = headers("msg_abc", 1_700_000_000, body, Some(&whsec));
        // Computed independently (Python hmac + base64).
        let expected = "v1,mbILoOqUCaKUByVNAP8HWImpPsCcbPJn7MhGYSqZh6s=";
        assert_eq!(get(&a, WEBHOOK_SIGNATURE), Some(expected));
        assert_eq!(get(&b, WEBHOOK_SIGNATURE), Some(expected));
        assert_eq!(
            get(&a, RELAY_SIGNATURE),
            Some("sha256=86f0c5e89ba264433f26306808f737ca022a40fc1476f20768d03eecc258eecc")
        );
    }

    #[test]
    fn a_whsec_secret_that_is_not_base64_is_used_as_bytes() {
        assert_eq!(standard_key("whsec_!!"), b"whsec_!!".to_vec());
    }

    #[test]
    fn without_a_secret_only_id_and_timestamp_are_sent() {
        let h = headers("msg_1", 42, b"{}", None);
        assert_eq!(
            h,
            vec![
                (WEBHOOK_ID, "msg_1".to_string()),
                (WEBHOOK_TIMESTAMP, "42".to_string())
            ]
        );
    }

    #[test]
    fn the_timestamp_is_signed() {
        let a = headers("msg_1", 1, b"{}", Some("k"));
        let b = headers("msg_1", 2, b"{}", Some("k"));
        assert_ne!(get(&a, WEBHOOK_SIGNATURE), get(&b, WEBHOOK_SIGNATURE));
        assert_eq!(get(&a, RELAY_SIGNATURE), get(&b, RELAY_SIGNATURE));
    }
}
