//! The same work as the echo rail's `quote` through the relay plugin
//! packagings — deserialise a JSON `QuoteRequest`, run the rail, serialise
//! the `RailQuote` — exported as an Extism plugin function, so the benchmark
//! compares per-call overhead, not different work.

use extism_pdk::{plugin_fn, FnResult};
use relay_plugin_api::{
    Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel, QuoteRequest, Rail,
};

/// The Extism guest's host: no capabilities, a fixed clock.
struct NoHost;

impl Host for NoHost {
    fn http(&self, _req: HttpRequest) -> Result<HttpResponse, HostError> {
        Err(HostError::new(
            HostErrorKind::Denied,
            "no http in the benchmark",
        ))
    }
    fn rpc(&self, _c: relay_plugin_api::ChainRef, _m: &str, _p: &str) -> Result<String, HostError> {
        Err(HostError::new(
            HostErrorKind::Denied,
            "no rpc in the benchmark",
        ))
    }
    fn now_ms(&self) -> u64 {
        0
    }
    fn deadline_ms(&self) -> u64 {
        0
    }
    fn log(&self, _level: LogLevel, message: &str) {
        // Cross into the runtime as the relay packagings' log import does.
        extism_pdk::log!(extism_pdk::LogLevel::Info, "{}", message);
    }
    fn config(&self, _key: &str) -> Option<String> {
        None
    }
}

/// `quote`: JSON `QuoteRequest` in, JSON `RailQuote` out.
#[plugin_fn]
pub fn quote(input: String) -> FnResult<String> {
    let req: QuoteRequest = serde_json::from_str(&input)?;
    let q = relay_rail_echo::EchoRail
        .quote(&NoHost, &req)
        .map_err(|e| extism_pdk::Error::msg(e.to_string()))?;
    Ok(serde_json::to_string(&q)?)
}
