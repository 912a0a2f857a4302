//! Usage recording (spec §5.2): every request that presents a live
//! developer key — header `x-relay-key`, or `?key=` on `/api/keys/*` — is
//! recorded for that key: when it arrived, its method, the matched route
//! template (`/api/route/status`; a path that matched no route is
//! `(unknown path)`, so what is stored stays bounded) and the status
//! answered, refusals of the edge (429, 413, …) included.
//!
//! Recording only pushes to [`relay_accounts::keys::KeyService`]'s
//! in-memory buffer; the writes to the store happen in batches, off the
//! request. A key that is not live (made up, or revoked) is not recorded.

use std::sync::Arc;

use axum::{
    extract::{MatchedPath, Request, State},
    middleware::Next,
    response::Response,
};
use relay_accounts::keys::{KeyService, UNKNOWN_PATH};

/// The middleware (module docs).
pub async fn record(State(keys): State<Arc<KeyService>>, req: Request, next: Next) -> Response {
    let on_keys = req.uri().path().starts_with("/api/keys/");
    let hash =
        crate::keys::presented(req.headers(), req.uri(), on_keys).and_then(|k| keys.live_hash(&k));
    let Some(hash) = hash else {
        return next.run(req).await;
    };
    let ts = keys.now_ms();
    let method = req.method().as_str().to_string();
    let path = req
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNKNOWN_PATH, |m| m.as_str())
        .to_string();
    let resp = next.run(req).await;
    keys.record(hash, ts, &method, &path, resp.status().as_u16());
    resp
}
