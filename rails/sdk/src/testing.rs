//! A test double for the **host** (never for an upstream): it records every
//! HTTP request a rail makes and answers with canned responses — recorded
//! upstream samples — routed by URL path. Rails' request-building tests
//! assert on exactly what went out; their parser tests feed real samples in.

use std::{collections::BTreeMap, sync::Mutex};

use relay_plugin_api::{
    ChainRef, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel,
};

pub use crate::vendor::{
    default_quote as usdc_base_to_arbitrum, default_track as track_for, token, ARB_USDC, BASE_USDC,
    RELAYER, SRC_TX, USER,
};

/// The instant a [`RecordingHost`]'s clock reads.
pub const NOW_MS: u64 = 1_767_225_600_000;

type Answer = Result<HttpResponse, HostError>;

/// A recording host with canned answers.
#[derive(Debug, Default)]
pub struct RecordingHost {
    routes: Vec<(String, Answer)>,
    config: BTreeMap<String, String>,
    requests: Mutex<Vec<HttpRequest>>,
}

impl RecordingHost {
    /// A host with no routes and no configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// A host answering with a recorded upstream ([`crate::fixture`]), its
    /// `base_url` set to `https://fixture.invalid`. Answers are matched by
    /// path (the method is not compared).
    pub fn from_fixture(fixture: &crate::fixture::Fixture) -> Self {
        let mut host = Self::new().config("base_url", "https://fixture.invalid");
        for a in &fixture.answers {
            let headers: Vec<(&str, &str)> = a
                .headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let body = String::from_utf8_lossy(&a.body_bytes()).into_owned();
            host = host.answer_with_headers(&a.path, a.status, &body, &headers);
        }
        host
    }

    /// Sets a configuration value the rail reads with `host.config`.
    pub fn config(mut self, key: &str, value: &str) -> Self {
        self.config.insert(key.into(), value.into());
        self
    }

    /// Answers requests whose URL path ends with `path` with `status` and `body`.
    pub fn answer(self, path: &str, status: u16, body: &str) -> Self {
        self.answer_with_headers(path, status, body, &[])
    }

    /// Like [`RecordingHost::answer`], with response headers.
    pub fn answer_with_headers(
        mut self,
        path: &str,
        status: u16,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Self {
        self.routes.push((
            path.into(),
            Ok(HttpResponse {
                status,
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
                    .collect(),
                body: body.as_bytes().to_vec(),
            }),
        ));
        self
    }

    /// Fails requests to `path` the way the host would (timeout, network…).
    pub fn fail(mut self, path: &str, kind: HostErrorKind) -> Self {
        self.routes.push((
            path.into(),
            Err(HostError::new(kind, format!("{kind:?} (test)"))),
        ));
        self
    }

    /// Every request the rail made, in order.
    pub fn requests(&self) -> Vec<HttpRequest> {
        self.requests.lock().expect("requests lock").clone()
    }

    /// The only request the rail made; panics otherwise.
    pub fn only_request(&self) -> HttpRequest {
        let r = self.requests();
        assert_eq!(r.len(), 1, "expected one request, got {r:#?}");
        r.into_iter().next().expect("one request")
    }
}

impl Host for RecordingHost {
    fn http(&self, req: HttpRequest) -> Result<HttpResponse, HostError> {
        let path = url_path(&req.url).to_string();
        self.requests.lock().expect("requests lock").push(req);
        self.routes
            .iter()
            .find(|(p, _)| path.ends_with(p.as_str()))
            .map(|(_, a)| a.clone())
            .unwrap_or_else(|| {
                Err(HostError::new(
                    HostErrorKind::Network,
                    format!("no route for {path} (test)"),
                ))
            })
    }

    fn rpc(&self, _chain: ChainRef, _method: &str, _params: &str) -> Result<String, HostError> {
        Err(HostError::new(
            HostErrorKind::NotConfigured,
            "no rpc in tests",
        ))
    }

    fn now_ms(&self) -> u64 {
        NOW_MS
    }

    fn deadline_ms(&self) -> u64 {
        NOW_MS + 10_000
    }

    fn log(&self, _level: LogLevel, _message: &str) {}

    fn config(&self, key: &str) -> Option<String> {
        self.config.get(key).cloned()
    }
}

/// The path of a URL (`https://h/v1/quote?x=1` → `/v1/quote`).
pub fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    path.split('?').next().unwrap_or("")
}

/// The query pairs of a URL, percent-decoded, in order.
pub fn query_pairs(url: &str) -> Vec<(String, String)> {
    let Some((_, q)) = url.split_once('?') else {
        return vec![];
    };
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A request header by case-insensitive name.
pub fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A recorded upstream sample: `tests/fixtures/<name>` of the crate at
/// `manifest_dir` (pass `env!("CARGO_MANIFEST_DIR")`).
pub fn fixture(manifest_dir: &str, name: &str) -> String {
    std::fs::read_to_string(format!("{manifest_dir}/tests/fixtures/{name}"))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// What the engine asks `prepare` for a Base → Arbitrum USDC `quote`.
pub fn prepare_for(
    quote: relay_plugin_api::RailQuote,
    relayer: &str,
    mode: relay_plugin_api::SourceMode,
) -> relay_plugin_api::PrepareRequest {
    relay_plugin_api::PrepareRequest {
        route_id: "rt_test".into(),
        quote,
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(42161),
        from_token_address: Some(BASE_USDC.into()),
        to_token_address: Some(ARB_USDC.into()),
        sender: USER.into(),
        recipient: RELAYER.into(),
        relayer: relayer.into(),
        mode,
    }
}

/// Compares query pairs with expected `(key, value)`s, in order.
pub fn assert_query(req: &HttpRequest, expected: &[(&str, &str)]) {
    let got = query_pairs(&req.url);
    let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(got, expected, "query of {}", req.url);
}

/// Runs every vendor case of the crate at `manifest_dir`
/// (`tests/fixtures/vendor/`, see [`crate::vendor`]) through `rail` on a
/// recording host configured with `config`; panics naming every case whose
/// outcome differs from what it expects. Returns how many ran.
pub fn check_vendor_cases(
    manifest_dir: &str,
    rail: &dyn relay_plugin_api::Rail,
    config: &[(&str, &str)],
) -> usize {
    let dir = std::path::Path::new(manifest_dir).join("tests/fixtures/vendor");
    let cases = crate::vendor::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert!(!cases.is_empty(), "{}: no vendor cases", dir.display());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(name, case)| {
            let host = config
                .iter()
                .fold(RecordingHost::from_fixture(&case.fixture()), |h, (k, v)| {
                    h.config(k, v)
                });
            run_case(rail, &host, case)
                .err()
                .map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} vendor cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

fn run_case(
    rail: &dyn relay_plugin_api::Rail,
    host: &RecordingHost,
    case: &crate::vendor::VendorCase,
) -> Result<(), String> {
    match case.call {
        crate::vendor::VendorCall::Quote => {
            let req = case.quote_request()?;
            case.expect.check_quote(&rail.quote(host, &req))
        }
        crate::vendor::VendorCall::Track => {
            let req = case.track_request()?;
            case.expect.check_track(&rail.track(host, &req))
        }
    }
}
