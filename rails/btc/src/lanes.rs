//! The native-bitcoin lanes and how a quote request becomes a swap.
//!
//! - `evm->bitcoin`: USDC from the EVM chains the operator names
//!   (`usdc_btc_chains`, default both Chainflip EVM chains, Ethereum and
//!   Arbitrum) to BTC — the funds-gated executable Chainflip asset lane;
//! - `bitcoin->evm`: BTC to USDC or USDT on Ethereum or Arbitrum — the user
//!   sends BTC to a deposit channel; the relayer signs no bitcoin spend.
//!
//! Other Chainflip asset lanes are priced by the tron rail's comparator.

use relay_plugin_api::{ChainRef, Host, LaneCoverage, NonEvmNode, QuoteRequest, RailError};
use relay_rail_sdk::{
    lane::is_evm_address,
    non_evm::{check_address, BitcoinNetwork},
};

use crate::chainflip::Asset;

/// EVM → bitcoin.
pub const EVM_TO_BITCOIN: &str = "evm->bitcoin";
/// Bitcoin → EVM.
pub const BITCOIN_TO_EVM: &str = "bitcoin->evm";
/// Chainflip's EVM chains, with its chain names.
pub const CHAINFLIP_EVM: [(u64, &str); 2] = [(1, "Ethereum"), (42161, "Arbitrum")];
/// Assets bitcoin → EVM delivers.
pub const EVM_ASSETS: [&str; 2] = ["USDC", "USDT"];

const BITCOIN: ChainRef = ChainRef::NonEvm(NonEvmNode::Bitcoin);

fn evm_refs() -> Vec<ChainRef> {
    CHAINFLIP_EVM
        .iter()
        .map(|(c, _)| ChainRef::Evm(*c))
        .collect()
}

/// The manifest's lanes.
pub fn coverage() -> Vec<LaneCoverage> {
    let lane = |name: &str, from, to, asset: &str| LaneCoverage {
        lane: name.into(),
        from,
        to,
        assets: vec![asset.into()],
        same_chain: false,
        executable: true,
        quote_only_reason: None,
    };
    vec![
        lane(EVM_TO_BITCOIN, evm_refs(), vec![BITCOIN], "USDC"),
        lane(BITCOIN_TO_EVM, vec![BITCOIN], evm_refs(), "BTC"),
    ]
}

/// The bitcoin network addresses are checked against (`bitcoin_network`).
pub fn network(host: &dyn Host) -> BitcoinNetwork {
    BitcoinNetwork::parse(host.config("bitcoin_network").as_deref())
}

/// The EVM chains whose USDC → BTC lane the operator enables.
pub fn usdc_btc_chains(host: &dyn Host) -> Vec<u64> {
    match host.config("usdc_btc_chains") {
        Some(list) => list
            .split(',')
            .filter_map(|c| c.trim().parse().ok())
            .collect(),
        None => CHAINFLIP_EVM.iter().map(|(c, _)| *c).collect(),
    }
}

fn chainflip_chain(id: u64) -> Option<&'static str> {
    CHAINFLIP_EVM
        .iter()
        .find(|(c, _)| *c == id)
        .map(|(_, n)| *n)
}

/// A swap a quote request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swap {
    /// Lane name.
    pub lane: &'static str,
    /// Source asset.
    pub src: Asset,
    /// Destination asset.
    pub dest: Asset,
}

impl Swap {
    /// Whether funds flow from EVM to bitcoin.
    pub fn outbound(&self) -> bool {
        self.lane == EVM_TO_BITCOIN
    }
}

/// The swap between `from` and `to` for `asset` → `to_asset`, or why not.
pub fn swap_between(
    host: &dyn Host,
    from: &ChainRef,
    to: &ChainRef,
    asset: &str,
    to_asset: &str,
) -> Result<Swap, RailError> {
    let (asset, to_asset) = (asset.to_ascii_uppercase(), to_asset.to_ascii_uppercase());
    match (from, to) {
        (ChainRef::Evm(c), t) if *t == BITCOIN => {
            let chain = chainflip_chain(*c).ok_or_else(|| {
                RailError::unsupported(format!("Chainflip does not serve chain {c}"))
            })?;
            if asset != "USDC" {
                return Err(RailError::unsupported(
                    "only USDC→BTC executes here; other Chainflip asset lanes are priced by the tron rail's comparator",
                ));
            }
            if to_asset != "BTC" {
                return Err(RailError::invalid("toToken", "bitcoin receives BTC"));
            }
            if !usdc_btc_chains(host).contains(c) {
                return Err(RailError::unsupported(format!(
                    "the operator has not enabled USDC→BTC from chain {c} (usdc_btc_chains)"
                )));
            }
            Ok(Swap {
                lane: EVM_TO_BITCOIN,
                src: Asset::new(chain, "USDC"),
                dest: Asset::new("Bitcoin", "BTC"),
            })
        }
        (f, ChainRef::Evm(c)) if *f == BITCOIN => {
            let chain = chainflip_chain(*c).ok_or_else(|| {
                RailError::unsupported(format!("Chainflip does not serve chain {c}"))
            })?;
            if asset != "BTC" || !EVM_ASSETS.contains(&to_asset.as_str()) {
                return Err(RailError::unsupported(
                    "bitcoin→EVM swaps BTC into USDC or USDT",
                ));
            }
            Ok(Swap {
                lane: BITCOIN_TO_EVM,
                src: Asset::new("Bitcoin", "BTC"),
                dest: Asset::new(chain, &to_asset),
            })
        }
        _ => Err(RailError::unsupported(
            "the native-bitcoin rail links bitcoin with Ethereum and Arbitrum",
        )),
    }
}

/// Checks a quote request and names the swap.
pub fn swap_of(host: &dyn Host, req: &QuoteRequest) -> Result<Swap, RailError> {
    let swap = swap_between(
        host,
        &req.from_chain,
        &req.to_chain,
        &req.from_token.symbol,
        &req.to_token.symbol,
    )?;
    if req.amount.is_zero() {
        return Err(RailError::invalid("amount", "must be greater than zero"));
    }
    if let Some(to) = &req.to_address {
        check_recipient(host, &req.to_chain, to)?;
    }
    Ok(swap)
}

/// Checks a recipient on `chain`.
pub fn check_recipient(host: &dyn Host, chain: &ChainRef, address: &str) -> Result<(), RailError> {
    match chain {
        ChainRef::NonEvm(n) => check_address("toAddress", *n, address, network(host)),
        ChainRef::Evm(_) if is_evm_address(address) => Ok(()),
        ChainRef::Evm(_) => Err(RailError::invalid(
            "toAddress",
            format!("{address:?} is not an EVM address"),
        )),
    }
}
