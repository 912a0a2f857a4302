//! `POST /api/keys/create` (spec §4.4): a developer key's label as the
//! caller sends it (the body may be empty). Unknown fields are refused; the
//! label is kept as sent ([`Loose`]) for the keys feature to refuse.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Loose;

/// `POST /api/keys/create`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"label": "my dashboard"}))]
pub struct KeyCreateRequest {
    /// The key's label: at most 64 printable characters.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub label: Option<Loose<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;
    use serde_json::json;

    #[test]
    fn an_empty_body_has_no_label_and_unknown_fields_are_named() {
        let r: KeyCreateRequest = decode(&json!({})).unwrap();
        assert_eq!(r.label, None);
        let r: KeyCreateRequest = decode(&json!({"label": 3})).unwrap();
        assert_eq!(r.label, Some(Loose::Other("3".into())));
        let e = decode::<KeyCreateRequest>(&json!({"name": "x"})).unwrap_err();
        assert_eq!(e.to_string(), "name: unknown field (allowed: label)");
    }
}
