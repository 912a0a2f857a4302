//! Building one rail in one packaging.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{bail, Context as _};
use relay_registry::PluginKind;

/// Where cargo puts things, and how to build.
pub struct Context {
    workspace: PathBuf,
    target_dir: PathBuf,
    release: bool,
}

impl Context {
    /// Reads the workspace layout from `cargo metadata`.
    pub fn detect(release: bool) -> anyhow::Result<Self> {
        let out = Command::new(cargo())
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .context("running cargo metadata")?;
        anyhow::ensure!(out.status.success(), "cargo metadata failed");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let path = |k: &str| PathBuf::from(v[k].as_str().unwrap_or_default());
        Ok(Context {
            workspace: path("workspace_root"),
            target_dir: path("target_directory"),
            release,
        })
    }

    /// Builds `rail` as `kind` and copies the artifact into `dir`.
    pub fn build(&self, rail: &str, kind: PluginKind, dir: &Path) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        match kind {
            PluginKind::Native => self.native(rail, dir),
            PluginKind::Wasm => self.wasm(rail, dir),
        }
    }

    fn native(&self, rail: &str, dir: &Path) -> anyhow::Result<PathBuf> {
        let mut cmd = Command::new(cargo());
        cmd.current_dir(&self.workspace).args([
            "build",
            "-p",
            "relay-native-shell",
            "--features",
            rail,
        ]);
        if self.release {
            cmd.arg("--release");
        }
        run(&mut cmd)?;
        let profile = if self.release { "release" } else { "debug" };
        let built = self
            .target_dir
            .join(profile)
            .join(dylib_name("relay_native_shell"));
        let dest = dir.join(dylib_name(rail));
        // Replace, never overwrite in place: a running host may have the old
        // file mapped (native libraries cannot be unloaded).
        let tmp = dir.join(format!(".{}.tmp", dylib_name(rail)));
        std::fs::copy(&built, &tmp).with_context(|| format!("copying {}", built.display()))?;
        std::fs::rename(&tmp, &dest)?;
        Ok(dest)
    }

    fn wasm(&self, rail: &str, dir: &Path) -> anyhow::Result<PathBuf> {
        let dest = dir.join(format!("{rail}.wasm"));
        let tmp = dir.join(format!(".{rail}.wasm.tmp"));
        let script = self.workspace.join("plugins/build-wasm.sh");
        let mut cmd = Command::new("bash");
        cmd.current_dir(&self.workspace)
            .arg(&script)
            .arg("relay-wasm-shell")
            .arg(&tmp)
            .env("RELAY_WASM_FEATURES", rail);
        run(&mut cmd)?;
        std::fs::rename(&tmp, &dest)?;
        Ok(dest)
    }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn dylib_name(stem: &str) -> String {
    format!(
        "{}{stem}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let status = cmd.status().with_context(|| format!("running {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}
