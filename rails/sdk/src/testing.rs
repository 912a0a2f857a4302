//! A test double for the **host** (never for an upstream): it records every
//! HTTP request a rail makes and answers with canned responses — recorded
//! upstream samples — routed by URL path. Rails' request-building tests
//! assert on exactly what went out; their parser tests feed real samples in.

use std::{collections::BTreeMap, sync::Mutex};

use relay_plugin_api::{
    ChainRef, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel,
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
            host = host.answer(&a.path, a.status, &a.body.to_string());
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

/// A relayer address the samples use (the Permit2 spender and upstream sender).
pub const RELAYER: &str = "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0";
/// A user address the samples use.
pub const USER: &str = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/// USDC on Base.
pub const BASE_USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
/// USDC on Arbitrum.
pub const ARB_USDC: &str = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831";
/// A source transaction hash the samples track.
pub const SRC_TX: &str = "0x5862726dbc6643c6a34b3496bb15e91f11771f6756ccf83826304846bbc93c0a";

/// A recorded upstream sample: `tests/fixtures/<name>` of the crate at
/// `manifest_dir` (pass `env!("CARGO_MANIFEST_DIR")`).
pub fn fixture(manifest_dir: &str, name: &str) -> String {
    std::fs::read_to_string(format!("{manifest_dir}/tests/fixtures/{name}"))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// A 6-decimal token.
pub fn token(symbol: &str, address: &str) -> relay_plugin_api::Token {
    relay_plugin_api::Token {
        symbol: symbol.into(),
        address: Some(address.into()),
        decimals: 6,
    }
}

/// `amount` USDC units from Base to Arbitrum, from [`USER`] to [`RELAYER`],
/// 50 bps slippage.
pub fn usdc_base_to_arbitrum(amount: u128) -> relay_plugin_api::QuoteRequest {
    relay_plugin_api::QuoteRequest {
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(42161),
        from_token: token("USDC", BASE_USDC),
        to_token: token("USDC", ARB_USDC),
        amount: relay_plugin_api::Amount::from_u128(amount),
        from_address: Some(USER.into()),
        to_address: Some(RELAYER.into()),
        slippage_bps: 50,
        member: false,
    }
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

/// What the engine asks `track` for a Base → Arbitrum route.
pub fn track_for(reference: Option<&str>, src_tx: Option<&str>) -> relay_plugin_api::TrackRequest {
    relay_plugin_api::TrackRequest {
        route_id: "rt_test".into(),
        reference: reference.map(str::to_string),
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(42161),
        src_tx: src_tx.map(str::to_string),
    }
}

/// Compares query pairs with expected `(key, value)`s, in order.
pub fn assert_query(req: &HttpRequest, expected: &[(&str, &str)]) {
    let got = query_pairs(&req.url);
    let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(got, expected, "query of {}", req.url);
}
