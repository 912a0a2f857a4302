//! The seam between the supervisor and a packaging: one call in, one reply out.
//!
//! Native and wasm backends implement [`PluginBackend`]; nothing above this
//! module knows which packaging a rail came from.

use std::sync::Arc;

use relay_plugin_api::{
    ExecutionPlan, PrepareRequest, QuoteRequest, RailError, RailHealth, RailManifest, RailQuote,
    TrackRequest, TrackStatus,
};

use relay_capabilities::CallCapabilities;

/// How a rail is packaged: the registry's plugin kind.
pub use relay_registry::PluginKind as Packaging;

/// One call into a rail.
// One short-lived value per call: boxing the large variant would add an
// allocation to every call and buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum RailCall {
    /// `manifest()`.
    Manifest,
    /// `quote(req)`.
    Quote(QuoteRequest),
    /// `prepare(req)`.
    Prepare(PrepareRequest),
    /// `track(req)`.
    Track(TrackRequest),
    /// `health()`.
    Health,
}

impl RailCall {
    /// The method name, for spans and errors.
    pub fn method(&self) -> &'static str {
        match self {
            RailCall::Manifest => "manifest",
            RailCall::Quote(_) => "quote",
            RailCall::Prepare(_) => "prepare",
            RailCall::Track(_) => "track",
            RailCall::Health => "health",
        }
    }
}

/// A rail's answer to a [`RailCall`] of the same variant.
#[derive(Clone, Debug, PartialEq)]
pub enum RailReply {
    /// For `Manifest`.
    Manifest(RailManifest),
    /// For `Quote`.
    Quote(RailQuote),
    /// For `Prepare`.
    Plan(ExecutionPlan),
    /// For `Track`.
    Track(TrackStatus),
    /// For `Health`.
    Health(RailHealth),
}

/// Why a call did not produce a reply from the rail's own code.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The rail returned a typed error (normal operation).
    #[error(transparent)]
    Rail(#[from] RailError),
    /// The rail panicked (native) or trapped (wasm).
    #[error("rail crashed: {0}")]
    Crashed(String),
    /// The call ran past its deadline (wasm: epoch interruption).
    #[error("rail missed its deadline")]
    DeadlineExceeded,
    /// The call exceeded a resource limit (wasm memory).
    #[error("rail exceeded a resource limit: {0}")]
    ResourceLimit(String),
    /// The reply does not match the call or the contract (bad JSON, wrong variant).
    #[error("rail broke the contract: {0}")]
    Contract(String),
}

/// A loaded plugin of either packaging.
#[async_trait::async_trait]
pub trait PluginBackend: Send + Sync + 'static {
    /// The packaging.
    fn packaging(&self) -> Packaging;

    /// Runs one call with the capabilities lent for it. Implementations must
    /// return by `caps.deadline()` where they can (wasm: epoch deadline);
    /// the supervisor enforces it regardless.
    async fn call(
        &self,
        call: RailCall,
        caps: Arc<CallCapabilities>,
    ) -> Result<RailReply, BackendError>;
}
