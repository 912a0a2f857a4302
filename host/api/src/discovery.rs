//! Discovery (spec §4.1, §2.2–§2.4, §2.11): status and the error
//! catalogue, the mesh, gasless info, uptime, delivery stats, the signed
//! capability snapshot, the changelog, price feeds, the float lane's
//! tiers, membership and recent routes. Every read beyond `/api/status` is
//! limited like status — its limit, `per_minute.status` included — each
//! path in its own bucket (§8.1 counts per endpoint), so a dashboard
//! polling them all is not throttled by their sum.

use relay_feature::{Feature, Limit};
use utoipa_axum::router::OpenApiRouter;

use super::AppState;

/// A discovery read limited like status, in a bucket of its own.
const fn like_status(bucket: &'static str, path: &'static str) -> Limit {
    Limit::get(bucket, path, 60).keyed("status")
}

/// Discovery's routes.
fn routes(_: &AppState) -> OpenApiRouter<AppState> {
    super::status::routes()
        .merge(super::routes::routes())
        .merge(super::gasless::routes())
        .merge(super::uptime::routes())
        .merge(super::delivery::routes())
        .merge(super::snapshot::routes())
        .merge(super::changelog::routes())
        .merge(super::pricefeeds::routes())
        .merge(super::floatlane::routes())
        .merge(super::membership::routes())
        .merge(super::recent::routes())
}

/// Discovery: what the host serves and how it is doing.
pub(crate) const FEATURE: Feature<AppState> = Feature {
    name: "discovery",
    home: "host/api/src/discovery.rs",
    spec: "§4.1",
    section: None,
    routes,
    limits: &[
        Limit::get("status", "/api/status", 60),
        Limit::get("recent", "/api/routes/recent", 60),
        like_status("status /api/gasless/info", "/api/gasless/info"),
        like_status("status /api/uptime", "/api/uptime"),
        like_status("status /api/delivery/stats", "/api/delivery/stats"),
        like_status(
            "status /api/capability/snapshot",
            "/api/capability/snapshot",
        ),
        like_status("status /api/changelog", "/api/changelog"),
        like_status("status /api/pricefeeds", "/api/pricefeeds"),
        like_status("status /api/floatlane/info", "/api/floatlane/info"),
        like_status("status /api/membership/status", "/api/membership/status"),
    ],
    errors: &[],
    start: None,
};
