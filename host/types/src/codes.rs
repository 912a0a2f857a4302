//! Stable machine-readable codes declared from one table each, so the
//! catalogue at `GET /api/errors` is generated and can never miss one:
//! preflight blockers and warnings (`relay-engine`'s `preflight`) and route
//! failure reasons ([`crate::route::FailureCode`]). API errors have their
//! own table with HTTP statuses (`relay-api`'s `ErrorCode`).

#[doc(hidden)]
pub use serde as __serde;

/// One row of a code catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CodeEntry {
    /// The wire string.
    pub code: &'static str,
    /// What it means and what to do about it.
    pub meaning: &'static str,
}

/// Declares a code enum from `Variant => ("WIRE", "meaning")` rows: `ALL`,
/// `as_str`, `meaning`, and serialisation as the wire string.
#[macro_export]
macro_rules! code_table {
    ($(#[$meta:meta])* $vis:vis enum $enum:ident {
        $($(#[$doc:meta])* $name:ident => ($wire:literal, $meaning:literal),)*
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $enum {
            $($(#[$doc])* $name,)*
        }

        impl $enum {
            /// Every code, in catalogue order.
            pub const ALL: &'static [$enum] = &[$($enum::$name,)*];

            /// The wire string.
            pub fn as_str(self) -> &'static str {
                match self { $($enum::$name => $wire,)* }
            }

            /// What it means and what to do about it.
            pub fn meaning(self) -> &'static str {
                match self { $($enum::$name => $meaning,)* }
            }

            /// `[{code, meaning}]`, for the catalogue.
            pub fn catalogue() -> Vec<$crate::codes::CodeEntry> {
                Self::ALL
                    .iter()
                    .map(|c| $crate::codes::CodeEntry { code: c.as_str(), meaning: c.meaning() })
                    .collect()
            }
        }

        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl $crate::codes::__serde::Serialize for $enum {
            fn serialize<S: $crate::codes::__serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}
