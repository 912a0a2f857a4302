//! `relay-componentize <core.wasm> <out.wasm>`: turns the core wasm module of
//! a rail built with `relay-plugin-wasm` for `wasm32-unknown-unknown` into a
//! validated component of the `relay:rail` world.
//!
//! The core module carries its world in the custom section wit-bindgen
//! emits; `wit_component::ComponentEncoder` wraps it into a component and
//! validates the result. The tool then refuses any component that imports
//! something outside the `relay:rail` package (WASI, for instance): a rail
//! reaches the world only through the host's capabilities. No WASI adapter
//! is ever linked in.
//!
//! Usually run through `plugins/build-wasm.sh`, not by hand.

use std::{
    fs,
    path::{Path, PathBuf},
};

use anyhow::{bail, Context, Result};
use wit_component::{ComponentEncoder, DecodedWasm};

/// The only package a rail component may import from.
const ALLOWED_IMPORT_PREFIX: &str = "relay:rail/";
/// What every rail component exports (the world's `export rail`), with or
/// without a version suffix.
const REQUIRED_EXPORT: &str = "relay:rail/rail";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        bail!("usage: relay-componentize <core.wasm> <out.wasm>");
    };
    let module = fs::read(input).with_context(|| format!("reading {input}"))?;
    let component = componentize(&module).with_context(|| format!("componentizing {input}"))?;
    write_atomically(Path::new(output), &component)?;
    eprintln!(
        "relay-componentize: {output} ({} bytes, from {} byte core module)",
        component.len(),
        module.len()
    );
    Ok(())
}

/// Wraps a core module into a component, validates it and checks its imports.
fn componentize(module: &[u8]) -> Result<Vec<u8>> {
    let component = ComponentEncoder::default()
        .module(module)
        .context("the module has no relay:rail world (was it built with relay-plugin-wasm?)")?
        .validate(true)
        .encode()
        .context("encoding the component")?;
    let (foreign, exports_rail) = check_world(&component)?;
    if !exports_rail {
        bail!(
            "the component does not export {REQUIRED_EXPORT}: the module has no relay:rail world \
             (was it built with relay-plugin-wasm?)"
        );
    }
    if !foreign.is_empty() {
        bail!(
            "the component imports {} outside {ALLOWED_IMPORT_PREFIX}*; rails may only use host \
             capabilities (build for wasm32-unknown-unknown, not wasi)",
            foreign.join(", ")
        );
    }
    Ok(component)
}

/// The component's imports outside `relay:rail`, and whether it exports
/// the rail interface.
fn check_world(component: &[u8]) -> Result<(Vec<String>, bool)> {
    let decoded = wit_component::decode(component).context("decoding the component")?;
    let DecodedWasm::Component(resolve, world) = decoded else {
        bail!("the output is a WIT package, not a component");
    };
    let world = &resolve.worlds[world];
    let foreign = world
        .imports
        .keys()
        .map(|key| resolve.name_world_key(key))
        .filter(|name| !name.starts_with(ALLOWED_IMPORT_PREFIX))
        .collect();
    let exports_rail = world
        .exports
        .keys()
        .any(|key| resolve.name_world_key(key).starts_with(REQUIRED_EXPORT));
    Ok((foreign, exports_rail))
}

/// Writes `bytes` to `path` through a temporary file in the same directory,
/// so a reader never sees half a component.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = PathBuf::from(path);
    tmp.as_mut_os_string()
        .push(format!(".tmp{}", std::process::id()));
    fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
}
