//! Logs and traces. Logs go to stderr (`RELAY_LOG` filters,
//! `RELAY_LOG_FORMAT=json` for JSON lines). With `[telemetry]
//! otlp_endpoint` set, the same spans (each HTTP request's `http` span,
//! rail calls, …) are also exported over OTLP/HTTP in protobuf to
//! `<otlp_endpoint>/v1/traces`, batched on a thread of their own; off by
//! default. The standard `OTEL_BSP_*` variables tune the batching.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::{trace::SdkTracerProvider, Resource};
use relay_config::TelemetryConfig;
use tracing_subscriber::{fmt, layer::SubscriberExt, util::SubscriberInitExt, EnvFilter, Layer};

/// Why trace export could not start.
#[derive(Debug, thiserror::Error)]
#[error("telemetry.otlp_endpoint: {0}")]
pub struct TelemetryError(String);

/// Flushes and stops trace export when dropped (at the end of `main`).
#[derive(Debug, Default)]
pub struct TelemetryGuard(Option<SdkTracerProvider>);

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = p.shutdown();
        }
    }
}

/// Installs the global subscriber: logs at `default` level unless
/// `RELAY_LOG` says otherwise, and OTLP export when `telemetry` names an
/// endpoint. Call it outside any async runtime (the exporter's HTTP client
/// runs on its own thread).
pub fn init(
    default: &str,
    telemetry: Option<&TelemetryConfig>,
) -> Result<TelemetryGuard, TelemetryError> {
    let filter = EnvFilter::try_from_env("RELAY_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    // the ohttp crate traces derived private keys at trace level: never
    // let them out, whatever RELAY_LOG asks for
    let filter = filter.add_directive("ohttp=off".parse().expect("a directive"));
    let json = std::env::var("RELAY_LOG_FORMAT").is_ok_and(|v| v == "json");
    let logs = fmt::layer().with_writer(std::io::stderr);
    let logs = match json {
        true => logs.json().boxed(),
        false => logs.boxed(),
    };
    let provider = telemetry
        .and_then(|t| t.otlp_endpoint.as_deref().map(|e| (e, t)))
        .map(|(endpoint, t)| provider(endpoint, t.service_name.as_deref().unwrap_or("relay")))
        .transpose()?;
    let traces = provider
        .as_ref()
        .map(|p| tracing_opentelemetry::layer().with_tracer(p.tracer("relay")));
    tracing_subscriber::registry()
        .with(filter)
        .with(logs)
        .with(traces)
        .init();
    Ok(TelemetryGuard(provider))
}

/// The OTLP/HTTP (protobuf) exporter behind a batching provider.
fn provider(endpoint: &str, service: &str) -> Result<SdkTracerProvider, TelemetryError> {
    let base = endpoint.trim_end_matches('/');
    let url = match base.ends_with("/v1/traces") {
        true => base.to_string(),
        false => format!("{base}/v1/traces"),
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url)
        .build()
        .map_err(|e| TelemetryError(e.to_string()))?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(service.to_string())
                .build(),
        )
        .build())
}
