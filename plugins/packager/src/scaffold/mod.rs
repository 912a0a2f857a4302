//! `relay-plugins new <name> [--lanes …] [--out DIR] [--relay DIR]`: a new
//! rail from the template.
//!
//! Writes `rail/`, `native/`, `wasm/`, `fixture/upstream.json` (the
//! recorded upstream its tests and the kit use) and a README from the files
//! of `plugins/template`, embedded in this binary so an installed
//! `relay-plugins` needs no checkout of the template, with every name of
//! the template replaced: package names, the crate path the packaging
//! crates import, the rail's struct, `ID`, display name and upstream host;
//! `--lanes` replaces its `LANES`.
//!
//! Inside a relay clone (under a workspace whose members include
//! `plugins/*/rail`) the crates are workspace members. Anywhere else the
//! directory becomes its own workspace that depends on a relay checkout by
//! path (`--relay`, by default the checkout this binary was built from)
//! and pins the checkout's `Cargo.lock` ([`standalone`]). It never
//! overwrites: an existing directory is refused.

mod lanes;
pub mod standalone;

pub use lanes::{Lane, Lanes, LanesError};
pub use standalone::Home;

use std::{
    fs, io,
    path::{Path, PathBuf},
    process::Command,
};

/// The template's files, relative to the new rail's directory.
const FILES: &[(&str, &str)] = &[
    (
        "rail/Cargo.toml",
        include_str!("../../../template/rail/Cargo.toml"),
    ),
    (
        "rail/src/lib.rs",
        include_str!("../../../template/rail/src/lib.rs"),
    ),
    (
        "native/Cargo.toml",
        include_str!("../../../template/native/Cargo.toml"),
    ),
    (
        "native/src/lib.rs",
        include_str!("../../../template/native/src/lib.rs"),
    ),
    (
        "wasm/Cargo.toml",
        include_str!("../../../template/wasm/Cargo.toml"),
    ),
    (
        "wasm/src/lib.rs",
        include_str!("../../../template/wasm/src/lib.rs"),
    ),
    (
        "fixture/upstream.json",
        include_str!("../../../template/fixture/upstream.json"),
    ),
];

/// The new rail's README; `{name}`, `{crate}`, `{layout}` and the command
/// parts are filled in for where the rail lives.
const README: &str = include_str!("readme.md");

/// Why `new` refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum NewError {
    /// The name is not a rail id.
    #[error(
        "invalid rail name {0:?}: use lower-case letters, digits and '-', \
         starting with a letter and not ending with '-' (e.g. `acme` or `acme-bridge`)"
    )]
    InvalidName(String),
    /// The output directory is there already.
    #[error("{} already exists; pick another name or --out directory (nothing was written)", .0.display())]
    Exists(PathBuf),
    /// Writing a file failed.
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Reading the relay checkout failed.
    #[error("reading {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// `--relay` is not a relay checkout.
    #[error("{} is not a relay checkout ({why}); pass --relay <path to a relay clone>", path.display())]
    NotRelay {
        /// The directory.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// Outside a relay clone, with no checkout to build against.
    #[error(
        "{} is outside a relay clone and this relay-plugins was not built from one that \
         still exists; pass --relay <path to a relay clone>", .0.display()
    )]
    NoRelay(PathBuf),
    /// `--lanes` was refused.
    #[error(transparent)]
    Lanes(#[from] LanesError),
}

/// A valid rail id: `[a-z][a-z0-9-]*`, no trailing or doubled `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RailName(String);

impl RailName {
    /// Parses `name`, refusing anything that is not a rail id.
    pub fn parse(name: &str) -> Result<Self, NewError> {
        let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.ends_with('-')
            && !name.contains("--");
        if ok {
            Ok(Self(name.to_string()))
        } else {
            Err(NewError::InvalidName(name.to_string()))
        }
    }

    /// The id itself (`acme-bridge`).
    pub fn id(&self) -> &str {
        &self.0
    }

    /// The crate path form (`acme_bridge`).
    fn snake(&self) -> String {
        self.0.replace('-', "_")
    }

    /// The type-name form (`AcmeBridge`).
    fn camel(&self) -> String {
        self.0
            .split('-')
            .map(|part| {
                let mut chars = part.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect()
    }

    /// `text` with every name of the template replaced by this rail's.
    fn rename(&self, text: &str) -> String {
        text.replace(
            "relay_rail_template",
            &format!("relay_rail_{}", self.snake()),
        )
        .replace("Template", &self.camel())
        .replace("template", self.id())
    }
}

/// What `new` wrote.
#[derive(Debug)]
pub struct Scaffold {
    /// The new rail's directory.
    pub dir: PathBuf,
    /// Where its dependencies come from.
    pub home: Home,
    /// Whether `rustfmt` formatted the renamed sources (it is skipped,
    /// with a note, when not installed).
    pub formatted: bool,
}

/// What to write.
#[derive(Debug)]
pub struct NewRail {
    /// The rail's id.
    pub name: RailName,
    /// The directions it serves (default: the template's).
    pub lanes: Option<Vec<Lane>>,
    /// The directory to create.
    pub dir: PathBuf,
    /// The relay checkout a standalone rail builds against.
    pub relay: Option<PathBuf>,
}

impl NewRail {
    /// Where the crates will take their dependencies from.
    pub fn home(&self) -> Result<Home, NewError> {
        if let Some(root) = standalone::enclosing_relay(&self.dir) {
            return Ok(Home::Member(root));
        }
        let relay = match &self.relay {
            Some(r) if standalone::is_relay(r) => {
                std::path::absolute(r).map_err(|source| NewError::Read {
                    path: r.clone(),
                    source,
                })?
            }
            Some(r) => {
                return Err(NewError::NotRelay {
                    path: r.clone(),
                    why: "no plugin-api/ or rails/sdk/".into(),
                })
            }
            None => standalone::built_from().ok_or_else(|| NewError::NoRelay(self.dir.clone()))?,
        };
        Ok(Home::Standalone(relay))
    }
}

/// Writes the rail `req.name` into `req.dir` (which must not exist).
pub fn new_rail(req: &NewRail) -> Result<Scaffold, NewError> {
    let (name, dir) = (&req.name, req.dir.as_path());
    if dir.exists() {
        return Err(NewError::Exists(dir.to_path_buf()));
    }
    let home = req.home()?;
    let mut sources = Vec::new();
    for (rel, text) in FILES {
        let mut text = name.rename(text);
        if let (true, Some(l)) = (*rel == "rail/src/lib.rs", &req.lanes) {
            text = lanes::rewrite(&text, l);
        }
        let path = dir.join(rel);
        write(&path, &text)?;
        if rel.ends_with(".rs") {
            sources.push(path);
        }
    }
    if let Home::Standalone(relay) = &home {
        write(&dir.join("Cargo.toml"), &standalone::manifest(relay)?)?;
        // The checkout's lock: the rail builds with the host's versions.
        if let Ok(lock) = fs::read_to_string(relay.join("Cargo.lock")) {
            write(&dir.join("Cargo.lock"), &lock)?;
        }
    }
    write(&dir.join("README.md"), &readme(name, &home))?;
    Ok(Scaffold {
        dir: dir.to_path_buf(),
        home,
        formatted: rustfmt(&sources),
    })
}

/// The new rail's README, its commands written for where it lives.
fn readme(name: &RailName, home: &Home) -> String {
    let (layout, ws) = match home {
        Home::Member(root) => (
            format!(
                "The crates are members of the relay workspace at `{}` (its \
                 `plugins/*/rail` globs pick them up) and take their dependencies from it. \
                 Run the commands below from that repository's root.",
                root.display()
            ),
            String::new(),
        ),
        Home::Standalone(relay) => (
            format!(
                "This directory is its own workspace (`Cargo.toml`), built against the relay \
                 checkout at `{}`: the contract crates and the rail SDK by path, that \
                 checkout's `Cargo.lock` pinned. Run the commands below from this directory.",
                relay.display()
            ),
            format!(
                "RELAY_WASM_MANIFEST=\"$PWD/Cargo.toml\" {}/",
                relay.display()
            ),
        ),
    };
    let (relay, out) = match home {
        Home::Member(_) => (String::new(), format!("plugins/{}", name.id())),
        Home::Standalone(r) => (
            format!(" --manifest-path {}/Cargo.toml", r.display()),
            ".".to_string(),
        ),
    };
    README
        .replace("{layout}", &layout)
        .replace("{wasm_script}", &format!("{ws}plugins/build-wasm.sh"))
        .replace("{relay_manifest}", &relay)
        .replace("{dir}", &out)
        .replace("{name}", name.id())
        .replace("{crate}", &name.snake())
}

fn write(path: &Path, text: &str) -> Result<(), NewError> {
    let err = |source| NewError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(err)?;
    }
    fs::write(path, text).map_err(err)
}

/// Formats the renamed sources (a longer name can push a line past the
/// width); `false` when `rustfmt` is not there or fails.
fn rustfmt(sources: &[PathBuf]) -> bool {
    Command::new(std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into()))
        .args(["--edition", "2021"])
        .args(sources)
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_rail_ids() {
        for good in ["acme", "acme-bridge", "a1", "x2-y3"] {
            assert!(RailName::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "", "Acme", "1acme", "acme-", "-acme", "ac--me", "ac_me", "ac me", "../x",
        ] {
            assert!(
                matches!(RailName::parse(bad), Err(NewError::InvalidName(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn every_template_name_is_replaced() {
        let name = RailName::parse("acme-bridge").unwrap();
        assert_eq!(name.camel(), "AcmeBridge");
        for (rel, text) in FILES {
            let out = name.rename(text);
            assert!(!out.to_lowercase().contains("template"), "{rel}: {out}");
        }
        let native = name.rename(FILES[3].1);
        assert!(native.contains("use relay_rail_acme_bridge::AcmeBridgeRail;"));
        let rail = name.rename(FILES[1].1);
        assert!(rail.contains("pub const ID: &str = \"acme-bridge\";"));
    }
}
