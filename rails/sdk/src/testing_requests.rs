//! Request builders for rails' tests: a quote request between two nodes and
//! the prepare/track requests that follow it, with the anvil test accounts
//! as sender, recipient and relayer unless a test says otherwise.

use relay_plugin_api::{
    Amount, ChainRef, PrepareRequest, QuoteRequest, RailQuote, SourceMode, Token, TrackRequest,
};

/// anvil account 1: the default sender and recipient.
pub const USER: &str = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/// anvil account 0: the default relayer.
pub const RELAYER: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

/// A token: `symbol`, its address when it has one, and decimals.
pub fn token(symbol: &str, address: Option<&str>, decimals: u8) -> Token {
    Token {
        symbol: symbol.to_ascii_uppercase(),
        address: address.map(str::to_string),
        decimals,
    }
}

/// A quote request for `amount` of `from_token` on `from` into `to_token`
/// on `to`, sent and received by [`USER`], 50 bps slippage.
pub fn quote_request(
    from: &str,
    to: &str,
    from_token: Token,
    to_token: Token,
    amount: u128,
) -> QuoteRequest {
    QuoteRequest {
        from_chain: from.parse().expect("from chain"),
        to_chain: to.parse().expect("to chain"),
        from_token,
        to_token,
        amount: Amount::from_u128(amount),
        from_address: Some(USER.into()),
        to_address: Some(USER.into()),
        slippage_bps: 50,
        member: false,
    }
}

/// The prepare request that accepts `quote` for `req`, Permit2 mode,
/// [`RELAYER`] executing, the request's recipient receiving.
pub fn prepare_request(req: &QuoteRequest, quote: RailQuote) -> PrepareRequest {
    PrepareRequest {
        route_id: "rt_test".into(),
        quote,
        from_chain: req.from_chain,
        to_chain: req.to_chain,
        from_token_address: req.from_token.address.clone(),
        to_token_address: req.to_token.address.clone(),
        sender: req.from_address.clone().unwrap_or_default(),
        recipient: req.to_address.clone().unwrap_or_default(),
        relayer: RELAYER.into(),
        mode: SourceMode::Permit2,
    }
}

/// A track request for a route from `from` to `to`.
pub fn track_request(
    from: ChainRef,
    to: ChainRef,
    reference: Option<&str>,
    src_tx: Option<&str>,
) -> TrackRequest {
    TrackRequest {
        route_id: "rt_test".into(),
        reference: reference.map(str::to_string),
        from_chain: from,
        to_chain: to,
        src_tx: src_tx.map(str::to_string),
    }
}

/// A fixture file of the calling crate (`tests/fixtures/<name>`).
#[macro_export]
macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/",
            $name
        ))
    };
}
