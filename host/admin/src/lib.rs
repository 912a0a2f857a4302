//! The operator's console (issue 18): everything the web dashboard shows
//! and changes, typed and without HTTP.
//!
//! - [`operator`]: the **one operator path** — enable or disable a rail,
//!   switch a lane's `executeReady` — that `relay rails …` and the
//!   dashboard both call; every change is written to the audit log
//!   (who, when, before, after).
//! - [`dashboard`]: the snapshot the page renders: rails with packaging,
//!   quarantine and health; lanes; float per chain and token with
//!   `capNow`; the relayer's native balance per chain with a low-balance
//!   flag; routes in flight by status; failed routes whose funds are in
//!   doubt (moved, not refunded); the webhook backlog; rate-limit
//!   hits; recent errors; the audit log.
//! - [`signals`]: what the HTTP edge reports to the dashboard (rate-limit
//!   hits, recent error answers), held in memory per host.
//! - [`login`]: the dashboard's login cookie (an issue time and expiry
//!   HMAC-signed under a secret the host draws at start, never the token
//!   nor derived from it; its age capped by the server), the CSRF token
//!   derived from it, and the back-off after failed sign-ins.
//! - [`assets`]: the page, its stylesheet and script, built into the
//!   binary (no CDN, no build step).

pub mod assets;
pub mod dashboard;
pub mod login;
pub mod operator;
pub mod signals;
