//! wasmtime bindings of the `relay:rail` world, their conversions to the
//! contract types, and the host side of `relay:rail/host`.
//!
//! Every host import answers from the [`CallCapabilities`] lent to the one
//! call the store belongs to; the imports are async, so an HTTP request of
//! the rail suspends the guest's fiber, not a host thread.

use relay_capabilities::CallCapabilities;
use relay_plugin_wasm::{Lift, Lower};
use std::sync::Arc;
use wasmtime::{ResourceLimiter, StoreLimits};

wasmtime::component::bindgen!({
    path: "../../plugin-api/wit",
    world: "rail-plugin",
    imports: { default: async },
    exports: { default: async },
});

use self::relay::rail::types as wit;

relay_plugin_wasm::wit_conversions!(wit);

/// What a store holds for one call: the capabilities lent to it and its
/// resource limits.
pub(super) struct CallState {
    caps: Arc<CallCapabilities>,
    limits: StoreLimits,
    /// Set when the limiter refused to grow a memory or table, so a trap
    /// that follows is reported as a resource limit, not a crash.
    refused: Option<String>,
    /// The panic line the guest logged before aborting, if it did.
    panic: Option<String>,
}

impl CallState {
    /// State for one call.
    pub(super) fn new(caps: Arc<CallCapabilities>, limits: StoreLimits) -> Self {
        CallState {
            caps,
            limits,
            refused: None,
            panic: None,
        }
    }

    /// Why growth was refused during the call, if it was.
    pub(super) fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// The panic the guest reported before it trapped, if it did.
    pub(super) fn panic_message(&self) -> Option<&str> {
        self.panic.as_deref()
    }
}

impl ResourceLimiter for CallState {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let granted = self.limits.memory_growing(current, desired, maximum)?;
        if !granted {
            self.refused = Some(format!(
                "memory growth from {current} to {desired} bytes refused"
            ));
        }
        Ok(granted)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let granted = self.limits.table_growing(current, desired, maximum)?;
        if !granted {
            self.refused = Some(format!(
                "table growth from {current} to {desired} elements refused"
            ));
        }
        Ok(granted)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

impl wit::Host for CallState {}

/// Lifts what the guest passed to an import; a value that does not lift is
/// refused as a capability error (the guest broke the contract, not the host).
fn lift_arg<W: Lift<A>, A>(w: W) -> Result<A, wit::HostError> {
    w.lift().map_err(|e| wit::HostError {
        kind: wit::HostErrorKind::Denied,
        message: format!("malformed argument: {e}"),
    })
}

impl relay::rail::host::Host for CallState {
    async fn http(&mut self, req: wit::HttpRequest) -> Result<wit::HttpResponse, wit::HostError> {
        let req = lift_arg(req)?;
        self.caps
            .http(req)
            .await
            .map(Lower::lower)
            .map_err(Lower::lower)
    }

    async fn rpc(
        &mut self,
        chain: wit::ChainRef,
        method: String,
        params: String,
    ) -> Result<String, wit::HostError> {
        let chain = lift_arg(chain)?;
        self.caps
            .rpc(chain, &method, &params)
            .await
            .map_err(Lower::lower)
    }

    async fn now_ms(&mut self) -> u64 {
        self.caps.now_ms()
    }

    async fn deadline_ms(&mut self) -> u64 {
        self.caps.deadline_ms()
    }

    async fn log(&mut self, level: wit::LogLevel, message: String) {
        // Lifting an enum cannot fail; the fallback only keeps the types honest.
        let level = level.lift().unwrap_or(relay_plugin_api::LogLevel::Error);
        if let Some(panic) = message.strip_prefix(relay_plugin_wasm::PANIC_LOG_PREFIX) {
            self.panic = Some(panic.chars().take(500).collect());
        }
        self.caps.log(level, &message);
    }

    async fn config(&mut self, key: String) -> Option<String> {
        self.caps.config(&key)
    }
}
