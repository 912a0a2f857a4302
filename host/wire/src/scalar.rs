//! A JSON number or string, kept as sent where the domain reads either
//! (a chain id, an amount of smallest units, epoch seconds, a USD price)
//! and words its own refusal of each.

use serde::{Deserialize, Serialize};

/// A JSON number or a JSON string; anything else is not a `Scalar` (carry
/// it as [`crate::Loose`]`<Scalar>`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    /// A JSON number (integer or not, as sent).
    Number(serde_json::Number),
    /// A JSON string, untrimmed.
    Text(String),
}

impl Scalar {
    /// A JSON integer ≥ 0, or a string of one (trimmed); `None` otherwise.
    pub fn whole(&self) -> Option<u64> {
        match self {
            Scalar::Number(n) => n.as_u64(),
            Scalar::Text(s) => s.trim().parse().ok(),
        }
    }
}

impl From<u64> for Scalar {
    fn from(n: u64) -> Self {
        Scalar::Number(n.into())
    }
}

impl From<&str> for Scalar {
    fn from(s: &str) -> Self {
        Scalar::Text(s.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Loose;
    use serde_json::json;

    #[test]
    fn numbers_and_strings_are_kept_as_sent() {
        let read = |v| serde_json::from_value::<Loose<Scalar>>(v).unwrap();
        assert_eq!(read(json!(8453)), Loose::Typed(Scalar::from(8453)));
        assert_eq!(read(json!(" 10 ")).typed().unwrap().whole(), Some(10));
        let half = read(json!(2999.5));
        assert_eq!(
            half.typed()
                .map(|s| matches!(s, Scalar::Number(n) if n.to_string() == "2999.5")),
            Ok(true)
        );
        assert_eq!(half.typed().unwrap().whole(), None);
        assert_eq!(read(json!(-5)).typed().unwrap().whole(), None);
        assert_eq!(read(json!([1])).typed(), Err("[1]"));
        assert_eq!(read(json!(null)).typed(), Err("null"));
        assert_eq!(read(json!(true)).typed(), Err("true"));
    }
}
