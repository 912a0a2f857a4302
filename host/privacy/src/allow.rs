//! What an inner request may reach: a fixed allowlist of the host's own
//! operations — quoting and comparing, preparing and executing a route
//! (the local tool server's private-lane tools: execute, session execute,
//! agent do), its status, the chains, the no-op, sealed messaging, and
//! the privacy pool's tree, withdrawals and tickets — never any
//! other path, and never another host (the inner request's scheme and
//! authority are not used: it is always answered here). Streams
//! (`/api/route/stream`) are not on it: a sealed response is one message.

use axum::body::Body;
use http::Method;
use relay_errors::ApiError;

use crate::errors;

/// The allowlist: method and path template (`{x}` matches one segment).
pub const ALLOWED: &[(Method, &str)] = &[
    (Method::POST, "/api/route/quote"),
    (Method::GET, "/api/route/compare"),
    (Method::POST, "/api/route/compare"),
    (Method::POST, "/api/route/intent"),
    (Method::POST, "/api/route/execute"),
    (Method::POST, "/api/session/execute"),
    (Method::POST, "/api/agent/do"),
    (Method::GET, "/api/route/status"),
    (Method::GET, "/api/route/chains"),
    (Method::GET, "/api/privacy/noop"),
    (Method::GET, "/api/messages/v2/info"),
    (Method::GET, "/api/messages/v2/directory"),
    (Method::GET, "/api/messages/v2/mailbox/{addressOrName}"),
    (Method::POST, "/api/messages/v2/mailbox"),
    (Method::POST, "/api/messages/v2/send"),
    (Method::GET, "/api/messages/v2/feed"),
    (Method::GET, "/api/messages/v2/witness/head"),
    (Method::GET, "/api/messages/v2/witness/range"),
    (Method::GET, "/api/pool/tree"),
    (Method::POST, "/api/pool/withdraw"),
    (Method::GET, "/api/pool/hold"),
];

/// Whether `method path` is on the allowlist.
pub fn allowed(method: &Method, path: &str) -> bool {
    ALLOWED
        .iter()
        .any(|(m, template)| m == method && matches(template, path))
}

fn matches(template: &str, path: &str) -> bool {
    let (mut t, mut p) = (template.split('/'), path.split('/'));
    loop {
        match (t.next(), p.next()) {
            (None, None) => return true,
            (Some(ts), Some(ps)) if ts.starts_with('{') => {
                if ps.is_empty() {
                    return false;
                }
            }
            (Some(ts), Some(ps)) if ts == ps => {}
            _ => return false,
        }
    }
}

/// Headers that describe one hop, the client's address or its cookies:
/// never carried from the inner request to the services, or back.
pub fn hop_by_hop(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
            | "host"
            | "content-length"
            | "forwarded"
            | "x-forwarded-for"
            | "x-forwarded-host"
            | "x-forwarded-proto"
            | "x-real-ip"
            | "cookie"
            | "set-cookie"
    )
}

/// The inner BHTTP request as a request to the host's services, or why it
/// is refused.
pub fn inner_request(msg: &bhttp::Message) -> Result<http::Request<Body>, ApiError> {
    let malformed = |why: &str| ApiError::new(errors::OhttpInnerMalformed, why.to_string());
    let control = msg.control();
    let method = control
        .method()
        .and_then(|m| Method::from_bytes(m).ok())
        .ok_or_else(|| malformed("the inner message is not a request with a method"))?;
    let target = control
        .path()
        .and_then(|p| std::str::from_utf8(p).ok())
        .filter(|p| p.starts_with('/'))
        .ok_or_else(|| malformed("the inner request's path must start with /"))?;
    let path = target.split('?').next().unwrap_or(target);
    if !allowed(&method, path) || path.contains("/../") || path.contains("//") {
        return Err(ApiError::new(
            errors::OhttpTargetRefused,
            format!("{method} {path} is not on the gateway's allowlist"),
        ));
    }
    let mut req = http::Request::builder().method(method).uri(target);
    for f in msg.header().iter() {
        let name = std::str::from_utf8(f.name()).unwrap_or("");
        if !hop_by_hop(name) {
            req = req.header(f.name(), f.value());
        }
    }
    req.body(Body::from(msg.content().to_vec()))
        .map_err(|_| malformed("the inner request's path or a header is not valid HTTP"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_matches_whole_segments_only() {
        assert!(allowed(&Method::POST, "/api/route/quote"));
        assert!(allowed(&Method::GET, "/api/messages/v2/mailbox/alice"));
        assert!(!allowed(&Method::GET, "/api/messages/v2/mailbox/"));
        assert!(!allowed(&Method::GET, "/api/messages/v2/mailbox/a/b"));
        assert!(!allowed(&Method::GET, "/api/route/quote"), "method too");
        assert!(!allowed(&Method::POST, "/api/keys"));
        assert!(!allowed(&Method::GET, "/admin"));
        assert!(!allowed(&Method::POST, "/api/route/quote/"));
    }

    #[test]
    fn an_inner_request_off_the_list_or_with_a_bad_target_is_refused() {
        let msg = |m: &str, p: &str| {
            bhttp::Message::request(m.into(), b"https".to_vec(), b"h".to_vec(), p.into())
        };
        let code = |r: Result<_, ApiError>| r.map(drop).unwrap_err().code.as_str();
        assert_eq!(
            code(inner_request(&msg("POST", "/api/keys"))),
            "OHTTP_TARGET_REFUSED"
        );
        assert_eq!(
            code(inner_request(&msg("GET", "api/route/status"))),
            "OHTTP_INNER_MALFORMED"
        );
        let mut ok = msg("GET", "/api/route/status?id=rt_1");
        ok.put_header("x-forwarded-for", "1.2.3.4");
        ok.put_header("accept", "application/json");
        let req = inner_request(&ok).unwrap();
        assert_eq!(req.uri().query(), Some("id=rt_1"));
        assert!(req.headers().get("x-forwarded-for").is_none());
        assert_eq!(req.headers()["accept"], "application/json");
    }
}
