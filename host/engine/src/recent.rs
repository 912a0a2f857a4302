//! The anonymised recent-routes feed (spec §2.11, §4.3, §8.2): a stored
//! route reduced to coarse strings a stranger may see. Never an address, a
//! transaction hash, a route id or an exact amount:
//!
//! - `lane`: `"8453→42161"` (node ids or names);
//! - `asset`: the source symbol, `"USDC→USDT"` when it changes on the way;
//! - `rail`, `status` (the public status of spec §3.1);
//! - `when`: `"just now"`, `"7m ago"`, `"3h ago"`, `"2d ago"`;
//! - `size`: a bucket in whole tokens — `"<10"`, `"10-100"`, `"100-1k"`,
//!   `"1k-10k"`, `"10k-100k"`, `"100k+"` (`"unknown"` when the token's
//!   decimals are not known here);
//! - `sandbox`: always `false` — sandbox routes are never persisted, so they
//!   never reach the feed.

use relay_plugin_api::{Amount, ChainRef, U256};
use relay_types::route::RouteRecord;
use serde::Serialize;
use utoipa::ToSchema;

/// Routes shown when `limit` is omitted.
pub const DEFAULT_LIMIT: u32 = 25;
/// The most routes one answer shows (larger limits are clamped).
pub const MAX_LIMIT: u32 = 100;

/// Parses `limit`: omitted → 25, above 100 → 100; not a positive integer
/// → why not.
pub fn parse_limit(raw: Option<&str>) -> Result<u32, String> {
    let Some(raw) = raw.map(str::trim) else {
        return Ok(DEFAULT_LIMIT);
    };
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{raw:?} is not a positive integer"));
    }
    match raw.parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n.min(u64::from(MAX_LIMIT)) as u32),
        Err(_) => Ok(MAX_LIMIT),
    }
}

/// The size bucket of `amount` at `decimals` (module docs).
pub fn size_bucket(amount: Amount, decimals: Option<u8>) -> &'static str {
    let Some(d) = decimals else {
        return "unknown";
    };
    let whole = amount.0 / U256::from(10u8).pow(U256::from(d));
    const BUCKETS: [(u64, &str); 5] = [
        (10, "<10"),
        (100, "10-100"),
        (1_000, "100-1k"),
        (10_000, "1k-10k"),
        (100_000, "10k-100k"),
    ];
    BUCKETS
        .iter()
        .find(|(below, _)| whole < U256::from(*below))
        .map_or("100k+", |(_, name)| name)
}

/// How long ago `then_ms` was at `now_ms`, coarsely.
pub fn ago(now_ms: u64, then_ms: u64) -> String {
    let secs = now_ms.saturating_sub(then_ms) / 1000;
    match secs {
        0..60 => "just now".into(),
        60..3_600 => format!("{}m ago", secs / 60),
        3_600..172_800 => format!("{}h ago", secs / 3_600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// `"8453→42161"`.
pub fn lane(from: ChainRef, to: ChainRef) -> String {
    format!("{from}→{to}")
}

/// One entry of the anonymised feed (spec §2.11).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct RecentRoute {
    /// `"8453→42161"`.
    pub lane: String,
    /// Asset, or `from→to` for a swap.
    pub asset: String,
    /// Rail.
    pub rail: String,
    /// Public status.
    pub status: String,
    /// Coarse age (`just now`, `5m ago` …).
    pub when: String,
    /// Whole-token size bucket.
    pub size: String,
    /// Always false: sandbox routes are never listed.
    pub sandbox: bool,
}

/// `GET /api/routes/recent` (spec §2.11).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RecentRoutes {
    /// How many.
    pub count: usize,
    /// Newest first.
    pub routes: Vec<RecentRoute>,
    /// The limit applied.
    pub limit: u32,
    /// What is and is not shown.
    pub note: String,
}

impl RecentRoutes {
    /// The feed of `routes` under `limit`.
    pub fn new(routes: Vec<RecentRoute>, limit: u32) -> Self {
        RecentRoutes {
            count: routes.len(),
            routes,
            limit,
            note: "anonymised: coarse lane, asset, rail, status, age and size bucket only — no addresses, hashes, ids or exact amounts; sandbox routes are never stored and never listed".into(),
        }
    }
}

/// One feed entry; `decimals` of the source token when known.
pub fn entry(r: &RouteRecord, decimals: Option<u8>, now_ms: u64) -> RecentRoute {
    let asset = if r.from_token.eq_ignore_ascii_case(&r.to_token) {
        r.from_token.clone()
    } else {
        format!("{}→{}", r.from_token, r.to_token)
    };
    RecentRoute {
        lane: lane(r.from_chain, r.to_chain),
        asset,
        rail: r.rail.clone(),
        status: r.status.public().into(),
        when: ago(now_ms, r.created_ms),
        size: size_bucket(r.amount, decimals).into(),
        sandbox: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::NonEvmNode;

    #[test]
    fn sizes_fall_in_whole_token_buckets() {
        let usdc = |whole: u128| Amount::from_u128(whole * 1_000_000);
        assert_eq!(size_bucket(usdc(5), Some(6)), "<10");
        assert_eq!(size_bucket(Amount::from_u128(9_999_999), Some(6)), "<10");
        assert_eq!(size_bucket(usdc(10), Some(6)), "10-100");
        assert_eq!(size_bucket(usdc(999), Some(6)), "100-1k");
        assert_eq!(size_bucket(usdc(5_000), Some(6)), "1k-10k");
        assert_eq!(size_bucket(usdc(99_999), Some(6)), "10k-100k");
        assert_eq!(size_bucket(usdc(1_000_000), Some(6)), "100k+");
        assert_eq!(size_bucket(usdc(5), None), "unknown");
    }

    #[test]
    fn times_are_coarse_and_relative() {
        let now = 10_000_000_000;
        assert_eq!(ago(now, now - 59_000), "just now");
        assert_eq!(ago(now, now + 5_000), "just now");
        assert_eq!(ago(now, now - 120_000), "2m ago");
        assert_eq!(ago(now, now - 3 * 3_600_000), "3h ago");
        assert_eq!(ago(now, now - 3 * 86_400_000), "3d ago");
    }

    #[test]
    fn limits_default_clamp_and_refuse_non_integers() {
        assert_eq!(parse_limit(None), Ok(25));
        assert_eq!(parse_limit(Some("7")), Ok(7));
        assert_eq!(parse_limit(Some("500")), Ok(100));
        assert_eq!(parse_limit(Some("99999999999999999999999")), Ok(100));
        for bad in ["abc", "1.5", "-3", "", "0"] {
            assert!(parse_limit(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn lanes_name_nodes_only() {
        assert_eq!(
            lane(ChainRef::Evm(8453), ChainRef::Evm(42161)),
            "8453→42161"
        );
        assert_eq!(
            lane(ChainRef::Evm(1), ChainRef::NonEvm(NonEvmNode::Bitcoin)),
            "1→bitcoin"
        );
    }
}
