//! Chain-checked delivery (spec §4.3 `/api/outcome/verify`): did the
//! sender's tokens leave the source chain and reach the recipient on the
//! destination chain, as the route's record says?
//!
//! [`collect`] reads the receipts of every transaction the route names
//! (the relayer's journaled transactions, `srcTx`, `destTx`) from the
//! chains; [`judge`] decides from those receipts alone, so a verifier
//! holding an evidence bundle reaches the same verdict:
//!
//! - `verified`: a successful source transaction carries an ERC-20
//!   `Transfer` of the source token **from the sender**, and a successful
//!   destination transaction carries a `Transfer` of the destination token
//!   **to the recipient** of at least the route's `minOut`;
//! - `failed`: the destination transaction reverted or holds no such
//!   credit, the credit is below `minOut`, or the route failed and nothing
//!   reached the recipient;
//! - `undetermined`: not delivered yet, a receipt is not available, or a
//!   side is not an ERC-20 on an EVM chain (nothing here can read it).

use alloy::primitives::{Address, B256, U256};
use relay_chain::{
    reader::ChainReader,
    receipts::{ReceiptLog, TxReceipt},
};
use relay_config::HostConfig;
use relay_engine::tokens;
use relay_plugin_api::ChainRef;
use relay_store::JournalEntry;
use relay_types::route::{RouteRecord, RouteStatus};

use crate::evidence::{
    transfer_of, LogEvidence, OutcomeEvidence, ReceiptEvidence, TransferRef, TxEvidence, Verdict,
};

/// The transactions a route names, with their receipts read from the
/// chains (a receipt that cannot be read is left absent and named in
/// the reasons by [`judge`]).
pub async fn collect(
    route: &RouteRecord,
    journal: &[JournalEntry],
    reader: &ChainReader,
) -> Vec<TxEvidence> {
    let mut wanted: Vec<(String, u64, B256, Option<u64>)> = Vec::new();
    let mut add = |role: &str, chain: u64, hash: B256, step: Option<u64>| {
        if !wanted.iter().any(|(_, c, h, _)| *c == chain && *h == hash) {
            wanted.push((role.to_string(), chain, hash, step));
        }
    };
    let (src, dst) = (route.from_chain.evm_id(), route.to_chain.evm_id());
    for e in journal {
        let (Ok(chain), Some(hash)) = (
            e.chain.parse::<u64>(),
            e.tx_hash.as_deref().and_then(|h| h.parse::<B256>().ok()),
        ) else {
            continue;
        };
        let role = if Some(chain) == src {
            "source"
        } else {
            "destination"
        };
        add(role, chain, hash, u64::try_from(e.step).ok());
    }
    for (role, chain, tx) in [
        ("source", src, route.src_tx.as_deref()),
        ("destination", dst, route.dest_tx.as_deref()),
    ] {
        if let (Some(chain), Some(hash)) = (chain, tx.and_then(|h| h.parse::<B256>().ok())) {
            add(role, chain, hash, None);
        }
    }
    let reads = wanted
        .into_iter()
        .map(|(role, chain, hash, step)| async move {
            let receipt = match reader.receipt(chain, hash).await {
                Ok(r) => r.map(receipt_evidence),
                Err(e) => {
                    tracing::warn!(chain, %hash, error = %e, "receipt read failed");
                    None
                }
            };
            TxEvidence {
                role,
                chain,
                hash,
                step,
                receipt,
            }
        });
    futures::future::join_all(reads).await
}

fn receipt_evidence(r: TxReceipt) -> ReceiptEvidence {
    ReceiptEvidence {
        block_number: r.block_number,
        block_hash: r.block_hash,
        success: r.success,
        from: r.from,
        to: r.to,
        gas_used: r.gas_used,
        logs: r.logs.into_iter().map(log_evidence).collect(),
    }
}

fn log_evidence(l: ReceiptLog) -> LogEvidence {
    LogEvidence {
        log_index: l.log_index,
        address: l.address,
        topics: l.topics,
        data: format!("0x{}", hex::encode(&l.data)),
    }
}

/// The first `Transfer` of `token` in a successful `role` transaction of
/// `txs` that `pick` accepts.
fn find_transfer(
    txs: &[TxEvidence],
    role: &str,
    token: Address,
    pick: impl Fn(Address, Address) -> bool,
) -> Option<TransferRef> {
    txs.iter()
        .filter(|t| t.role == role)
        .filter_map(|t| Some((t, t.receipt.as_ref().filter(|r| r.success)?)))
        .flat_map(|(t, r)| r.logs.iter().map(move |l| (t, l)))
        .find_map(|(t, l)| {
            let (tok, from, to, amount) = transfer_of(l)?;
            (tok == token && pick(from, to)).then_some(TransferRef {
                chain: t.chain,
                tx: t.hash,
                log_index: l.log_index,
                token: tok,
                from,
                to,
                amount,
            })
        })
}

/// The ERC-20 contracts of a route's two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sides {
    /// The source token.
    pub from_token: Address,
    /// The destination token.
    pub to_token: Address,
}

impl Sides {
    /// Both sides' token contracts as `config` names them (symbols
    /// resolved on their chains); `None` when a side is a native asset or
    /// not on an EVM chain.
    pub fn of(config: &HostConfig, r: &RouteRecord) -> Option<Sides> {
        let contract = |chain: &ChainRef, token: &str| -> Option<Address> {
            tokens::resolve(config, *chain, Some(token))
                .ok()?
                .address?
                .parse()
                .ok()
        };
        Some(Sides {
            from_token: contract(&r.from_chain, &r.from_token)?,
            to_token: contract(&r.to_chain, &r.to_token)?,
        })
    }
}

/// The verdict on `route` (whose token contracts are `sides`) from the
/// receipts in `txs` alone.
pub fn judge(route: &RouteRecord, sides: Option<Sides>, txs: &[TxEvidence]) -> OutcomeEvidence {
    let mut reasons = Vec::new();
    let parse = |s: &str| s.parse::<Address>().ok();
    let (
        Some(Sides {
            from_token,
            to_token,
        }),
        Some(sender),
        Some(recipient),
    ) = (sides, parse(&route.sender), parse(&route.recipient))
    else {
        return undetermined(
            "a side of this route is not an ERC-20 on an EVM chain; its ledger cannot be read here",
        );
    };
    for t in txs.iter().filter(|t| t.receipt.is_none()) {
        reasons.push(format!("no receipt for {} on chain {}", t.hash, t.chain));
    }
    let debit = find_transfer(txs, "source", from_token, |from, _| from == sender);
    let credit = find_transfer(txs, "destination", to_token, |_, to| to == recipient);
    let min_out: U256 = route.min_out.0;
    let credited = credit
        .as_ref()
        .map(|c| c.amount.parse::<U256>().unwrap_or_default());
    let v = match (debit.is_some(), credited) {
        (true, Some(a)) if a >= min_out => {
            reasons.push(format!("the recipient received {a} (minOut {min_out})"));
            Verdict::Verified
        }
        (_, Some(a)) if a < min_out => {
            reasons.push(format!("the credit of {a} is below minOut {min_out}"));
            Verdict::Failed
        }
        (_, Some(_)) => {
            reasons.push("no source debit from the sender was found".into());
            Verdict::Undetermined
        }
        (_, None) if route.status == RouteStatus::Failed || dest_settled_without(txs) => {
            reasons.push("the recipient was not credited on the destination chain".into());
            Verdict::Failed
        }
        (_, None) => {
            reasons.push("no destination credit to the recipient on chain yet".into());
            Verdict::Undetermined
        }
    };
    verdict(v, debit, credit, reasons)
}

/// A destination transaction is mined (reverted, or succeeded without
/// crediting the recipient).
fn dest_settled_without(txs: &[TxEvidence]) -> bool {
    txs.iter()
        .any(|t| t.role == "destination" && t.receipt.is_some())
}

fn undetermined(why: &str) -> OutcomeEvidence {
    verdict(Verdict::Undetermined, None, None, vec![why.to_string()])
}

fn verdict(
    verdict: Verdict,
    source_debit: Option<TransferRef>,
    destination_credit: Option<TransferRef>,
    reasons: Vec<String>,
) -> OutcomeEvidence {
    OutcomeEvidence {
        verdict,
        source_debit,
        destination_credit,
        reasons,
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use relay_types::route::{RouteRecord, RouteStatus};

    /// A delivered 5 USDC route 8453 → 42161 (sender = recipient).
    pub fn route() -> RouteRecord {
        RouteRecord {
            status: RouteStatus::Done,
            stage: None,
            ..RouteRecord::sample("rt_test", 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::TRANSFER_TOPIC;
    use alloy::primitives::address;
    use relay_types::route::RouteStatus;

    const USDC: Address = address!("0x00000000000000000000000000000000000000aa");
    const RELAYER: Address = address!("0x00000000000000000000000000000000000000cc");
    const SIDES: Option<Sides> = Some(Sides {
        from_token: USDC,
        to_token: USDC,
    });

    fn user() -> Address {
        tests_support::route().sender.parse().unwrap()
    }

    fn tx(role: &str, n: u8, success: bool, from: Address, to: Address, amount: u64) -> TxEvidence {
        TxEvidence {
            role: role.into(),
            chain: if role == "source" { 8453 } else { 42161 },
            hash: B256::repeat_byte(n),
            step: None,
            receipt: Some(ReceiptEvidence {
                block_number: 1,
                block_hash: B256::ZERO,
                success,
                from: RELAYER,
                to: Some(USDC),
                gas_used: 1,
                logs: vec![LogEvidence {
                    log_index: 3,
                    address: USDC,
                    topics: vec![TRANSFER_TOPIC, from.into_word(), to.into_word()],
                    data: format!("0x{}", hex::encode(U256::from(amount).to_be_bytes::<32>())),
                }],
            }),
        }
    }

    #[test]
    fn debit_and_credit_of_at_least_min_out_is_verified() {
        let r = tests_support::route();
        let txs = [
            tx("source", 1, true, user(), RELAYER, 5_000_000),
            tx("destination", 2, true, RELAYER, user(), 4_987_500),
        ];
        let o = judge(&r, SIDES, &txs);
        assert_eq!(o.verdict, Verdict::Verified, "{:?}", o.reasons);
        assert_eq!(o.destination_credit.unwrap().log_index, 3);
    }

    #[test]
    fn a_short_or_reverted_or_missing_credit_is_never_verified() {
        let r = tests_support::route();
        let src = tx("source", 1, true, user(), RELAYER, 5_000_000);
        let short = [
            src.clone(),
            tx("destination", 2, true, RELAYER, user(), 4_987_499),
        ];
        assert_eq!(judge(&r, SIDES, &short).verdict, Verdict::Failed);
        let reverted = [
            src.clone(),
            tx("destination", 2, false, RELAYER, user(), 4_987_500),
        ];
        assert_eq!(judge(&r, SIDES, &reverted).verdict, Verdict::Failed);
        let elsewhere = [
            src.clone(),
            tx("destination", 2, true, RELAYER, RELAYER, 4_987_500),
        ];
        assert_eq!(judge(&r, SIDES, &elsewhere).verdict, Verdict::Failed);
        let mut pending = tests_support::route();
        pending.status = RouteStatus::Bridging;
        assert_eq!(
            judge(&pending, SIDES, std::slice::from_ref(&src)).verdict,
            Verdict::Undetermined
        );
        let no_debit = [tx("destination", 2, true, RELAYER, user(), 4_987_500)];
        assert_eq!(judge(&r, SIDES, &no_debit).verdict, Verdict::Undetermined);
        assert_eq!(judge(&r, None, &short).verdict, Verdict::Undetermined);
        let mut failed = tests_support::route();
        failed.status = RouteStatus::Failed;
        assert_eq!(judge(&failed, SIDES, &[]).verdict, Verdict::Failed);
    }
}
