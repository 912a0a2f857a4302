//! A field kept as sent when its type is wrong, so the domain can refuse
//! it with the code that field has always had (a chain that is neither a
//! number nor a name is `UNKNOWN_CHAIN`, not a generic `INVALID_FIELD`).

use serde::{Deserialize, Serialize};

/// The typed value, or the JSON text of what was sent instead.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Loose<T> {
    /// A value of the expected type.
    Typed(T),
    /// Anything else, as JSON text (clipped to 48 characters).
    #[serde(deserialize_with = "json_text")]
    Other(String),
}

impl<T> Loose<T> {
    /// The typed value, or the JSON text of what was sent instead.
    pub fn typed(&self) -> Result<&T, &str> {
        match self {
            Loose::Typed(t) => Ok(t),
            Loose::Other(text) => Err(text),
        }
    }
}

impl<T> From<T> for Loose<T> {
    fn from(t: T) -> Self {
        Loose::Typed(t)
    }
}

fn json_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    Ok(v.to_string().chars().take(48).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_wrong_type_is_kept_as_text() {
        let ok: Loose<String> = serde_json::from_value(json!("5000000")).unwrap();
        assert_eq!(ok.typed(), Ok(&"5000000".to_string()));
        let bad: Loose<String> = serde_json::from_value(json!([5])).unwrap();
        assert_eq!(bad.typed(), Err("[5]"));
    }
}
