//! Operator state rows.

use super::Store;
use relay_registry::{LaneState, OperatorState, OperatorStateStore, StateError};
use relay_types::now_ms;

fn err(e: sqlx::Error) -> StateError {
    StateError(e.to_string())
}

#[async_trait::async_trait]
impl OperatorStateStore for Store {
    async fn load_operator_state(&self) -> Result<OperatorState, StateError> {
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

    async fn set_rail_enabled(&self, rail: &str, enabled: bool) -> Result<(), StateError> {
        sqlx::query(
            "INSERT INTO operator_rails (rail_id, enabled, updated_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (rail_id) DO UPDATE SET enabled = excluded.enabled, updated_ms = excluded.updated_ms",
        )
        .bind(rail)
        .bind(enabled as i64)
        .bind(now_ms() as i64)
        .execute(self.pool())
        .await
        .map_err(err)?;
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
        .bind(now_ms() as i64)
        .execute(self.pool())
        .await
        .map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
