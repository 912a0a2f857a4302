//! The agent's plain-language parser (spec §4.2 `POST /api/agent/do`): a
//! small, predictable grammar, not a language model. It understands
//!
//! ```text
//! [verb] <amount> <TOKEN> (from|on) <chain> to <chain> [to <0x recipient>] [from <0x sender>]
//! ```
//!
//! - **verb**: any leading words (`send`, `bridge`, `please move` …) are
//!   ignored until the amount.
//! - **amount**: a decimal number in whole tokens (`5`, `0.25`, `1,250.50`,
//!   `$20`), optionally glued to the token (`5usdc`).
//! - **TOKEN**: the word right after the amount (`of` skipped): a symbol.
//! - **chains**: after `from`/`on` (source) and `to`/`into` (destination):
//!   a chain id (`8453`), an operator-configured chain name, a well-known
//!   name or a common alias — `ethereum`/`eth`/`mainnet`, `optimism`/`op`,
//!   `bsc`/`bnb`, `gnosis`, `polygon`/`matic`, `base`, `arbitrum`/`arb`/
//!   `arbitrum one`, `avalanche`/`avax`, `linea`, `blast`, `zora`, `mode`,
//!   `mantle`, `sonic`, `unichain`, `ink`, `lisk`, `worldchain`, … and the
//!   non-EVM nodes `solana`/`sol`, `stellar`/`xlm`, `bitcoin`/`btc`,
//!   `tron`/`trx`, `sui`. Two-word names (`arbitrum one`, `op mainnet`)
//!   are tried before one-word ones.
//! - **addresses**: `to 0x…` is the recipient, `from 0x…` the sender.
//!
//! Case and trailing punctuation do not matter. Anything else is an error
//! that says what was missing or not understood.

use super::tokens;
use relay_config::HostConfig;
use relay_plugin_api::{Amount, ChainRef, U256};

/// What a sentence asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intent {
    /// Source node.
    pub from_chain: ChainRef,
    /// Destination node.
    pub to_chain: ChainRef,
    /// Token symbol, as written (upper-cased).
    pub token: String,
    /// Amount in whole tokens, normalised (`1,250.50` → `1250.50`).
    pub amount_human: String,
    /// Recipient, when given.
    pub to_address: Option<String>,
    /// Sender, when given.
    pub from_address: Option<String>,
}

/// Common names beyond each chain's well-known one.
const ALIASES: &[(&str, &str)] = &[
    ("eth", "1"),
    ("mainnet", "1"),
    ("ethereum mainnet", "1"),
    ("op", "10"),
    ("op mainnet", "10"),
    ("bnb", "56"),
    ("bnb chain", "56"),
    ("binance", "56"),
    ("xdai", "100"),
    ("matic", "137"),
    ("polygon pos", "137"),
    ("world chain", "480"),
    ("world", "480"),
    ("hyperliquid", "999"),
    ("ape", "33139"),
    ("arb", "42161"),
    ("arbitrum one", "42161"),
    ("avax", "43114"),
    ("sol", "solana"),
    ("xlm", "stellar"),
    ("btc", "bitcoin"),
    ("trx", "tron"),
];

/// Resolves a chain name, id or alias (configured names first).
pub fn chain_named(config: &HostConfig, name: &str) -> Option<ChainRef> {
    let n = name.trim().to_ascii_lowercase();
    let configured = config.chain_ids().into_iter().find(|id| {
        let c = config.chains.get(&id.to_string());
        c.and_then(|c| c.name.as_deref())
            .is_some_and(|x| x.eq_ignore_ascii_case(&n))
    });
    if let Some(id) = configured {
        return Some(ChainRef::Evm(id));
    }
    let alias = ALIASES.iter().find(|(a, _)| *a == n).map(|(_, c)| *c);
    tokens::parse_chain(alias.unwrap_or(&n)).ok()
}

fn clean(word: &str) -> &str {
    word.trim_end_matches([',', '.', '!', '?', ';', ':'])
}

/// Splits `$5`, `5`, `1,250.5` or `5usdc` into (amount, glued symbol).
fn amount_word(word: &str) -> Option<(String, Option<String>)> {
    let w = word.strip_prefix('$').unwrap_or(word);
    let end = w
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(w.len());
    let (num, rest) = w.split_at(end);
    let num = num.replace(',', "");
    let valid = num.bytes().any(|b| b.is_ascii_digit()) && num.matches('.').count() <= 1;
    let rest = (!rest.is_empty()).then(|| rest.to_ascii_uppercase());
    (valid && rest.as_deref().is_none_or(is_symbol)).then_some((num, rest))
}

fn is_symbol(w: &str) -> bool {
    (2..=10).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A place after `from`/`to`: an address, or a chain (two words tried first).
enum Place {
    Address(String),
    Chain(ChainRef, usize),
}

fn place(config: &HostConfig, words: &[&str]) -> Option<Place> {
    let first = clean(words.first()?);
    if first.starts_with("0x") || first.starts_with("0X") {
        return Some(Place::Address(first.to_string()));
    }
    if let Some(second) = words.get(1) {
        let two = format!("{first} {}", clean(second));
        if let Some(c) = chain_named(config, &two) {
            return Some(Place::Chain(c, 2));
        }
    }
    chain_named(config, first).map(|c| Place::Chain(c, 1))
}

/// Parses a sentence (module docs give the grammar).
pub fn parse_sentence(text: &str, config: &HostConfig) -> Result<Intent, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let (mut amount, mut token) = (None::<String>, None::<String>);
    let (mut from, mut to, mut from_addr, mut to_addr) = (None, None, None, None);
    let mut i = 0;
    while i < words.len() {
        let w = clean(words[i]).to_ascii_lowercase();
        let dir = match w.as_str() {
            "from" | "on" => Some(true),
            "to" | "into" => Some(false),
            _ => None,
        };
        if let Some(is_from) = dir {
            let Some(p) = place(config, &words[i + 1..]) else {
                let next = words.get(i + 1).map_or("nothing", |n| clean(n));
                return Err(format!(
                    "{next:?} after {w:?} is not a chain this host knows or a 0x address"
                ));
            };
            let used = match p {
                Place::Address(a) => {
                    *if is_from {
                        &mut from_addr
                    } else {
                        &mut to_addr
                    } = Some(a);
                    1
                }
                Place::Chain(c, n) => {
                    *if is_from { &mut from } else { &mut to } = Some(c);
                    n
                }
            };
            i += used + 1;
            continue;
        }
        if amount.is_none() {
            if let Some((a, glued)) = amount_word(&w) {
                amount = Some(a);
                token = glued;
            }
        } else if token.is_none() && w != "of" {
            token = Some(w.to_ascii_uppercase()).filter(|t| is_symbol(t));
            if token.is_none() {
                return Err(format!("{w:?} after the amount is not a token symbol"));
            }
        }
        i += 1;
    }
    let need = |what: &str, example: &str| format!("no {what} (e.g. {example:?})");
    Ok(Intent {
        amount_human: amount.ok_or_else(|| need("amount", "send 5 USDC from base to arbitrum"))?,
        token: token.ok_or_else(|| need("token after the amount", "5 USDC"))?,
        from_chain: from.ok_or_else(|| need("source chain", "from base"))?,
        to_chain: to.ok_or_else(|| need("destination chain", "to arbitrum"))?,
        to_address: to_addr,
        from_address: from_addr,
    })
}

/// Whole tokens (`5.25`) to smallest units at `decimals`.
pub fn human_to_units(human: &str, decimals: u8) -> Result<Amount, String> {
    let h = human.trim();
    let (int, frac) = h.split_once('.').unwrap_or((h, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !digits(int) || !digits(frac) {
        return Err(format!(
            "{:?} is not a decimal number of tokens",
            tokens::clip(h)
        ));
    }
    if frac.len() > usize::from(decimals) {
        return Err(format!("{h} has more than the token's {decimals} decimals"));
    }
    let padded = format!("{int}{frac:0<width$}", width = usize::from(decimals));
    let trimmed = padded.trim_start_matches('0');
    if trimmed.is_empty() {
        return Ok(Amount::ZERO);
    }
    trimmed.parse().map_err(|e| format!("{h}: {e}"))
}

/// Smallest units to whole tokens, trailing zeros trimmed (`4977500`, 6 →
/// `4.9775`).
pub fn units_to_human(a: Amount, decimals: u8) -> String {
    let one = U256::from(10u8).pow(U256::from(decimals));
    let (int, frac) = (a.0 / one, a.0 % one);
    if frac.is_zero() {
        return int.to_string();
    }
    let frac = format!("{frac:0>width$}", width = usize::from(decimals));
    format!("{int}.{}", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::NonEvmNode;

    fn parse(s: &str) -> Result<Intent, String> {
        parse_sentence(s, &HostConfig::default())
    }

    #[test]
    fn plain_sentences_parse_into_chains_amount_token_and_addresses() {
        let to = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
        let i = parse(&format!("send 5 USDC from base to arbitrum to {to}.")).unwrap();
        assert_eq!(
            (i.from_chain, i.to_chain),
            (ChainRef::Evm(8453), ChainRef::Evm(42161))
        );
        assert_eq!((i.amount_human.as_str(), i.token.as_str()), ("5", "USDC"));
        assert_eq!(i.to_address.as_deref(), Some(to));
        let i = parse("Please bridge 1,250.5 usdt from Arbitrum One to OP Mainnet").unwrap();
        assert_eq!(
            (i.from_chain, i.to_chain),
            (ChainRef::Evm(42161), ChainRef::Evm(10))
        );
        assert_eq!(
            (i.amount_human.as_str(), i.token.as_str()),
            ("1250.5", "USDT")
        );
        let i = parse("move $20usdc on eth into sol from 0xabc").unwrap();
        assert_eq!(i.to_chain, ChainRef::NonEvm(NonEvmNode::Solana));
        assert_eq!((i.from_chain, i.token.as_str()), (ChainRef::Evm(1), "USDC"));
        assert_eq!(i.from_address.as_deref(), Some("0xabc"));
        assert_eq!(parse("0.1 eth from 8453 to 42161").unwrap().token, "ETH");
    }

    #[test]
    fn what_is_missing_or_not_understood_is_named() {
        for (s, says) in [
            ("hello there", "no amount"),
            ("send USDC from base to arbitrum", "no amount"),
            ("send 5 from base to arbitrum", "no token"),
            ("send 5 USDC to arbitrum", "no source chain"),
            ("send 5 USDC from base", "no destination chain"),
            (
                "send 5 USDC from narnia to base",
                "\"narnia\" after \"from\"",
            ),
            ("send 5 USDC from base to", "\"nothing\" after \"to\""),
            ("send 5 !!! from base to arbitrum", "not a token symbol"),
        ] {
            let e = parse(s).unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
    }

    #[test]
    fn configured_chain_names_are_understood() {
        let mut c = HostConfig::default();
        c.chains.entry("8453".into()).or_default().name = Some("devbase".into());
        assert_eq!(chain_named(&c, "DevBase"), Some(ChainRef::Evm(8453)));
        assert_eq!(chain_named(&c, "avax"), Some(ChainRef::Evm(43114)));
        assert_eq!(chain_named(&c, "narnia"), None);
    }

    #[test]
    fn whole_tokens_convert_to_smallest_units_and_back() {
        assert_eq!(human_to_units("5", 6), Ok(Amount::from_u128(5_000_000)));
        assert_eq!(human_to_units("5.25", 6), Ok(Amount::from_u128(5_250_000)));
        assert_eq!(human_to_units(".5", 6), Ok(Amount::from_u128(500_000)));
        assert_eq!(human_to_units("0", 6), Ok(Amount::ZERO));
        assert!(human_to_units("1.1234567", 6)
            .unwrap_err()
            .contains("6 decimals"));
        assert!(human_to_units("1e5", 6).is_err());
        assert!(human_to_units(".", 6).is_err());
        assert_eq!(units_to_human(Amount::from_u128(4_977_500), 6), "4.9775");
        assert_eq!(units_to_human(Amount::from_u128(5_000_000), 6), "5");
        assert_eq!(units_to_human(Amount::from_u128(5), 6), "0.000005");
    }
}

/// What the recipient gets, in units and whole tokens.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Receives {
    /// Smallest units.
    #[schema(value_type = String)]
    pub units: Amount,
    /// Whole tokens, decimal.
    pub human: String,
    /// Token symbol.
    pub token: String,
    /// Destination node.
    #[schema(value_type = relay_wire::Node)]
    pub chain: ChainRef,
}

/// `POST /api/agent/do` (spec §4.2): `sign` (a signRequest to complete),
/// `quoted` (no signer known) or `done` (sandbox).
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentAnswer {
    /// `sign`, `quoted` or `done`.
    pub status: String,
    /// The rail chosen.
    pub rail: String,
    /// What arrives.
    pub receives: Receives,
    /// Expected duration.
    pub duration_sec: u32,
    /// The structured request understood.
    #[schema(value_type = Object)]
    pub understood: serde_json::Value,
    /// What to do next.
    pub note: String,
    /// The Permit2 signature request (status `sign`).
    pub sign_request: Option<super::submit::SignRequest>,
    /// The sandbox route id (status `done`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    /// The sandbox receipt (status `done`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub receipt: Option<serde_json::Value>,
}
