//! EVM lanes of an aggregator rail: what the manifest declares, and the one
//! check every quote passes before anything leaves the rail.
//!
//! The check turns a [`QuoteRequest`] into a [`Transfer`] (parse, don't
//! validate): a lane this rail does not declare is `UNSUPPORTED_LANE`, bad
//! input is `INVALID_INPUT` naming the field. Nothing here calls the host
//! except to read the relayer address from configuration.

use relay_plugin_api::{
    ChainRef, Host, LaneCoverage, QuoteRequest, RailError, RailManifest, RailRole, Token, Version,
};

/// The gasless EVM set (spec §2.3).
pub const GASLESS_EVM: [u64; 22] = [
    1, 10, 56, 100, 130, 137, 146, 480, 999, 1135, 1868, 4663, 5000, 8453, 33139, 34443, 42161,
    43114, 57073, 59144, 81457, 7777777,
];

/// Lane name of cross-chain EVM transfers.
pub const CROSS_CHAIN_LANE: &str = "evm->evm";
/// Lane name of same-chain swaps (`fromChain == toChain`, tokens differ).
pub const SAME_CHAIN_LANE: &str = "same-chain";

/// The placeholder most aggregators use for a chain's native asset.
pub const NATIVE_EEEE: &str = "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE";
/// The zero address, LI.FI's spelling of the native asset.
pub const NATIVE_ZERO: &str = "0x0000000000000000000000000000000000000000";

/// Whether `s` is a `0x`-prefixed 20-byte hex address (any case).
pub fn is_evm_address(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `address` is one of the native-asset placeholders.
pub fn is_native_placeholder(address: &str) -> bool {
    address.eq_ignore_ascii_case(NATIVE_EEEE) || address.eq_ignore_ascii_case(NATIVE_ZERO)
}

/// The EVM chains and assets an aggregator rail serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvmCoverage {
    /// Chain ids (a subset of [`GASLESS_EVM`]).
    pub chains: &'static [u64],
    /// Source asset symbols, upper-case.
    pub assets: &'static [&'static str],
    /// Whether same-chain swaps are served (lane [`SAME_CHAIN_LANE`]).
    pub same_chain: bool,
}

/// A quote request that passed [`EvmCoverage::check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The lane that serves it.
    pub lane: &'static str,
    /// Source chain id.
    pub from_chain: u64,
    /// Destination chain id.
    pub to_chain: u64,
    /// Who calls the upstream's transaction: the relayer (from the host's
    /// `relayer` configuration), else the request's `fromAddress`.
    pub sender: String,
    /// Who receives on the destination.
    pub recipient: String,
}

impl Transfer {
    /// Whether source and destination chain differ.
    pub fn is_cross_chain(&self) -> bool {
        self.from_chain != self.to_chain
    }
}

impl EvmCoverage {
    fn refs(&self) -> Vec<ChainRef> {
        self.chains.iter().map(|c| ChainRef::Evm(*c)).collect()
    }

    /// The lanes for the manifest: `evm->evm`, plus `same-chain` when served.
    pub fn lanes(&self) -> Vec<LaneCoverage> {
        self.lane_names()
            .into_iter()
            .map(|lane| LaneCoverage {
                lane: lane.into(),
                from: self.refs(),
                to: self.refs(),
                assets: self.assets.iter().map(|a| a.to_string()).collect(),
                same_chain: lane == SAME_CHAIN_LANE,
                executable: true,
                quote_only_reason: None,
            })
            .collect()
    }

    /// The manifest of an aggregator rail over this coverage: executable
    /// lanes, the upstream's API host as the only egress, no RPC chains and
    /// no pinned contracts (the host's policy then admits the upstream's
    /// transaction target, so operators can point the rail at a simulator).
    pub fn aggregator_manifest(
        &self,
        id: &str,
        name: &str,
        egress_host: &str,
        upstream_doc: &str,
    ) -> RailManifest {
        RailManifest {
            id: id.into(),
            name: name.into(),
            version: Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::Aggregator,
            coverage: self.lanes(),
            egress: vec![egress_host.into()],
            rpc_chains: vec![],
            contracts: vec![],
            upstream: Some(upstream_doc.into()),
        }
    }

    /// The lane names, in manifest order.
    pub fn lane_names(&self) -> Vec<&'static str> {
        let mut names = vec![CROSS_CHAIN_LANE];
        if self.same_chain {
            names.push(SAME_CHAIN_LANE);
        }
        names
    }

    /// The chains as [`ChainRef`]s (the manifest's `rpc_chains` stay empty:
    /// aggregator rails read nothing on chain).
    pub fn chain_refs(&self) -> Vec<ChainRef> {
        self.refs()
    }

    /// Checks `req` against this coverage and reads who sends and receives.
    pub fn check(&self, host: &dyn Host, req: &QuoteRequest) -> Result<Transfer, RailError> {
        let (from_chain, to_chain) = self.chains_of(req)?;
        let asset = req.from_token.symbol.to_ascii_uppercase();
        if !self.assets.contains(&asset.as_str()) {
            return Err(RailError::unsupported(format!(
                "this rail carries {} only, not {asset}",
                self.assets.join(", ")
            )));
        }
        check_token("fromToken", &req.from_token)?;
        check_token("toToken", &req.to_token)?;
        if from_chain == to_chain && same_token(&req.from_token, &req.to_token) {
            return Err(RailError::invalid(
                "toToken",
                "same chain with the same token is refused",
            ));
        }
        if req.amount.is_zero() {
            return Err(RailError::invalid("amount", "must be greater than zero"));
        }
        if req.slippage_bps > 10_000 {
            return Err(RailError::invalid("slippage", "must be at most 1 (100%)"));
        }
        let (sender, recipient) = parties(host, req)?;
        Ok(Transfer {
            lane: if from_chain == to_chain {
                SAME_CHAIN_LANE
            } else {
                CROSS_CHAIN_LANE
            },
            from_chain,
            to_chain,
            sender,
            recipient,
        })
    }

    fn chains_of(&self, req: &QuoteRequest) -> Result<(u64, u64), RailError> {
        let (Some(from), Some(to)) = (req.from_chain.evm_id(), req.to_chain.evm_id()) else {
            return Err(RailError::unsupported("this rail serves EVM chains only"));
        };
        for c in [from, to] {
            if !self.chains.contains(&c) {
                return Err(RailError::unsupported(format!(
                    "chain {c} is not served by this rail"
                )));
            }
        }
        if from == to && !self.same_chain {
            return Err(RailError::unsupported(
                "this rail moves between chains; same-chain swaps are not served",
            ));
        }
        Ok((from, to))
    }
}

fn check_token(field: &str, t: &Token) -> Result<(), RailError> {
    match &t.address {
        Some(a) if !is_evm_address(a) => Err(RailError::invalid(
            field,
            format!("{:?} is not a 0x-hex token address", trunc(a)),
        )),
        _ => Ok(()),
    }
}

fn same_token(a: &Token, b: &Token) -> bool {
    match (&a.address, &b.address) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        (None, None) => a.symbol.eq_ignore_ascii_case(&b.symbol),
        _ => false,
    }
}

/// The upstream's sender (the relayer, which holds the funds and sends the
/// upstream's transaction) and recipient. A quote that names nobody (spec
/// §2.5: `fromAddress` and `toAddress` are optional) is priced for the
/// relayer as recipient: the price does not depend on it, and execution
/// re-quotes with the route's real recipient before anything is planned.
fn parties(host: &dyn Host, req: &QuoteRequest) -> Result<(String, String), RailError> {
    let sender = match host.config("relayer") {
        Some(r) => address("relayer", r)?,
        None => address(
            "fromAddress",
            req.from_address
                .clone()
                .ok_or_else(|| RailError::invalid("fromAddress", "required"))?,
        )?,
    };
    let recipient = match req.to_address.clone().or_else(|| req.from_address.clone()) {
        Some(r) => address("toAddress", r)?,
        None => sender.clone(),
    };
    Ok((sender, recipient))
}

fn address(field: &str, a: String) -> Result<String, RailError> {
    if is_evm_address(&a) {
        Ok(a)
    } else {
        Err(RailError::invalid(
            field,
            format!("{:?} is not a 0x-hex EVM address", trunc(&a)),
        ))
    }
}

/// The token as an upstream query wants it: its address, or `native` (the
/// upstream's placeholder) for a chain's native asset.
pub fn token_ref(t: &Token, native: &str) -> String {
    t.address.clone().unwrap_or_else(|| native.to_string())
}

fn trunc(s: &str) -> String {
    s.chars().take(48).collect()
}

#[cfg(test)]
mod tests {
    use relay_plugin_api::{Amount, RailErrorKind};

    use super::*;
    use crate::testing::RecordingHost;

    const COVER: EvmCoverage = EvmCoverage {
        chains: &[1, 8453, 42161],
        assets: &["USDC", "ETH"],
        same_chain: true,
    };
    const A: &str = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

    fn usdc(addr: &str) -> Token {
        Token {
            symbol: "USDC".into(),
            address: Some(addr.into()),
            decimals: 6,
        }
    }

    fn req(from: u64, to: u64) -> QuoteRequest {
        QuoteRequest {
            from_chain: ChainRef::Evm(from),
            to_chain: ChainRef::Evm(to),
            from_token: usdc("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
            to_token: usdc("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
            amount: Amount::from_u128(5_000_000),
            from_address: Some(A.into()),
            to_address: None,
            slippage_bps: 50,
            member: false,
        }
    }

    fn kind(r: Result<Transfer, RailError>) -> RailErrorKind {
        r.expect_err("refused").kind
    }

    #[test]
    fn a_covered_request_becomes_a_transfer_sent_by_the_relayer() {
        let relayer = "0x000000000000000000000000000000000000dEaD";
        let host = RecordingHost::new().config("relayer", relayer);
        let t = COVER.check(&host, &req(8453, 42161)).unwrap();
        assert_eq!(t.lane, CROSS_CHAIN_LANE);
        assert_eq!((t.sender.as_str(), t.recipient.as_str()), (relayer, A));
        let t = COVER
            .check(&RecordingHost::new(), &req(8453, 8453))
            .unwrap();
        assert_eq!((t.lane, t.sender.as_str()), (SAME_CHAIN_LANE, A));
    }

    #[test]
    fn an_anonymous_quote_is_priced_for_the_relayer() {
        let relayer = "0x000000000000000000000000000000000000dEaD";
        let host = RecordingHost::new().config("relayer", relayer);
        let mut anonymous = req(8453, 42161);
        anonymous.from_address = None;
        let t = COVER.check(&host, &anonymous).unwrap();
        assert_eq!(
            (t.sender.as_str(), t.recipient.as_str()),
            (relayer, relayer)
        );
        anonymous.to_address = Some("not-an-address".into());
        assert_eq!(
            kind(COVER.check(&host, &anonymous)),
            RailErrorKind::InvalidInput
        );
    }

    #[test]
    fn lanes_outside_coverage_are_unsupported() {
        let h = RecordingHost::new();
        assert_eq!(
            kind(COVER.check(&h, &req(8453, 10))),
            RailErrorKind::UnsupportedLane
        );
        let mut r = req(8453, 42161);
        r.to_chain = ChainRef::NonEvm(relay_plugin_api::NonEvmNode::Bitcoin);
        assert_eq!(kind(COVER.check(&h, &r)), RailErrorKind::UnsupportedLane);
        let mut r = req(8453, 42161);
        r.from_token.symbol = "DOGE".into();
        assert_eq!(kind(COVER.check(&h, &r)), RailErrorKind::UnsupportedLane);
        let cross_only = EvmCoverage {
            same_chain: false,
            ..COVER
        };
        assert_eq!(
            kind(cross_only.check(&h, &req(1, 1))),
            RailErrorKind::UnsupportedLane
        );
        assert_eq!(cross_only.lane_names(), vec![CROSS_CHAIN_LANE]);
    }

    #[test]
    fn malformed_input_names_the_field() {
        let h = RecordingHost::new();
        let field = |r: QuoteRequest| {
            let e = COVER.check(&h, &r).expect_err("refused");
            assert_eq!(e.kind, RailErrorKind::InvalidInput, "{e}");
            e.message.split(':').next().unwrap_or_default().to_string()
        };
        let mut r = req(8453, 42161);
        r.amount = Amount::ZERO;
        assert_eq!(field(r), "amount");
        let mut r = req(8453, 8453);
        r.to_token = r.from_token.clone();
        assert_eq!(field(r), "toToken");
        let mut r = req(8453, 42161);
        r.from_address = Some("alice".into());
        assert_eq!(field(r), "fromAddress");
        let mut r = req(8453, 42161);
        r.from_address = None;
        assert_eq!(field(r), "fromAddress");
        let mut r = req(8453, 42161);
        r.to_token.address = Some("0x12".into());
        assert_eq!(field(r), "toToken");
        let mut r = req(8453, 42161);
        r.slippage_bps = 10_001;
        assert_eq!(field(r), "slippage");
        let bad_relayer = RecordingHost::new().config("relayer", "nope");
        let e = COVER.check(&bad_relayer, &req(8453, 42161)).unwrap_err();
        assert!(e.message.starts_with("relayer"), "{e}");
    }
}
