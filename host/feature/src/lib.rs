//! relay-feature: how a feature registers with the host.
//!
//! Each feature — routing, keys and usage, sessions, notify, the route
//! primitives, netting, the yield account, sponsorship, analysis, and the
//! ones still to come — describes itself once, in its own home, with a
//! [`Feature`]: its HTTP routes (and so its OpenAPI paths), its rate-limit
//! buckets ([`Limit`], per minute, hour or day) and the `errorCode`s it
//! answers with, its configuration table ([`Section`]) and how it starts
//! ([`Start`]: over the host's shared [`Parts`] it builds its service,
//! applies its migrations, adds its jobs and leaves in [`Handles`] what
//! its routes read). The host collects the descriptors in one list and
//! starts them in order ([`start_all`]); adding a feature is its folder
//! and one line in that list — no central route list, limit table, error
//! table or start-up code is edited.
//!
//! [`edge`] is what every feature's HTTP adapter reads requests with: the
//! strict JSON body ([`edge::JsonObject`]), query fields, large answers;
//! [`once`] is the one idempotency guard of its fund-moving calls;
//! [`operator`] the one check of the operator's owner token.

pub mod caller;
pub mod edge;
pub mod once;
pub mod operator;
mod start;
#[cfg(any(test, feature = "test-utils"))]
pub mod testing;

pub use start::{
    service, start_all, Handles, HasHandles, Parts, Service, ServiceError, Start, StartError,
};

use axum::http::Method;
use relay_config::{ConfigError, HostConfig};
use relay_errors::ErrorCode;
use utoipa_axum::router::OpenApiRouter;

/// The period a rate-limit bucket is counted over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Window {
    /// N per minute.
    Minute,
    /// N per hour.
    Hour,
    /// N per day.
    Day,
}

impl Window {
    /// The window's length.
    pub const fn duration(self) -> std::time::Duration {
        std::time::Duration::from_secs(match self {
            Window::Minute => 60,
            Window::Hour => 3_600,
            Window::Day => 86_400,
        })
    }
}

/// One rate-limit bucket: the requests of `methods` on `path` (a route
/// template, as the router matched it), `per` per `window` per client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The bucket's name (what `RateLimit-Policy` and the dashboard show).
    pub bucket: &'static str,
    /// The key of its override in `[limits.per_minute]` (`per_hour`,
    /// `per_day` by window): the bucket's name unless it shares another's.
    pub key: &'static str,
    /// The methods it counts.
    pub methods: &'static [Method],
    /// The route template.
    pub path: &'static str,
    /// Requests per window.
    pub per: u32,
    /// The window.
    pub window: Window,
    /// Counted by the client's IP even for a request with an issued key
    /// (creating keys, signing in).
    pub by_ip: bool,
    /// Its callers are never recorded: counted in this replica's memory
    /// only (never in the shared store, whatever `[limits] backend`
    /// says), and a refusal's log line names the bucket, not the caller
    /// (the privacy lane's gateway and no-op).
    pub unrecorded: bool,
}

impl Limit {
    /// `per` requests a minute of `methods` on `path`, in bucket `bucket`.
    pub const fn new(
        bucket: &'static str,
        methods: &'static [Method],
        path: &'static str,
        per: u32,
    ) -> Self {
        Limit {
            bucket,
            key: bucket,
            methods,
            path,
            per,
            window: Window::Minute,
            by_ip: false,
            unrecorded: false,
        }
    }

    /// `per` POSTs a minute on `path`.
    pub const fn post(bucket: &'static str, path: &'static str, per: u32) -> Self {
        Limit::new(bucket, &[Method::POST], path, per)
    }

    /// `per` GETs a minute on `path`.
    pub const fn get(bucket: &'static str, path: &'static str, per: u32) -> Self {
        Limit::new(bucket, &[Method::GET], path, per)
    }

    /// The same, counted per hour.
    pub const fn per_hour(self) -> Self {
        Limit {
            window: Window::Hour,
            ..self
        }
    }

    /// The same, counted per day.
    pub const fn per_day(self) -> Self {
        Limit {
            window: Window::Day,
            ..self
        }
    }

    /// The same, counted by IP only.
    pub const fn by_ip(self) -> Self {
        Limit {
            by_ip: true,
            ..self
        }
    }

    /// The same, its callers never recorded ([`Limit::unrecorded`]).
    pub const fn unrecorded(self) -> Self {
        Limit {
            unrecorded: true,
            ..self
        }
    }

    /// The same, overridden by `[limits]` key `key` (a bucket that shares
    /// another's setting).
    pub const fn keyed(self, key: &'static str) -> Self {
        Limit { key, ..self }
    }
}

/// `routes` over the handle of type `H` a feature's start left in `s`'s
/// handles: the routes of a feature whose start always leaves one.
///
/// # Panics
///
/// When no start left one: the host builds its router only after every
/// feature started ([`start_all`]), so a missing handle is a wiring
/// mistake the first test that serves the host finds.
pub fn mount<S, H>(s: &S, routes: OpenApiRouter<H>) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
    H: Clone + Send + Sync + 'static,
{
    let handle = s.handles().get::<H>().unwrap_or_else(|| {
        panic!(
            "no {} in the handles: the feature's start leaves it before the routes are built",
            std::any::type_name::<H>()
        )
    });
    routes.with_state(handle)
}

/// A feature's configuration table (`[netting]`): it lives in the
/// feature's home and is read from [`relay_config::Sections`].
#[derive(Clone, Copy, Debug)]
pub struct Section {
    /// The table's name.
    pub name: &'static str,
    /// Parses and checks it (the host refuses to start on an error).
    pub check: fn(&HostConfig) -> Result<(), ConfigError>,
}

/// Checks `config`'s feature tables: each one some feature of `features`
/// claims, and valid by its owner's check.
pub fn check_sections<S>(config: &HostConfig, features: &[Feature<S>]) -> Result<(), ConfigError> {
    let sections: Vec<Section> = features.iter().filter_map(|f| f.section).collect();
    let names: Vec<&str> = sections.iter().map(|s| s.name).collect();
    config.sections.unclaimed(&names)?;
    sections.iter().try_for_each(|s| (s.check)(config))
}

/// A feature's descriptor: everything the host needs to serve it.
pub struct Feature<S> {
    /// Its name (one per domain, the same in every layer).
    pub name: &'static str,
    /// Where it lives in the repository (checked to exist by the host's
    /// tests) and the spec sections it implements.
    pub home: &'static str,
    /// The spec sections (`§4.7`).
    pub spec: &'static str,
    /// Its configuration table, when it has one.
    pub section: Option<Section>,
    /// Its routes, documented (the OpenAPI paths come from them).
    pub routes: fn(&S) -> OpenApiRouter<S>,
    /// Its rate-limit buckets (a matched route without one gets a bucket of
    /// its own at the default rate).
    pub limits: &'static [Limit],
    /// The `errorCode`s only it answers with (shared codes such as
    /// `INVALID_FIELD` belong to the core).
    pub errors: &'static [ErrorCode],
    /// How it starts (service, migrations, jobs, the handle its routes
    /// read), when it has more to start than its routes.
    pub start: Option<Start>,
}

impl<S> std::fmt::Debug for Feature<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feature")
            .field("name", &self.name)
            .field("home", &self.home)
            .field("section", &self.section.map(|s| s.name))
            .field("limits", &self.limits.len())
            .field("errors", &self.errors.len())
            .field("starts", &self.start.is_some())
            .finish()
    }
}
