//! The JSON both sides of the ABI write: requests (host) and replies
//! (plugin).

use serde::Serialize;

/// What a buffer starts with: a typical rail request or reply (a quote
/// request with its addresses, a quote with its fees) fits.
const CAPACITY: usize = 2048;

/// `value` as JSON, written into one buffer sized for a rail message
/// rather than grown from empty (one allocation instead of a chain of
/// reallocations and copies on every call).
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut buf = Vec::with_capacity(CAPACITY);
    serde_json::to_writer(&mut buf, value)?;
    String::from_utf8(buf).map_err(<serde_json::Error as serde::ser::Error>::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_serde_json_writes() {
        let v = serde_json::json!({"a": "é\"\n", "b": [1, 2], "c": "x".repeat(5000)});
        assert_eq!(to_json(&v).unwrap(), serde_json::to_string(&v).unwrap());
    }
}
