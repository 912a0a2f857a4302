//! The documentation the concierge answers from, compiled into the binary:
//! the README and every page `docs/SUMMARY.md` lists, in its order (a unit
//! test keeps the two lists equal, so a page added to the book is indexed).

/// One page of the documentation.
#[derive(Clone, Copy, Debug)]
pub struct Page {
    /// Its path from the repository root, as citations name it.
    pub path: &'static str,
    /// Its markdown.
    pub text: &'static str,
}

/// The pages at `paths` (from the repository root), each compiled in.
macro_rules! pages {
    ($($path:literal,)*) => {
        &[$(Page { path: $path, text: include_str!(concat!("../../../../", $path)) },)*]
    };
}

/// The README, then the book's pages.
pub const PAGES: &[Page] = pages![
    "README.md",
    "docs/introduction.md",
    "docs/quickstart-api-client.md",
    "docs/quickstart-operator.md",
    "docs/quickstart-rail-integrator.md",
    "docs/building-and-testing.md",
    "docs/layout.md",
    "docs/features.md",
    "docs/interface.md",
    "docs/configuration.md",
    "docs/operating.md",
    "docs/api.md",
    "docs/api-quotes.md",
    "docs/api-keys.md",
    "docs/api-webhooks.md",
    "docs/api-sessions.md",
    "docs/api-primitives.md",
    "docs/api-sponsorship.md",
    "docs/api-netting.md",
    "docs/api-yield-account.md",
    "docs/api-receipts.md",
    "docs/api-messaging.md",
    "docs/api-privacy.md",
    "docs/api-pool.md",
    "docs/api-proof.md",
    "docs/api-agents.md",
    "docs/examples.md",
    "docs/explorer.md",
    "docs/glossary.md",
    "docs/rails.md",
    "docs/writing-a-rail.md",
    "docs/devnet.md",
    "docs/performance.md",
    "docs/soak.md",
];

#[cfg(test)]
mod tests {
    use super::PAGES;

    #[test]
    fn the_readme_and_every_page_of_the_summary_are_indexed() {
        let summary = include_str!("../../../../docs/SUMMARY.md");
        let mut listed = vec!["README.md".to_string()];
        for part in summary.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or_default();
            listed.push(format!("docs/{target}"));
        }
        let indexed: Vec<String> = PAGES.iter().map(|p| p.path.to_string()).collect();
        assert_eq!(
            indexed, listed,
            "PAGES must list README.md and docs/SUMMARY.md's pages"
        );
        assert!(PAGES.iter().all(|p| !p.text.trim().is_empty()));
    }
}
