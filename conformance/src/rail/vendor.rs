//! `--fixture DIR`: the rail against its vendor's own examples
//! ([`relay_rail_sdk::vendor`]): each case's answers are served over real
//! HTTP on loopback and the packaged rail, loaded as the host loads it, must
//! make of them what the case expects — a documented refund is never
//! delivered, a transfer not indexed yet is never a caller's mistake.

use std::path::Path;

use relay_plugin_api::RailError;
use relay_rail_sdk::vendor::{VendorCall, VendorCase};
use relay_runtime::{CallError, LoadedRail};

use super::{open, ClauseResult, FixtureServer, KitOptions, Report};

/// The clause's stable name.
pub const AGREES_WITH_VENDOR: &str = "agrees-with-vendor";

/// Loads `artifact` under `opts` (pointed at `server`) and runs every one
/// of `cases` through it, serving each case's answers from `server` in
/// turn.
pub async fn check_vendor(
    artifact: &Path,
    server: &FixtureServer,
    cases: &[(String, VendorCase)],
    opts: &KitOptions,
) -> Report {
    let (mut report, loaded) = open(artifact, opts).await;
    let Some((rail, _)) = loaded else {
        return report;
    };
    let mut failures = Vec::new();
    for (name, case) in cases {
        server.serve(case.fixture());
        if let Err(e) = run_case(&rail, case).await {
            failures.push(format!("{name} ({}): {e}", case.source));
        }
    }
    report.clauses.push(if failures.is_empty() {
        ClauseResult::pass(AGREES_WITH_VENDOR, format!("{} vendor cases", cases.len()))
    } else {
        ClauseResult::fail(
            AGREES_WITH_VENDOR,
            format!(
                "{} of {} vendor cases differ: {}",
                failures.len(),
                cases.len(),
                failures.join("; ")
            ),
            "map each value as the vendor documents it (the case names its source): a refund \
             is REFUNDED, never DONE; a transfer not indexed yet is PENDING or retryable",
        )
    });
    report
}

async fn run_case(rail: &LoadedRail, case: &VendorCase) -> Result<(), String> {
    match case.call {
        VendorCall::Quote => {
            let got = answered(rail.quote(case.quote_request()?).await)?;
            case.expect.check_quote(&got)
        }
        VendorCall::Track => {
            let got = answered(rail.track(case.track_request()?).await)?;
            case.expect.check_track(&got)
        }
    }
}

/// The rail's own answer, or why there was none (a fault, quarantine).
fn answered<T>(r: Result<T, CallError>) -> Result<Result<T, RailError>, String> {
    match r {
        Ok(t) => Ok(Ok(t)),
        Err(CallError::Rail(e)) => Ok(Err(e)),
        Err(e) => Err(e.to_string()),
    }
}
