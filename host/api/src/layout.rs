//! The repository's maps stay true: every path the README, the book's
//! pages (`docs/SUMMARY.md`; the layout block is `docs/layout.md`) and
//! `docs/interface.md` name, and every feature's home, exists; every
//! feature has one name, and no two features claim a bucket, a route
//! template or an `errorCode` (each answered as its blame says).

use std::{collections::BTreeSet, path::PathBuf};

use crate::FEATURES;

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Paths the documents name that a run creates or an integrator picks:
/// the packager's output and the scaffolded example rail.
const NOT_IN_GIT: &[&str] = &["plugins/dist", "plugins/acme/"];

/// The repository paths a document names: every backticked or linked
/// token that starts with a top-level folder, a `{…}` placeholder or a
/// trailing `:` dropped.
fn named_paths(doc: &str) -> BTreeSet<String> {
    const TOP: &[&str] = &[
        "host/",
        "rails/",
        "plugins/",
        "plugin-api/",
        "registry/",
        "conformance/",
        "docs/",
    ];
    let mut found = BTreeSet::new();
    for token in doc.split(['`', '(', ')', ' ', '\n', ',', ';']) {
        let token = token.trim_start_matches("../").trim_end_matches([':', '.']);
        let token = token.split('#').next().unwrap_or_default();
        let example = NOT_IN_GIT.iter().any(|p| token.starts_with(p));
        if TOP.iter().any(|t| token.starts_with(t)) && !token.contains(['{', '*', '<']) && !example
        {
            found.insert(token.to_string());
        }
    }
    found
}

/// A document of the repository, read whole.
fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The layout page: the code block under its `# Layout` heading lists
/// the crates.
fn layout_page() -> String {
    read("docs/layout.md")
}

/// The README and every page `docs/SUMMARY.md` lists (paths from the root).
fn book() -> Vec<String> {
    let summary = read("docs/SUMMARY.md");
    let mut pages = vec!["README.md".to_string()];
    for part in summary.split("](").skip(1) {
        let target = part.split(')').next().unwrap_or_default();
        pages.push(format!("docs/{target}"));
    }
    pages
}

/// The crate folders the layout page's block lists under `host/`.
fn layout_crates(layout: &str) -> Vec<String> {
    let block = layout
        .split("# Layout")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .unwrap_or_default();
    block
        .lines()
        .skip_while(|l| !l.starts_with("host/"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| {
            let name = l.trim_start();
            (l.len() - name.len() == 2).then(|| name.split_whitespace().next())?
        })
        .map(|n| format!("host/{n}"))
        .collect()
}

fn missing(paths: impl IntoIterator<Item = String>) -> Vec<String> {
    let root = root();
    paths
        .into_iter()
        .filter(|p| !root.join(p).exists())
        .collect()
}

#[test]
fn every_path_the_book_and_the_interface_map_name_exists() {
    let pages = book();
    assert!(
        pages.len() > 20 && pages.iter().any(|p| p == "docs/interface.md"),
        "the summary lists the book's pages: {pages:?}"
    );
    let mut named = BTreeSet::new();
    for page in &pages {
        named.extend(named_paths(&read(page)));
    }
    let crates = layout_crates(&layout_page());
    assert!(
        crates.len() > 10,
        "the layout lists host's crates: {crates:?}"
    );
    named.extend(crates);
    assert!(named.len() > 50, "the maps name paths: {}", named.len());
    let gone = missing(named);
    assert!(
        gone.is_empty(),
        "named but not in the repository: {gone:#?}"
    );
}

#[test]
fn every_host_crate_is_in_the_layout_page() {
    let listed: BTreeSet<String> = layout_crates(&layout_page()).into_iter().collect();
    let on_disk: BTreeSet<String> = std::fs::read_dir(root().join("host"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| format!("host/{}/", e.file_name().to_string_lossy()))
        .collect();
    let unlisted: Vec<_> = on_disk.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "crates the layout does not list: {unlisted:?}"
    );
}

/// The `relay-*` packages a crate's `[dependencies]` name.
fn relay_dependencies(manifest: &str) -> Vec<String> {
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|d| d.split("\n[").next())
        .unwrap_or_default();
    deps.lines()
        .filter_map(|l| l.split([' ', '.', '=']).next())
        .filter(|n| n.starts_with("relay-"))
        .map(str::to_string)
        .collect()
}

#[test]
fn no_host_crate_depends_on_one_the_layout_lists_below_it() {
    let order = layout_crates(&layout_page());
    let manifest =
        |dir: &str| std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
    let package = |dir: &str| {
        let m = manifest(dir);
        let line = m
            .lines()
            .find(|l| l.starts_with("name = "))
            .unwrap_or_default();
        line.trim_start_matches("name = ")
            .trim_matches('"')
            .to_string()
    };
    let names: Vec<String> = order.iter().map(|d| package(d)).collect();
    let (mut upward, mut edges) = (Vec::new(), 0);
    for (at, dir) in order.iter().enumerate() {
        for dep in relay_dependencies(&manifest(dir)) {
            edges += 1;
            if let Some(below) = names.iter().position(|n| *n == dep).filter(|p| *p > at) {
                upward.push(format!("{dir} -> {}", order[below]));
            }
        }
    }
    assert!(
        edges > 50,
        "the manifests were read: {edges} relay-* dependencies"
    );
    assert!(
        upward.is_empty(),
        "depends on a crate listed below it: {upward:#?}"
    );
}

#[test]
fn features_have_one_name_a_home_and_claim_nothing_twice() {
    let mut names = BTreeSet::new();
    let (mut buckets, mut templates, mut codes) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for f in FEATURES {
        assert!(names.insert(f.name), "two features named {}", f.name);
        assert_eq!(
            missing([f.home.to_string()]),
            Vec::<String>::new(),
            "{}'s home",
            f.name
        );
        for l in f.limits {
            assert!(
                buckets.insert(l.bucket),
                "bucket {} claimed twice",
                l.bucket
            );
            for m in l.methods {
                assert!(
                    templates.insert((m.clone(), l.path)),
                    "{m} {} limited twice",
                    l.path
                );
            }
        }
        for c in f.errors {
            assert!(codes.insert(c.as_str()), "{} claimed twice", c.as_str());
            assert!(c.consistent(), "{}: status and blame disagree", c.as_str());
        }
    }
}
