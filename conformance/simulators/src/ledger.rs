//! Simulated non-EVM ledgers (bitcoin, solana, tron, stellar): balances per
//! address and asset, and simulated transaction ids. They are simulations —
//! no node of those chains runs here — and everything that shows them says
//! so: transaction ids start with `sim-`, token ids and deposit addresses
//! carry `Sim`/`SIM`, and the control endpoints answer `"simulated": true`.
//!
//! What it must never do: pretend to be a real chain's state, or hold keys —
//! a simulated ledger has no signatures at all; a "send" is a control call.

use serde::{Deserialize, Serialize};
use std::{collections::HashMap, fmt, sync::Mutex};

/// A simulated non-EVM node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Node {
    /// Bitcoin (Chainflip's leg).
    Bitcoin,
    /// Solana (Allbridge Core's leg).
    Solana,
    /// Tron (Allbridge Core's leg).
    Tron,
    /// Stellar / Soroban (Allbridge Core's leg, EVM → stellar only).
    Stellar,
}

/// An asset on a simulated ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimAsset {
    /// Symbol (`BTC`, `USDC`, `USDT`).
    pub symbol: &'static str,
    /// Decimals.
    pub decimals: u8,
    /// The simulated token id (mint / contract / asset code), clearly
    /// simulated; the native coin has none.
    pub token_id: Option<&'static str>,
    /// The mainnet token id, accepted as an alias so a client configured
    /// for the real chain works against the simulator unchanged.
    pub mainnet_id: Option<&'static str>,
}

impl SimAsset {
    /// Whether `id` is this asset's simulated or mainnet token id.
    pub fn is_token(&self, id: &str) -> bool {
        [self.token_id, self.mainnet_id]
            .into_iter()
            .flatten()
            .any(|t| t == id)
    }
}

const BITCOIN: &[SimAsset] = &[SimAsset {
    symbol: "BTC",
    decimals: 8,
    token_id: None,
    mainnet_id: None,
}];
const SOLANA: &[SimAsset] = &[
    SimAsset {
        symbol: "USDC",
        decimals: 6,
        token_id: Some("SimSo1anaUSDCMint1111111111111111111111111"),
        mainnet_id: Some("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
    },
    SimAsset {
        symbol: "USDT",
        decimals: 6,
        token_id: Some("SimSo1anaUSDTMint1111111111111111111111111"),
        mainnet_id: Some("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"),
    },
];
const TRON: &[SimAsset] = &[
    SimAsset {
        symbol: "USDC",
        decimals: 6,
        token_id: Some("TSimTronUSDC1111111111111111111111"),
        mainnet_id: Some("TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8"),
    },
    SimAsset {
        symbol: "USDT",
        decimals: 6,
        token_id: Some("TSimTronUSDT1111111111111111111111"),
        mainnet_id: Some("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"),
    },
];
const STELLAR: &[SimAsset] = &[SimAsset {
    symbol: "USDC",
    decimals: 7,
    token_id: Some("CSIMSTELLARUSDCSAC1111111111111111111111111111111111111"),
    mainnet_id: Some("CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75"),
}];

impl Node {
    /// Every simulated node.
    pub const ALL: [Node; 4] = [Node::Bitcoin, Node::Solana, Node::Tron, Node::Stellar];

    /// Lower-case name (`bitcoin`, …).
    pub fn name(self) -> &'static str {
        match self {
            Node::Bitcoin => "bitcoin",
            Node::Solana => "solana",
            Node::Tron => "tron",
            Node::Stellar => "stellar",
        }
    }

    /// The node named `s` (any case).
    pub fn parse(s: &str) -> Option<Node> {
        Node::ALL
            .into_iter()
            .find(|n| n.name().eq_ignore_ascii_case(s))
    }

    /// The assets its simulated ledger knows.
    pub fn assets(self) -> &'static [SimAsset] {
        match self {
            Node::Bitcoin => BITCOIN,
            Node::Solana => SOLANA,
            Node::Tron => TRON,
            Node::Stellar => STELLAR,
        }
    }

    /// The asset named by symbol, simulated token id or mainnet token id.
    pub fn asset(self, s: &str) -> Option<SimAsset> {
        self.assets()
            .iter()
            .copied()
            .find(|a| a.symbol.eq_ignore_ascii_case(s) || a.is_token(s))
    }

    /// A fresh simulated deposit address for `seed` (hex), in the node's
    /// address style but clearly simulated.
    pub fn deposit_address(self, seed: &str) -> String {
        let take = |n: usize| seed.chars().take(n).collect::<String>();
        match self {
            Node::Bitcoin => format!("bcrt1qsim{}", take(30)),
            Node::Solana => format!("Sim{}", take(40)),
            Node::Tron => format!("TSim{}", take(30)),
            Node::Stellar => format!("GSIM{}", take(52)).to_ascii_uppercase(),
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A simulated ledger transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerTx {
    /// Simulated transaction id (`sim-<node>-<n>`).
    pub tx_id: String,
    /// Node.
    pub node: Node,
    /// Sender, when known.
    pub from: Option<String>,
    /// Recipient.
    pub to: String,
    /// Asset symbol.
    pub asset: String,
    /// Amount, smallest units (sats for BTC).
    #[serde(with = "amount_string")]
    pub amount: u128,
}

mod amount_string {
    pub fn serialize<S: serde::Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }
}

/// An unsigned payment on a simulated ledger, the "raw transaction" a
/// simulator hands out where the real upstream would return a chain's
/// serialized transaction. Encoded as `0x` + hex of its JSON; a wallet
/// "submits" it with `POST /simulator/ledger/submit {"rawTx": …}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedPayment {
    /// Always true: this is not a real chain transaction.
    pub simulated: bool,
    /// Node.
    pub node: Node,
    /// Sender.
    pub from: String,
    /// Recipient (typically a deposit address).
    pub to: String,
    /// Asset symbol.
    pub asset: String,
    /// Amount, smallest units, decimal.
    pub amount: String,
}

impl SimulatedPayment {
    /// `0x`-hex of the JSON.
    pub fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        format!("0x{}", hex::encode(json))
    }

    /// Reads an encoded payment.
    pub fn decode(raw: &str) -> Option<Self> {
        let bytes = hex::decode(raw.trim().trim_start_matches("0x")).ok()?;
        serde_json::from_slice::<Self>(&bytes)
            .ok()
            .filter(|p| p.simulated)
    }
}

/// (node, address, asset symbol).
type BalanceKey = (Node, String, String);

#[derive(Debug, Default)]
struct Book {
    balances: HashMap<BalanceKey, u128>,
    history: Vec<LedgerTx>,
}

/// Balances and history of every simulated ledger.
#[derive(Debug, Default)]
pub struct Ledger {
    book: Mutex<Book>,
}

impl Ledger {
    /// Credits `amount` of `asset` to `to` on `node` (sent by `from`, when
    /// known); returns the simulated transaction id.
    pub fn credit(
        &self,
        node: Node,
        from: Option<&str>,
        to: &str,
        asset: &str,
        amount: u128,
    ) -> String {
        let mut b = self.book.lock().expect("ledger lock");
        let tx_id = format!("sim-{node}-{:08}", b.history.len() + 1);
        let key = (node, to.to_string(), asset.to_ascii_uppercase());
        *b.balances.entry(key).or_default() += amount;
        b.history.push(LedgerTx {
            tx_id: tx_id.clone(),
            node,
            from: from.map(str::to_string),
            to: to.to_string(),
            asset: asset.to_ascii_uppercase(),
            amount,
        });
        tracing::info!(%node, to, asset, amount, tx_id, "simulated ledger credit");
        tx_id
    }

    /// Balance of `asset` at `address` on `node`.
    pub fn balance(&self, node: Node, address: &str, asset: &str) -> u128 {
        let b = self.book.lock().expect("ledger lock");
        let key = (node, address.to_string(), asset.to_ascii_uppercase());
        b.balances.get(&key).copied().unwrap_or(0)
    }

    /// The simulated transactions touching `address` on `node`, oldest first.
    pub fn history(&self, node: Node, address: &str) -> Vec<LedgerTx> {
        let b = self.book.lock().expect("ledger lock");
        b.history
            .iter()
            .filter(|t| t.node == node && (t.to == address || t.from.as_deref() == Some(address)))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credits_add_up_per_address_and_asset() {
        let l = Ledger::default();
        let a = l.credit(Node::Solana, None, "alice", "usdc", 5);
        let b = l.credit(Node::Solana, Some("bob"), "alice", "USDC", 7);
        assert_ne!(a, b);
        assert!(a.starts_with("sim-solana-"));
        assert_eq!(l.balance(Node::Solana, "alice", "USDC"), 12);
        assert_eq!(l.balance(Node::Tron, "alice", "USDC"), 0);
        assert_eq!(l.history(Node::Solana, "bob").len(), 1);
    }

    #[test]
    fn assets_resolve_by_symbol_or_simulated_token_id() {
        let usdt = Node::Tron
            .asset("TSimTronUSDT1111111111111111111111")
            .unwrap();
        assert_eq!(usdt.symbol, "USDT");
        let mainnet = Node::Solana.asset("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
        assert_eq!(mainnet.unwrap().symbol, "USDC");
        assert_eq!(Node::Bitcoin.asset("btc").unwrap().decimals, 8);
        assert!(Node::Stellar.asset("USDT").is_none());
    }

    #[test]
    fn deposit_addresses_look_simulated() {
        assert!(Node::Bitcoin
            .deposit_address("abcd")
            .starts_with("bcrt1qsim"));
        assert!(Node::Stellar.deposit_address("abcd").starts_with("GSIM"));
        assert_eq!(Node::parse("TRON"), Some(Node::Tron));
    }
}
