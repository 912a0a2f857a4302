//! Usage recording (spec §5.2): every request that presents a live
//! developer key — header `x-relay-key`, or `?key=` on `/api/keys/*` — is
//! recorded for that key: when it arrived, its method, the matched route
//! template (`/api/route/status`; a path that matched no route is
//! `(unknown path)`, so what is stored stays bounded) and the status
//! answered, refusals of the edge (429, 413, …) included.
//!
//! Recording only pushes to [`relay_keys::KeyService`]'s
//! in-memory buffer; the writes to the store happen in batches, off the
//! request. A key that is not live (made up, or revoked) is not recorded.

use std::sync::Arc;

use axum::{extract::Request, response::Response};
use relay_keys::{KeyHash, KeyService, UNKNOWN_PATH};

/// The middleware (module docs; [`crate::around::Around`]).
#[derive(Clone)]
pub struct Record(pub Arc<KeyService>);

impl crate::around::Around for Record {
    /// For a live key: its hash, when the request came, its method and
    /// matched route.
    type Seen = Option<(KeyHash, u64, String, String)>;

    fn before(&self, req: &Request) -> Result<Self::Seen, Box<Response>> {
        let keys = &self.0;
        let on_keys = req.uri().path().starts_with("/api/keys/");
        let Some(hash) = relay_keys::http::presented(req.headers(), req.uri(), on_keys)
            .and_then(|k| keys.live_hash(&k))
        else {
            return Ok(None);
        };
        let path = crate::operations::route_of(req).unwrap_or(UNKNOWN_PATH);
        let method = req.method().as_str().to_string();
        Ok(Some((hash, keys.now_ms(), method, path.to_string())))
    }

    fn after(&self, seen: Self::Seen, resp: &mut Response) {
        if let Some((hash, ts, method, path)) = seen {
            self.0
                .record(hash, ts, &method, &path, resp.status().as_u16());
        }
    }
}
