//! A small search index over the documentation built into the binary (the
//! README and the book's pages, [`super::book`], by section, paragraph and
//! table row) and the errors catalogue
//! (one passage per code). Scoring is term overlap weighted by inverse
//! document frequency; a passage is an answer only when it shares at least
//! two distinct content words with the question, covering at least half
//! of them — otherwise the concierge says it does not know.

use super::book::Page;
use crate::error::Catalogue;
use std::collections::{HashMap, HashSet};

/// One passage and where it is from.
#[derive(Clone, Debug)]
pub struct Passage {
    /// What to cite (`docs/api-webhooks.md § Heading`, `GET /api/errors`).
    pub cite: String,
    /// The text (at most [`EXCERPT`] characters are answered).
    pub text: String,
    terms: HashSet<String>,
}

/// The index.
pub struct Index {
    passages: Vec<Passage>,
    df: HashMap<String, usize>,
}

/// Longest excerpt answered.
const EXCERPT: usize = 600;

const STOP: &[&str] = &[
    "the", "and", "for", "with", "what", "how", "does", "can", "are", "this", "that", "from",
    "you", "your", "when", "which", "who", "why", "there", "their", "into", "per", "any", "its",
    "not", "but", "was", "has", "have", "will", "would", "should", "could", "about", "mean",
    "means", "relay", "api", "host", "get", "post", "where", "did", "use", "one", "all", "our",
];

/// A crude stem: `webhooks` → `webhook`, `verifying` → `verify`,
/// `signed` → `sign`.
fn stem(w: &str) -> String {
    let cut = |suffix: &str| w.len() > suffix.len() + 3 && w.ends_with(suffix);
    let w = if cut("ing") {
        &w[..w.len() - 3]
    } else if cut("ed") {
        &w[..w.len() - 2]
    } else if cut("s") && !w.ends_with("ss") {
        &w[..w.len() - 1]
    } else {
        w
    };
    w.to_string()
}

/// The content words of `text`, stemmed.
pub fn terms(text: &str) -> HashSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(str::to_lowercase)
        .filter(|w| w.len() > 2 && !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// A passage under `cite`; the heading's words count as its own.
fn passage(cite: String, text: &str) -> Passage {
    let text = text.trim().to_string();
    let mut t = terms(&text);
    t.extend(terms(cite.split('§').nth(1).unwrap_or_default()));
    Passage {
        terms: t,
        cite,
        text,
    }
}

/// Ends the paragraph being collected from `page`.
fn end_paragraph(page: &str, heading: &str, para: &mut String, out: &mut Vec<Passage>) {
    if !para.trim().is_empty() {
        out.push(passage(format!("{page} § {heading}"), para));
    }
    para.clear();
}

/// Whether `line` is a markdown table's separator row (`|---|:--|`).
fn separator(line: &str) -> bool {
    line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// The passages of `page` (its path, as cited): each paragraph under its
/// heading, and each table row as a markdown table of its header row and
/// itself. Text before the first heading is under the page's name; JSON
/// examples (a ```` ```json ```` block) are data, not passages.
fn page_passages(page: &Page) -> Vec<Passage> {
    let mut out = Vec::new();
    let mut heading = String::from(page.path);
    let mut para = String::new();
    let mut in_code = false;
    let mut in_json = false;
    let mut head: Option<&str> = None;
    let flush = |heading: &str, para: &mut String, out: &mut Vec<Passage>| {
        end_paragraph(page.path, heading, para, out)
    };
    for line in page.text.lines() {
        if let Some(info) = line.strip_prefix("```") {
            in_code = !in_code;
            in_json = in_code && info.trim_start().starts_with("json");
            continue;
        }
        if in_json {
            continue;
        }
        if !line.starts_with('|') {
            head = None;
        }
        if !in_code && line.starts_with('#') {
            flush(&heading, &mut para, &mut out);
            heading = line.trim_start_matches('#').trim().to_string();
        } else if line.trim().is_empty() || line.starts_with('|') {
            flush(&heading, &mut para, &mut out);
            match head {
                _ if !line.starts_with('|') || separator(line) => {}
                None => head = Some(line.trim()),
                Some(h) => {
                    para.push_str(&format!("{h}\n{}", line.trim()));
                    flush(&heading, &mut para, &mut out);
                }
            }
        } else {
            para.push_str(line);
            para.push(' ');
        }
    }
    flush(&heading, &mut para, &mut out);
    out
}

impl Index {
    /// The index over `pages` and `catalogue`.
    pub fn new(pages: &[Page], catalogue: &Catalogue) -> Self {
        let mut passages: Vec<Passage> = pages.iter().flat_map(page_passages).collect();
        for e in &catalogue.errors {
            let text = format!(
                "errorCode {} (HTTP {}): {}",
                e.error_code, e.status, e.meaning
            );
            passages.push(passage("GET /api/errors".into(), &text));
        }
        let tables = [
            &catalogue.blockers,
            &catalogue.warnings,
            &catalogue.failures,
        ];
        for e in tables.into_iter().flatten() {
            passages.push(passage(
                "GET /api/errors".into(),
                &format!("{}: {}", e.code, e.meaning),
            ));
        }
        let mut df = HashMap::new();
        for p in &passages {
            for t in &p.terms {
                *df.entry(t.clone()).or_insert(0) += 1;
            }
        }
        Index { passages, df }
    }

    /// The best passage for the question's words, if one is good enough
    /// (an excerpt of it).
    pub fn best(&self, words: &[String]) -> Option<Passage> {
        let q = terms(&words.join(" "));
        if q.is_empty() {
            return None;
        }
        let n = self.passages.len() as f64;
        let idf = |t: &String| (n / (1.0 + *self.df.get(t).unwrap_or(&0) as f64)).ln();
        let avg = self.passages.iter().map(|p| p.terms.len()).sum::<usize>() as f64 / n.max(1.0);
        let (score, hits, p) = self
            .passages
            .iter()
            .map(|p| {
                let shared: Vec<&String> = q.iter().filter(|t| p.terms.contains(*t)).collect();
                // BM25 with tf = 1: long passages weigh each shared word less.
                let norm = 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * p.terms.len() as f64 / avg));
                let score: f64 = shared.iter().map(|t| idf(t) * norm).sum();
                (score, shared.len(), p)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        let enough = hits >= 2 && hits * 2 >= q.len() && score > 0.0;
        enough.then(|| {
            let mut p = p.clone();
            if p.text.chars().count() > EXCERPT {
                p.text = p.text.chars().take(EXCERPT).collect::<String>() + "…";
            }
            p
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(i: &Index, q: &str) -> Option<Passage> {
        i.best(&q.split(' ').map(str::to_lowercase).collect::<Vec<_>>())
    }

    #[test]
    fn finds_what_it_holds_and_admits_what_it_does_not() {
        let page = Page {
            path: "docs/webhooks.md",
            text: "# Webhooks\n\nA completion webhook is signed with an HMAC of the raw body.\n\n| a | b |\n|---|---|\n| sessions | policy caps per day |\n\n```json POST /api/ask request\n{\"question\": \"unladen swallow airspeed velocity\"}\n```\n",
        };
        let readme = Page {
            path: "README.md",
            text: "# relay\n\nA gasless cross-chain relay service.\n",
        };
        let i = Index::new(
            &[readme, page],
            &crate::error::catalogue(&crate::error_codes()),
        );
        let p = ask(&i, "how are completion webhooks signed hmac").unwrap();
        assert_eq!(p.cite, "docs/webhooks.md § Webhooks");
        assert_eq!(
            ask(&i, "session policy caps").unwrap().cite,
            "docs/webhooks.md § Webhooks"
        );
        assert_eq!(
            ask(&i, "gasless cross-chain relay service").unwrap().cite,
            "README.md § relay"
        );
        assert!(ask(&i, "airspeed velocity of an unladen swallow").is_none());
    }
}
