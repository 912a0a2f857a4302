//! `--lanes`: the directions a new rail serves, written into its `LANES`.
//!
//! `--lanes 'base->arbitrum,arbitrum->base'` (chain names or ids of the
//! gasless EVM set, `8453->42161` works too; `base:arbitrum` needs no
//! shell quoting) becomes
//!
//! ```text
//! pub const LANES: &[(&str, u64, u64)] = &[
//!     ("base->arbitrum", 8453, 42161),
//!     ("arbitrum->base", 42161, 8453),
//! ];
//! ```

use relay_types::chains::{well_known_name, GASLESS_CHAINS};

/// One direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    /// `base->arbitrum`.
    pub name: String,
    /// Source chain id.
    pub from: u64,
    /// Destination chain id.
    pub to: u64,
}

/// The whole `--lanes` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lanes(pub Vec<Lane>);

impl std::str::FromStr for Lanes {
    type Err = LanesError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s).map(Lanes)
    }
}

/// Why `--lanes` was refused.
#[derive(Debug, thiserror::Error)]
pub enum LanesError {
    /// Not `from->to`.
    #[error(
        "lane {0:?} is not `<from>-><to>` or `<from>:<to>` (e.g. 'base->arbitrum', quoted for \
         the shell, or base:arbitrum, or 8453:42161)"
    )]
    Shape(String),
    /// A chain outside the gasless EVM set.
    #[error("{0:?} is not a chain of the gasless EVM set; use one of: {1}")]
    Chain(String, String),
    /// The same chain twice, or the same lane twice.
    #[error("lane {0:?} is listed twice or goes from a chain to itself")]
    Repeated(String),
}

/// Parses `base->arbitrum,arbitrum->base`.
pub fn parse(spec: &str) -> Result<Vec<Lane>, LanesError> {
    let mut lanes: Vec<Lane> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part
            .split_once("->")
            .or_else(|| part.split_once(':'))
            .ok_or_else(|| LanesError::Shape(part.into()))?;
        let (from, to) = (chain(a.trim())?, chain(b.trim())?);
        let name = format!("{}->{}", well_known_name(from), well_known_name(to));
        if from == to || lanes.iter().any(|l| l.name == name) {
            return Err(LanesError::Repeated(part.into()));
        }
        lanes.push(Lane { name, from, to });
    }
    if lanes.is_empty() {
        return Err(LanesError::Shape(spec.into()));
    }
    Ok(lanes)
}

fn chain(s: &str) -> Result<u64, LanesError> {
    let id = s
        .parse::<u64>()
        .ok()
        .or_else(|| {
            GASLESS_CHAINS
                .into_iter()
                .find(|&c| well_known_name(c).eq_ignore_ascii_case(s))
        })
        .filter(|c| GASLESS_CHAINS.contains(c));
    id.ok_or_else(|| {
        let names: Vec<&str> = GASLESS_CHAINS.into_iter().map(well_known_name).collect();
        LanesError::Chain(s.into(), names.join(", "))
    })
}

/// `source` with its `pub const LANES` item replaced by `lanes`.
pub fn rewrite(source: &str, lanes: &[Lane]) -> String {
    const HEAD: &str = "pub const LANES: &[(&str, u64, u64)] = &[";
    let Some(start) = source.find(HEAD) else {
        return source.to_string();
    };
    let end = source[start..]
        .find("];")
        .map_or(source.len(), |i| start + i + 2);
    let mut item = format!("{HEAD}\n");
    for l in lanes {
        item.push_str(&format!("    ({:?}, {}, {}),\n", l.name, l.from, l.to));
    }
    item.push_str("];");
    format!("{}{item}{}", &source[..start], &source[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_both_work_and_bad_lanes_say_why() {
        let l = parse("base->arbitrum, 42161:8453").unwrap();
        assert_eq!(
            l[0],
            Lane {
                name: "base->arbitrum".into(),
                from: 8453,
                to: 42161
            }
        );
        assert_eq!(l[1].name, "arbitrum->base");
        assert!(matches!(parse("base"), Err(LanesError::Shape(_))));
        assert!(matches!(parse("base->mars"), Err(LanesError::Chain(..))));
        assert!(matches!(parse("base->base"), Err(LanesError::Repeated(_))));
        assert!(matches!(
            parse("base->1,8453->ethereum"),
            Err(LanesError::Repeated(_))
        ));
        assert!(matches!(parse(""), Err(LanesError::Shape(_))));
    }

    #[test]
    fn the_lanes_item_is_replaced_whole() {
        let src = "a\npub const LANES: &[(&str, u64, u64)] = &[(\"x\", 1, 2)];\nb\n";
        let out = rewrite(src, &parse("1->10").unwrap());
        assert_eq!(
            out,
            "a\npub const LANES: &[(&str, u64, u64)] = &[\n    (\"ethereum->optimism\", 1, 10),\n];\nb\n"
        );
    }
}
