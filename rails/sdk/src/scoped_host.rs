//! A rail that speaks to several upstreams (the quote-only comparators)
//! reuses each upstream's client unchanged by lending it a host whose
//! configuration is scoped: the client reads `base_url`, the operator writes
//! `allbridge.base_url`. Every other capability passes straight through, so
//! policy (egress, RPC, deadlines, credentials by reference) is untouched.

use relay_plugin_api::{ChainRef, Host, HostError, HttpRequest, HttpResponse, LogLevel};

/// `host` with configuration keys read under `prefix.`.
pub struct ScopedHost<'a> {
    host: &'a dyn Host,
    prefix: &'static str,
}

impl<'a> ScopedHost<'a> {
    /// Reads `key` as `{prefix}.{key}` from `host`'s configuration.
    pub fn new(host: &'a dyn Host, prefix: &'static str) -> Self {
        ScopedHost { host, prefix }
    }
}

impl Host for ScopedHost<'_> {
    fn http(&self, req: HttpRequest) -> Result<HttpResponse, HostError> {
        self.host.http(req)
    }

    fn rpc(&self, chain: ChainRef, method: &str, params: &str) -> Result<String, HostError> {
        self.host.rpc(chain, method, params)
    }

    fn now_ms(&self) -> u64 {
        self.host.now_ms()
    }

    fn deadline_ms(&self) -> u64 {
        self.host.deadline_ms()
    }

    fn log(&self, level: LogLevel, message: &str) {
        self.host.log(level, message)
    }

    fn config(&self, key: &str) -> Option<String> {
        self.host.config(&format!("{}.{key}", self.prefix))
    }
}
