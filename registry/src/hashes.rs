//! Artifact checksums, remembered between rescans.
//!
//! Hot reload rescans the plugins directory every couple of seconds; hashing
//! every artifact (megabytes each, two packagings per rail) each time cost
//! about 1 % of a busy host's CPU. [`Hashes`] keeps each file's checksum
//! with the file's identity and change stamp — device, inode, length,
//! modification time and status-change time — and hashes again only when
//! one of them differs.
//!
//! Why that still catches tampering: every write through the file system
//! sets the status-change time (`ctime`) to the current time, and no
//! system call sets it to anything else (`utimensat` can put `mtime` back,
//! and that too moves `ctime`); replacing the file changes its inode. A
//! changed artifact with an unchanged stamp takes a write beneath the file
//! system or a rewound clock. File systems stamp times from a coarse
//! clock, so two writes a few milliseconds apart can carry the same
//! stamp: as git does with "racily clean" entries, a checksum is only
//! remembered once its file's last change is [`RACY`] old. Where the
//! platform gives no `ctime`, every rescan hashes.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, SystemTime},
};

use crate::discovery::sha256_file;

/// How old a file's last change must be before its checksum is
/// remembered (module docs).
pub const RACY: Duration = Duration::from_secs(2);

/// What identifies one version of a file's contents (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    #[cfg(unix)]
    fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(path).ok()?;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn of(_: &Path) -> Option<Stamp> {
        None
    }

    /// Whether the file last changed at least `window` ago.
    fn settled(&self, window: Duration) -> bool {
        let (secs, nanos) = self.ctime;
        let changed = u64::try_from(secs)
            .ok()
            .map(|s| SystemTime::UNIX_EPOCH + Duration::new(s, nanos.clamp(0, 999_999_999) as u32));
        changed.is_some_and(|c| {
            SystemTime::now()
                .duration_since(c)
                .is_ok_and(|age| age >= window)
        })
    }
}

/// Checksums remembered by file (module docs).
#[derive(Debug)]
pub struct Hashes {
    kept: Mutex<HashMap<PathBuf, (Stamp, String)>>,
    hashed: std::sync::atomic::AtomicU64,
    racy: Duration,
}

impl Default for Hashes {
    fn default() -> Self {
        Self::with_racy_window(RACY)
    }
}

impl Hashes {
    /// Remembers a checksum once its file's last change is `racy` old.
    pub fn with_racy_window(racy: Duration) -> Self {
        Hashes {
            kept: Mutex::default(),
            hashed: Default::default(),
            racy,
        }
    }

    /// sha256 of `path`, lower-case hex: the remembered one while the
    /// file's stamp is unchanged, else read and hashed afresh.
    pub fn sha256(&self, path: &Path) -> std::io::Result<String> {
        let before = Stamp::of(path);
        if let Some(stamp) = before {
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, sha)) = kept.get(path).filter(|(s, _)| *s == stamp) {
                return Ok(sha.clone());
            }
        }
        let sha = sha256_file(path)?;
        self.hashed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Kept only when the file did not change while it was read and
        // its stamp is past the racy window.
        let settled = before.filter(|s| s.settled(self.racy) && Stamp::of(path) == Some(*s));
        if let Some(stamp) = settled {
            self.kept
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(path.to_path_buf(), (stamp, sha.clone()));
        }
        Ok(sha)
    }

    /// How many times a file was actually read and hashed.
    pub fn hashed(&self) -> u64 {
        self.hashed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_settled_file_is_hashed_again_only_when_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rail.wasm");
        std::fs::write(&file, b"version one").unwrap();
        let hashes = Hashes::with_racy_window(Duration::ZERO);
        let first = hashes.sha256(&file).unwrap();
        assert_eq!(hashes.sha256(&file).unwrap(), first);
        assert_eq!(hashes.hashed(), 1, "unchanged: remembered");
        std::fs::write(&file, b"version two, longer").unwrap();
        let second = hashes.sha256(&file).unwrap();
        assert_eq!(second, sha256_file(&file).unwrap());
        assert_ne!(second, first, "a changed file is hashed afresh");
        assert_eq!(hashes.hashed(), 2);
    }

    #[test]
    fn a_file_changed_within_the_racy_window_is_not_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rail.wasm");
        std::fs::write(&file, b"just written").unwrap();
        let hashes = Hashes::with_racy_window(Duration::from_secs(3_600));
        hashes.sha256(&file).unwrap();
        hashes.sha256(&file).unwrap();
        assert_eq!(hashes.hashed(), 2, "hashed on every read");
    }
}
