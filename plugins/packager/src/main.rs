//! `relay-plugins build [RAIL…]`: packages rails as plugins.
//!
//! For every rail in `plugins/plugins.toml` (or the ones named) and every
//! packaging listed for it, builds the packaging shell with that rail's
//! feature, copies the artifact to `<out>/<rail>-<packaging>/`, loads it
//! through the host's real loader to read the manifest the rail reports,
//! and writes `plugin.toml` next to it with the artifact's sha256.
//!
//! `relay-plugins new <name>`: starts a new rail from the template (see
//! [`scaffold`]).

mod build;
mod scaffold;

use anyhow::Context;
use clap::{Parser, Subcommand};
use serde::Deserialize;
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

/// The relay plugin packager.
#[derive(Debug, Parser)]
#[command(name = "relay-plugins", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build plugins into the output directory.
    Build {
        /// Rails to build (default: all in plugins.toml).
        rails: Vec<String>,
        /// The packaging list.
        #[arg(long, default_value = "plugins/plugins.toml")]
        list: PathBuf,
        /// Output directory (the host's plugins directory).
        #[arg(long, default_value = "plugins/dist")]
        out: PathBuf,
        /// Build native plugins in release mode.
        #[arg(long)]
        release: bool,
        /// Build every rail in this packaging (`native` or `wasm`) instead
        /// of the ones `plugins.toml` lists: `--as native` is the quick
        /// first build (no wasm toolchain, no build-std).
        #[arg(long = "as", value_parser = parse_kind)]
        only: Option<relay_registry::PluginKind>,
    },
    /// Write plugin.toml next to an artifact you built yourself (the
    /// artifact's directory becomes an installable plugin directory).
    Package {
        /// The artifact (`.wasm` component or native library).
        artifact: PathBuf,
    },
    /// Start a new rail from the template: `rail/`, `native/` and `wasm/`
    /// crates, named, compiling and formatted, with a README.
    New {
        /// The rail id: lower-case letters, digits and '-'.
        name: String,
        /// The directions it serves: `<from>:<to>` (or `'<from>-><to>'`)
        /// pairs of gasless EVM chains, by name or id, comma-separated
        /// (default `base:arbitrum`).
        #[arg(long)]
        lanes: Option<scaffold::Lanes>,
        /// The directory to create (default `plugins/<name>` inside a relay
        /// clone, `<name>` elsewhere).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Outside a relay clone: the relay checkout to build against
        /// (default: the one this binary was built from).
        #[arg(long)]
        relay: Option<PathBuf>,
    },
}

/// `plugins.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PackagingList {
    rails: BTreeMap<String, RailEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RailEntry {
    packagings: Vec<relay_registry::PluginKind>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Build {
            rails,
            list,
            out,
            release,
            only,
        } => build(rails, list, out, (release, only)).await,
        Command::Package { artifact } => {
            let kind = match artifact.extension().and_then(|e| e.to_str()) {
                Some("wasm") => relay_registry::PluginKind::Wasm,
                _ => relay_registry::PluginKind::Native,
            };
            let m = relay_runtime::package::write_manifest(&artifact, kind).await?;
            println!("{}", m.to_toml());
            Ok(())
        }
        Command::New {
            name,
            lanes,
            out,
            relay,
        } => new(&name, lanes, out, relay),
    }
}

fn new(
    name: &str,
    lanes: Option<scaffold::Lanes>,
    out: Option<PathBuf>,
    relay: Option<PathBuf>,
) -> anyhow::Result<()> {
    let name = scaffold::RailName::parse(name)?;
    let dir = out.unwrap_or_else(|| {
        let in_clone = scaffold::standalone::enclosing_relay(Path::new("plugins/x")).is_some();
        match in_clone {
            true => PathBuf::from("plugins").join(name.id()),
            false => PathBuf::from(name.id()),
        }
    });
    let id = name.id().to_string();
    let made = scaffold::new_rail(&scaffold::NewRail {
        name,
        lanes: lanes.map(|l| l.0),
        dir,
        relay,
    })?;
    if !made.formatted {
        eprintln!("note: rustfmt did not run; run `cargo fmt` on the new crates");
    }
    let home = match &made.home {
        scaffold::Home::Member(root) => {
            format!("a member of the relay workspace at {}", root.display())
        }
        scaffold::Home::Standalone(relay) => {
            format!("its own workspace, built against {}", relay.display())
        }
    };
    println!(
        "wrote the {} rail in {} (rail/, native/, wasm/, fixture/; {home}); next: {}/README.md",
        id,
        made.dir.display(),
        made.dir.display()
    );
    Ok(())
}

fn parse_kind(s: &str) -> Result<relay_registry::PluginKind, String> {
    match s {
        "native" => Ok(relay_registry::PluginKind::Native),
        "wasm" => Ok(relay_registry::PluginKind::Wasm),
        other => Err(format!("`{other}`: a packaging is `native` or `wasm`")),
    }
}

async fn build(
    rails: Vec<String>,
    list: PathBuf,
    out: PathBuf,
    (release, only): (bool, Option<relay_registry::PluginKind>),
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(&list).with_context(|| format!("reading {}", list.display()))?;
    let plan: PackagingList =
        toml::from_str(&text).with_context(|| format!("parsing {}", list.display()))?;
    let unknown: Vec<&String> = rails
        .iter()
        .filter(|r| !plan.rails.contains_key(*r))
        .collect();
    anyhow::ensure!(unknown.is_empty(), "not in {}: {unknown:?}", list.display());
    let ctx = build::Context::detect(release)?;
    let jobs: Vec<(&String, relay_registry::PluginKind)> = plan
        .rails
        .iter()
        .filter(|(rail, _)| rails.is_empty() || rails.contains(rail))
        .flat_map(|(rail, entry)| {
            let kinds = only.map_or_else(|| entry.packagings.clone(), |k| vec![k]);
            kinds.into_iter().map(move |k| (rail, k))
        })
        .collect();
    for (artifact, (rail, kind)) in build_all(&ctx, &jobs, &out)?.into_iter().zip(&jobs) {
        let m = relay_runtime::package::write_manifest(&artifact, *kind).await?;
        let dir = out.join(format!("{rail}-{}", kind.as_str()));
        println!("{} {} -> {}", m.plugin.id, kind.as_str(), dir.display());
    }
    Ok(())
}

/// Builds every `(rail, kind)` into `out/<rail>-<kind>`, the wasm builds
/// beside the native ones: they use another toolchain's target directory,
/// so neither waits on the other's lock, and a wasm build's single-threaded
/// link-time optimisation leaves a core to the native builds. Artifacts in
/// the order of `jobs`.
fn build_all(
    ctx: &build::Context,
    jobs: &[(&String, relay_registry::PluginKind)],
    out: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let one = |(rail, kind): &(&String, relay_registry::PluginKind)| {
        ctx.build(rail, *kind, &out.join(format!("{rail}-{}", kind.as_str())))
    };
    let is_wasm = |(_, kind): &&(&String, relay_registry::PluginKind)| {
        *kind == relay_registry::PluginKind::Wasm
    };
    let (wasm, native) = std::thread::scope(|s| {
        let wasm = s.spawn(|| jobs.iter().filter(is_wasm).map(one).collect::<Vec<_>>());
        let native: Vec<_> = jobs.iter().filter(|j| !is_wasm(j)).map(one).collect();
        (wasm.join(), native)
    });
    let (mut wasm, mut native) = (
        wasm.map_err(|_| anyhow::anyhow!("the wasm builds panicked"))?
            .into_iter(),
        native.into_iter(),
    );
    jobs.iter()
        .map(|j| {
            let next = if is_wasm(&j) {
                wasm.next()
            } else {
                native.next()
            };
            next.expect("one artifact per job")
        })
        .collect()
}
