//! Event subscriptions (spec §6.3): price and balance webhooks, watched by
//! every replica and delivered like completion hooks.
//!
//! - **price** `{type: "price", asset, above | below}` (USD, a decimal
//!   string, 6 decimals at most): fires when the asset's price, from the
//!   price sources the host's quotes use ([`Observe::price_usd_e6`]), is at
//!   or above `above` (at or below `below`) having been on the other side —
//!   and once at subscription if it already is (`initial: true`). It
//!   re-arms when the price goes back. Payload `{event: "price.crossed",
//!   subscriptionId, asset, priceUsd, threshold, direction, initial, ts}`.
//! - **balance** `{type: "balance", chainId, token, address}`: fires on
//!   every change of the address's token balance (read at the latest
//!   block, every `notify.watch_interval_ms`). Payload `{event:
//!   "balance.changed", subscriptionId, chainId, token, address, previous,
//!   balance, ts}` (smallest units, decimal strings). The balance when the
//!   subscription starts is its baseline (no event).
//!
//! Replicas share the work safely: a watcher's observation moves the
//! subscription's stored state by compare-and-set in the same transaction
//! that creates the delivery, so one change is one delivery.

use std::sync::Arc;

use async_trait::async_trait;
use relay_store::{HookRow, HookStore, NewDelivery, StoreError};
use relay_types::clock::SharedClock;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::hooks::HookError;

/// Micro-USD in one USD.
const USD_E6: u64 = 1_000_000;

/// What a subscription watches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Subscription {
    /// An asset's USD price crossing a threshold.
    #[serde(rename_all = "camelCase")]
    Price {
        /// The asset (`ETH`, `BTC`, …).
        asset: String,
        /// `above` or `below`.
        direction: String,
        /// The threshold, micro-USD.
        threshold_usd_e6: u64,
    },
    /// An address's token balance changing.
    #[serde(rename_all = "camelCase")]
    Balance {
        /// The chain.
        chain_id: u64,
        /// The token as given (symbol or address).
        token: String,
        /// Its contract address.
        token_address: String,
        /// The address watched.
        address: String,
    },
}

impl Subscription {
    /// `price` or `balance`.
    pub fn kind(&self) -> &'static str {
        match self {
            Subscription::Price { .. } => "price",
            Subscription::Balance { .. } => "balance",
        }
    }

    /// A price subscription from `above` / `below` (decimal USD; exactly
    /// one of them).
    pub fn price(asset: &str, above: Option<&str>, below: Option<&str>) -> Result<Self, HookError> {
        let (direction, raw, field) = match (above, below) {
            (Some(a), None) => ("above", a, "above"),
            (None, Some(b)) => ("below", b, "below"),
            _ => {
                return Err(HookError::Field {
                    field: "above",
                    why: "give exactly one of above or below (a USD price, e.g. \"3100.50\")"
                        .into(),
                })
            }
        };
        let threshold_usd_e6 = parse_usd(raw).ok_or_else(|| HookError::Field {
            field,
            why: format!("{raw:?} is not a positive USD amount with at most 6 decimals"),
        })?;
        Ok(Subscription::Price {
            asset: asset.trim().to_ascii_uppercase(),
            direction: direction.into(),
            threshold_usd_e6,
        })
    }
}

/// Decimal USD → micro-USD (integers only; at most 6 decimals).
pub fn parse_usd(s: &str) -> Option<u64> {
    let (whole, frac) = s.trim().split_once('.').unwrap_or((s.trim(), ""));
    if whole.is_empty()
        || frac.len() > 6
        || !(whole.chars().chain(frac.chars())).all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let frac: u64 = format!("{frac:0<6}").parse().ok()?;
    let v = whole.checked_mul(USD_E6)?.checked_add(frac)?;
    (v > 0).then_some(v)
}

/// Micro-USD as a decimal USD string.
pub fn usd(v: u64) -> String {
    format!("{}.{:06}", v / USD_E6, v % USD_E6)
}

/// Where watchers read the world (the host wires chain reads and its
/// price sources in).
#[async_trait]
pub trait Observe: Send + Sync + std::fmt::Debug {
    /// The asset's USD price in micro-USD, if the host prices it.
    fn price_usd_e6(&self, asset: &str) -> Option<u64>;
    /// `owner`'s balance of `token` on `chain`, smallest units (decimal).
    async fn balance(&self, chain: u64, token: &str, owner: &str) -> Result<String, String>;
}

/// Evaluates every active subscription once per tick (module docs).
#[derive(Clone, Debug)]
pub struct Watcher {
    store: Arc<dyn HookStore>,
    observe: Arc<dyn Observe>,
    clock: SharedClock,
}

impl Watcher {
    /// A watcher.
    pub fn new(store: Arc<dyn HookStore>, observe: Arc<dyn Observe>, clock: SharedClock) -> Self {
        Watcher {
            store,
            observe,
            clock,
        }
    }

    /// One pass over every active subscription; how many events it raised.
    #[tracing::instrument(skip_all)]
    pub async fn tick(&self) -> Result<usize, StoreError> {
        let mut raised = 0;
        for kind in ["price", "balance"] {
            for hook in self.store.active_subscriptions(kind).await? {
                let Some(sub) = hook
                    .spec
                    .as_deref()
                    .and_then(|s| serde_json::from_str(s).ok())
                else {
                    continue;
                };
                raised += self.check(&hook, &sub).await? as usize;
            }
        }
        Ok(raised)
    }

    async fn check(&self, hook: &HookRow, sub: &Subscription) -> Result<bool, StoreError> {
        let now = self.clock.now_ms();
        let old = hook.watch_state.as_deref();
        let (new, event) = match sub {
            Subscription::Price {
                asset,
                direction,
                threshold_usd_e6,
            } => {
                let Some(price) = self.observe.price_usd_e6(asset) else {
                    return Ok(false);
                };
                let hit = match direction.as_str() {
                    "above" => price >= *threshold_usd_e6,
                    _ => price <= *threshold_usd_e6,
                };
                let new = if hit { "hit" } else { "clear" };
                let fire = hit && old != Some("hit");
                let body = json!({
                    "event": "price.crossed", "subscriptionId": hook.id, "asset": asset,
                    "priceUsd": usd(price), "threshold": usd(*threshold_usd_e6),
                    "direction": direction, "initial": old.is_none(), "ts": now,
                });
                (new.to_string(), fire.then_some(("price.crossed", body)))
            }
            Subscription::Balance {
                chain_id,
                token,
                token_address,
                address,
            } => {
                let balance = match self
                    .observe
                    .balance(*chain_id, token_address, address)
                    .await
                {
                    Ok(b) => b,
                    Err(e) => {
                        tracing::debug!(hook = %hook.id, error = %e, "balance read failed");
                        return Ok(false);
                    }
                };
                let fire = old.is_some_and(|o| o != balance);
                let body = json!({
                    "event": "balance.changed", "subscriptionId": hook.id, "chainId": chain_id,
                    "token": token, "address": address, "previous": old,
                    "balance": balance, "ts": now,
                });
                (balance, fire.then_some(("balance.changed", body)))
            }
        };
        if old == Some(new.as_str()) {
            return Ok(false);
        }
        let delivery = event.map(|(name, body)| NewDelivery {
            id: format!("msg_{}_{now}", hook.id.trim_start_matches("wh_")),
            hook_id: hook.id.clone(),
            event: name.into(),
            payload: body.to_string(),
            now_ms: now,
        });
        let moved = self
            .store
            .watch_transition(&hook.id, old, &new, delivery.as_ref())
            .await?;
        Ok(moved && delivery.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usd_parses_exactly() {
        assert_eq!(parse_usd("3100.5"), Some(3_100_500_000));
        assert_eq!(parse_usd("0.000001"), Some(1));
        assert_eq!(parse_usd("1"), Some(1_000_000));
        for bad in ["", "-1", "1.0000001", "abc", "0", "1e3", ".5"] {
            assert_eq!(parse_usd(bad), None, "{bad}");
        }
        assert_eq!(usd(3_100_500_000), "3100.500000");
    }

    #[test]
    fn exactly_one_threshold() {
        assert!(Subscription::price("eth", Some("1"), Some("2")).is_err());
        assert!(Subscription::price("eth", None, None).is_err());
        let s = Subscription::price("eth", None, Some("2500")).unwrap();
        assert_eq!(
            s,
            Subscription::Price {
                asset: "ETH".into(),
                direction: "below".into(),
                threshold_usd_e6: 2_500_000_000
            }
        );
    }
}
