//! Tests of what an integrator starts from, one binary: the template
//! guide's `relay-plugins new`, and the repository's documentation links.

mod docs_links;
mod repo;
mod template;
mod workspace;
