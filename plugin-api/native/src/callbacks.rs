//! The host's capabilities as they cross the native boundary.
//!
//! [`HostCallbacks`] is the FFI-safe trait object the host lends a plugin for
//! one call; payloads are JSON text of the [`relay_plugin_api`] types. The
//! host wraps its typed [`Host`] in a [`HostAdapter`]; the plugin wraps the
//! object it receives in a [`NativeHost`], which is a [`Host`] again. Neither
//! side ever sees the other's types, only the shared contract.

// `#[sabi_trait]` generates undocumented helper items and impls inside a
// `const` block (abi_stable_derive 0.11).
#![allow(missing_docs, non_local_definitions)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use abi_stable::{
    sabi_trait,
    sabi_trait::TD_Opaque,
    sabi_types::RRef,
    std_types::{ROption, RResult, RStr, RString},
};
use relay_plugin_api::{
    ChainRef, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel,
};
use serde::{de::DeserializeOwned, Serialize};

use crate::export::panic_message;

/// Host capabilities, FFI-safe. Errors are the JSON of a [`HostError`].
#[sabi_trait]
pub trait HostCallbacks {
    /// `Host::http` with the JSON of an [`HttpRequest`]; replies with the
    /// JSON of an [`HttpResponse`].
    fn http(&self, request: RStr<'_>) -> RResult<RString, RString>;

    /// `Host::rpc`; `chain` is the JSON of a [`ChainRef`], `params` and the
    /// reply are JSON-RPC JSON text.
    fn rpc(&self, chain: RStr<'_>, method: RStr<'_>, params: RStr<'_>)
        -> RResult<RString, RString>;

    /// `Host::now_ms`.
    fn now_ms(&self) -> u64;

    /// `Host::deadline_ms`.
    fn deadline_ms(&self) -> u64;

    /// `Host::log`; `level` is a [`LogLevel`] code (see [`level_code`]).
    fn log(&self, level: u8, message: RStr<'_>);

    /// `Host::config`.
    #[sabi(last_prefix_field)]
    fn config(&self, key: RStr<'_>) -> ROption<RString>;
}

/// The callbacks object as lent to one call.
pub type HostCallbacksRef<'a> = HostCallbacks_TO<'a, RRef<'a, ()>>;

/// The wire code of a log level.
pub fn level_code(level: LogLevel) -> u8 {
    match level {
        LogLevel::Debug => 0,
        LogLevel::Info => 1,
        LogLevel::Warn => 2,
        LogLevel::Error => 3,
    }
}

/// The log level of a wire code; unknown codes read as `Info`.
pub fn level_from_code(code: u8) -> LogLevel {
    match code {
        0 => LogLevel::Debug,
        2 => LogLevel::Warn,
        3 => LogLevel::Error,
        _ => LogLevel::Info,
    }
}

fn malformed(what: &str, err: impl std::fmt::Display) -> HostError {
    HostError::new(
        HostErrorKind::Denied,
        format!("malformed {what} across the native boundary: {err}"),
    )
}

fn encode<T: Serialize>(value: &T) -> RString {
    // The contract types serialise infallibly (string keys, no custom errors).
    serde_json::to_string(value).unwrap_or_default().into()
}

fn decode<T: DeserializeOwned>(what: &str, json: &str) -> Result<T, HostError> {
    serde_json::from_str(json).map_err(|e| malformed(what, e))
}

/// Host side: a typed [`Host`] exposed as [`HostCallbacks`].
///
/// A panic in the host's capability code is caught here (it must not unwind
/// into the plugin's frames) and reported to the rail as a `Denied` error.
pub struct HostAdapter<'a>(pub &'a dyn Host);

impl<'a> HostAdapter<'a> {
    /// The FFI-safe object borrowing this adapter.
    pub fn as_callbacks(&self) -> HostCallbacksRef<'_> {
        HostCallbacks_TO::from_ptr(RRef::new(self), TD_Opaque)
    }

    fn guarded(
        &self,
        f: impl FnOnce(&dyn Host) -> Result<RString, HostError>,
    ) -> RResult<RString, RString> {
        let host = self.0;
        let result = catch_unwind(AssertUnwindSafe(|| f(host))).unwrap_or_else(|payload| {
            Err(HostError::new(
                HostErrorKind::Denied,
                format!("host capability panicked: {}", panic_message(&*payload)),
            ))
        });
        result.map_err(|e| encode(&e)).into()
    }
}

impl HostCallbacks for HostAdapter<'_> {
    fn http(&self, request: RStr<'_>) -> RResult<RString, RString> {
        self.guarded(|host| {
            let req: HttpRequest = decode("http request", request.as_str())?;
            host.http(req).map(|resp| encode(&resp))
        })
    }

    fn rpc(
        &self,
        chain: RStr<'_>,
        method: RStr<'_>,
        params: RStr<'_>,
    ) -> RResult<RString, RString> {
        self.guarded(|host| {
            let chain: ChainRef = decode("rpc chain", chain.as_str())?;
            host.rpc(chain, method.as_str(), params.as_str())
                .map(RString::from)
        })
    }

    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }

    fn deadline_ms(&self) -> u64 {
        self.0.deadline_ms()
    }

    fn log(&self, level: u8, message: RStr<'_>) {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            self.0.log(level_from_code(level), message.as_str())
        }));
    }

    fn config(&self, key: RStr<'_>) -> ROption<RString> {
        catch_unwind(AssertUnwindSafe(|| self.0.config(key.as_str())))
            .ok()
            .flatten()
            .map(RString::from)
            .into()
    }
}

/// Plugin side: the lent [`HostCallbacks`] as a typed [`Host`].
pub struct NativeHost<'a>(pub HostCallbacksRef<'a>);

impl NativeHost<'_> {
    fn reply(what: &str, result: RResult<RString, RString>) -> Result<String, HostError> {
        match result.into_result() {
            Ok(json) => Ok(json.into_string()),
            Err(err) => Err(decode(what, err.as_str())?),
        }
    }
}

impl Host for NativeHost<'_> {
    fn http(&self, req: HttpRequest) -> Result<HttpResponse, HostError> {
        let json = Self::reply("http error", self.0.http(encode(&req).as_rstr()))?;
        decode("http response", &json)
    }

    fn rpc(&self, chain: ChainRef, method: &str, params: &str) -> Result<String, HostError> {
        let chain = encode(&chain);
        let result = self.0.rpc(
            chain.as_rstr(),
            RStr::from_str(method),
            RStr::from_str(params),
        );
        Self::reply("rpc error", result)
    }

    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }

    fn deadline_ms(&self) -> u64 {
        self.0.deadline_ms()
    }

    fn log(&self, level: LogLevel, message: &str) {
        self.0.log(level_code(level), RStr::from_str(message));
    }

    fn config(&self, key: &str) -> Option<String> {
        self.0
            .config(RStr::from_str(key))
            .into_option()
            .map(RString::into_string)
    }
}
