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

/// For an `Option<Loose<T>>` field with `#[serde(default)]`: absent is
/// `None`, and `null` is kept as `Some(Loose::Other("null"))` rather than
/// read as absent (a field whose `null` is refused as a bad value).
pub(crate) fn present<'de, D, T>(d: D) -> Result<Option<Loose<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Loose::deserialize(d).map(Some)
}

/// For an `Option<T>` field with `#[serde(default)]` whose `T` is a
/// struct: absent or `null` is `None`; anything but a JSON object is
/// refused as "must be an object" (never a struct read from an array), and
/// the object's own fields are decoded with their paths.
pub(crate) fn object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    use serde::de::{Error, MapAccess, SeqAccess, Visitor};

    struct Object<T>(std::marker::PhantomData<T>);

    fn refuse<E: Error, V>() -> Result<V, E> {
        Err(E::custom("must be an object"))
    }

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Object<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }

        fn visit_bool<E: Error>(self, _: bool) -> Result<Self::Value, E> {
            refuse()
        }

        fn visit_i64<E: Error>(self, _: i64) -> Result<Self::Value, E> {
            refuse()
        }

        fn visit_u64<E: Error>(self, _: u64) -> Result<Self::Value, E> {
            refuse()
        }

        fn visit_f64<E: Error>(self, _: f64) -> Result<Self::Value, E> {
            refuse()
        }

        fn visit_str<E: Error>(self, _: &str) -> Result<Self::Value, E> {
            refuse()
        }

        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            refuse()
        }
    }

    d.deserialize_option(Object(std::marker::PhantomData))
}

/// For an `Option<Loose<T>>` field with `#[serde(default)]` whose `T` is a
/// struct: absent or `null` is `None`; a JSON object is decoded as `T`
/// (its fields with their paths), anything else is kept as
/// `Loose::Other` — never a struct read from an array.
pub(crate) fn loose_object<'de, D, T>(d: D) -> Result<Option<Loose<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    use serde::de::{MapAccess, SeqAccess, Visitor};

    struct Object<T>(std::marker::PhantomData<T>);

    fn other<T, E>(v: serde_json::Value) -> Result<Option<Loose<T>>, E> {
        Ok(Some(Loose::Other(clip(&v))))
    }

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Object<T> {
        type Value = Option<Loose<T>>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let t = T::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
            Ok(Some(Loose::Typed(t)))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            let v =
                serde_json::Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
            other(v)
        }

        fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
            other(b.into())
        }

        fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
            other(n.into())
        }

        fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
            other(n.into())
        }

        fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
            other(n.into())
        }

        fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
            other(s.into())
        }
    }

    d.deserialize_option(Object(std::marker::PhantomData))
}

/// The JSON text of `v`, clipped to 48 characters.
fn clip(v: &serde_json::Value) -> String {
    v.to_string().chars().take(48).collect()
}

fn json_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(clip(&serde_json::Value::deserialize(d)?))
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
