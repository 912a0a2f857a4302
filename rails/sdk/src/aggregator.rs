//! The one shape every EVM bridge aggregator rail has: check the lane
//! against its coverage, send the upstream's quote request, parse the
//! answer, plan from the quote's transaction, track through the upstream's
//! status API, probe health with a status request. An adapter supplies the
//! upstream-specific halves ([`Aggregator`]) and [`aggregator_rail!`]
//! writes its `Rail` implementation.

use relay_plugin_api::{
    ExecutionPlan, Host, HttpRequest, HttpResponse, PrepareRequest, QuoteRequest, RailError,
    RailQuote, TrackRequest, TrackStatus,
};

use crate::{lane::Transfer, plan::EvmQuoteDetail, EvmCoverage, Upstream};

/// The upstream-specific halves of an aggregator rail.
pub trait Aggregator {
    /// Rail id.
    const ID: &'static str;
    /// Display name.
    const NAME: &'static str;
    /// The upstream's API host (the manifest's egress).
    const EGRESS: &'static str;
    /// The upstream documentation version the wire format follows.
    const DOC: &'static str;
    /// Lanes and assets.
    const COVERAGE: EvmCoverage;
    /// The upstream (base URL, errors).
    const UPSTREAM: Upstream;

    /// The upstream's quote request for a checked transfer.
    fn quote_request(host: &dyn Host, req: &QuoteRequest, t: &Transfer) -> HttpRequest;

    /// The upstream's quote answer as a rail quote.
    fn parse_quote(
        host: &dyn Host,
        req: &QuoteRequest,
        t: &Transfer,
        resp: &HttpResponse,
    ) -> Result<RailQuote, RailError>;

    /// The plan of an accepted quote (default: the quote's own transaction).
    fn prepare(_host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        EvmQuoteDetail::plan(req)
    }

    /// Upstream progress of a submitted route.
    fn track(host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError>;

    /// A cheap status request whose answer shows the upstream is up.
    fn probe_request(host: &dyn Host) -> HttpRequest;

    /// The documented shapes of the probe's answer
    /// ([`crate::health::probe_documented`]; default: any JSON).
    const PROBE_SHAPES: crate::health::ProbeShapes = &[];

    /// Quote: coverage check, upstream request, parse.
    fn quote(host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        let transfer = Self::COVERAGE.check(host, req)?;
        let http = Self::quote_request(host, req, &transfer);
        let resp = Self::UPSTREAM.send(host, http)?;
        Self::parse_quote(host, req, &transfer, &resp)
    }
}

/// Implements [`Aggregator`] from an adapter's upstream-specific functions,
/// then `relay_plugin_api::Rail` on top of it:
///
/// ```text
/// relay_rail_sdk::aggregator_rail! {
///     Lifi {
///         id: ID, name: "LI.FI", egress: "li.quest", doc: UPSTREAM_DOC,
///         coverage: COVERAGE, upstream: UPSTREAM,
///         quote_request: quote::request, parse_quote: quote::parse,
///         track: status::track, probe_request: status::probe_request,
///         // optional; default: any JSON answer to the probe
///         probe_shapes: &[&["status"], &["message", "code"]],
///         // optional; default: the quote's own transaction
///         prepare: quote::build,
///     }
/// }
/// ```
#[macro_export]
macro_rules! aggregator_rail {
    ($ty:ident {
        id: $id:expr, name: $name:expr, egress: $egress:expr, doc: $doc:expr,
        coverage: $coverage:expr, upstream: $upstream:expr,
        quote_request: $quote_request:path, parse_quote: $parse_quote:path,
        track: $track:path, probe_request: $probe:path
        $(, probe_shapes: $shapes:expr)?
        $(, prepare: $prepare:path)? $(,)?
    }) => {
        impl $crate::aggregator::Aggregator for $ty {
            const ID: &'static str = $id;
            const NAME: &'static str = $name;
            const EGRESS: &'static str = $egress;
            const DOC: &'static str = $doc;
            const COVERAGE: $crate::lane::EvmCoverage = $coverage;
            const UPSTREAM: $crate::Upstream = $upstream;
            $(const PROBE_SHAPES: $crate::health::ProbeShapes = $shapes;)?

            fn quote_request(
                host: &dyn relay_plugin_api::Host,
                req: &relay_plugin_api::QuoteRequest,
                t: &$crate::Transfer,
            ) -> relay_plugin_api::HttpRequest {
                $quote_request(host, req, t)
            }

            fn parse_quote(
                host: &dyn relay_plugin_api::Host,
                req: &relay_plugin_api::QuoteRequest,
                t: &$crate::Transfer,
                resp: &relay_plugin_api::HttpResponse,
            ) -> Result<relay_plugin_api::RailQuote, relay_plugin_api::RailError> {
                $parse_quote(host, req, t, resp)
            }

            $(
                fn prepare(
                    host: &dyn relay_plugin_api::Host,
                    req: &relay_plugin_api::PrepareRequest,
                ) -> Result<relay_plugin_api::ExecutionPlan, relay_plugin_api::RailError> {
                    $prepare(host, req)
                }
            )?

            fn track(
                host: &dyn relay_plugin_api::Host,
                req: &relay_plugin_api::TrackRequest,
            ) -> Result<relay_plugin_api::TrackStatus, relay_plugin_api::RailError> {
                $track(host, req)
            }

            fn probe_request(host: &dyn relay_plugin_api::Host) -> relay_plugin_api::HttpRequest {
                $probe(host)
            }
        }

        $crate::aggregator_rail!(@rail $ty);
    };
    (@rail $ty:ty) => {
        impl relay_plugin_api::Rail for $ty {
            fn manifest(&self) -> relay_plugin_api::RailManifest {
                use $crate::aggregator::Aggregator as A;
                <$ty as A>::COVERAGE.aggregator_manifest(
                    <$ty as A>::ID,
                    <$ty as A>::NAME,
                    <$ty as A>::EGRESS,
                    <$ty as A>::DOC,
                )
            }

            fn quote(
                &self,
                host: &dyn relay_plugin_api::Host,
                req: &relay_plugin_api::QuoteRequest,
            ) -> Result<relay_plugin_api::RailQuote, relay_plugin_api::RailError> {
                <$ty as $crate::aggregator::Aggregator>::quote(host, req)
            }

            fn prepare(
                &self,
                host: &dyn relay_plugin_api::Host,
                req: &relay_plugin_api::PrepareRequest,
            ) -> Result<relay_plugin_api::ExecutionPlan, relay_plugin_api::RailError> {
                <$ty as $crate::aggregator::Aggregator>::prepare(host, req)
            }

            fn track(
                &self,
                host: &dyn relay_plugin_api::Host,
                req: &relay_plugin_api::TrackRequest,
            ) -> Result<relay_plugin_api::TrackStatus, relay_plugin_api::RailError> {
                <$ty as $crate::aggregator::Aggregator>::track(host, req)
            }

            fn health(&self, host: &dyn relay_plugin_api::Host) -> relay_plugin_api::RailHealth {
                use $crate::aggregator::Aggregator as A;
                $crate::health::probe_documented(
                    host,
                    &<$ty as A>::UPSTREAM,
                    <$ty as A>::probe_request(host),
                    &<$ty as A>::COVERAGE.lane_names(),
                    <$ty as A>::PROBE_SHAPES,
                )
            }
        }
    };
}
