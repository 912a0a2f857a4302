//! When an invariant breaks, the CI log is all a reader has: for each
//! route a broken verdict names, its last status (rail, stage, failure)
//! and the lines of the replicas' logs that mention it; and the warnings
//! and errors of the devnet (its upstream simulators) and the replicas.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use serde_json::Value;

use crate::invariants::Verdict;

/// Most routes described, and most lines shown per route and per log.
const ROUTES: usize = 6;
const LINES: usize = 15;

/// Prints (to stderr) what the broken verdicts among `invariants` point
/// at: the routes they name, as `statuses` last saw them, and the logs
/// under the soak's working `dir`.
pub fn print(invariants: &[Verdict], statuses: &BTreeMap<String, Value>, dir: &Path) {
    let broken: Vec<&Verdict> = invariants.iter().filter(|v| !v.held).collect();
    if broken.is_empty() {
        return;
    }
    let logs = logs(dir);
    eprintln!("\n== diagnosis (logs under {})", dir.display());
    for id in named_routes(&broken).into_iter().take(ROUTES) {
        eprintln!("-- route {id}");
        if let Some(v) = statuses.get(&id) {
            let mut s = v.to_string();
            s.truncate(2_000);
            eprintln!("   last status: {s}");
        }
        for (name, text) in &logs {
            show(name, text, |l| l.contains(id.as_str()));
        }
    }
    eprintln!("-- warnings and errors");
    for (name, text) in &logs {
        // (not the HTTP layer's line per 5xx answer: the report counts those)
        show(name, text, |l| {
            (l.contains("WARN") || l.contains("ERROR")) && !l.contains("tower_http")
        });
    }
}

/// The last [`LINES`] lines of `text` that `pick` keeps, under `name`.
fn show(name: &str, text: &str, pick: impl Fn(&str) -> bool) {
    let lines: Vec<&str> = text.lines().filter(|l| pick(l)).collect();
    for line in &lines[lines.len().saturating_sub(LINES)..] {
        let mut line = line.to_string();
        line.truncate(600);
        eprintln!("   {name}: {line}");
    }
}

/// Route ids (`rt_…`) the broken verdicts name, in order, once each.
fn named_routes(broken: &[&Verdict]) -> Vec<String> {
    let mut ids = Vec::new();
    for v in broken {
        for word in v
            .detail
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        {
            if word.starts_with("rt_") && !ids.iter().any(|i| i == word) {
                ids.push(word.to_string());
            }
        }
    }
    ids
}

/// The replicas' `host.log`s and the devnet's log, by a short name.
fn logs(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("replica-"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.path().join("host.log"),
            )
        })
        .collect();
    files.sort();
    files.push(("devnet".into(), dir.join("devnet.log")));
    files
        .into_iter()
        .filter_map(|(name, path)| Some((name, std::fs::read_to_string(path).ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routes_a_broken_verdict_names_are_found_once_each() {
        let v = Verdict {
            name: "x".into(),
            held: false,
            detail: "2 broken: rt_ab12 \"FAILED\" yet paid 1 times; rt_cd34 paid 2 times; rt_ab12"
                .into(),
        };
        assert_eq!(named_routes(&[&v]), vec!["rt_ab12", "rt_cd34"]);
    }
}
