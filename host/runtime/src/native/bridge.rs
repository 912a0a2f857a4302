//! One native call, on the blocking thread that runs it: the typed
//! [`RailCall`] into the plugin (MessagePack, or JSON for a plugin built
//! before the packed entry), its reply or failure back as a
//! [`RailReply`] or [`BackendError`], and the lent [`CallCapabilities`] as a
//! blocking [`Host`] in between.

use std::{sync::Arc, time::Instant};

use crate::backend::{BackendError, RailCall, RailReply};
use relay_capabilities::CallCapabilities;
use relay_plugin_api::{
    ChainRef, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel, RailError,
};
use relay_plugin_native::{
    call_manifest, call_method, call_method_packed, has_packed_entry, method, wire, CallFailure,
    FailureKind, RailModuleRef,
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

/// Runs `call` in the plugin, blocking until it returns: on the packed
/// wire, or in JSON for a plugin built before the packed entry existed.
pub(super) fn run(
    module: RailModuleRef,
    call: &RailCall,
    host: &dyn Host,
) -> Result<RailReply, BackendError> {
    let wire = Wire::of(module);
    let (name, request) = match call {
        RailCall::Manifest => {
            let json = call_manifest(module).map_err(from_failure)?;
            return decode_reply(call, Wire::Json, json.as_bytes());
        }
        RailCall::Quote(req) => (method::QUOTE, wire.encode(req)?),
        RailCall::Prepare(req) => (method::PREPARE, wire.encode(req)?),
        RailCall::Track(req) => (method::TRACK, wire.encode(req)?),
        RailCall::Health => (method::HEALTH, wire.encode(&())?),
    };
    match wire {
        Wire::Packed => {
            let reply = call_method_packed(module, name, &request, host).map_err(from_failure)?;
            decode_reply(call, wire, &reply)
        }
        Wire::Json => {
            let request = std::str::from_utf8(&request)
                .map_err(|e| BackendError::Contract(format!("unserialisable request: {e}")))?;
            let reply = call_method(module, name, request, host).map_err(from_failure)?;
            decode_reply(call, wire, reply.as_bytes())
        }
    }
}

/// How a call's request is written and its reply read.
#[derive(Clone, Copy, Debug)]
enum Wire {
    /// MessagePack, on the packed entry.
    Packed,
    /// JSON, on the original entry (and the manifest's).
    Json,
}

impl Wire {
    /// The plugin's best wire.
    fn of(module: RailModuleRef) -> Wire {
        if has_packed_entry(module) {
            Wire::Packed
        } else {
            Wire::Json
        }
    }

    fn encode<T: Serialize>(self, value: &T) -> Result<Vec<u8>, BackendError> {
        match self {
            Wire::Packed => wire::to_packed(value).map_err(|e| e.to_string()),
            Wire::Json => wire::to_json(value)
                .map(String::into_bytes)
                .map_err(|e| e.to_string()),
        }
        .map_err(|e| BackendError::Contract(format!("unserialisable request: {e}")))
    }

    fn decode<T: DeserializeOwned>(self, bytes: &[u8]) -> Result<T, BackendError> {
        match self {
            Wire::Packed => wire::from_packed(bytes).map_err(|e| e.to_string()),
            Wire::Json => serde_json::from_slice(bytes).map_err(|e| e.to_string()),
        }
        .map_err(|e| BackendError::Contract(format!("malformed reply: {e}")))
    }
}

fn decode_reply(call: &RailCall, wire: Wire, bytes: &[u8]) -> Result<RailReply, BackendError> {
    Ok(match call {
        RailCall::Manifest => RailReply::Manifest(wire.decode(bytes)?),
        RailCall::Quote(_) => RailReply::Quote(wire.decode(bytes)?),
        RailCall::Prepare(_) => RailReply::Plan(wire.decode(bytes)?),
        RailCall::Track(_) => RailReply::Track(wire.decode(bytes)?),
        RailCall::Health => RailReply::Health(wire.decode(bytes)?),
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
        let json = br#"{"status":"sideways"}"#;
        let err = decode_reply(&RailCall::Health, Wire::Json, json).unwrap_err();
        assert!(matches!(err, BackendError::Contract(m) if m.starts_with("malformed reply")));
        let packed = wire::to_packed(&serde_json::json!({"status": "sideways"})).unwrap();
        let err = decode_reply(&RailCall::Health, Wire::Packed, &packed).unwrap_err();
        assert!(matches!(err, BackendError::Contract(m) if m.starts_with("malformed reply")));
    }
}
