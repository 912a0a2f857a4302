//! Helpers shared by the simulator integration tests: a devnet (real anvil
//! chains) with the simulators on top, a wallet that executes what an
//! upstream told it to send, and a bounded polling helper — tests wait on
//! state, never on a fixed sleep.
#![allow(dead_code)]

use std::{future::Future, time::Duration};

use alloy::{
    primitives::{Address, Bytes, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
};
use relay_devnet::{contracts::TestToken, Devnet, DevnetConfig, Token};
use relay_simulators::{SimConfig, Simulators, Upstream};
use reqwest::StatusCode;
use serde_json::Value;

/// The source chain of every test transfer.
pub const SRC: u64 = 1;
/// The destination chain.
pub const DST: u64 = 8453;

/// A devnet (chains [`SRC`], [`DST`]) with every simulator on top.
pub struct Mesh {
    /// The simulators (dropped first).
    pub sims: Simulators,
    /// The chains.
    pub devnet: Devnet,
    /// An HTTP client.
    pub http: reqwest::Client,
}

/// Starts a [`Mesh`] with `config`.
pub async fn mesh_with(config: SimConfig) -> Mesh {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .expect("devnet starts (conformance/devnet/tools/install.sh installs anvil)");
    let sims = Simulators::start_with(&devnet, config)
        .await
        .expect("simulators start");
    Mesh {
        sims,
        devnet,
        http: reqwest::Client::new(),
    }
}

/// Starts a [`Mesh`] with the default configuration.
pub async fn mesh() -> Mesh {
    mesh_with(SimConfig::default()).await
}

impl Mesh {
    /// Base URL of `u`'s simulator.
    pub fn url(&self, u: Upstream) -> String {
        self.sims.url(u).to_string()
    }

    /// A provider for `chain`.
    pub fn provider(&self, chain: u64) -> DynProvider {
        self.devnet.chain(chain).expect("devnet chain").provider()
    }

    /// `token`'s address (same on every devnet chain).
    pub fn token(&self, chain: u64, token: Token) -> Address {
        self.devnet
            .chain(chain)
            .expect("devnet chain")
            .deployment
            .token(token)
    }

    /// `who`'s balance of `token` on `chain`.
    pub async fn balance(&self, chain: u64, token: Token, who: Address) -> U256 {
        TestToken::new(self.token(chain, token), self.provider(chain))
            .balanceOf(who)
            .call()
            .await
            .expect("balanceOf")
    }

    /// GET `url` with `headers`; the status and JSON body (Null if none).
    pub async fn get(&self, url: &str, headers: &[(&str, &str)]) -> (StatusCode, Value) {
        let mut req = self.http.get(url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await.expect("GET answers");
        let status = resp.status();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// POST `body` as JSON to `url` with `headers`; the status, the JSON
    /// body and the response headers.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> (StatusCode, Value, reqwest::header::HeaderMap) {
        let mut req = self.http.post(url).json(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await.expect("POST answers");
        let (status, h) = (resp.status(), resp.headers().clone());
        (status, resp.json().await.unwrap_or(Value::Null), h)
    }

    /// What a wallet does with an upstream's answer: approve `spender` for
    /// `amount` of `token` on `chain` (unless native), then send `data` to
    /// `to` with `value`, from anvil's unlocked account `from`. Returns the
    /// mined transaction's hash.
    pub async fn execute(&self, chain: u64, from: Address, call: &Call) -> B256 {
        let p = self.provider(chain);
        if let Some(token) = call.approve {
            let erc20 = TestToken::new(token, &p);
            let approve = erc20.approve(call.spender, call.amount).from(from);
            let receipt = approve.send().await.unwrap().get_receipt().await.unwrap();
            assert!(receipt.status(), "approve reverted");
        }
        let req = TransactionRequest::default()
            .from(from)
            .to(call.to)
            .value(call.value)
            .input(call.data.clone().into());
        let receipt = p
            .send_transaction(req)
            .await
            .expect("send")
            .get_receipt()
            .await
            .expect("mined");
        assert!(receipt.status(), "the upstream's transaction reverted");
        receipt.transaction_hash
    }

    /// Whether `tx` on `chain` is a mined, successful transaction.
    pub async fn succeeded(&self, chain: u64, tx: &str) -> bool {
        let hash: B256 = tx.parse().expect("a transaction hash");
        let receipt = self.provider(chain).get_transaction_receipt(hash).await;
        receipt.ok().flatten().is_some_and(|r| r.status())
    }
}

/// A transaction an upstream handed out.
#[derive(Clone, Debug)]
pub struct Call {
    /// Token to approve first (None for native).
    pub approve: Option<Address>,
    /// The spender to approve.
    pub spender: Address,
    /// The amount to approve.
    pub amount: U256,
    /// Target.
    pub to: Address,
    /// Calldata.
    pub data: Bytes,
    /// Native value.
    pub value: U256,
}

/// Reads a JSON string field as `T`.
pub fn field<T: std::str::FromStr>(v: &Value) -> T
where
    T::Err: std::fmt::Debug,
{
    v.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {v}"))
        .parse()
        .expect("parses")
}

/// Polls `probe` until it yields a value, for at most 20 s; panics with
/// `what` otherwise. The bounded wait every test uses instead of sleeping.
pub async fn wait_for<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    loop {
        tick.tick().await;
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
    }
}

/// Every key of the recorded upstream sample `fixture` (objects
/// recursively, arrays by their first element) is present in `live`: the
/// simulator answers at least the documented shape.
pub fn assert_shape(fixture: &str, live: &Value) {
    let path = format!("{}/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let sample: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut missing = Vec::new();
    missing_keys(&sample, live, String::new(), &mut missing);
    assert!(
        missing.is_empty(),
        "{fixture}: the simulator's answer lacks {missing:?}\nanswer: {live}"
    );
}

fn missing_keys(sample: &Value, live: &Value, at: String, out: &mut Vec<String>) {
    match (sample, live) {
        (Value::Object(s), Value::Object(l)) => {
            for (k, v) in s {
                match l.get(k) {
                    Some(lv) => missing_keys(v, lv, format!("{at}.{k}"), out),
                    None => out.push(format!("{at}.{k}")),
                }
            }
        }
        (Value::Array(s), Value::Array(l)) => {
            if let (Some(sv), Some(lv)) = (s.first(), l.first()) {
                missing_keys(sv, lv, format!("{at}[0]"), out);
            }
        }
        _ => {}
    }
}

/// `body` is valid against `component` of the schema the vendor of `rail`
/// publishes (`rails/<rail>/tests/fixtures/vendor/schema.json`, listed in
/// that directory's `SOURCES`), checked by the reference validator (PyPI
/// `jsonschema`, `$RELAY_JSONSCHEMA_PY`: `conformance/tools/jsonschema.sh`
/// prints it) through `conformance/tools/vendor_schema.py`.
pub fn assert_vendor_schema(rail: &str, component: &str, body: &Value) {
    use std::io::Write;
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let py = std::env::var("RELAY_JSONSCHEMA_PY")
        .expect("RELAY_JSONSCHEMA_PY (conformance/tools/jsonschema.sh prints it)");
    let mut child = std::process::Command::new(py)
        .arg(format!("{root}/conformance/tools/vendor_schema.py"))
        .arg(format!(
            "{root}/rails/{rail}/tests/fixtures/vendor/schema.json"
        ))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run the schema validator");
    let cases = serde_json::json!([{"name": component, "component": component, "body": body}]);
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(cases.to_string().as_bytes())
        .expect("write the body");
    let out = child.wait_with_output().expect("the validator's verdict");
    assert!(
        out.status.success(),
        "{rail}'s vendor schema refuses the simulator's answer:\n{}\nanswer: {body}",
        String::from_utf8_lossy(&out.stdout)
    );
}
