//! Answering a question: a code it names (errors catalogue, route
//! statuses), else the first topic whose words it uses ([`super::topics`],
//! each answered with figures from [`Facts`]), else the best passage of the
//! documentation index ([`super::index`]), else a plain "I don't know".
//! Every answer cites the endpoints, configuration keys or documents its
//! figures came from.

use super::{facts::Facts, index::Index, topics::TOPICS};
use relay_types::route::RouteStatus;
use serde::Serialize;
use utoipa::ToSchema;

/// `POST /api/ask` answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// The answer, for people.
    pub answer: String,
    /// The endpoints, configuration keys and documents it came from.
    pub citations: Vec<String>,
    /// Whether the concierge knew: `false` answers say so plainly.
    pub known: bool,
    /// Which kind of answer it is (`code`, `fees`, `limits`, `chains`,
    /// `lanes`, `price-lock`, `signing`, `health`, `slippage`, `sandbox`,
    /// `body-limit`, `mcp`, `terms`, `docs`, `unknown`).
    pub topic: String,
    /// How the answer was made: retrieval and live figures, no model.
    pub method: &'static str,
}

const METHOD: &str = "retrieval over this host's documentation and errors catalogue, plus figures computed from its live state; no language model";

pub(super) fn known(topic: &str, answer: String, citations: &[&str]) -> Answer {
    Answer {
        answer,
        citations: citations.iter().map(|c| c.to_string()).collect(),
        known: true,
        topic: topic.into(),
        method: METHOD,
    }
}

/// The question's words, lowercased.
fn words(q: &str) -> Vec<String> {
    q.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

pub(super) fn has(ws: &[String], any: &[&str]) -> bool {
    ws.iter().any(|w| any.iter().any(|a| w == a))
}

/// Answers `question` from `facts` and `index`.
pub fn answer(question: &str, facts: &Facts, index: &Index) -> Answer {
    let ws = words(question);
    if let Some(a) = code(question, &ws, facts) {
        return a;
    }
    for topic in TOPICS {
        if (topic.matches)(&ws) {
            return (topic.answer)(&ws, facts);
        }
    }
    if let Some(p) = index.best(&ws) {
        // a table row is answered as a table under its source
        let sep = if p.text.starts_with('|') { ":\n" } else { ": " };
        return known(
            "docs",
            format!("From {}{sep}{}", p.cite, p.text),
            &[&p.cite],
        );
    }
    Answer {
        answer: "I don't know: nothing in this host's live state or documentation answers that. I can answer about fees and tiers, rate limits, supported chains and lanes, error and status codes, how to sign, price locks, the sandbox, the MCP endpoint and the terms; every endpoint is described at /api/docs.".into(),
        citations: vec!["GET /api/docs".into()],
        known: false,
        topic: "unknown".into(),
        method: METHOD,
    }
}

/// A code the question names: `FUNDS_REQUIRED`, or spelled as words
/// ("funds required").
fn code(question: &str, ws: &[String], f: &Facts) -> Option<Answer> {
    let mut candidates: Vec<String> = question
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| t.len() > 2)
        .map(str::to_uppercase)
        .collect();
    for n in [3, 2] {
        for w in ws.windows(n) {
            candidates.push(w.join("_").to_uppercase());
        }
    }
    for c in &candidates {
        if let Some(s) = RouteStatus::PUBLIC.iter().find(|s| s.public() == c) {
            return Some(known(
                "code",
                format!("Route status {c}: {}.", s.meaning()),
                &["GET /api/route/status", "GET /api/route/stream"],
            ));
        }
        if let Some(e) = f.catalogue.errors.iter().find(|e| e.error_code == c) {
            let retry = if e.retryable {
                "retryable"
            } else {
                "not retryable"
            };
            return Some(known(
                "code",
                format!("errorCode {c} (HTTP {}, {retry}): {}.", e.status, e.meaning),
                &["GET /api/errors"],
            ));
        }
        let tables = [
            ("preflight blocker", &f.catalogue.blockers),
            ("preflight warning", &f.catalogue.warnings),
            ("route failure code", &f.catalogue.failures),
        ];
        for (kind, table) in tables {
            if let Some(e) = table.iter().find(|e| e.code == c) {
                return Some(known(
                    "code",
                    format!("{c} is a {kind}: {}.", e.meaning),
                    &["GET /api/errors"],
                ));
            }
        }
    }
    None
}
