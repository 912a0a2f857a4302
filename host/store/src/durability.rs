//! When a commit reaches the disk.
//!
//! SQLite runs in WAL mode with `synchronous=NORMAL`: a commit is written
//! to the write-ahead log (the OS holds it, so a killed or crashed host
//! loses nothing) but not forced to the disk, which would cost one
//! `fdatasync` — milliseconds — per commit, and a route makes a dozen.
//! What a power cut may take back is only what the chain or the next
//! resume can tell again, because the host forces the log to the disk
//! ([`Durability::flush`]) at the two points where something leaves it:
//!
//! - a **planned transaction**, signed with its nonce, before it is
//!   broadcast ([`super::Store::journal`]): after a power cut the journal
//!   still names every transaction that may be on chain, so resume asks
//!   the chain about those very bytes and never signs a second one;
//! - a **new route** before its id is answered ([`super::Store::insert_route`]):
//!   a client never holds an id the host forgot.
//!
//! The log is sequential, so one flush also makes every earlier commit
//! durable (the route's state changes, the idempotency key, the `sent`
//! and `mined` journal rows up to then); flushes of concurrent routes
//! share the disk's write. Postgres commits are durable as they are
//! (`synchronous_commit` stays the server's), and an in-memory SQLite
//! database has nothing to flush.

use std::path::{Path, PathBuf};

use super::StoreError;

/// Forces committed SQLite writes to the disk.
#[derive(Debug, Clone)]
pub(crate) struct Durability {
    /// The database file, when there is one on disk.
    db: Option<PathBuf>,
}

impl Durability {
    /// For the SQLite database at `db` (`None`: in memory or Postgres).
    pub(crate) fn new(db: Option<&Path>) -> Self {
        Durability {
            db: db.map(Path::to_path_buf),
        }
    }

    /// Forces every commit made so far to the disk: the write-ahead log
    /// (`<db>-wal`), or the database file itself when there is no log
    /// (a checkpoint moved everything into it and synced it).
    pub(crate) async fn flush(&self) -> Result<(), StoreError> {
        let Some(db) = self.db.clone() else {
            return Ok(());
        };
        tokio::task::spawn_blocking(move || sync_log_or_db(&db))
            .await
            .map_err(|e| StoreError::Io(std::io::Error::other(e)))?
            .map_err(StoreError::Io)
    }
}

fn sync_log_or_db(db: &Path) -> std::io::Result<()> {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    match std::fs::File::open(&wal) {
        Ok(log) => log.sync_data(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::File::open(db)?.sync_data(),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn flushes_the_log_the_file_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("relay.db");
        // No database file at all: an error, not a silent success.
        assert!(Durability::new(Some(&db)).flush().await.is_err());
        std::fs::write(&db, b"").unwrap();
        Durability::new(Some(&db)).flush().await.unwrap();
        std::fs::write(dir.path().join("relay.db-wal"), b"").unwrap();
        Durability::new(Some(&db)).flush().await.unwrap();
        Durability::new(None).flush().await.unwrap();
    }
}
