//! `relay-plugins new <name>`: a new rail from the template.
//!
//! Writes `rail/`, `native/` and `wasm/` (and a short README) from the
//! files of `plugins/template`, embedded in this binary so an installed
//! `relay-plugins` needs no checkout of the template, with every name of
//! the template replaced: package names, the crate path the packaging
//! crates import, the rail's struct, `ID` and display name. The crates take
//! their dependencies from the relay workspace, so the directory belongs
//! under `plugins/` of a clone (the workspace's `plugins/*/rail` globs pick
//! it up). It never overwrites: an existing directory is refused.

use std::{
    fs, io,
    path::{Path, PathBuf},
    process::Command,
};

/// The template's files, relative to the new rail's directory.
const FILES: &[(&str, &str)] = &[
    (
        "rail/Cargo.toml",
        include_str!("../../template/rail/Cargo.toml"),
    ),
    (
        "rail/src/lib.rs",
        include_str!("../../template/rail/src/lib.rs"),
    ),
    (
        "native/Cargo.toml",
        include_str!("../../template/native/Cargo.toml"),
    ),
    (
        "native/src/lib.rs",
        include_str!("../../template/native/src/lib.rs"),
    ),
    (
        "wasm/Cargo.toml",
        include_str!("../../template/wasm/Cargo.toml"),
    ),
    (
        "wasm/src/lib.rs",
        include_str!("../../template/wasm/src/lib.rs"),
    ),
];

/// The new rail's README; `{name}` and `{crate}` are filled in.
const README: &str = include_str!("scaffold_readme.md");

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
    /// Whether `rustfmt` formatted the renamed sources (it is skipped,
    /// with a note, when not installed).
    pub formatted: bool,
}

/// Writes the rail `name` into `dir` (which must not exist).
pub fn new_rail(name: &RailName, dir: &Path) -> Result<Scaffold, NewError> {
    if dir.exists() {
        return Err(NewError::Exists(dir.to_path_buf()));
    }
    let mut sources = Vec::new();
    for (rel, text) in FILES {
        let path = dir.join(rel);
        write(&path, &name.rename(text))?;
        if rel.ends_with(".rs") {
            sources.push(path);
        }
    }
    let readme = README
        .replace("{name}", name.id())
        .replace("{crate}", &name.snake());
    write(&dir.join("README.md"), &readme)?;
    Ok(Scaffold {
        dir: dir.to_path_buf(),
        formatted: rustfmt(&sources),
    })
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
