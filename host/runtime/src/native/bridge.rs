//! One native call, on the blocking thread that runs it: the typed
//! [`RailCall`] as JSON into the plugin, its reply or failure back as a
//! [`RailReply`] or [`BackendError`], and the lent [`CallCapabilities`] as a
//! blocking [`Host`] in between.

use std::{sync::Arc, time::Instant};

use crate::backend::{BackendError, RailCall, RailReply};
use relay_capabilities::CallCapabilities;
use relay_plugin_api::{
    ChainRef, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel, RailError,
};
use relay_plugin_native::{
    call_manifest, call_method, method, CallFailure, FailureKind, RailModuleRef,
};
use serde::{de::DeserializeOwned, Serialize};
use tokio::runtime::Handle;

/// The lent capabilities as the blocking [`Host`] a native rail sees.
///
/// Async capabilities run on the host's runtime through `handle`; the
/// calling thread is one of the rail's worker threads, never a runtime thread.
pub(super) struct BlockingHost {
    pub(super) caps: Arc<CallCapabilities>,
    pub(super) handle: Handle,
}

impl BlockingHost {
    /// Refuses I/O once the call's deadline has passed: the host has given
    /// up on the call, so an abandoned plugin thread gets nothing more done.
    fn before_io(&self) -> Result<(), HostError> {
        if Instant::now() >= self.caps.deadline() {
            return Err(HostError::new(
                HostErrorKind::Timeout,
                "the call's deadline has passed",
            ));
        }
        Ok(())
    }
}

impl Host for BlockingHost {
    fn http(&self, req: HttpRequest) -> Result<HttpResponse, HostError> {
        self.before_io()?;
        self.handle.block_on(self.caps.http(req))
    }

    fn rpc(&self, chain: ChainRef, method: &str, params: &str) -> Result<String, HostError> {
        self.before_io()?;
        self.handle.block_on(self.caps.rpc(chain, method, params))
    }

    fn now_ms(&self) -> u64 {
        self.caps.now_ms()
    }

    fn deadline_ms(&self) -> u64 {
        self.caps.deadline_ms()
    }

    fn log(&self, level: LogLevel, message: &str) {
        self.caps.log(level, message);
    }

    fn config(&self, key: &str) -> Option<String> {
        self.caps.config(key)
    }
}

/// Runs `call` in the plugin, blocking until it returns.
pub(super) fn run(
    module: RailModuleRef,
    call: &RailCall,
    host: &dyn Host,
) -> Result<RailReply, BackendError> {
    let invoke = |name: &str, request: String| call_method(module, name, &request, host);
    let reply = match call {
        RailCall::Manifest => call_manifest(module),
        RailCall::Quote(req) => invoke(method::QUOTE, to_json(req)?),
        RailCall::Prepare(req) => invoke(method::PREPARE, to_json(req)?),
        RailCall::Track(req) => invoke(method::TRACK, to_json(req)?),
        RailCall::Health => invoke(method::HEALTH, "null".into()),
    };
    decode_reply(call, &reply.map_err(from_failure)?)
}

fn decode_reply(call: &RailCall, json: &str) -> Result<RailReply, BackendError> {
    Ok(match call {
        RailCall::Manifest => RailReply::Manifest(from_json(json)?),
        RailCall::Quote(_) => RailReply::Quote(from_json(json)?),
        RailCall::Prepare(_) => RailReply::Plan(from_json(json)?),
        RailCall::Track(_) => RailReply::Track(from_json(json)?),
        RailCall::Health => RailReply::Health(from_json(json)?),
    })
}

/// A plugin-side failure as the supervisor sees it.
fn from_failure(failure: CallFailure) -> BackendError {
    let message = failure.message.into_string();
    match failure.kind {
        FailureKind::Rail => match serde_json::from_str::<RailError>(&message) {
            Ok(err) => BackendError::Rail(err),
            Err(e) => BackendError::Contract(format!("malformed rail error ({e}): {message}")),
        },
        FailureKind::Panicked => BackendError::Crashed(format!("panicked: {message}")),
        FailureKind::Contract => BackendError::Contract(message),
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<String, BackendError> {
    relay_plugin_native::to_json(value)
        .map_err(|e| BackendError::Contract(format!("unserialisable request: {e}")))
}

fn from_json<T: DeserializeOwned>(json: &str) -> Result<T, BackendError> {
    serde_json::from_str(json).map_err(|e| BackendError::Contract(format!("malformed reply: {e}")))
}

#[cfg(test)]
mod tests {
    use relay_plugin_api::RailErrorKind;

    use super::*;

    #[test]
    fn failures_map_to_backend_errors() {
        let rail = RailError::unsupported("no such lane");
        let json = serde_json::to_string(&rail).unwrap();
        let mapped = from_failure(CallFailure::new(FailureKind::Rail, json));
        assert!(
            matches!(mapped, BackendError::Rail(e) if e.kind == RailErrorKind::UnsupportedLane)
        );

        let mapped = from_failure(CallFailure::new(FailureKind::Panicked, "boom"));
        assert!(matches!(mapped, BackendError::Crashed(m) if m == "panicked: boom"));

        let mapped = from_failure(CallFailure::new(FailureKind::Rail, "{not json"));
        assert!(matches!(mapped, BackendError::Contract(_)));
    }

    #[test]
    fn malformed_replies_break_the_contract() {
        let err = decode_reply(&RailCall::Health, "{\"status\":\"sideways\"}").unwrap_err();
        assert!(matches!(err, BackendError::Contract(m) if m.starts_with("malformed reply")));
    }
}
