//! What the stable bridge covers, lane by lane, and how a quote request
//! becomes a transfer between an EVM chain and a non-EVM node.
//!
//! Coverage (spec §2.3 `nonEvmNodes`):
//! - `evm->stellar` (USDC), `evm->solana` (USDC, USDT), `evm->tron` (USDT):
//!   the relayer sends Allbridge's EVM transaction — executable;
//! - `solana->evm` (USDC, USDT): the relayer would send on solana from its
//!   own float — funds-gated, answered `FUNDS_REQUIRED` when unfunded;
//! - stellar → EVM: not covered ([`STELLAR_TO_EVM`]);
//! - tron → EVM: priced by the tron rail as a quote-only comparator.
//!
//! Each lane also has an operator switch `execute.<lane>` (default on).

use relay_plugin_api::{ChainRef, Host, LaneCoverage, NonEvmNode, QuoteRequest, RailError, Token};
use relay_rail_sdk::{
    lane::is_evm_address,
    non_evm::{check_address, BitcoinNetwork},
};

use crate::allbridge::{chain_symbol, Side, EVM_CHAINS};

/// Why stellar → EVM is not covered.
pub const STELLAR_TO_EVM: &str =
    "stellar→EVM is unavailable: Allbridge's stellar (Soroban) send must \
     be signed on stellar by the sender, and the relayer holds no stellar key or stellar float";

/// Why tron → EVM is not executed here.
pub const TRON_TO_EVM: &str =
    "tron→EVM is priced by the tron rail as a quote-only comparator; EVM→tron executes here";

/// One lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    /// Lane name (`evm->solana`…).
    pub name: &'static str,
    /// The non-EVM node.
    pub node: NonEvmNode,
    /// Whether funds flow from EVM to the node.
    pub outbound: bool,
    /// Assets carried.
    pub assets: &'static [&'static str],
}

/// Every lane, in manifest order.
pub const LANES: [Lane; 4] = [
    Lane {
        name: "evm->stellar",
        node: NonEvmNode::Stellar,
        outbound: true,
        assets: &["USDC"],
    },
    Lane {
        name: "evm->solana",
        node: NonEvmNode::Solana,
        outbound: true,
        assets: &["USDC", "USDT"],
    },
    Lane {
        name: "solana->evm",
        node: NonEvmNode::Solana,
        outbound: false,
        assets: &["USDC", "USDT"],
    },
    Lane {
        name: "evm->tron",
        node: NonEvmNode::Tron,
        outbound: true,
        assets: &["USDT"],
    },
];

fn evm_refs() -> Vec<ChainRef> {
    EVM_CHAINS.iter().map(|c| ChainRef::Evm(*c)).collect()
}

impl Lane {
    /// The manifest entry.
    pub fn coverage(&self) -> LaneCoverage {
        let (from, to) = if self.outbound {
            (evm_refs(), vec![ChainRef::NonEvm(self.node)])
        } else {
            (vec![ChainRef::NonEvm(self.node)], evm_refs())
        };
        LaneCoverage {
            lane: self.name.into(),
            from,
            to,
            assets: self.assets.iter().map(|a| a.to_string()).collect(),
            same_chain: false,
            executable: true,
            quote_only_reason: None,
        }
    }

    /// Whether the operator lets this lane execute (`execute.<lane>`).
    pub fn execute_enabled(&self, host: &dyn Host) -> bool {
        !matches!(
            host.config(&format!("execute.{}", self.name))
                .as_deref()
                .map(str::trim),
            Some("false" | "off" | "0" | "no")
        )
    }
}

/// The lane by name.
pub fn by_name(name: &str) -> Option<Lane> {
    LANES.iter().copied().find(|l| l.name == name)
}

/// The lane between `from` and `to`, or why there is none.
pub fn lane_between(from: &ChainRef, to: &ChainRef) -> Result<Lane, RailError> {
    let (evm, node, outbound) = match (from, to) {
        (ChainRef::Evm(c), ChainRef::NonEvm(n)) => (*c, *n, true),
        (ChainRef::NonEvm(n), ChainRef::Evm(c)) => (*c, *n, false),
        _ => {
            return Err(RailError::unsupported(
                "the stable bridge links EVM chains with stellar, solana and tron",
            ))
        }
    };
    if !EVM_CHAINS.contains(&evm) {
        return Err(RailError::unsupported(format!(
            "Allbridge Core does not serve chain {evm}"
        )));
    }
    match (node, outbound) {
        (NonEvmNode::Stellar, false) => Err(RailError::unsupported(STELLAR_TO_EVM)),
        (NonEvmNode::Tron, false) => Err(RailError::unsupported(TRON_TO_EVM)),
        _ => LANES
            .iter()
            .copied()
            .find(|l| l.node == node && l.outbound == outbound)
            .ok_or_else(|| {
                RailError::unsupported(format!(
                    "the stable bridge does not serve {}",
                    node.as_str()
                ))
            }),
    }
}

/// A quote request that passed the lane's checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The lane.
    pub lane: Lane,
    /// The asset symbol (same on both sides).
    pub asset: String,
    /// Source side as Allbridge names it.
    pub from: Side,
    /// Destination side.
    pub to: Side,
}

/// Checks `req` (lane, asset, amount, recipient) and names both sides.
pub fn transfer_of(host: &dyn Host, req: &QuoteRequest) -> Result<Transfer, RailError> {
    let lane = lane_between(&req.from_chain, &req.to_chain)?;
    let asset = req.from_token.symbol.to_ascii_uppercase();
    if !lane.assets.contains(&asset.as_str()) || !req.to_token.symbol.eq_ignore_ascii_case(&asset) {
        return Err(RailError::unsupported(format!(
            "{} carries {} to the same asset only",
            lane.name,
            lane.assets.join(", ")
        )));
    }
    if req.amount.is_zero() {
        return Err(RailError::invalid("amount", "must be greater than zero"));
    }
    if let Some(to) = &req.to_address {
        check_recipient(&req.to_chain, to)?;
    }
    Ok(Transfer {
        lane,
        from: side(host, "fromToken", &req.from_chain, &req.from_token)?,
        to: side(host, "toToken", &req.to_chain, &req.to_token)?,
        asset,
    })
}

/// Checks a recipient on `chain` (its own address format).
pub fn check_recipient(chain: &ChainRef, address: &str) -> Result<(), RailError> {
    match chain {
        ChainRef::NonEvm(n) => check_address("toAddress", *n, address, BitcoinNetwork::Mainnet),
        ChainRef::Evm(_) if is_evm_address(address) => Ok(()),
        ChainRef::Evm(_) => Err(RailError::invalid(
            "toAddress",
            format!("{address:?} is not an EVM address"),
        )),
    }
}

fn side(host: &dyn Host, field: &str, chain: &ChainRef, t: &Token) -> Result<Side, RailError> {
    let symbol = chain_symbol(chain)
        .ok_or_else(|| RailError::unsupported(format!("no Allbridge chain for {chain}")))?;
    let token = match chain {
        ChainRef::Evm(_) => t
            .address
            .clone()
            .filter(|a| is_evm_address(a))
            .ok_or_else(|| RailError::invalid(field, "needs the token's contract address"))?,
        ChainRef::NonEvm(n) => token_address(host, *n, &t.symbol).ok_or_else(|| {
            RailError::unsupported(format!("no {} token known on {}", t.symbol, n.as_str()))
        })?,
    };
    Ok(Side {
        chain: symbol.into(),
        token,
    })
}

/// The token address Allbridge uses for `symbol` on `node`:
/// `token.<node>.<SYMBOL>` from configuration, else the mainnet one.
pub fn token_address(host: &dyn Host, node: NonEvmNode, symbol: &str) -> Option<String> {
    let symbol = symbol.to_ascii_uppercase();
    if let Some(t) = host.config(&format!("token.{}.{symbol}", node.as_str())) {
        return Some(t.trim().to_string());
    }
    let t = match (node, symbol.as_str()) {
        (NonEvmNode::Solana, "USDC") => "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        (NonEvmNode::Solana, "USDT") => "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
        (NonEvmNode::Tron, "USDT") => "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
        // Circle USDC's Stellar asset contract, as Soroban (SRB) names it.
        (NonEvmNode::Stellar, "USDC") => "CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75",
        (NonEvmNode::Sui, "USDC") => {
            "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7::usdc::USDC"
        }
        _ => return None,
    };
    Some(t.into())
}
