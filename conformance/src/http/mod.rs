//! The HTTP API contract suite (spec §2–§8): black-box rules checked
//! against a live host at a base URL — discovery shapes, typed errors,
//! best-of-N quotes, compare and its cache, sandbox, dry runs, idempotency,
//! status and its SSE stream, rate-limit headers, CORS, routes/recent,
//! solve bounds, the OpenAPI document. It never moves funds: executes are
//! sandboxed or dry.
//!
//! `relay-conformance http <base-url>` runs it from the command line;
//! `conformance/tests/it/http_contract.rs` runs it against the devnet in CI.

mod client;
mod discovery;
mod routing;

pub use client::{Answer, Client};
use serde::Serialize;
use serde_json::{json, Value};

/// What the suite routes with: a lane the host serves.
#[derive(Clone, Debug, clap::Args)]
pub struct Target {
    /// Base URL of the host.
    pub base: String,
    /// Source EVM chain id.
    #[arg(long, default_value_t = 8453)]
    pub from_chain: u64,
    /// Destination EVM chain id.
    #[arg(long, default_value_t = 42161)]
    pub to_chain: u64,
    /// Token symbol on both.
    #[arg(long, default_value = "USDC")]
    pub token: String,
    /// Amount, smallest units.
    #[arg(long, default_value = "5000000")]
    pub amount: String,
    /// An address used as sender and recipient.
    #[arg(long, default_value = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8")]
    pub address: String,
}

impl Target {
    /// A RouteRequest body over the target lane.
    pub fn route(&self) -> Value {
        json!({
            "fromChain": self.from_chain, "toChain": self.to_chain,
            "fromToken": self.token, "toToken": self.token,
            "amount": self.amount, "fromAddress": self.address, "toAddress": self.address,
        })
    }
}

/// One rule's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct RuleResult {
    /// Rule name.
    pub rule: &'static str,
    /// Whether it held.
    pub passed: bool,
    /// What was seen.
    pub detail: String,
}

/// The suite's outcome.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Every rule, in order.
    pub results: Vec<RuleResult>,
}

impl Report {
    /// Whether every rule held.
    pub fn passed(&self) -> bool {
        self.results.iter().all(|r| r.passed)
    }

    fn push(&mut self, rule: &'static str, outcome: Result<String, String>) {
        let (passed, detail) = match outcome {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        self.results.push(RuleResult {
            rule,
            passed,
            detail,
        });
    }
}

/// Fails a rule with `what` unless `cond`.
pub(crate) fn ensure(cond: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(what())
    }
}

/// Runs every rule against `t`.
pub async fn run(t: &Target) -> Report {
    let c = Client::new(&t.base);
    let mut r = Report::default();
    r.push("discovery-shapes", discovery::shapes(&c, t).await);
    r.push("errors-typed", discovery::typed_errors(&c, t).await);
    r.push(
        "cors-and-rate-limit-headers",
        discovery::cors_and_limits(&c).await,
    );
    r.push("openapi-complete", discovery::openapi(&c).await);
    r.push("quote-best-of-n", routing::quote(&c, t).await);
    r.push(
        "quote-wrong-method-and-unroutable-404",
        routing::quote_404(&c, t).await,
    );
    r.push("compare-ranks-and-caches", routing::compare(&c, t).await);
    r.push("sandbox-execute", routing::sandbox(&c, t).await);
    r.push("idempotency-replays", routing::idempotency(&c, t).await);
    r.push("dry-run", routing::dry_run(&c, t).await);
    r.push("status-and-stream", routing::status_and_stream(&c, t).await);
    r.push("recent-is-coarse", discovery::recent(&c).await);
    r.push("solve-bounds", routing::solve(&c, t).await);
    r.push(
        "preflight-plan-agent",
        routing::preflight_plan_agent(&c, t).await,
    );
    r
}
