//! The guest half of the wasm packaging: the [`Host`] a rail sees inside a
//! component, and the adapter from the generated `rail` exports to any
//! [`Rail`].
//!
//! Everything here runs inside the sandbox. It owns no I/O: every capability
//! is a call to an import of `relay:rail/host`, which the host checks.

use relay_plugin_api::{
    ChainRef, ExecutionPlan, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel,
    PrepareRequest, QuoteRequest, Rail, RailError, RailErrorKind, RailQuote, TrackRequest,
    TrackStatus,
};

use crate::bindings::exports::relay::rail::rail::Guest;
use crate::bindings::relay::rail::host;
use crate::bindings::relay::rail::types as wit;
use crate::{ConvertError, Lift, Lower};

crate::wit_conversions!(wit);

/// The [`Host`] of a rail running as a component: every method calls the
/// matching import of `relay:rail/host`.
#[derive(Clone, Copy, Debug, Default)]
pub struct WitHost;

/// A host reply that does not lift (the host broke the contract).
fn host_reply<W: Lift<A>, A>(w: W) -> Result<A, HostError> {
    w.lift()
        .map_err(|e| HostError::new(HostErrorKind::Network, format!("malformed host reply: {e}")))
}

/// A capability failure reported by the host.
fn host_error(e: wit::HostError) -> HostError {
    host_reply(e).unwrap_or_else(|malformed| malformed)
}

impl Host for WitHost {
    fn http(&self, req: HttpRequest) -> Result<HttpResponse, HostError> {
        host::http(&req.lower())
            .map_err(host_error)
            .and_then(host_reply)
    }

    fn rpc(&self, chain: ChainRef, method: &str, params: &str) -> Result<String, HostError> {
        host::rpc(chain.lower(), method, params).map_err(host_error)
    }

    fn now_ms(&self) -> u64 {
        host::now_ms()
    }

    fn deadline_ms(&self) -> u64 {
        host::deadline_ms()
    }

    fn log(&self, level: LogLevel, message: &str) {
        host::log(level.lower(), message)
    }

    fn config(&self, key: &str) -> Option<String> {
        host::config(key)
    }
}

/// Connects a rail type to the component's exports; implemented by
/// [`export_wasm_rail!`](crate::export_wasm_rail), not by hand.
#[doc(hidden)]
pub trait RailExport: 'static {
    /// The rail.
    type Rail: Rail;
    /// The one instance of the rail in this component instance.
    fn rail() -> &'static Self::Rail;
}

/// A request the host sent that is not a valid contract value.
fn invalid_request(e: ConvertError) -> RailError {
    RailError::new(RailErrorKind::InvalidInput, e.to_string())
}

/// Lifts a request, runs the rail on it, lowers the answer.
fn serve<T, W, A, R, WR>(
    req: W,
    run: impl FnOnce(&T::Rail, &A) -> Result<R, RailError>,
) -> Result<WR, wit::RailError>
where
    T: RailExport,
    W: Lift<A>,
    R: Lower<WR>,
{
    install_panic_hook();
    let req = req.lift().map_err(invalid_request).map_err(Lower::lower)?;
    run(T::rail(), &req).map(Lower::lower).map_err(Lower::lower)
}

impl<T: RailExport> Guest for T {
    fn manifest() -> wit::RailManifest {
        install_panic_hook();
        Lower::<wit::RailManifest>::lower(T::rail().manifest())
    }

    fn quote(req: wit::QuoteRequest) -> Result<wit::RailQuote, wit::RailError> {
        serve::<T, _, QuoteRequest, RailQuote, _>(req, |r, q| r.quote(&WitHost, q))
    }

    fn prepare(req: wit::PrepareRequest) -> Result<wit::ExecutionPlan, wit::RailError> {
        serve::<T, _, PrepareRequest, ExecutionPlan, _>(req, |r, q| r.prepare(&WitHost, q))
    }

    fn track(req: wit::TrackRequest) -> Result<wit::TrackStatus, wit::RailError> {
        serve::<T, _, TrackRequest, TrackStatus, _>(req, |r, q| r.track(&WitHost, q))
    }

    fn health() -> wit::RailHealth {
        install_panic_hook();
        Lower::<wit::RailHealth>::lower(T::rail().health(&WitHost))
    }
}

/// Reports a panic through the host's log before the guest aborts (wasm
/// guests are built with `panic = "abort"`, so the host only sees a trap).
fn install_panic_hook() {
    #[cfg(target_arch = "wasm32")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| {
                let line = format!("{}{info}", crate::PANIC_LOG_PREFIX);
                host::log(wit::LogLevel::Error, &line);
            }))
        });
    }
}
