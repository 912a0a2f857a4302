//! Outbound notifications (spec §6): completion webhooks and event
//! subscriptions, signed, SSRF-guarded and delivered at least once.

pub mod backoff;
pub mod dispatch;
pub mod hooks;
pub mod send;
pub mod sign;
pub mod ssrf;
pub mod subscribe;
