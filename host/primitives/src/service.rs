//! Creating, reading and cancelling records over the store.

use crate::{
    cancel::{self, CancelToken, Canceller, Guard, Refused},
    record::{
        conditional_view, schedule_view, Authority, Batch, Cancelled, Conditional, ConditionalView,
        Schedule, ScheduleView,
    },
    time::run_key,
    watcher::{merge, perform, Runner},
};
use relay_store::{PrimitiveRow, PrimitiveStore, RunRow, StoreError};
use relay_types::clock::SharedClock;
use serde_json::{json, Value};
use std::sync::Arc;

/// The three record kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `batch_…`.
    Batch,
    /// `sched_…`.
    Schedule,
    /// `cond_…`.
    Conditional,
}

impl Kind {
    /// The stored kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Batch => "batch",
            Kind::Schedule => "schedule",
            Kind::Conditional => "conditional",
        }
    }

    /// The id prefix (spec §2.1).
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Batch => "batch_",
            Kind::Schedule => "sched_",
            Kind::Conditional => "cond_",
        }
    }

    /// States a DELETE may cancel.
    fn cancellable(self) -> &'static [&'static str] {
        match self {
            Kind::Batch => &[],
            Kind::Schedule => &["active"],
            Kind::Conditional => &["armed"],
        }
    }
}

/// Why a record operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No record of that kind has the id.
    #[error("no {kind} has id {id:?}")]
    NotFound {
        /// The kind asked for.
        kind: &'static str,
        /// The id asked for.
        id: String,
    },
    /// The record has finished and can no longer be cancelled.
    #[error("{id} is {status}: only an active schedule or an armed conditional can be cancelled")]
    Finished {
        /// The record.
        id: String,
        /// Its state.
        status: String,
    },
    /// The batch has been run (or is running): a batch runs once.
    #[error("{id} is {status}: a batch runs once; GET it for its legs' runs")]
    AlreadyRun {
        /// The batch.
        id: String,
        /// Its state.
        status: String,
    },
    /// A cancel came with neither the owner's credential nor a cancel
    /// token ([`crate::cancel`]); the record is unchanged.
    #[error("{id}: cancelling needs the record's cancel token (x-cancel-token, answered as cancelToken at creation) or the owner's credential (Authorization: Bearer <owner token>)")]
    CancelUnauthenticated {
        /// The record.
        id: String,
    },
    /// A cancel came with a token that is not the record's; the record is
    /// unchanged.
    #[error("{id}: the cancel token sent is not this record's; send the cancelToken its creation answered, or the owner's credential")]
    CancelForbidden {
        /// The record.
        id: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Records over a store.
#[derive(Clone)]
pub struct Primitives {
    store: Arc<dyn PrimitiveStore>,
    clock: SharedClock,
}

impl std::fmt::Debug for Primitives {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Primitives")
    }
}

fn corrupt(id: &str, e: serde_json::Error) -> ServiceError {
    ServiceError::Store(StoreError::Corrupt(format!("{id}: {e}")))
}

impl Primitives {
    /// Over `store`, timed by `clock`.
    pub fn new(store: Arc<dyn PrimitiveStore>, clock: SharedClock) -> Self {
        Primitives { store, clock }
    }

    async fn insert(
        &self,
        kind: Kind,
        id: &str,
        status: &str,
        body: String,
        next_ms: Option<u64>,
    ) -> Result<(), ServiceError> {
        let row = PrimitiveRow {
            id: id.into(),
            kind: kind.as_str().into(),
            status: status.into(),
            body,
            next_ms,
            seq: 0,
            created_ms: self.clock.now_ms(),
        };
        Ok(self.store.insert_primitive(&row).await?)
    }

    async fn load(&self, kind: Kind, id: &str) -> Result<(PrimitiveRow, Vec<Value>), ServiceError> {
        let not_found = || ServiceError::NotFound {
            kind: kind.as_str(),
            id: id.into(),
        };
        if !id.starts_with(kind.prefix()) {
            return Err(not_found());
        }
        let row = self.store.primitive(id).await?.ok_or_else(not_found)?;
        if row.kind != kind.as_str() {
            return Err(not_found());
        }
        let runs = self.store.primitive_runs(id).await?;
        let runs = runs
            .iter()
            .map(|r| serde_json::from_str(&r.body).map_err(|e| corrupt(id, e)))
            .collect::<Result<_, _>>()?;
        Ok((row, runs))
    }

    /// Stores a new schedule (`active`, first run due at `at`).
    /// `cancelToken` is in this answer only.
    #[tracing::instrument(skip_all, fields(id))]
    pub async fn create_schedule(&self, mut s: Schedule) -> Result<ScheduleView, ServiceError> {
        let id = crate::new_id(Kind::Schedule.prefix());
        tracing::Span::current().record("id", id.as_str());
        let secret = CancelToken::new();
        s.cancel_hash = Some(secret.hash.clone());
        let body = serde_json::to_string(&s).map_err(|e| corrupt(&id, e))?;
        let next = s.due_ms(0);
        self.insert(Kind::Schedule, &id, "active", body, Some(next))
            .await?;
        let mut view = schedule_view(&id, s, "active", (0, Some(next)), Vec::new());
        view.cancel_token = Some(secret.token);
        Ok(view)
    }

    /// A schedule.
    pub async fn schedule(&self, id: &str) -> Result<ScheduleView, ServiceError> {
        let (row, runs) = self.load(Kind::Schedule, id).await?;
        let s: Schedule = serde_json::from_str(&row.body).map_err(|e| corrupt(id, e))?;
        Ok(schedule_view(
            id,
            s,
            &row.status,
            (row.seq, row.next_ms),
            runs,
        ))
    }

    /// Stores a new conditional (`armed`; looked at from now on, or from
    /// `when.at` for `timeAfter`).
    /// `cancelToken` is in this answer only.
    #[tracing::instrument(skip_all, fields(id))]
    pub async fn create_conditional(
        &self,
        mut c: Conditional,
    ) -> Result<ConditionalView, ServiceError> {
        let id = crate::new_id(Kind::Conditional.prefix());
        tracing::Span::current().record("id", id.as_str());
        let secret = CancelToken::new();
        c.cancel_hash = Some(secret.hash.clone());
        let body = serde_json::to_string(&c).map_err(|e| corrupt(&id, e))?;
        let next = match c.when {
            crate::record::When::TimeAfter { at } => at.min(c.expires_at),
            _ => c.created_at,
        };
        self.insert(
            Kind::Conditional,
            &id,
            "armed",
            body,
            Some(next.saturating_mul(1000)),
        )
        .await?;
        let mut view = conditional_view(&id, c, "armed", Vec::new());
        view.cancel_token = Some(secret.token);
        Ok(view)
    }

    /// A conditional.
    pub async fn conditional(&self, id: &str) -> Result<ConditionalView, ServiceError> {
        let (row, runs) = self.load(Kind::Conditional, id).await?;
        let c: Conditional = serde_json::from_str(&row.body).map_err(|e| corrupt(id, e))?;
        Ok(conditional_view(id, c, &row.status, runs))
    }

    /// Stores a planned batch (its id already set).
    pub async fn create_batch(&self, b: &Batch) -> Result<(), ServiceError> {
        let body = serde_json::to_string(b).map_err(|e| corrupt(&b.id, e))?;
        self.insert(Kind::Batch, &b.id, &b.status, body, None).await
    }

    /// A batch: its plan, state and legs' runs.
    pub async fn batch(&self, id: &str) -> Result<Batch, ServiceError> {
        let (row, runs) = self.load(Kind::Batch, id).await?;
        let mut b: Batch = serde_json::from_str(&row.body).map_err(|e| corrupt(id, e))?;
        b.status = row.status;
        b.runs = runs;
        Ok(b)
    }

    /// Runs a planned batch once (`planned` → `running` → `completed`,
    /// `partial` or `failed`): each leg in order as its own run `index+1`
    /// through [`perform`] — live (through `runner`, under the key
    /// `<id>:<index+1>`) when `gate` is on and the batch is live with the
    /// owner's authority, else simulated. A leg that fails is recorded
    /// and the next still runs. A batch no longer `planned` is refused —
    /// unless `request_key` (the run request's `x-idempotency-key`) is the
    /// key its run was asked with: then the batch as it stands.
    #[tracing::instrument(skip_all, fields(id, live))]
    pub async fn run_batch(
        &self,
        id: &str,
        (runner, gate): (&dyn Runner, bool),
        request_key: Option<&str>,
    ) -> Result<Batch, ServiceError> {
        let b = self.batch(id).await?;
        let now = self.clock.now_ms();
        if !self
            .store
            .move_primitive(id, "planned", "running", now)
            .await?
        {
            let b = self.batch(id).await?;
            let first = b.runs.first().and_then(|r| r["requestKey"].as_str());
            if request_key.is_some() && first == request_key {
                return Ok(b);
            }
            return Err(ServiceError::AlreadyRun {
                id: id.into(),
                status: b.status,
            });
        }
        let live = gate && b.live && b.authority == Some(Authority::Owner);
        tracing::Span::current().record("live", live);
        let mut ok = 0;
        for leg in &b.legs {
            let run = self.run_leg(id, (runner, live), leg, request_key).await?;
            ok += usize::from(run["ok"] != json!(false));
        }
        let status = match ok {
            0 => "failed",
            n if n == b.legs.len() => "completed",
            _ => "partial",
        };
        let now = self.clock.now_ms();
        self.store
            .move_primitive(id, "running", status, now)
            .await?;
        self.batch(id).await
    }

    /// Runs and records one leg of batch `id`.
    async fn run_leg(
        &self,
        id: &str,
        (runner, live): (&dyn Runner, bool),
        leg: &crate::record::Leg,
        request_key: Option<&str>,
    ) -> Result<Value, ServiceError> {
        let seq = leg.index as u64 + 1;
        let mut run = perform(runner, live, (id, seq), &leg.route)
            .await
            .unwrap_or_else(|why| json!({"simulated": false, "ok": false, "error": why}));
        let status = match (&run["routeId"], run["simulated"] == json!(true)) {
            (_, true) => "simulated",
            (Value::String(_), _) => "executed",
            _ => "failed",
        };
        let now = self.clock.now_ms();
        if let Some(s) = run.get_mut("status").map(Value::take) {
            run["routeStatus"] = s;
        }
        merge(
            &mut run,
            json!({"index": leg.index, "seq": seq, "key": run_key(id, seq), "status": status, "at": now / 1000}),
        );
        if let Some(k) = request_key {
            run["requestKey"] = json!(k);
        }
        let row = RunRow {
            primitive_id: id.into(),
            seq,
            run_key: run_key(id, seq),
            body: run.to_string(),
            created_ms: now,
        };
        self.store.record_run(&row).await?;
        Ok(run)
    }

    /// Cancels an active schedule or an armed conditional for `who` (the
    /// owner, or the holder of the record's cancel token: [`crate::cancel`];
    /// anyone else is refused and the record is left as it was);
    /// cancelling a cancelled record answers the same. A finished record
    /// is refused.
    #[tracing::instrument(skip_all, fields(id, owner = matches!(who, Canceller::Owner)))]
    pub async fn cancel(
        &self,
        kind: Kind,
        id: &str,
        who: Canceller<'_>,
    ) -> Result<Cancelled, ServiceError> {
        let (row, _) = self.load(kind, id).await?;
        let guard: Guard = serde_json::from_str(&row.body).map_err(|e| corrupt(id, e))?;
        cancel::authorize(guard.cancel_hash.as_deref(), who).map_err(|r| match r {
            Refused::Unauthenticated => ServiceError::CancelUnauthenticated { id: id.into() },
            Refused::WrongToken => ServiceError::CancelForbidden { id: id.into() },
        })?;
        let now = self.clock.now_ms();
        let done = self
            .store
            .cancel_primitive(id, kind.as_str(), kind.cancellable(), now)
            .await?;
        if !done && row.status != "cancelled" {
            let status = match self.store.primitive(id).await? {
                Some(r) => r.status,
                None => row.status,
            };
            if status != "cancelled" {
                return Err(ServiceError::Finished {
                    id: id.into(),
                    status,
                });
            }
        }
        Ok(Cancelled {
            id: id.into(),
            status: "cancelled".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        record::{Leg, NOTE},
        watcher::{MockRunner, RunResult},
    };

    /// Refuses a leg of amount "0", accepts the others as a new route; and
    /// fails the test unless it ran exactly `times` legs.
    fn legs(times: usize) -> MockRunner {
        let mut legs = MockRunner::new();
        legs.expect_run()
            .times(times)
            .returning(|route, key| match route["amount"] == "0" {
                true => RunResult::Failed(json!({"error": "no", "errorCode": "AMOUNT_TOO_LOW"})),
                false => {
                    RunResult::Executed(json!({"id": format!("r-{key}"), "status": "BRIDGING"}))
                }
            });
        legs
    }

    async fn batch(p: &Primitives, amounts: &[&str]) -> String {
        let b = Batch {
            id: crate::new_id(Kind::Batch.prefix()),
            status: "planned".into(),
            live: true,
            authority: Some(Authority::Owner),
            legs: (0..amounts.len())
                .map(|index| Leg {
                    index,
                    route: json!({"amount": amounts[index]}),
                    plan: json!({}),
                })
                .collect(),
            warnings: Vec::new(),
            created_at: 1,
            note: NOTE.into(),
            runs: Vec::new(),
        };
        p.create_batch(&b).await.unwrap();
        b.id
    }

    #[tokio::test]
    async fn a_schedule_is_cancelled_only_by_the_owner_or_its_own_token() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/c.db?mode=rwc", dir.path().display());
        let store = relay_store::Store::connect(&url).await.unwrap();
        let p = Primitives::new(Arc::new(store), relay_types::clock::system());
        let body = relay_wire::decode(&json!({"everySeconds": 60, "count": 3})).unwrap();
        let s = crate::record::Schedule::from_request(&body, json!({}), 1_000).unwrap();
        let mine = p.create_schedule(s.clone()).await.unwrap();
        let token = mine.cancel_token.clone().expect("the create answer has it");
        let theirs = p.create_schedule(s).await.unwrap();
        let other = theirs.cancel_token.unwrap();
        let stored = p.store.primitive(&mine.id).await.unwrap().unwrap();
        assert!(
            !stored.body.contains(&token),
            "kept hashed: {}",
            stored.body
        );
        assert!(p.schedule(&mine.id).await.unwrap().cancel_token.is_none());
        for (who, refused) in [
            (Canceller::Anonymous, "unauthenticated"),
            (Canceller::Token(&other), "forbidden"),
        ] {
            let e = p.cancel(Kind::Schedule, &mine.id, who).await.unwrap_err();
            let ok = match e {
                ServiceError::CancelUnauthenticated { .. } => refused == "unauthenticated",
                ServiceError::CancelForbidden { .. } => refused == "forbidden",
                _ => false,
            };
            assert!(ok, "{who:?}: {e}");
            assert_eq!(p.schedule(&mine.id).await.unwrap().status, "active");
        }
        let done = p.cancel(Kind::Schedule, &mine.id, Canceller::Token(&token));
        assert_eq!(done.await.unwrap().status, "cancelled");
        let owner = p.cancel(Kind::Schedule, &theirs.id, Canceller::Owner);
        assert_eq!(owner.await.unwrap().status, "cancelled");
    }

    #[tokio::test]
    async fn a_batch_runs_once_each_leg_on_its_own_and_reports_per_leg() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/b.db?mode=rwc", dir.path().display());
        let store = relay_store::Store::connect(&url).await.unwrap();
        let p = Primitives::new(Arc::new(store), relay_types::clock::system());
        // 3 + 2 + 2 legs, each run once: a repeat, another key or a
        // simulated batch runs none.
        let live = legs(7);
        for (amounts, want) in [
            (&["1", "0", "2"][..], "partial"),
            (&["0", "0"][..], "failed"),
            (&["1", "2"][..], "completed"),
        ] {
            let id = batch(&p, amounts).await;
            let b = p.run_batch(&id, (&live, true), Some("k1")).await.unwrap();
            assert_eq!(b.status, want, "{amounts:?}");
            let got: Vec<_> = b
                .runs
                .iter()
                .map(|r| (r["index"].clone(), r["status"].clone()))
                .collect();
            let expect: Vec<_> = amounts
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    (
                        json!(i),
                        json!(if *a == "0" { "failed" } else { "executed" }),
                    )
                })
                .collect();
            assert_eq!(got, expect, "every leg ran: {:?}", b.runs);
            assert!(matches!(
                p.run_batch(&id, (&live, true), Some("k2")).await,
                Err(ServiceError::AlreadyRun { .. })
            ));
            let again = p.run_batch(&id, (&live, true), Some("k1")).await.unwrap();
            assert_eq!(again, b, "the same key answers the run as it stands");
        }
        let id = batch(&p, &["1", "0"]).await;
        let b = p.run_batch(&id, (&live, false), None).await.unwrap();
        assert_eq!(b.status, "completed", "the gate is off: simulated");
        assert!(b
            .runs
            .iter()
            .all(|r| r["status"] == "simulated" && r["routeId"].is_null()));
        assert_eq!(
            b.runs[1]["wouldExecute"]["idempotencyKey"],
            format!("{id}:2")
        );
        assert!(matches!(
            p.run_batch("batch_nope", (&live, true), None).await,
            Err(ServiceError::NotFound { .. })
        ));
    }
}
