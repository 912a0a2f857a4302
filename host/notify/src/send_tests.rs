use std::{
    net::IpAddr,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Mutex,
    },
};

use axum::{
    body::Body,
    http::{HeaderMap, StatusCode},
    response::IntoResponse,
    routing::post,
    Router,
};
use http_body_util::StreamBody;
use hyper::body::Frame;
use rustls::pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer};

use super::*;
use crate::ssrf::{check_url, StaticResolver};

/// Hosts the test senders allow to be loopback.
const LOCAL: [&str; 3] = ["127.0.0.1", "receiver.test", "other.test"];

fn config(allow: &[&str], timeout_ms: u64) -> NotifyConfig {
    NotifyConfig {
        allow_http: allow.iter().map(|s| s.to_string()).collect(),
        timeout_ms,
        max_response_bytes: 1024,
        ..NotifyConfig::default()
    }
}

fn local_sender(timeout_ms: u64) -> Sender {
    let resolver = StaticResolver::default()
        .with(
            "receiver.test",
            ["127.0.0.1".parse::<IpAddr>().expect("ip")],
        )
        .with("other.test", ["127.0.0.1".parse::<IpAddr>().expect("ip")]);
    Sender::with_resolver(&config(&LOCAL, timeout_ms), Arc::new(resolver))
}

fn target(url: &str) -> Target {
    let policy = OutboundPolicy::allowing(LOCAL).expect("ok");
    check_url(url, &policy).expect(url)
}

async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    addr
}

/// A listener that only counts the connections it accepts.
async fn counting_listener() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    tokio::spawn(async move {
        while let Ok((_socket, _)) = listener.accept().await {
            c.fetch_add(1, Ordering::SeqCst);
        }
    });
    (addr, count)
}

/// Connects once itself and waits for the listener to count it: then the
/// count holds every connection made before.
async fn connections_before_probe(addr: SocketAddr, count: &AtomicUsize) -> usize {
    let before = count.load(Ordering::SeqCst);
    let _probe = TcpStream::connect(addr).await.expect("probe connects");
    let deadline = Instant::now() + Duration::from_secs(5);
    while count.load(Ordering::SeqCst) == before {
        assert!(Instant::now() < deadline, "probe never accepted");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    count.load(Ordering::SeqCst) - 1
}

/// What a receiver saw of a request: headers and body.
type Seen = (HeaderMap, Vec<u8>);

fn signed(body: &[u8]) -> Vec<(&'static str, String)> {
    crate::sign::headers("msg_1", 1_700_000_000, body, Some("secret"))
}

#[tokio::test]
async fn a_2xx_answer_is_ok_and_the_request_carries_body_and_headers() {
    let seen: Arc<Mutex<Option<Seen>>> = Arc::default();
    let s = seen.clone();
    let app = Router::new().route(
        "/hook",
        post(move |h: HeaderMap, body: Bytes| async move {
            *s.lock().expect("lock") = Some((h, body.to_vec()));
            StatusCode::NO_CONTENT
        }),
    );
    let addr = serve(app).await;
    let body = br#"{"event":"route.done"}"#.to_vec();
    let url = format!("http://127.0.0.1:{}/hook?x=1", addr.port());
    let a = local_sender(5_000)
        .post(&target(&url), body.clone(), signed(&body))
        .await;
    assert_eq!(
        (a.ok, a.status, a.error.as_deref()),
        (true, Some(204), None)
    );
    let (h, got) = seen.lock().expect("lock").take().expect("request seen");
    assert_eq!(got, body);
    let header = |n: &str| {
        h.get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(header("content-type"), "application/json");
    assert_eq!(header("user-agent"), USER_AGENT);
    assert_eq!(header("host"), format!("127.0.0.1:{}", addr.port()));
    assert_eq!(header("webhook-id"), "msg_1");
    assert_eq!(header("webhook-timestamp"), "1700000000");
    assert!(header("webhook-signature").starts_with("v1,"));
    assert!(header("x-relay-signature").starts_with("sha256="));
}

#[tokio::test]
async fn a_500_is_not_ok_and_keeps_its_status_and_a_bounded_excerpt() {
    let app = Router::new().route(
        "/",
        post(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom\n".repeat(10_000)) }),
    );
    let addr = serve(app).await;
    let url = format!("http://127.0.0.1:{}/", addr.port());
    let a = local_sender(5_000)
        .post(&target(&url), b"{}".to_vec(), vec![])
        .await;
    assert!(!a.ok);
    assert_eq!(a.status, Some(500));
    let e = a.error.expect("error");
    assert!(
        e.starts_with("receiver answered 500 Internal Server Error: boom boom"),
        "{e}"
    );
    assert!(e.chars().count() < QUOTE_MAX + 60, "{e}");
}

#[tokio::test]
async fn a_redirect_is_refused_and_its_location_never_requested() {
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let second = serve(Router::new().fallback(move || async move {
        h.fetch_add(1, Ordering::SeqCst);
        "followed"
    }))
    .await;
    let location = format!("http://127.0.0.1:{}/stolen", second.port());
    let loc = location.clone();
    let first = serve(Router::new().route(
        "/",
        post(move || async move { (StatusCode::FOUND, [("location", loc)]) }),
    ))
    .await;
    let url = format!("http://127.0.0.1:{}/", first.port());
    let a = local_sender(5_000)
        .post(&target(&url), b"{}".to_vec(), vec![])
        .await;
    assert!(!a.ok);
    assert_eq!(a.status, Some(302));
    let e = a.error.expect("error");
    assert_eq!(
        e,
        format!("redirect refused (302 Found, Location {location})")
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the Location was requested");
}

#[tokio::test]
async fn a_slow_receiver_times_out() {
    let app = Router::new().route("/", post(std::future::pending::<&'static str>));
    let addr = serve(app).await;
    let url = format!("http://127.0.0.1:{}/", addr.port());
    let a = local_sender(300)
        .post(&target(&url), b"{}".to_vec(), vec![])
        .await;
    assert!(!a.ok);
    assert_eq!(a.status, None);
    assert_eq!(a.error.as_deref(), Some("timed out after 300 ms"));
    assert!((300..5_000).contains(&a.duration_ms), "{}", a.duration_ms);
}

fn endless() -> Body {
    let chunk = Bytes::from(vec![b'x'; 8192]);
    Body::from_stream(futures::stream::repeat_with(move || {
        Ok::<_, std::convert::Infallible>(chunk.clone())
    }))
}

#[tokio::test]
async fn an_endless_2xx_body_is_cut_at_the_bound_and_the_attempt_succeeds() {
    let app = Router::new().route("/", post(|| async { endless().into_response() }));
    let addr = serve(app).await;
    let url = format!("http://127.0.0.1:{}/", addr.port());
    let timeout_ms = 20_000;
    let a = local_sender(timeout_ms)
        .post(&target(&url), b"{}".to_vec(), vec![])
        .await;
    assert_eq!(
        (a.ok, a.status, a.error.as_deref()),
        (true, Some(200), None)
    );
    // Had it read to the end (never) it would have stopped at the timeout.
    assert!(a.duration_ms < timeout_ms / 2, "{} ms", a.duration_ms);
}

#[tokio::test]
async fn a_2xx_whose_body_stalls_is_still_ok_at_the_deadline() {
    let stalled =
        || async { Body::from_stream(futures::stream::pending::<Result<Bytes, std::io::Error>>()) };
    let addr = serve(Router::new().route("/", post(stalled))).await;
    let url = format!("http://127.0.0.1:{}/", addr.port());
    let a = local_sender(300)
        .post(&target(&url), b"{}".to_vec(), vec![])
        .await;
    assert_eq!(
        (a.ok, a.status, a.error.as_deref()),
        (true, Some(200), None)
    );
    assert!(a.duration_ms >= 300, "{} ms", a.duration_ms);
}

#[tokio::test]
async fn read_bounded_stops_at_the_bound() {
    let chunks = (0..1000)
        .map(|_| Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from(vec![1u8; 100]))));
    let body = StreamBody::new(futures::stream::iter(chunks));
    let deadline = Instant::now() + Duration::from_secs(5);
    assert_eq!(read_bounded(body, 1234, deadline).await.len(), 1234);
    let small = Full::new(Bytes::from_static(b"short"));
    assert_eq!(read_bounded(small, 1234, deadline).await, b"short");
}

#[tokio::test]
async fn a_loopback_target_the_policy_does_not_allow_is_refused_before_connecting() {
    let (addr, count) = counting_listener().await;
    // Checked under a permissive policy, sent by a strict sender.
    let strict = Sender::with_resolver(
        &config(&[], 5_000),
        Arc::new(StaticResolver::default().with("internal.example", [addr.ip()])),
    );
    let url = format!("https://127.0.0.1:{}/", addr.port());
    let a = strict.post(&target(&url), b"{}".to_vec(), vec![]).await;
    assert_eq!(a.status, None);
    assert_eq!(
        a.error.as_deref(),
        Some("127.0.0.1 is not a public address (loopback): webhooks go to public addresses only")
    );
    let policy = OutboundPolicy::default();
    let named = check_url(
        &format!("https://internal.example:{}/", addr.port()),
        &policy,
    )
    .expect("a public-looking name");
    let a = strict.post(&named, b"{}".to_vec(), vec![]).await;
    let e = a.error.expect("refused");
    assert!(
        e.contains("internal.example resolves to 127.0.0.1 (loopback)"),
        "{e}"
    );
    assert_eq!(connections_before_probe(addr, &count).await, 0);
}

#[tokio::test]
async fn dns_and_connect_failures_become_errors() {
    let policy = OutboundPolicy::default();
    let unknown = check_url("https://nowhere.test/", &policy).expect("face");
    let a = local_sender(5_000).post(&unknown, vec![], vec![]).await;
    assert!(a
        .error
        .expect("dns")
        .contains("nowhere.test could not be resolved"));
    // A port nothing listens on: bind one, then free it.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let url = format!("http://127.0.0.1:{port}/");
    let a = local_sender(5_000)
        .post(&target(&url), vec![], vec![])
        .await;
    let e = a.error.expect("connect");
    assert!(
        e.starts_with(&format!("connect to 127.0.0.1:{port}:")),
        "{e}"
    );
    assert!(!a.ok);
}

#[test]
fn the_platform_trust_roots_load() {
    let s = Sender::new(&NotifyConfig::default());
    assert!(s.tls.is_ok(), "{:?}", s.tls.err());
}

const CA: &str = include_str!("../testdata/ca.pem");
const LEAF: &str = include_str!("../testdata/receiver.pem");
const LEAF_KEY: &str = include_str!("../testdata/receiver.key");

/// An https receiver on 127.0.0.1 presenting the `receiver.test`
/// certificate; counts requests.
async fn tls_receiver() -> (SocketAddr, Arc<AtomicUsize>) {
    install_crypto_provider();
    let cert = CertificateDer::from_pem_slice(LEAF.as_bytes()).expect("leaf");
    let key = PrivateKeyDer::from_pem_slice(LEAF_KEY.as_bytes()).expect("key");
    let server = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let app = Router::new().route(
        "/",
        post(move || async move {
            h.fetch_add(1, Ordering::SeqCst);
            "ok"
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (addr, hits)
}

fn trusting_test_ca() -> Arc<rustls::ClientConfig> {
    install_crypto_provider();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(CA.as_bytes()).expect("ca"))
        .expect("root");
    Arc::new(
        rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

#[tokio::test]
async fn https_verifies_the_certificate_against_the_url_host() {
    let (addr, hits) = tls_receiver().await;
    let sender = local_sender(5_000).with_tls(trusting_test_ca());
    let url = format!("https://receiver.test:{}/", addr.port());
    let a = sender.post(&target(&url), b"{}".to_vec(), vec![]).await;
    assert_eq!(
        (a.ok, a.status, a.error.as_deref()),
        (true, Some(200), None)
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    // Same address, a name the certificate does not cover.
    let url = format!("https://other.test:{}/", addr.port());
    let a = sender.post(&target(&url), b"{}".to_vec(), vec![]).await;
    let e = a.error.expect("name mismatch");
    assert!(e.starts_with("TLS with other.test"), "{e}");
    assert!(e.contains("not valid for name"), "{e}");

    // The platform's roots do not trust the test CA.
    let url = format!("https://receiver.test:{}/", addr.port());
    let a = local_sender(5_000)
        .post(&target(&url), b"{}".to_vec(), vec![])
        .await;
    let e = a.error.expect("untrusted");
    assert!(e.starts_with("TLS with receiver.test"), "{e}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}
