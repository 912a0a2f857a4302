//! Every link in the repository's documentation resolves inside it: a clone
//! has nothing beside the repository to point at.
//!
//! Checked in every markdown file and in Rust doc comments (`///`, `//!`),
//! outside code blocks:
//! - markdown links `[text](target)` and definitions `[ref]: target` must
//!   name a file or directory of the repository, relative to the document
//!   (or to the root with a leading `/`); web links (`scheme://`), anchors
//!   and rustdoc's item links (`crate::x`) are not paths;
//! - code spans that are paths — starting with `./` or `../`, or with one of
//!   the repository's top-level directories (`host/…`) — must exist too,
//!   unless git ignores them (generated places such as `plugins/dist`).
//!   Placeholders (`<name>`, `$name`, `…`, `*`) are not paths;
//! - in markdown, a link's anchor (`page.md#heading`, `#heading`) must be
//!   the anchor of a heading of that page, as GitHub and mdBook make it.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Component, Path, PathBuf},
};

use super::repo;

/// A reference to a path, where it was found.
#[derive(Debug)]
struct Reference {
    line: usize,
    target: String,
    /// A markdown link (must exist) rather than a code span (may be ignored).
    link: bool,
}

/// The documentation text of `file` (its doc comments for Rust), with line
/// numbers; code blocks and, in Rust, lines of code read as empty lines.
fn doc_lines(file: &str, text: &str) -> Vec<(usize, String)> {
    let rust = file.ends_with(".rs");
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let doc = if rust {
            let t = line.trim_start();
            t.strip_prefix("///").or_else(|| t.strip_prefix("//!"))
        } else {
            Some(line)
        };
        let t = doc.unwrap_or_default().trim_start();
        let fence = t.starts_with("```") || t.starts_with("~~~");
        fenced ^= fence;
        let keep = doc.filter(|_| !fenced && !fence);
        out.push((i + 1, keep.unwrap_or_default().to_string()));
    }
    out
}

/// Markdown link targets on `line`: `](target)` and `[ref]: target`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        if let Some(t) = rest[..end].split_whitespace().next() {
            out.push(t.trim_matches(['<', '>']).to_string());
        }
        rest = &rest[end..];
    }
    let t = line.trim_start();
    if let Some(close) = t.strip_prefix('[').and_then(|r| r.find("]:")) {
        if let Some(target) = t[close + 3..].split_whitespace().next() {
            out.push(target.to_string());
        }
    }
    out
}

/// Code spans (text between backticks) with the line each starts on. A span
/// never crosses an empty line; one that crosses a line break holds a space.
fn code_spans(lines: &[(usize, String)]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in lines {
        if line.trim().is_empty() {
            open = None;
            continue;
        }
        if let Some((_, span)) = open.as_mut() {
            span.push(' ');
        }
        for c in line.chars() {
            match (c, open.take()) {
                ('`', Some(span)) => out.push(span),
                ('`', None) => open = Some((*n, String::new())),
                (c, Some((at, mut span))) => {
                    span.push(c);
                    open = Some((at, span));
                }
                (_, None) => {}
            }
        }
    }
    out
}

/// Whether a link target is a path (not a web link, an anchor or, in Rust,
/// an item path).
fn is_path_link(target: &str, rust: bool) -> bool {
    !(target.is_empty()
        || target.contains("://")
        || target.starts_with("mailto:")
        || target.starts_with('#')
        || (rust && (target.contains("::") || !target.contains('/'))))
}

/// Whether a code span reads as a repository path.
fn is_path_span(span: &str, top_dirs: &BTreeSet<String>) -> bool {
    let placeholder = |c: char| c.is_whitespace() || "<>*$~…{}|[]()".contains(c);
    if span.is_empty() || span.contains(placeholder) || span.contains("://") {
        return false;
    }
    span.starts_with("./")
        || span.starts_with("../")
        || span
            .split_once('/')
            .is_some_and(|(first, _)| top_dirs.contains(first))
}

/// The references of one documentation file, in line order.
fn references(file: &str, text: &str, top_dirs: &BTreeSet<String>) -> Vec<Reference> {
    let rust = file.ends_with(".rs");
    let lines = doc_lines(file, text);
    let mut out: Vec<Reference> = lines
        .iter()
        .flat_map(|(line, doc)| link_targets(doc).into_iter().map(move |t| (*line, t)))
        .filter(|(_, target)| is_path_link(target, rust))
        .map(|(line, target)| Reference {
            line,
            target,
            link: true,
        })
        .collect();
    out.extend(
        code_spans(&lines)
            .into_iter()
            .filter(|(_, span)| is_path_span(span, top_dirs))
            .map(|(line, target)| Reference {
                line,
                target,
                link: false,
            }),
    );
    out.sort_by_key(|r| r.line);
    out
}

/// The anchor GitHub and mdBook give a heading: lower case, spaces as
/// hyphens, every other character that is not a letter, digit, `-` or `_`
/// dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a markdown document's headings (outside code blocks); a
/// repeated one gets `-1`, `-2`, … as GitHub numbers them.
fn anchors(md: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in doc_lines("page.md", md) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        let Some(text) = line[hashes..].strip_prefix(' ').filter(|_| hashes > 0) else {
            continue;
        };
        let base = slug(text);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The anchored links of markdown `file` whose anchor names no heading of
/// the page it points at (`read` gives a page's text by its path from the
/// root, `None` when it is not a file of the repository).
fn dead_anchors(file: &str, text: &str, read: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut dead = Vec::new();
    for (n, line) in doc_lines(file, text) {
        for target in link_targets(&line) {
            let Some((path, anchor)) = target.split_once('#') else {
                continue;
            };
            if target.contains("://") || !(path.is_empty() || path.ends_with(".md")) {
                continue;
            }
            let page = match path {
                "" => Some(text.to_string()),
                p => resolve(file, p, p.starts_with('/')).and_then(|p| read(&p)),
            };
            if page.is_some_and(|page| !anchors(&page).contains(anchor)) {
                dead.push(format!("{file}:{n}: {target}"));
            }
        }
    }
    dead
}

/// `target` as a path from the repository root, seen from `file`; `None`
/// when it climbs out of the repository.
fn resolve(file: &str, target: &str, from_root: bool) -> Option<String> {
    let target = target.split(['#', '?']).next().unwrap_or_default();
    let target = target.split(':').next().unwrap_or_default(); // `path:line`
    let base = match target.strip_prefix('/') {
        Some(_) => PathBuf::new(),
        None if from_root => PathBuf::new(),
        None => Path::new(file)
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf(),
    };
    let mut parts: Vec<String> = Vec::new();
    for c in base.join(target.trim_start_matches('/')).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            _ => {}
        }
    }
    Some(parts.join("/"))
}

#[test]
fn every_documentation_link_resolves_inside_the_repository() {
    let files = repo::files();
    let dirs: BTreeSet<String> = files
        .iter()
        .flat_map(|f| {
            let mut up = Vec::new();
            let mut p = Path::new(f).parent();
            while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
                up.push(d.to_string_lossy().into_owned());
                p = d.parent();
            }
            up
        })
        .collect();
    let top_dirs: BTreeSet<String> = dirs.iter().filter(|d| !d.contains('/')).cloned().collect();
    let exists = |p: &str| p.is_empty() || files.contains(p) || dirs.contains(p);

    let mut broken = Vec::new();
    let mut checked = 0;
    for file in files
        .iter()
        .filter(|f| f.ends_with(".md") || f.ends_with(".rs"))
    {
        let text = std::fs::read_to_string(repo::root().join(file)).unwrap_or_default();
        for r in references(file, &text, &top_dirs) {
            checked += 1;
            let relative = r.link || r.target.starts_with("./") || r.target.starts_with("../");
            let ok = match resolve(file, &r.target, !relative) {
                Some(p) => exists(&p) || (!r.link && repo::ignored(&p)),
                None => false,
            };
            if !ok {
                broken.push(format!("{file}:{}: {}", r.line, r.target));
            }
        }
        if file.ends_with(".md") {
            let read = |p: &str| {
                files
                    .contains(p)
                    .then(|| std::fs::read_to_string(repo::root().join(p)).ok())
                    .flatten()
            };
            broken.extend(dead_anchors(file, &text, read));
        }
    }
    assert!(
        checked > 50,
        "only {checked} references found: is the scan broken?"
    );
    assert!(
        broken.is_empty(),
        "{} documentation references name no file or directory of the repository, or no \
         heading of the page they point at (a clone has nothing beside it; point at an \
         in-repo file, e.g. docs/interface.md):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn links_and_path_spans_are_told_from_other_text() {
    let top: BTreeSet<String> = ["host".to_string()].into();
    let md = "See [spec](../shared/spec.md), [web](https://x.example/a), [a](#b),\n\
              `host/api/src/lib.rs`, `host/<domain>`, `cargo build -p x`, `../up.sh`\n\
              ```sh\n[not](checked.md) `host/in/code`\n```\n[ref]: docs/x.md";
    let found: Vec<(String, bool)> = references("README.md", md, &top)
        .into_iter()
        .map(|r| (r.target, r.link))
        .collect();
    let want = [
        ("../shared/spec.md", true),
        ("host/api/src/lib.rs", false),
        ("../up.sh", false),
        ("docs/x.md", true),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(t, l)| (t.to_string(), *l)).collect();
    assert_eq!(found, want);

    let rs = "/// [`Clock`](clock::Clock), [x](./changelog.json)\n// [no](doc.md)";
    let found: Vec<String> = references("host/api/src/a.rs", rs, &top)
        .into_iter()
        .map(|r| r.target)
        .collect();
    assert_eq!(found, ["./changelog.json"]);

    assert_eq!(
        resolve("a/b/README.md", "../c.md#x", false).as_deref(),
        Some("a/c.md")
    );
    assert_eq!(resolve("README.md", "../shared/x.md", false), None);
    assert_eq!(
        resolve("a/x.rs", "host/y.rs:12", true).as_deref(),
        Some("host/y.rs")
    );
}

#[test]
fn anchors_are_the_headings_slugs() {
    let page = "# Signing: one signature binds the whole route\n\
                ## The devnet (`conformance/up.sh`, i.e. `relay up`)\n\
                ```sh\n# not a heading\n```\n## Notes\n## Notes\n";
    let found = anchors(page);
    for a in [
        "signing-one-signature-binds-the-whole-route",
        "the-devnet-conformanceupsh-ie-relay-up",
        "notes",
        "notes-1",
    ] {
        assert!(found.contains(a), "{a} not in {found:?}");
    }
    assert!(!found.contains("not-a-heading"));

    let read = |p: &str| (p == "docs/a.md").then(|| page.to_string());
    let md = "[ok](docs/a.md#notes-1) [gone](docs/a.md#nowhere) [here](#notes)\n\
              [web](https://x.example/a.md#y) [other](docs/b.md#z)\n\n## Notes\n";
    assert_eq!(
        dead_anchors("README.md", md, read),
        ["README.md:1: docs/a.md#nowhere"]
    );
}
