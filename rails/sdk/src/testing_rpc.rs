//! The host test double with read-only RPC: a [`RecordingHost`] (HTTP,
//! configuration, clock) plus canned JSON-RPC results by method, every call
//! recorded. For rails that read receipts or balances through the host.

use std::sync::Mutex;

use relay_plugin_api::{
    ChainRef, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel,
};

use crate::testing::RecordingHost;

/// One recorded RPC call: chain, method, params (JSON text).
pub type RpcCall = (ChainRef, String, String);

/// A [`RecordingHost`] that also answers RPC methods.
#[derive(Debug, Default)]
pub struct RpcRecordingHost {
    /// HTTP, configuration and clock.
    pub inner: RecordingHost,
    answers: Vec<(ChainRef, String, String)>,
    calls: Mutex<Vec<RpcCall>>,
}

impl RpcRecordingHost {
    /// Wraps `inner`.
    pub fn new(inner: RecordingHost) -> Self {
        RpcRecordingHost {
            inner,
            ..Default::default()
        }
    }

    /// Answers `method` on `chain` with the JSON `result` text.
    pub fn rpc_answer(mut self, chain: ChainRef, method: &str, result: &str) -> Self {
        self.answers.push((chain, method.into(), result.into()));
        self
    }

    /// Every RPC call the rail made, in order.
    pub fn rpc_calls(&self) -> Vec<RpcCall> {
        self.calls.lock().expect("rpc calls lock").clone()
    }
}

impl Host for RpcRecordingHost {
    fn http(&self, req: HttpRequest) -> Result<HttpResponse, HostError> {
        self.inner.http(req)
    }

    fn rpc(&self, chain: ChainRef, method: &str, params: &str) -> Result<String, HostError> {
        self.calls
            .lock()
            .expect("rpc calls lock")
            .push((chain, method.into(), params.into()));
        self.answers
            .iter()
            .find(|(c, m, _)| *c == chain && m == method)
            .map(|(_, _, r)| r.clone())
            .ok_or_else(|| {
                HostError::new(
                    HostErrorKind::Rpc,
                    format!("no answer for {method} on {chain} (test)"),
                )
            })
    }

    fn now_ms(&self) -> u64 {
        self.inner.now_ms()
    }

    fn deadline_ms(&self) -> u64 {
        self.inner.deadline_ms()
    }

    fn log(&self, level: LogLevel, message: &str) {
        self.inner.log(level, message)
    }

    fn config(&self, key: &str) -> Option<String> {
        Host::config(&self.inner, key)
    }
}
