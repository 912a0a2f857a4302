//! Tests of what an integrator starts from, one binary: the template's
//! documented rename, and the repository's documentation links.

mod docs_links;
mod repo;
mod template;
