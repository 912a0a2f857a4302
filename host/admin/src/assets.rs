//! The dashboard's static files, built into the binary: no CDN, no
//! package manager, no build step. The page links only these.

/// The dashboard page; `{{CSRF}}` is replaced with the session's CSRF
/// token when it is served.
pub const INDEX_HTML: &str = include_str!("../assets/index.html");
/// The login page (the body of the page's 401).
pub const LOGIN_HTML: &str = include_str!("../assets/login.html");
/// The stylesheet.
pub const CSS: &str = include_str!("../assets/admin.css");
/// The dashboard's script.
pub const JS: &str = include_str!("../assets/admin.js");
/// The login page's script.
pub const LOGIN_JS: &str = include_str!("../assets/login.js");

/// The placeholder of the CSRF token in [`INDEX_HTML`].
pub const CSRF_PLACEHOLDER: &str = "{{CSRF}}";

/// A static asset by file name, with its content type.
pub fn asset(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "admin.css" => Some(("text/css; charset=utf-8", CSS)),
        "admin.js" => Some(("text/javascript; charset=utf-8", JS)),
        "login.js" => Some(("text/javascript; charset=utf-8", LOGIN_JS)),
        _ => None,
    }
}

/// The `Content-Security-Policy` of the pages: only their own files.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_load_nothing_from_elsewhere() {
        for page in [INDEX_HTML, LOGIN_HTML, CSS, JS, LOGIN_JS] {
            assert!(!page.contains("http://") && !page.contains("https://"));
        }
        assert!(INDEX_HTML.contains(CSRF_PLACEHOLDER));
        assert!(INDEX_HTML.contains("/admin/assets/admin.js"));
        assert!(LOGIN_HTML.contains("/admin/assets/login.js"));
    }
}
