//! `[telemetry] otlp_endpoint`: a real `relay serve` process exports its
//! request spans over OTLP/HTTP (protobuf, `POST /v1/traces`) to a
//! collector — here a small axum server in the test that decodes what
//! arrives. Export is off unless configured (`HostConfig::default()` has
//! no endpoint; `host/config/tests/production_profile.rs`).

use crate::common::{free_port, wait_ready};
use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest,
    common::v1::{any_value::Value as Any, KeyValue},
};
use prost::Message;
use relay_config::HostConfig;
use std::{
    process::{Command, Stdio},
    time::Duration,
};
use tokio::sync::mpsc;

/// A collector on loopback: every `POST /v1/traces` body, decoded.
async fn collector() -> (String, mpsc::UnboundedReceiver<ExportTraceServiceRequest>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                let req = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                let _ = tx.send(req);
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, rx)
}

fn string_attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attrs.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            Any::StringValue(s) => Some(s.as_str()),
            _ => None,
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn relay_serve_exports_its_request_spans_over_otlp_http() {
    let (endpoint, mut rx) = collector().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("plugins")).unwrap();
    let port = free_port();
    let mut config = HostConfig {
        listen: format!("127.0.0.1:{port}").parse().unwrap(),
        data_dir: relay_fixtures::data_dir(&dir.path().join("data")),
        plugins_dir: dir.path().join("plugins"),
        ..HostConfig::default()
    };
    config.runtime.reload_interval_ms = 0;
    config.telemetry.otlp_endpoint = Some(endpoint);
    config.telemetry.service_name = Some("relay-otlp-test".into());
    let file = dir.path().join("relay.toml");
    std::fs::write(&file, toml::to_string(&config).unwrap()).unwrap();
    let mut host = crate::common::HostProcess::spawn(
        Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(["serve", "--config"])
            .arg(&file)
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&base).await;
    let r = crate::common::fetch(format!("{base}/api/route/chains"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // Batches arrive every 100 ms; the request's span is in one of them.
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(req) = rx.recv().await {
            for rs in &req.resource_spans {
                let service = rs
                    .resource
                    .as_ref()
                    .and_then(|r| string_attr(&r.attributes, "service.name"));
                for span in rs.scope_spans.iter().flat_map(|s| &s.spans) {
                    if span.name == "http"
                        && string_attr(&span.attributes, "path") == Some("/api/route/chains")
                    {
                        assert_eq!(service, Some("relay-otlp-test"));
                        assert_eq!(span.trace_id.len(), 16);
                        assert!(span.end_time_unix_nano >= span.start_time_unix_nano);
                        return true;
                    }
                }
            }
        }
        false
    })
    .await;
    host.kill().unwrap();
    host.wait().unwrap();
    assert_eq!(
        found,
        Ok(true),
        "no `http` span for /api/route/chains arrived"
    );
}
