//! The two packagings of one rail must give the same answers to the same
//! inputs.

use super::{inputs, kind_of, load, ClauseResult, KitOptions};
use relay_runtime::{CallError, LoadedRail};
use std::path::Path;

/// Stable name of the clause.
pub const PACKAGINGS_AGREE: &str = "packagings-agree";

fn render<T: std::fmt::Debug>(r: &Result<T, CallError>) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(CallError::Rail(e)) => format!("error {:?}: {}", e.kind, e.message),
        Err(e) => format!("fault: {e}"),
    }
}

async fn answers(rail: &LoadedRail, opts: &KitOptions) -> Vec<String> {
    let m = rail.manifest().clone();
    let mut out = vec![format!("{m:?}")];
    let inputs = opts.inputs();
    let mut reqs: Vec<_> = inputs::directions(&m, &inputs)
        .into_iter()
        .map(|d| d.request)
        .collect();
    reqs.push(inputs::unsupported_request(&m));
    reqs.extend(inputs::malformed_request(&m, &inputs));
    for r in reqs {
        out.push(render(&rail.quote(r).await));
    }
    out.push(format!("{:?}", rail.health().await));
    out
}

/// Loads both artifacts and compares every answer.
pub async fn packagings_agree(a: &Path, b: &Path, opts: &KitOptions) -> ClauseResult {
    let fail = |detail: String| {
        ClauseResult::fail(
            PACKAGINGS_AGREE,
            detail,
            "build both packagings from the same rail crate at the same version, with the same \
             features",
        )
    };
    let (ra, rb) = match (
        load(a, kind_of(a), opts).await,
        load(b, kind_of(b), opts).await,
    ) {
        (Ok((ra, _)), Ok((rb, _))) => (ra, rb),
        (Err(e), _) | (_, Err(e)) => return fail(format!("could not load both: {e}")),
    };
    let (xa, xb) = (answers(&ra, opts).await, answers(&rb, opts).await);
    match xa.iter().zip(&xb).position(|(x, y)| x != y) {
        None if xa.len() == xb.len() => ClauseResult::pass(
            PACKAGINGS_AGREE,
            format!(
                "{} answers identical ({} vs {})",
                xa.len(),
                ra.packaging().as_str(),
                rb.packaging().as_str()
            ),
        ),
        None => fail(format!(
            "answer counts differ: {} vs {}",
            xa.len(),
            xb.len()
        )),
        Some(i) => fail(format!(
            "answer {i} differs:\n  {}: {}\n  {}: {}",
            ra.packaging().as_str(),
            xa[i],
            rb.packaging().as_str(),
            xb[i]
        )),
    }
}
