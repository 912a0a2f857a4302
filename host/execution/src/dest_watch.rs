//! Watching the destination chain for a route whose rail's upstream has no
//! status API (contract 1.1: `track` answers
//! [`RailError::no_status_api`](relay_plugin_api::RailError::no_status_api)).
//!
//! The payout the host looks for is an ERC-20 `Transfer(from, recipient,
//! value)` of the route's destination token on its (EVM) destination chain
//! with `value` at least the route's `minOut`, in blocks from where the
//! watch began: the destination's head at the first such answer less
//! [`MARGIN_BLOCKS`], recorded in the store (with the scan's cursor) so a
//! restarted host resumes from it. Each poll scans the blocks not yet
//! scanned up to the head, in ranges of at most [`RANGE_BLOCKS`] blocks
//! (at most [`RANGES_PER_POLL`] of them: a far-behind watch catches up over
//! several polls). A matching log is claimed for the route in the store
//! before it counts, so a log another route claimed is skipped: two routes
//! to the same recipient never share one payout. The claimed log's
//! transaction becomes the route's `destTx`, exactly as a `Done` answer's.
//!
//! A native-asset or non-EVM destination has no such log: the route waits
//! on `track` as before, until the track timeout. Known limits: the scan
//! follows the head (a payout reorganised away after it was claimed still
//! counts), and an unrelated transfer of at least `minOut` to the recipient
//! in the margin blocks or during the wait is taken for the payout.

use super::executor::Executor;
use alloy::primitives::{Address, U256};
use relay_chain::{reader::ReadError, transfers::TransferLog};
use relay_config::HostConfig;
use relay_store::{DestClaim, DestWatch, StoreError};
use relay_types::RouteRecord;

/// How far before the destination's head a watch begins (a payout mined
/// just before the first look, or a node a little behind, is still found).
pub const MARGIN_BLOCKS: u64 = 10;
/// The widest block range of one `eth_getLogs`.
pub const RANGE_BLOCKS: u64 = 2_000;
/// How many ranges one poll scans at most.
pub const RANGES_PER_POLL: usize = 5;

/// Why a poll of the destination found nothing to say.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The route's destination cannot be watched (native asset, non-EVM
    /// chain, unknown token).
    #[error("cannot watch the destination: {0}")]
    Unwatchable(String),
    /// The chain did not answer.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The store did not answer.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// What a route's watch looks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Destination EVM chain id.
    pub chain: u64,
    /// The destination token.
    pub token: Address,
    /// The route's recipient.
    pub recipient: Address,
    /// The least payout that counts: the route's `minOut`.
    pub min_out: U256,
}

impl Target {
    /// What `r`'s watch looks for, or why its destination cannot be
    /// watched: it must be an ERC-20 token on an EVM chain.
    pub fn of(config: &HostConfig, r: &RouteRecord) -> Result<Self, WatchError> {
        let unwatchable = |why: String| WatchError::Unwatchable(why);
        let chain = r
            .to_chain
            .evm_id()
            .ok_or_else(|| unwatchable(format!("{} is not an EVM chain", r.to_chain)))?;
        let token = relay_engine::tokens::resolve(config, r.to_chain, Some(&r.to_token))
            .map_err(|e| unwatchable(e.to_string()))?
            .address
            .ok_or_else(|| unwatchable(format!("{} is the native asset", r.to_token)))?;
        let parse = |what: &str, s: &str| {
            s.parse::<Address>()
                .map_err(|_| unwatchable(format!("{what} {s:?} is not an address")))
        };
        Ok(Target {
            chain,
            token: parse("token", &token)?,
            recipient: parse("recipient", &r.recipient)?,
            min_out: r.min_out.0,
        })
    }
}

/// The first block of a watch beginning with the destination at `head`.
pub fn start_block(head: u64) -> u64 {
    head.saturating_sub(MARGIN_BLOCKS)
}

/// Inclusive block ranges of at most `width` blocks covering `from..=head`
/// in order, at most `limit` of them (none when `from > head`).
pub fn ranges(from: u64, head: u64, width: u64, limit: usize) -> Vec<(u64, u64)> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut at = from;
    while at <= head && out.len() < limit {
        let end = at.saturating_add(width - 1).min(head);
        out.push((at, end));
        match end.checked_add(1) {
            Some(next) => at = next,
            None => break,
        }
    }
    out
}

/// The logs that could be `t`'s payout, in chain order: the token's
/// transfers to the recipient of at least `minOut` (and never of nothing).
pub fn payouts<'a>(
    logs: &'a [TransferLog],
    t: &'a Target,
) -> impl Iterator<Item = &'a TransferLog> {
    logs.iter()
        .filter(move |l| l.to == t.recipient && l.value >= t.min_out && !l.value.is_zero())
}

impl Executor {
    /// One look at `r`'s destination chain: `Some(destTx)` once a payout
    /// is claimed for the route (now, or before a restart), `None` while
    /// none is seen.
    #[tracing::instrument(skip_all, fields(route = %r.id, chain = t.chain, from_block, head))]
    pub(super) async fn watch_destination(
        &self,
        r: &RouteRecord,
        t: &Target,
    ) -> Result<Option<String>, WatchError> {
        if let Some(claimed) = self.store.dest_payout_of(&r.id).await? {
            return Ok(Some(claimed.tx_hash));
        }
        let head = self.reader.block_number(t.chain).await?;
        let w = match self.store.dest_watch(&r.id).await? {
            Some(w) => w,
            None => self.begin_watch(r, t, head).await?,
        };
        let span = tracing::Span::current();
        span.record("from_block", w.from_block);
        span.record("head", head);
        for (from, to) in ranges(w.next_block, head, RANGE_BLOCKS, RANGES_PER_POLL) {
            let logs = self
                .reader
                .transfers_to(t.chain, t.token, t.recipient, (from, to))
                .await?;
            for log in payouts(&logs, t) {
                if let Some(tx) = self.claim_payout(r, t, log).await? {
                    return Ok(Some(tx));
                }
            }
            self.store.advance_dest_watch(&r.id, to + 1).await?;
        }
        Ok(None)
    }

    /// Records where `r`'s watch begins.
    async fn begin_watch(
        &self,
        r: &RouteRecord,
        t: &Target,
        head: u64,
    ) -> Result<DestWatch, WatchError> {
        let from = start_block(head);
        tracing::info!(
            from_block = from,
            "the upstream has no status API: watching the destination chain"
        );
        let w = DestWatch {
            route_id: r.id.clone(),
            chain: t.chain,
            token: t.token.to_checksum(None),
            recipient: t.recipient.to_checksum(None),
            min_out: r.min_out.to_string(),
            from_block: from,
            next_block: from,
        };
        Ok(self.store.start_dest_watch(&w).await?)
    }

    /// Claims `log` as `r`'s payout; `None` when another route has it.
    async fn claim_payout(
        &self,
        r: &RouteRecord,
        t: &Target,
        log: &TransferLog,
    ) -> Result<Option<String>, WatchError> {
        let tx = format!("{:#x}", log.tx_hash);
        let claim = DestClaim {
            chain: t.chain,
            tx_hash: tx.clone(),
            log_index: log.log_index,
            route_id: r.id.clone(),
        };
        if self.store.claim_dest_payout(&claim).await? {
            tracing::info!(tx = %tx, block = log.block, value = %log.value, "payout found on the destination chain");
            return Ok(Some(tx));
        }
        if let Some(mine) = self.store.dest_payout_of(&r.id).await? {
            return Ok(Some(mine.tx_hash));
        }
        tracing::debug!(tx = %tx, log_index = log.log_index, "payout claimed by another route; skipped");
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::B256;

    fn target() -> Target {
        Target {
            chain: 1,
            token: Address::repeat_byte(0xc3),
            recipient: Address::repeat_byte(0xbb),
            min_out: U256::from(4_900_000u64),
        }
    }

    fn log(block: u64, to: Address, value: u64) -> TransferLog {
        TransferLog {
            block,
            tx_hash: B256::repeat_byte(block as u8),
            log_index: 0,
            from: Address::repeat_byte(0x50),
            to,
            value: U256::from(value),
        }
    }

    #[test]
    fn ranges_cover_the_unscanned_blocks_in_bounded_steps() {
        assert_eq!(ranges(100, 100, 2_000, 5), vec![(100, 100)]);
        assert_eq!(ranges(101, 100, 2_000, 5), Vec::<(u64, u64)>::new());
        assert_eq!(
            ranges(0, 4_500, 2_000, 5),
            vec![(0, 1_999), (2_000, 3_999), (4_000, 4_500)]
        );
        assert_eq!(
            ranges(0, 1_000_000, 2_000, 2),
            vec![(0, 1_999), (2_000, 3_999)],
            "a far-behind watch catches up over several polls"
        );
        assert_eq!(
            ranges(u64::MAX, u64::MAX, 2_000, 5),
            vec![(u64::MAX, u64::MAX)]
        );
        assert_eq!(ranges(5, 7, 0, 5), vec![(5, 5), (6, 6), (7, 7)]);
    }

    #[test]
    fn a_watch_begins_a_margin_before_the_head() {
        assert_eq!(start_block(1_000), 1_000 - MARGIN_BLOCKS);
        assert_eq!(start_block(3), 0);
    }

    #[test]
    fn only_transfers_to_the_recipient_of_at_least_min_out_are_payouts() {
        let t = target();
        let other = Address::repeat_byte(0xee);
        let logs = vec![
            log(1, t.recipient, 4_899_999),
            log(2, other, 9_000_000),
            log(3, t.recipient, 4_900_000),
            log(4, t.recipient, 7_000_000),
        ];
        let found: Vec<u64> = payouts(&logs, &t).map(|l| l.block).collect();
        assert_eq!(found, vec![3, 4]);
        let free = Target {
            min_out: U256::ZERO,
            ..t.clone()
        };
        let logs = vec![log(5, t.recipient, 0), log(6, t.recipient, 1)];
        let found: Vec<u64> = payouts(&logs, &free).map(|l| l.block).collect();
        assert_eq!(found, vec![6], "a transfer of nothing is no payout");
    }

    #[test]
    fn only_an_erc20_on_an_evm_destination_is_watchable() {
        use crate::steps::tests::{route, RECIPIENT};
        use relay_config::{ChainConfig, TokenConfig};
        use relay_plugin_api::{ChainRef, NonEvmNode};
        let token = "0x00000000000000000000000000000000000000c3";
        let mut chain = ChainConfig::default();
        chain.tokens.insert(
            "usdc".into(),
            TokenConfig {
                address: token.into(),
                decimals: 6,
            },
        );
        let mut config = HostConfig::default();
        config.chains.insert("42161".into(), chain);
        let mut r = route();
        let want = Target {
            chain: 42161,
            token: token.parse().unwrap(),
            recipient: RECIPIENT.parse().unwrap(),
            min_out: U256::from(4_900_000u64),
        };
        assert_eq!(Target::of(&config, &r).unwrap(), want);
        r.to_token = "ETH".into();
        let native = Target::of(&config, &r).unwrap_err();
        assert!(native.to_string().contains("native asset"), "{native}");
        r.to_token = "USDC".into();
        r.to_chain = ChainRef::NonEvm(NonEvmNode::Solana);
        let non_evm = Target::of(&config, &r).unwrap_err();
        assert!(matches!(non_evm, WatchError::Unwatchable(_)), "{non_evm}");
    }
}
