//! Requests the kit derives from a rail's own coverage.

use relay_plugin_api::{Amount, ChainRef, QuoteRequest, RailManifest, Token};

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

fn default_decimals(symbol: &str) -> u8 {
    match symbol.to_ascii_uppercase().as_str() {
        "USDC" | "USDT" => 6,
        "BTC" | "WBTC" => 8,
        _ => 18,
    }
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

fn request(
    from: ChainRef,
    to: ChainRef,
    asset: &str,
    amount: u128,
    known: &[KnownToken],
) -> QuoteRequest {
    let decimals = default_decimals(asset) as u32;
    QuoteRequest {
        from_chain: from,
        to_chain: to,
        from_token: token(from, asset, known),
        to_token: token(to, asset, known),
        amount: Amount::from_u128(amount * 10u128.pow(decimals.saturating_sub(2))),
        from_address: Some("0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into()),
        to_address: Some("0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into()),
        slippage_bps: 50,
        member: false,
    }
}

/// One request per lane (up to eight lanes) for 10 units of the lane's first
/// asset between its first distinct source and destination.
pub fn sample_requests(m: &RailManifest, known: &[KnownToken]) -> Vec<QuoteRequest> {
    m.coverage
        .iter()
        .take(8)
        .filter_map(|l| {
            let asset = l.assets.first()?;
            let from = *l.from.first()?;
            let to = *l.to.iter().find(|t| **t != from || l.same_chain)?;
            // Prefer chains the operator gave tokens for.
            let pick = |list: &[ChainRef], not: Option<ChainRef>| {
                list.iter()
                    .copied()
                    .filter(|c| Some(*c) != not || l.same_chain)
                    .find(|c| {
                        known
                            .iter()
                            .any(|k| k.chain == *c && k.symbol.eq_ignore_ascii_case(asset))
                    })
            };
            let from = pick(&l.from, None).unwrap_or(from);
            let to = pick(&l.to, Some(from)).unwrap_or(to);
            Some(request(from, to, asset, 1_000, known))
        })
        .collect()
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
    request(f, t, a, 1_000, &[])
}

/// A covered request with a zero amount.
pub fn malformed_request(m: &RailManifest, known: &[KnownToken]) -> Option<QuoteRequest> {
    sample_requests(m, known).into_iter().next().map(|mut r| {
        r.amount = Amount::ZERO;
        r
    })
}
