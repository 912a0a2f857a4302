//! Route primitives (spec §2.12, §3.2, §4.4): batch payout plans,
//! schedules and conditionals — their records and validation
//! ([`record`]), times ([`time`]), prices ([`price`]) and the watcher that
//! runs them ([`watcher`]). No HTTP here: the API's handlers are thin
//! over this crate, and the live runner (the execute service) is handed
//! in through [`watcher::Runner`].
//!
//! States: a batch is `planned`; run once (by the owner) it is `running`,
//! then `completed`, `partial` or `failed` by its legs' runs. A schedule is `active` until its last
//! run (then `completed`: `remaining` 0, `active:false`) or a DELETE
//! (`cancelled`). A conditional is `armed`; when its condition holds it is
//! `triggered` while its one run executes, then `executed` (or `failed`,
//! with the run's error); unfired at `expiresAt` it is `expired`; a DELETE
//! while armed makes it `cancelled`. Every move past `armed` appends a
//! `runs[]` entry.
//!
//! A schedule or conditional is cancelled only by the operator's owner
//! credential or by its own cancel token, answered once at creation
//! ([`cancel`]).

pub mod cancel;
pub mod price;
pub mod record;
pub mod service;
pub mod time;
pub mod watcher;

/// A refused request field (the API answers it as a typed 400 naming
/// `field`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct Invalid {
    /// The request field at fault (`routes[3].toAddress`, `when.asset`, …).
    pub field: String,
    /// Why.
    pub why: String,
    /// Whether the field is missing (rather than invalid).
    pub missing: bool,
}

impl Invalid {
    /// `field` has a bad value.
    pub fn new(field: impl Into<String>, why: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            why: why.into(),
            missing: false,
        }
    }

    /// `field` is required and absent.
    pub fn missing(field: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            why: "required".into(),
            missing: true,
        }
    }
}

/// The execution gate: on when the configuration says so
/// (`primitives.live`) or the environment has `PRIMITIVES_LIVE=1`.
pub fn gate(configured: bool) -> bool {
    configured || std::env::var("PRIMITIVES_LIVE").is_ok_and(|v| v.trim() == "1")
}

/// A fresh record id: `prefix` and 20 random hex digits.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", hex::encode(rand::random::<[u8; 10]>()))
}
