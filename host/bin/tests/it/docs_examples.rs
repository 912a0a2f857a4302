//! The book's JSON examples match the API the host serves: every fenced
//! block whose info string names an operation — ```` ```json POST
//! /api/route/execute request ```` or ```` ```json GET /api/route/status
//! 200 ```` — is checked against that operation's request body or response
//! schema in the served `/api/openapi.json`, by the reference JSON Schema
//! validator (PyPI `jsonschema`, `$RELAY_JSONSCHEMA_PY`:
//! `conformance/tools/jsonschema.sh` prints it) through
//! `conformance/tools/vendor_schema.py`. Every API page (`docs/api-*.md`)
//! carries examples, and the book shows an execute body for every `mode`
//! the OpenAPI document's own examples show.

use crate::common::serve;
use relay_devnet::{Devnet, DevnetConfig};
use serde_json::{json, Value};
use std::{
    collections::BTreeSet,
    io::Write,
    path::{Path, PathBuf},
};

/// Which side of an operation an example shows.
#[derive(Clone, Debug, PartialEq)]
enum Part {
    /// The JSON request body.
    Request,
    /// The JSON response with this status.
    Response(String),
}

/// One annotated example of the book.
#[derive(Debug)]
struct Example {
    /// Where its fence opens, page and line (`docs/api.md:12`).
    at: String,
    /// `get`, `post`, … (lower case, as the OpenAPI document keys them).
    method: String,
    /// The path template (`/api/receipts/{addr}`).
    path: String,
    part: Part,
    /// The block's text.
    text: String,
}

/// The repository's root (this crate's own path: a shared target
/// directory may hold another clone's `relay-fixtures`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README and every page `docs/SUMMARY.md` lists, as paths from the
/// repository root.
fn book(root: &Path) -> Vec<String> {
    let summary = std::fs::read_to_string(root.join("docs/SUMMARY.md")).expect("docs/SUMMARY.md");
    let mut pages = vec!["README.md".to_string()];
    for part in summary.split("](").skip(1) {
        let target = part.split(')').next().unwrap_or_default();
        pages.push(format!("docs/{target}"));
    }
    pages
}

/// The operation an info string names (`json POST /api/x request`,
/// `json GET /api/x 200`); `None` for any other fence.
fn annotation(info: &str) -> Option<(String, String, Part)> {
    let words: Vec<&str> = info.split_whitespace().collect();
    let [lang, method, path, part] = words[..] else {
        return None;
    };
    let part = match part {
        "request" => Part::Request,
        status if status.parse::<u16>().is_ok() => Part::Response(status.to_string()),
        _ => return None,
    };
    (lang == "json" && path.starts_with('/')).then(|| (method.to_lowercase(), path.into(), part))
}

/// The annotated examples of markdown `text` (page `page`).
fn examples(page: &str, text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut open: Option<Example> = None;
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            if let Some(ex) = open.as_mut() {
                ex.text.push_str(line);
                ex.text.push('\n');
            }
            continue;
        };
        fenced = !fenced;
        if !fenced {
            out.extend(open.take());
        } else if let Some((method, path, part)) = annotation(info) {
            let at = format!("{page}:{}", i + 1);
            let text = String::new();
            open = Some(Example {
                at,
                method,
                path,
                part,
                text,
            });
        }
    }
    out
}

/// The schema `ex` must match in the OpenAPI document `doc`.
fn schema<'a>(doc: &'a Value, ex: &Example) -> Option<&'a Value> {
    let op = &doc["paths"][&ex.path][&ex.method];
    let content = match &ex.part {
        Part::Request => &op["requestBody"]["content"],
        Part::Response(status) => &op["responses"][status]["content"],
    };
    content["application/json"]["schema"]
        .as_object()
        .map(|_| &content["application/json"]["schema"])
}

/// Runs the reference validator over `cases` (`(name, schema, body)`):
/// each schema becomes a component of a copy of `doc`, so its `$ref`s
/// resolve. Answers the violations, one a line.
fn violations(doc: &Value, cases: &[(String, Value, Value)]) -> String {
    let mut doc = doc.clone();
    let mut input = Vec::new();
    for (i, (name, schema, body)) in cases.iter().enumerate() {
        let component = format!("docs_example_{i}");
        doc["components"]["schemas"][&component] = schema.clone();
        input.push(json!({"name": name, "component": component, "body": body}));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let py = std::env::var("RELAY_JSONSCHEMA_PY")
        .expect("RELAY_JSONSCHEMA_PY (conformance/tools/jsonschema.sh prints it)");
    let script = root().join("conformance/tools/vendor_schema.py");
    let mut child = std::process::Command::new(py)
        .arg(script)
        .arg(&file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run the schema validator");
    let cases = Value::Array(input).to_string();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(cases.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `mode` of each example body the OpenAPI document gives `POST
/// /api/route/execute` (`None`: no mode, the default).
fn execute_modes(doc: &Value) -> BTreeSet<Option<String>> {
    let examples = &doc["paths"]["/api/route/execute"]["post"]["requestBody"]["content"]
        ["application/json"]["examples"];
    examples
        .as_object()
        .expect("the execute operation has examples")
        .values()
        .map(|e| e["value"]["mode"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_annotated_example_matches_the_served_openapi_document() {
    let root = root();
    let mut all = Vec::new();
    for page in book(&root) {
        let text = std::fs::read_to_string(root.join(&page)).expect("a page of the book");
        let found = examples(&page, &text);
        if page.starts_with("docs/api-") {
            assert!(
                found.iter().any(|e| matches!(e.part, Part::Response(_))),
                "{page} carries no annotated response example"
            );
        }
        all.extend(found);
    }
    assert!(all.len() > 20, "only {} annotated examples", all.len());

    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let (_, doc) = crate::common::get(&format!("{}/api/openapi.json", h.base)).await;
    devnet.stop();

    let mut cases = Vec::new();
    let mut problems = Vec::new();
    for ex in &all {
        let name = format!("{} {} {} {:?}", ex.at, ex.method, ex.path, ex.part);
        match (serde_json::from_str::<Value>(&ex.text), schema(&doc, ex)) {
            (Err(e), _) => problems.push(format!("{name}: not JSON: {e}")),
            (_, None) => {
                problems.push(format!("{name}: no such JSON body in the OpenAPI document"))
            }
            (Ok(body), Some(schema)) => cases.push((name, schema.clone(), body)),
        }
    }
    let refused = violations(&doc, &cases);
    assert!(
        problems.is_empty() && refused.is_empty(),
        "examples that do not match the OpenAPI document:\n{}\n{refused}",
        problems.join("\n")
    );

    let shown: BTreeSet<Option<String>> = all
        .iter()
        .filter(|e| e.method == "post" && e.path == "/api/route/execute" && e.part == Part::Request)
        .filter_map(|e| serde_json::from_str::<Value>(&e.text).ok())
        .map(|b| b["mode"].as_str().map(str::to_string))
        .collect();
    let missing: Vec<_> = execute_modes(&doc).difference(&shown).cloned().collect();
    assert!(
        missing.is_empty(),
        "execute modes the OpenAPI examples show and the book does not: {missing:?}"
    );
}

#[test]
fn example_blocks_are_found_by_their_info_string() {
    let page = "text\n```json POST /api/route/quote request\n{\"a\": 1}\n```\n\
                ```json\n{\"not\": \"annotated\"}\n```\n\
                ```sh\ncurl x\n```\n\
                ```json GET /api/receipts/{addr} 200\n[1,\n2]\n```\n";
    let found = examples("docs/x.md", page);
    let got: Vec<(&str, &str, &str, Part, &str)> = found
        .iter()
        .map(|e| {
            (
                e.at.as_str(),
                e.method.as_str(),
                e.path.as_str(),
                e.part.clone(),
                e.text.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "docs/x.md:2",
                "post",
                "/api/route/quote",
                Part::Request,
                "{\"a\": 1}\n"
            ),
            (
                "docs/x.md:11",
                "get",
                "/api/receipts/{addr}",
                Part::Response("200".into()),
                "[1,\n2]\n"
            ),
        ]
    );
    assert_eq!(annotation("json POST /x teapot"), None);
    assert_eq!(annotation("rust GET /x 200"), None);
}
