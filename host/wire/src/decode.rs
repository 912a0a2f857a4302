//! Decoding a parsed body into a DTO, the offending field named by its
//! JSON path (`serde_path_to_error`).

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::{Path, Segment};

/// Why a body does not decode. Every variant but [`WireError::Malformed`]
/// names the field by its JSON path (`permit2.nonce`, `legs[2].amount`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The body is not a JSON object.
    #[error("{0}")]
    Malformed(String),
    /// A required field is absent.
    #[error("{field}: required")]
    Missing {
        /// Its JSON path.
        field: String,
    },
    /// A field has the wrong type or an unusable value (or, where a DTO
    /// refuses unknown fields, is not one of them).
    #[error("{field}: {why}")]
    Invalid {
        /// Its JSON path.
        field: String,
        /// Why.
        why: String,
    },
}

impl WireError {
    /// The JSON path of the field at fault.
    pub fn field(&self) -> Option<&str> {
        match self {
            WireError::Malformed(_) => None,
            WireError::Missing { field } | WireError::Invalid { field, .. } => Some(field),
        }
    }
}

/// Decodes `body` (already parsed, duplicate keys refused) as `T`.
pub fn decode<T: DeserializeOwned>(body: &Value) -> Result<T, WireError> {
    if !body.is_object() {
        return Err(WireError::Malformed(
            "the body must be a JSON object".into(),
        ));
    }
    serde_path_to_error::deserialize(body).map_err(|e| {
        let at = dotted(e.path());
        classify(&at, &e.into_inner().to_string())
    })
}

/// `a.b[2].c`; empty at the root.
fn dotted(path: &Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => join(&mut out, key),
            Segment::Enum { variant } => join(&mut out, variant),
            Segment::Unknown => {}
        }
    }
    out
}

fn join(out: &mut String, key: &str) {
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(key);
}

/// The first `` `name` `` of a serde message.
fn quoted(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// Serde's message at `at` as a typed error: a missing field is reported
/// at its own path, not its parent's (an unknown field's path is its own).
fn classify(at: &str, message: &str) -> WireError {
    let child = |name: &str| {
        let mut field = at.to_string();
        join(&mut field, name);
        field
    };
    match (message.strip_prefix("missing field "), quoted(message)) {
        (Some(_), Some(name)) => WireError::Missing { field: child(name) },
        _ => match (message.strip_prefix("unknown field "), quoted(message)) {
            (Some(rest), Some(_)) => WireError::Invalid {
                field: at.to_string(),
                why: format!("unknown field{}", allowed(rest)),
            },
            _ => WireError::Invalid {
                field: if at.is_empty() {
                    "body".into()
                } else {
                    at.into()
                },
                why: message.to_string(),
            },
        },
    }
}

/// `(allowed: a, b)` from serde's "expected one of `a`, `b`" (or
/// "expected `a`", or "there are no fields").
fn allowed(rest: &str) -> String {
    let list = rest
        .split_once("expected one of ")
        .or_else(|| rest.split_once("expected "))
        .map(|(_, list)| list.replace('`', ""));
    format!(" (allowed: {})", list.as_deref().unwrap_or("none"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)] // only decoded
    struct Inner {
        per_tx_cap: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // only decoded
    struct Outer {
        policy: Inner,
        #[serde(default)]
        legs: Vec<Inner>,
    }

    fn err(v: Value) -> WireError {
        decode::<Outer>(&v).unwrap_err()
    }

    #[test]
    fn nested_paths_are_named() {
        assert_eq!(
            err(json!({"policy": {}})),
            WireError::Missing {
                field: "policy.perTxCap".into()
            }
        );
        assert_eq!(
            err(json!({})),
            WireError::Missing {
                field: "policy".into()
            }
        );
        let wrong = err(json!({"policy": {"perTxCap": 5}}));
        assert_eq!(wrong.field(), Some("policy.perTxCap"));
        assert!(matches!(wrong, WireError::Invalid { .. }));
        let deep = err(json!({"policy": {"perTxCap": "1"}, "legs": [{"perTxCap": "1"}, {}]}));
        assert_eq!(deep.field(), Some("legs[1].perTxCap"));
    }

    #[test]
    fn unknown_fields_and_non_objects() {
        let e = err(json!({"policy": {"perTxCap": "1", "cap": 1}}));
        assert_eq!(e.field(), Some("policy.cap"));
        assert!(e.to_string().contains("allowed: perTxCap"), "{e}");
        assert!(matches!(err(json!([1])), WireError::Malformed(_)));
        assert!(matches!(err(json!(null)), WireError::Malformed(_)));
    }
}
