//! The HTTP edge against hostile clients, through the real server on an
//! ephemeral port: body, URI and content-type limits answered with the JSON
//! error object, duplicate keys and absurd amounts refused, slow clients
//! cut off at the read timeouts, made-up API keys limited like their IP,
//! and `GET /metrics` in the Prometheus text format.

use crate::common::{self, bare_host, send, Answer};
use std::time::{Duration, Instant};

use relay_devnet::{Devnet, DevnetConfig};
use serde_json::json;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

const SRC: u64 = 8453;
const DST: u64 = 42161;
/// The read timeouts these tests configure.
const READ_TIMEOUT_MS: u64 = 400;

fn post(
    base: &str,
    path: &str,
    content_type: &str,
    body: impl Into<String>,
) -> reqwest::RequestBuilder {
    crate::common::http()
        .post(format!("{base}{path}"))
        .header("content-type", content_type)
        .body(body.into())
}

fn code(a: &Answer) -> (u16, Option<&str>) {
    (a.status, a.body["errorCode"].as_str())
}

/// Writes `head` at once, then `trickle` one byte every 100 ms, while
/// reading whatever the server answers; returns the answer and how long
/// after the connect the server closed the connection.
async fn trickle(base: &str, head: &str, bytes: &'static [u8]) -> (String, Duration) {
    let addr = base.trim_start_matches("http://");
    let started = Instant::now();
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut rd, mut wr) = stream.into_split();
    wr.write_all(head.as_bytes()).await.unwrap();
    let writer = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        for b in bytes {
            tick.tick().await;
            if wr.write_all(&[*b]).await.is_err() {
                return;
            }
        }
        // Trickled out: hold the connection open without sending more.
        std::future::pending::<()>().await;
    });
    let mut answer = Vec::new();
    let bound = Duration::from_millis(READ_TIMEOUT_MS * 3);
    let read = tokio::time::timeout(bound, async {
        let mut buf = [0u8; 4096];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    writer.abort();
    assert!(
        read.is_ok(),
        "the connection was still open {bound:?} after connecting"
    );
    (
        String::from_utf8_lossy(&answer).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_requests_get_json_errors_and_the_metrics_count_them() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = common::serve(&devnet, dir.path(), |_| {}).await;
    let base = h.base.as_str();
    let json = "application/json";

    // One body cap for every endpoint, whether the length is declared or
    // the body is chunked.
    let pad = "x".repeat(65 * 1024);
    let big = json!({"fromChain": SRC, "toChain": DST, "amount": "1", "pad": pad}).to_string();
    for path in [
        "/api/route/quote",
        "/api/route/execute",
        "/api/route/compare",
    ] {
        let a = send(post(base, path, json, big.clone())).await;
        assert_eq!(
            code(&a),
            (413, Some("BODY_TOO_LARGE")),
            "{path}: {}",
            a.body
        );
    }
    let chunked = format!(
        "POST /api/route/execute HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
        big.len()
    );
    let (answer, _) = trickle(base, &chunked, b"").await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"BODY_TOO_LARGE\""), "{answer}");

    // A long request target.
    let long = format!("{base}/api/status?pad={}", "x".repeat(9 * 1024));
    let a = send(crate::common::http().get(long)).await;
    assert_eq!(code(&a), (414, Some("URI_TOO_LONG")));

    // Large or many headers: the JSON 431, not hyper's empty answer.
    let a = send(
        crate::common::http()
            .get(format!("{base}/api/status"))
            .header("cookie", "x".repeat(20 * 1024)),
    )
    .await;
    assert_eq!(code(&a), (431, Some("HEADERS_TOO_LARGE")), "{}", a.body);
    let mut many = crate::common::http().get(format!("{base}/api/status"));
    for i in 0..150 {
        many = many.header(format!("x-pad-{i}"), "1");
    }
    let a = send(many).await;
    assert_eq!(code(&a), (431, Some("HEADERS_TOO_LARGE")), "{}", a.body);
    assert_eq!(a.body["retryable"], false);

    // Bodies that are not declared JSON never reach a handler, and a
    // browser still sees why (CORS headers on the refusal).
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "text/plain; charset=utf-8",
    ] {
        let a = send(
            post(
                base,
                "/api/route/execute",
                ct,
                json!({"fromChain": SRC}).to_string(),
            )
            .header("origin", "https://elsewhere.example"),
        )
        .await;
        assert_eq!(code(&a), (415, Some("UNSUPPORTED_MEDIA_TYPE")), "{ct}");
        assert_eq!(a.header("access-control-allow-origin"), Some("*"), "{ct}");
    }
    let quote = json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "amount": "5000000"});
    let a = send(post(
        base,
        "/api/route/quote",
        "application/json; charset=utf-8",
        quote.to_string(),
    ))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);

    // A repeated key is refused by name, never last-wins, on every JSON endpoint.
    let twice = format!(
        r#"{{"fromChain":{SRC},"toChain":{DST},"fromToken":"USDC","amount":"5000000","amount":"1"}}"#
    );
    for path in [
        "/api/route/quote",
        "/api/route/execute",
        "/api/route/preflight",
    ] {
        let a = send(post(base, path, json, twice.clone())).await;
        assert_eq!(code(&a), (400, Some("DUPLICATE_KEY")), "{path}: {}", a.body);
        assert_eq!(a.body["field"], "amount", "{path}");
    }

    // 2^256 − 1 USDC is not a quote.
    let max = alloy::primitives::U256::MAX.to_string();
    let absurd = json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "amount": max});
    let a = send(post(base, "/api/route/quote", json, absurd.to_string())).await;
    assert_eq!(code(&a), (400, Some("INVALID_AMOUNT")), "{}", a.body);
    assert_eq!(a.body["field"], "amount");

    // Unknown paths are JSON too; every answer carries a request id, the
    // client's own when it sent one.
    let a = send(crate::common::http().get(format!("{base}/nowhere"))).await;
    assert_eq!(code(&a), (404, Some("NOT_FOUND")));
    assert!(a.header("x-request-id").is_some_and(|id| id.len() >= 32));
    let a = send(
        crate::common::http()
            .get(format!("{base}/api/status"))
            .header("x-request-id", "trace-me-1"),
    )
    .await;
    assert_eq!(a.header("x-request-id"), Some("trace-me-1"));

    // The metrics saw all of it.
    let resp = crate::common::fetch(format!("{base}/metrics"))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ct.starts_with("text/plain"), "{ct}");
    let text = resp.text().await.unwrap();
    assert!(
        text.contains("# TYPE relay_http_requests_total counter"),
        "{text}"
    );
    let counted = |route: &str, status: &str| {
        text.lines().any(|l| {
            l.starts_with("relay_http_requests_total{")
                && l.contains(&format!("route=\"{route}\""))
                && l.contains(&format!("status=\"{status}\""))
        })
    };
    assert!(counted("/api/route/quote", "200"), "{text}");
    assert!(counted("/api/route/execute", "415"), "{text}");
    assert!(counted("(unmatched)", "404"), "{text}");
    assert!(text.contains("# TYPE relay_http_request_duration_seconds histogram"));
    assert!(
        text.lines()
            .any(|l| l.starts_with("relay_rail_calls_total{") && l.contains("method=\"quote\"")),
        "{text}"
    );
    assert!(
        text.contains(&format!("relay_relayer_native_balance{{chain=\"{SRC}\"}}")),
        "{text}"
    );
    assert!(text.contains("relay_routes{status=\"DONE\"}"), "{text}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_clients_are_cut_off_at_the_read_timeouts() {
    let dir = tempfile::tempdir().unwrap();
    let h = bare_host(dir.path(), |c| {
        c.http.header_read_timeout_ms = READ_TIMEOUT_MS;
        c.http.body_read_timeout_ms = READ_TIMEOUT_MS;
    })
    .await;

    // Headers one byte at a time: the connection is closed, unanswered.
    let (answer, after) = trickle(
        &h.base,
        "GET /api/status HTTP/1.1\r\nhost: x\r\n",
        b"x-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    )
    .await;
    assert!(
        after >= Duration::from_millis(READ_TIMEOUT_MS),
        "closed after {after:?}"
    );
    assert!(!answer.contains("200 OK"), "{answer}");

    // A body one byte at a time: 408 as the JSON error object, then closed.
    let (answer, after) = trickle(
        &h.base,
        "POST /api/route/quote HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 65\r\n\r\n",
        b"{\"fromChain\": 8453, \"toChain\": 42161, \"amount\": \"50000000000000\"}",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"REQUEST_TIMEOUT\""), "{answer}");
    assert!(
        after >= Duration::from_millis(READ_TIMEOUT_MS),
        "answered after {after:?}"
    );

    // A kept-alive connection that goes quiet after its answer is closed too.
    let (answer, after) =
        trickle(&h.base, "GET /api/status HTTP/1.1\r\nhost: x\r\n\r\n", b"").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        after >= Duration::from_millis(READ_TIMEOUT_MS),
        "closed after {after:?}"
    );

    // A prompt client on the same host is served as usual.
    let a = send(crate::common::http().get(format!("{}/api/status", h.base))).await;
    assert_eq!(a.status, 200, "{}", a.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn made_up_api_keys_are_limited_like_their_ip() {
    let dir = tempfile::tempdir().unwrap();
    let h = bare_host(dir.path(), |c| c.limits.enabled = true).await;
    let execute = |i: usize| {
        post(&h.base, "/api/route/execute", "application/json", "{}")
            .header("x-relay-sandbox", "1")
            .header("x-relay-key", format!("ak_made_up_{i:04}"))
    };
    for i in 0..8 {
        let a = send(execute(i)).await;
        assert!(
            (400..500).contains(&a.status) && a.status != 429,
            "{i}: {} {}",
            a.status,
            a.body
        );
        assert_eq!(a.header("x-relay-key-status"), Some("unrecognised"));
        assert_eq!(a.header("x-ratelimit-limit"), Some("8"));
    }
    let refused = send(execute(8)).await;
    assert_eq!(
        code(&refused),
        (429, Some("RATE_LIMITED")),
        "{}",
        refused.body
    );
    assert_eq!(refused.header("x-relay-key-status"), Some("unrecognised"));
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    assert!(refused.header("retry-after").is_some());
}
