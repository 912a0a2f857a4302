//! Requests the kit derives from a rail's own coverage.
//!
//! A **direction** is an ordered pair of chains a lane declares, source to
//! destination. The kit quotes every declared lane in every direction
//! between the chains in scope (those the integrator gave a `--token` or an
//! `--rpc` for), falling back to the lane's first source and first other
//! destination when the lane touches none of them, and always adds the
//! reverse of a two-way lane's direction. Asset pairs come from the
//! manifest too: the lane's asset, delivered as the same asset unless the
//! manifest says the destination chain sends other assets only (USDC →
//! bitcoin arrives as BTC); a same-chain lane swaps into another of its
//! assets.

use relay_plugin_api::{
    Amount, ChainRef, LaneCoverage, NonEvmNode, QuoteRequest, RailManifest, Token,
};

/// A token the operator tells the kit about (`--token 8453:USDC=0x…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownToken {
    /// Chain.
    pub chain: ChainRef,
    /// Symbol.
    pub symbol: String,
    /// Address.
    pub address: String,
    /// Decimals.
    pub decimals: u8,
}

/// What the kit knows about the world it quotes in: tokens, the chains in
/// scope and the sender/recipient address it uses on each chain.
#[derive(Clone, Debug, Default)]
pub struct Inputs<'a> {
    /// Tokens by chain and symbol.
    pub tokens: &'a [KnownToken],
    /// Chains the integrator's upstream or fixture serves.
    pub scope: Vec<ChainRef>,
    /// Addresses the integrator chose per chain (`--address`).
    pub addresses: &'a [(ChainRef, String)],
}

/// One direction of one lane, and the request that exercises it.
#[derive(Clone, Debug)]
pub struct Direction {
    /// The lane's name.
    pub lane: String,
    /// Whether the lane executes (a quote-only lane is never prepared).
    pub executable: bool,
    /// The request the kit sends.
    pub request: QuoteRequest,
    /// The same direction into other destination assets, tried in order
    /// when the rail refuses the asset pair of `request` (the manifest
    /// names source assets only).
    pub alternatives: Vec<QuoteRequest>,
}

impl Direction {
    /// `lane 8453→42161 USDC→USDC`.
    pub fn label(&self) -> String {
        let r = &self.request;
        format!(
            "{} {}→{} {}→{}",
            self.lane, r.from_chain, r.to_chain, r.from_token.symbol, r.to_token.symbol
        )
    }
}

fn default_decimals(symbol: &str) -> u8 {
    match symbol.to_ascii_uppercase().as_str() {
        "USDC" | "USDT" => 6,
        "BTC" | "WBTC" => 8,
        _ => 18,
    }
}

/// A well-formed address on `chain` the kit sends and receives with, unless
/// the integrator names one (`--address bitcoin=bcrt1…`).
pub fn sample_address(chain: ChainRef, chosen: &[(ChainRef, String)]) -> String {
    if let Some((_, a)) = chosen.iter().find(|(c, _)| *c == chain) {
        return a.clone();
    }
    match chain {
        ChainRef::Evm(_) => "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        ChainRef::NonEvm(NonEvmNode::Bitcoin) => "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
        ChainRef::NonEvm(NonEvmNode::Solana) => "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
        ChainRef::NonEvm(NonEvmNode::Tron) => "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
        ChainRef::NonEvm(NonEvmNode::Stellar) => {
            "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ"
        }
        ChainRef::NonEvm(NonEvmNode::Sui) => {
            "0x02a212de6a9dfa3a69e22387acfbafbb1a9e591bd9d636e7895dcfc8de05f331"
        }
    }
    .to_string()
}

fn token(chain: ChainRef, symbol: &str, known: &[KnownToken]) -> Token {
    match known
        .iter()
        .find(|t| t.chain == chain && t.symbol.eq_ignore_ascii_case(symbol))
    {
        Some(t) => Token {
            symbol: t.symbol.to_ascii_uppercase(),
            address: Some(t.address.clone()),
            decimals: t.decimals,
        },
        None => Token {
            symbol: symbol.to_ascii_uppercase(),
            address: chain.is_evm().then(|| format!("0x{:0>40}", "c0ffee")),
            decimals: default_decimals(symbol),
        },
    }
}

/// A request for `hundredths` hundredths of a unit of `asset` from `from` to
/// `to`, delivered as `to_asset`.
fn request(
    (from, to): (ChainRef, ChainRef),
    (asset, to_asset): (&str, &str),
    hundredths: u128,
    inputs: &Inputs,
) -> QuoteRequest {
    let from_token = token(from, asset, inputs.tokens);
    let scale = 10u128.pow(u32::from(from_token.decimals).saturating_sub(2));
    QuoteRequest {
        from_chain: from,
        to_chain: to,
        amount: Amount::from_u128(hundredths * scale),
        from_token,
        to_token: token(to, to_asset, inputs.tokens),
        from_address: Some(sample_address(from, inputs.addresses)),
        to_address: Some(sample_address(to, inputs.addresses)),
        slippage_bps: 50,
        member: false,
    }
}

/// The ordered chain pairs of `l` the kit quotes.
fn pairs(m: &RailManifest, l: &LaneCoverage, scope: &[ChainRef]) -> Vec<(ChainRef, ChainRef)> {
    let in_scope = |list: &[ChainRef]| -> Vec<ChainRef> {
        let s: Vec<ChainRef> = list.iter().copied().filter(|c| scope.contains(c)).collect();
        if s.is_empty() {
            list.iter().copied().take(1).collect()
        } else {
            s
        }
    };
    // A same-chain lane swaps on one chain; cross-chain pairs belong to the
    // rail's cross-chain lanes when it has them.
    let wanted = |f: &ChainRef, t: &ChainRef| {
        if f == t {
            l.same_chain
        } else {
            !l.same_chain
                || !m
                    .coverage
                    .iter()
                    .any(|o| !o.same_chain && o.covers(f, t, &l.assets[0]))
        }
    };
    let (sources, dests) = (in_scope(&l.from), in_scope(&l.to));
    let mut out: Vec<(ChainRef, ChainRef)> = sources
        .iter()
        .flat_map(|f| dests.iter().map(move |t| (*f, *t)))
        .filter(|(f, t)| wanted(f, t))
        .collect();
    if out.is_empty() {
        // Every destination in scope is the source: take the first other.
        let f = sources[0];
        if let Some(t) = l.to.iter().find(|t| wanted(&f, t)) {
            out.push((f, *t));
        }
    }
    // Both directions of a two-way lane.
    for (f, t) in out.clone() {
        if f != t && l.from.contains(&t) && l.to.contains(&f) && !out.contains(&(t, f)) {
            out.push((t, f));
        }
    }
    out
}

/// The asset the kit sends on `l` from `from`: the first with a known token
/// there, else the lane's first.
fn source_asset<'l>(l: &'l LaneCoverage, from: ChainRef, known: &[KnownToken]) -> &'l str {
    l.assets
        .iter()
        .find(|a| {
            known
                .iter()
                .any(|k| k.chain == from && k.symbol.eq_ignore_ascii_case(a))
        })
        .unwrap_or(&l.assets[0])
}

/// The assets the kit asks for on `to`, best guess first (the manifest
/// names source assets only): on a same-chain lane the lane's other
/// assets; else the same asset, unless the manifest says `to` sends other
/// assets only — then those. Assets with a known token on `to` come first.
fn destination_assets<'m>(
    m: &'m RailManifest,
    l: &'m LaneCoverage,
    (from, to): (ChainRef, ChainRef),
    asset: &'m str,
    known: &[KnownToken],
) -> Vec<&'m str> {
    let mut candidates: Vec<&str> = if from == to {
        l.assets
            .iter()
            .map(String::as_str)
            .filter(|a| !a.eq_ignore_ascii_case(asset))
            .collect()
    } else {
        let sent_from_to: Vec<&str> = m
            .coverage
            .iter()
            .filter(|o| o.from.contains(&to))
            .flat_map(|o| o.assets.iter().map(String::as_str))
            .collect();
        if sent_from_to.iter().any(|a| a.eq_ignore_ascii_case(asset)) {
            return vec![asset];
        }
        sent_from_to
    };
    let unknown = |a: &&str| {
        !known
            .iter()
            .any(|k| k.chain == to && k.symbol.eq_ignore_ascii_case(a))
    };
    candidates.sort_by_key(unknown);
    candidates.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    if candidates.is_empty() {
        candidates.push(asset);
    }
    candidates
}

/// Every direction of every lane, each with the requests that quote 10
/// units of the lane's asset.
pub fn directions(m: &RailManifest, inputs: &Inputs) -> Vec<Direction> {
    let mut out = Vec::new();
    // A lane without sources, destinations or assets has no direction
    // (`manifest-valid` reports it).
    let usable = |l: &&LaneCoverage| !(l.assets.is_empty() || l.from.is_empty() || l.to.is_empty());
    for l in m.coverage.iter().filter(usable) {
        for (from, to) in pairs(m, l, &inputs.scope) {
            let asset = source_asset(l, from, inputs.tokens);
            let mut requests = destination_assets(m, l, (from, to), asset, inputs.tokens)
                .into_iter()
                .map(|to_asset| request((from, to), (asset, to_asset), 1_000, inputs));
            let Some(first) = requests.next() else {
                continue;
            };
            out.push(Direction {
                lane: l.lane.clone(),
                executable: l.executable,
                request: first,
                alternatives: requests.collect(),
            });
        }
    }
    out
}

/// A request no lane of the rail covers.
pub fn unsupported_request(m: &RailManifest) -> QuoteRequest {
    let candidates = [
        (ChainRef::Evm(424_242), ChainRef::Evm(424_243), "NOPE"),
        (ChainRef::Evm(1), ChainRef::Evm(1), "NOPE"),
    ];
    let (f, t, a) = candidates
        .into_iter()
        .find(|(f, t, a)| m.lane_for(f, t, a).is_none())
        .unwrap_or(candidates[0]);
    request((f, t), (a, a), 1_000, &Inputs::default())
}

/// A covered request with a zero amount.
pub fn malformed_request(m: &RailManifest, inputs: &Inputs) -> Option<QuoteRequest> {
    directions(m, inputs).into_iter().next().map(|d| {
        let mut r = d.request;
        r.amount = Amount::ZERO;
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::{RailRole, Version};

    fn lane(name: &str, from: &[ChainRef], to: &[ChainRef], assets: &[&str]) -> LaneCoverage {
        LaneCoverage {
            lane: name.into(),
            from: from.to_vec(),
            to: to.to_vec(),
            assets: assets.iter().map(|a| a.to_string()).collect(),
            same_chain: false,
            executable: true,
            quote_only_reason: None,
        }
    }

    fn manifest(coverage: Vec<LaneCoverage>) -> RailManifest {
        RailManifest {
            id: "t".into(),
            name: "t".into(),
            version: Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::Aggregator,
            coverage,
            egress: vec![],
            rpc_chains: vec![],
            contracts: vec![],
            upstream: None,
        }
    }

    const BASE: ChainRef = ChainRef::Evm(8453);
    const ARB: ChainRef = ChainRef::Evm(42161);
    const ETH: ChainRef = ChainRef::Evm(1);
    const BTC: ChainRef = ChainRef::NonEvm(NonEvmNode::Bitcoin);

    fn pairs_of(m: &RailManifest, scope: &[ChainRef]) -> Vec<(ChainRef, ChainRef, String)> {
        let inputs = Inputs {
            scope: scope.to_vec(),
            ..Inputs::default()
        };
        directions(m, &inputs)
            .into_iter()
            .map(|d| {
                (
                    d.request.from_chain,
                    d.request.to_chain,
                    d.request.to_token.symbol,
                )
            })
            .collect()
    }

    #[test]
    fn a_two_way_lane_is_quoted_both_ways_without_scope() {
        let m = manifest(vec![lane(
            "evm->evm",
            &[BASE, ARB, ETH],
            &[BASE, ARB, ETH],
            &["USDC"],
        )]);
        let got = pairs_of(&m, &[]);
        assert_eq!(
            got,
            vec![(BASE, ARB, "USDC".into()), (ARB, BASE, "USDC".into())]
        );
    }

    #[test]
    fn every_pair_in_scope_is_quoted() {
        let m = manifest(vec![lane(
            "evm->evm",
            &[BASE, ARB, ETH],
            &[BASE, ARB, ETH],
            &["USDC"],
        )]);
        assert_eq!(pairs_of(&m, &[BASE, ARB, ETH]).len(), 6);
    }

    #[test]
    fn a_one_way_lane_is_quoted_one_way_and_assets_follow_the_manifest() {
        let m = manifest(vec![
            lane("evm->bitcoin", &[ETH, ARB], &[BTC], &["USDC"]),
            lane("bitcoin->evm", &[BTC], &[ETH, ARB], &["BTC"]),
        ]);
        assert_eq!(
            pairs_of(&m, &[ARB]),
            vec![(ARB, BTC, "BTC".into()), (BTC, ARB, "USDC".into())]
        );
    }

    #[test]
    fn a_same_chain_lane_swaps_into_another_asset() {
        let mut same = lane("same-chain", &[BASE, ARB], &[BASE, ARB], &["USDC", "USDT"]);
        same.same_chain = true;
        let m = manifest(vec![
            lane("evm->evm", &[BASE, ARB], &[BASE, ARB], &["USDC"]),
            same,
        ]);
        let got = pairs_of(&m, &[BASE]);
        assert!(got.contains(&(BASE, BASE, "USDT".into())), "{got:?}");
        assert!(got.contains(&(BASE, ARB, "USDC".into())), "{got:?}");
        assert!(got.contains(&(ARB, BASE, "USDC".into())), "{got:?}");
    }
}
