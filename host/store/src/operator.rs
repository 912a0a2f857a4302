//! Operator state rows.
//!
//! Every quote reads the operator state, and on SQLite a query is a hop to
//! the connection's own thread. So on SQLite the last reading is kept and
//! served again while nothing changed: every operator write — this host's
//! (the admin page) or another process's (`relay rails …` on the same
//! data directory) — touches a marker file beside the database once it has
//! committed (`<db>-operator`), and a read whose marker (and database
//! file) stamp is the one its reading was taken under needs no query. The
//! stamps themselves (two `stat`s) are looked at no more than once every
//! [`RECHECK`]: under load that is a syscall pair per millisecond instead
//! of per quote. This host's own writes clear the reading at once; a
//! switch thrown by the CLI is seen by the quotes from a millisecond after
//! its commit (a CLI run alone takes longer than that). On Postgres (and
//! in-memory SQLite) every read queries.

use std::{
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, Instant, SystemTime},
};

use super::Store;
use relay_registry::{LaneState, OperatorState, OperatorStateStore, StateError};

fn err(e: sqlx::Error) -> StateError {
    StateError(e.to_string())
}

/// What identifies one state of the marker and the database file.
type Stamp = [Option<(SystemTime, u64, u64)>; 2];

/// How long a reading is served before the stamps are looked at again.
pub(crate) const RECHECK: Duration = Duration::from_millis(1);

/// The kept reading: the stamps it was taken under, when they were last
/// looked at, and the state.
type Kept = (Stamp, Instant, OperatorState);

/// The last operator-state reading on SQLite (module docs).
#[derive(Debug)]
pub(crate) struct OperatorCache {
    /// The marker and the database file; none: always read.
    files: Option<[PathBuf; 2]>,
    last: Mutex<Option<Kept>>,
}

impl OperatorCache {
    /// The cache for the SQLite database at `db` (none: no cache).
    pub(crate) fn new(db: Option<PathBuf>) -> Self {
        OperatorCache {
            files: db.map(|db| [Self::marker_of(&db), db]),
            last: Mutex::new(None),
        }
    }

    fn marker_of(db: &Path) -> PathBuf {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push("-operator");
        db.with_file_name(name)
    }

    fn stamp(files: &[PathBuf; 2]) -> Stamp {
        use std::os::unix::fs::MetadataExt as _;
        files.each_ref().map(|f| {
            let m = std::fs::metadata(f).ok()?;
            Some((m.modified().ok()?, m.len(), m.ino()))
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Kept>> {
        self.last.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kept reading, if nothing changed since it was taken; else the
    /// stamp to take a new one under.
    fn get(&self) -> Result<OperatorState, Option<Stamp>> {
        let Some(files) = &self.files else {
            return Err(None);
        };
        if let Some((_, checked, state)) = &*self.lock() {
            if checked.elapsed() < RECHECK {
                return Ok(state.clone());
            }
        }
        let now = Self::stamp(files);
        match &mut *self.lock() {
            Some((at, checked, state)) if *at == now => {
                *checked = Instant::now();
                Ok(state.clone())
            }
            _ => Err(Some(now)),
        }
    }

    fn put(&self, stamp: Stamp, state: &OperatorState) {
        *self.lock() = Some((stamp, Instant::now(), state.clone()));
    }

    /// After an operator write committed: tells every reader (any process)
    /// to read again. The marker grows by a line per write (its length
    /// changes even within one tick of the file clock), and starts over
    /// past [`MARKER_MAX_BYTES`].
    fn touch(&self) {
        let Some([marker, _]) = &self.files else {
            return;
        };
        if let Err(e) = append_line(marker) {
            tracing::warn!(marker = %marker.display(), error = %e, "operator change marker not written; other processes on this database see the change when they restart");
        }
        *self.lock() = None;
    }
}

/// The marker starts over past this size.
const MARKER_MAX_BYTES: u64 = 64 * 1024;

fn append_line(marker: &Path) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(marker)?;
    if f.metadata()?.len() > MARKER_MAX_BYTES {
        f.set_len(0)?;
    }
    let at = std::time::UNIX_EPOCH.elapsed().unwrap_or_default();
    writeln!(f, "{}", at.as_nanos())
}

impl Store {
    async fn read_operator_state(&self) -> Result<OperatorState, StateError> {
        let mut state = OperatorState::default();
        let rails: Vec<(String, i64)> =
            sqlx::query_as("SELECT rail_id, enabled FROM operator_rails")
                .fetch_all(self.pool())
                .await
                .map_err(err)?;
        for (rail, enabled) in rails {
            state.rails.entry(rail).or_default().enabled = enabled != 0;
        }
        let lanes: Vec<(String, String, i64)> =
            sqlx::query_as("SELECT rail_id, lane, execute_ready FROM operator_lanes")
                .fetch_all(self.pool())
                .await
                .map_err(err)?;
        for (rail, lane, ready) in lanes {
            let entry = state.rails.entry(rail).or_default();
            entry.lanes.insert(
                lane,
                LaneState {
                    execute_ready: ready != 0,
                },
            );
        }
        Ok(state)
    }
}

#[async_trait::async_trait]
impl OperatorStateStore for Store {
    async fn load_operator_state(&self) -> Result<OperatorState, StateError> {
        let stamp = match self.operator.get() {
            Ok(kept) => return Ok(kept),
            Err(stamp) => stamp,
        };
        let state = self.read_operator_state().await?;
        if let Some(stamp) = stamp {
            self.operator.put(stamp, &state);
        }
        Ok(state)
    }

    async fn set_rail_enabled(&self, rail: &str, enabled: bool) -> Result<(), StateError> {
        sqlx::query(
            "INSERT INTO operator_rails (rail_id, enabled, updated_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (rail_id) DO UPDATE SET enabled = excluded.enabled, updated_ms = excluded.updated_ms",
        )
        .bind(rail)
        .bind(enabled as i64)
        .bind(self.now_ms() as i64)
        .execute(self.pool())
        .await
        .map_err(err)?;
        self.operator.touch();
        Ok(())
    }

    async fn set_lane_execute_ready(
        &self,
        rail: &str,
        lane: &str,
        ready: bool,
    ) -> Result<(), StateError> {
        sqlx::query(
            "INSERT INTO operator_lanes (rail_id, lane, execute_ready, updated_ms) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (rail_id, lane) DO UPDATE SET execute_ready = excluded.execute_ready, updated_ms = excluded.updated_ms",
        )
        .bind(rail)
        .bind(lane)
        .bind(ready as i64)
        .bind(self.now_ms() as i64)
        .execute(self.pool())
        .await
        .map_err(err)?;
        self.operator.touch();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another process's switches (a second store on the same file, as the
    /// CLI opens one) are seen by the first read [`RECHECK`] after they
    /// committed, however close together they come. (The wait is the
    /// documented bound itself, not a stand-in for synchronisation: the
    /// kept reading was checked before the writes.)
    #[tokio::test]
    async fn a_switch_written_elsewhere_is_seen_by_the_next_read() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("r.db").display());
        let host = Store::connect(&url).await.unwrap();
        let cli = Store::connect(&url).await.unwrap();
        assert!(host
            .load_operator_state()
            .await
            .unwrap()
            .rail_enabled("lifi"));
        for round in 0..20 {
            let on = round % 2 == 1;
            cli.set_rail_enabled("lifi", on).await.unwrap();
            cli.set_lane_execute_ready("lifi", "evm->evm", on)
                .await
                .unwrap();
            std::thread::sleep(RECHECK);
            let seen = host.load_operator_state().await.unwrap();
            assert_eq!(seen.rail_enabled("lifi"), on, "round {round}");
            assert_eq!(
                seen.lane_execute_ready("lifi", "evm->evm", true),
                on,
                "round {round}"
            );
        }
    }

    #[tokio::test]
    async fn operator_state_survives_a_reconnect() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("r.db").display());
        let store = Store::connect(&url).await.unwrap();
        store.set_rail_enabled("lifi", false).await.unwrap();
        store
            .set_lane_execute_ready("btc", "evm->bitcoin", false)
            .await
            .unwrap();
        store
            .set_lane_execute_ready("btc", "evm->bitcoin", true)
            .await
            .unwrap();
        drop(store);
        let store = Store::connect(&url).await.unwrap();
        let s = store.load_operator_state().await.unwrap();
        assert!(!s.rail_enabled("lifi"));
        assert!(s.rail_enabled("btc"));
        assert!(s.lane_execute_ready("btc", "evm->bitcoin", true));
    }
}
