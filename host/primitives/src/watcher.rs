//! The watcher: each tick it claims due records (a lease on the row, so
//! exactly one replica runs a due run) and runs them.
//!
//! A run is `seq` = runs finished + 1, with idempotency key `<id>:<seq>`
//! ([`crate::time::run_key`]). Before running, the watcher looks for a run
//! already recorded under the key (a replica that died after running but
//! before moving the record on): it is taken as done, never run twice. A
//! live run hands the key to the execute service as its idempotency key,
//! so a run whose replica died mid-execute is answered by the route it
//! created rather than a second one. A run that fails is recorded with its
//! error and the schedule goes on.
//!
//! The gate (spec §4.4): a run moves funds only when the host's gate is on
//! (`PRIMITIVES_LIVE=1`) **and** the record has `live:true` (with its
//! owner authority). Otherwise the run is simulated: the exact execute it
//! would send is logged (`wouldExecute`, structured) and recorded as the
//! run, and nothing is sent.

use crate::{
    price::{PriceSource, Usd},
    record::{Authority, Conditional, Schedule, When},
    time::run_key,
};
use async_trait::async_trait;
use relay_store::{PrimitiveRow, PrimitiveStore, RunEnd, RunRow, StoreError};
use relay_wire::{ExecuteRequest, WireError};
use serde_json::{json, Value};
use std::sync::Arc;

/// How many due records one tick takes on.
pub const TICK_BATCH: u32 = 50;

/// What became of a live run.
#[derive(Clone, Debug, PartialEq)]
pub enum RunResult {
    /// The execute was accepted: its receipt (`id`, `status`, …).
    Executed(Value),
    /// The execute was refused or failed: `{error, errorCode}`.
    Failed(Value),
    /// Not now (the same key is still executing elsewhere, or the store
    /// failed): the run is tried again on a later tick.
    Retry(String),
}

/// Runs one live execute of a record's `route`: the ExecuteRequest
/// [`execute_request`] makes of it (`mode:self`, `live:true`), whose
/// request bytes are those of [`execute_body`]; `key` is its idempotency
/// key. The host implements it with its one execute service.
#[cfg_attr(any(test, feature = "test-utils"), mockall::automock)]
#[async_trait]
#[auto_impl::auto_impl(&, Arc, Box)]
pub trait Runner: Send + Sync {
    /// Executes `route` once under `key`.
    async fn run(&self, route: &Value, key: &str) -> RunResult;
}

/// What the watcher works with.
#[derive(Clone)]
pub struct WatcherDeps {
    /// The store.
    pub store: Arc<dyn PrimitiveStore>,
    /// The live runner.
    pub runner: Arc<dyn Runner>,
    /// Prices for conditionals.
    pub prices: Arc<dyn PriceSource>,
    /// How long a claim holds a record, ms.
    pub lease_ms: u64,
    /// The execution gate (`PRIMITIVES_LIVE=1`).
    pub live_gate: bool,
}

/// The watcher of one replica.
pub struct Watcher {
    d: WatcherDeps,
    owner: String,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("owner", &self.owner)
            .field("live_gate", &self.d.live_gate)
            .finish()
    }
}

/// The execute a run sends, as logged (`wouldExecute`) and as its
/// idempotency key's request bytes: the record's route as `mode:self`,
/// `live:true`.
pub fn execute_body(route: &Value) -> Value {
    let mut body = route.as_object().cloned().unwrap_or_default();
    body.remove("dryRun");
    body.insert("mode".into(), json!("self"));
    body.insert("live".into(), json!(true));
    Value::Object(body)
}

/// The same execute, typed: the record's route (kept as the caller sent
/// it) decoded as an ExecuteRequest, with the run's own `mode:self` and
/// `live:true` in place of whatever the route carried there (its `dryRun`
/// dropped).
pub fn execute_request(route: &Value) -> Result<ExecuteRequest, WireError> {
    let mut fields = route.as_object().cloned().unwrap_or_default();
    for replaced in ["mode", "live", "dryRun"] {
        fields.remove(replaced);
    }
    let mut request = ExecuteRequest::decode(&Value::Object(fields))?;
    request.execute.mode = Some("self".into());
    request.execute.live = Some(true);
    request.execute.dry_run = None;
    Ok(request)
}

/// Performs run `seq` of record `id` once: with `live` (the gate on and
/// the record live with its authority) the route's execute through
/// `runner` under the run's key, else a simulation that only logs what it
/// would execute. The run's fields (`key`, `simulated`, `ok`, `routeId`,
/// `status`, `error`, `errorCode`, `wouldExecute`); `Err` when it is to be
/// tried again later. The watcher's runs and a batch's legs both run here.
pub async fn perform(
    runner: &dyn Runner,
    live: bool,
    (id, seq): (&str, u64),
    route: &Value,
) -> Result<Value, String> {
    let key = run_key(id, seq);
    let mut run = json!({"key": key});
    if !live {
        let would = json!({"method": "POST", "path": "/api/route/execute",
            "idempotencyKey": key, "body": execute_body(route)});
        tracing::info!(primitive = %id, seq, key = %key, would_execute = %would, "primitive run simulated");
        run["simulated"] = json!(true);
        run["wouldExecute"] = would;
        return Ok(run);
    }
    run["simulated"] = json!(false);
    match runner.run(route, &key).await {
        RunResult::Executed(r) => {
            tracing::info!(primitive = %id, seq, key = %key, route = %r["id"], "primitive run executed");
            run["ok"] = json!(true);
            run["routeId"] = r["id"].clone();
            run["status"] = r["status"].clone();
        }
        RunResult::Failed(e) => {
            tracing::warn!(primitive = %id, seq, key = %key, error = %e, "primitive run failed");
            run["ok"] = json!(false);
            run["error"] = e["error"].clone();
            run["errorCode"] = e["errorCode"].clone();
        }
        RunResult::Retry(why) => return Err(why),
    }
    Ok(run)
}

/// `more`'s fields added to the object `run`.
pub fn merge(run: &mut Value, more: Value) {
    if let (Value::Object(r), Value::Object(x)) = (run, more) {
        r.extend(x);
    }
}

/// The state a conditional ends in after its recorded `run`: `failed`
/// when the run says `ok: false` (or cannot be read), else `executed`.
fn fired_state(run: &RunRow) -> &'static str {
    match serde_json::from_str::<Value>(&run.body) {
        Ok(v) if v["ok"] != json!(false) => "executed",
        _ => "failed",
    }
}

/// Where a run leaves a record: status and next look.
struct After {
    status: &'static str,
    next_ms: Option<u64>,
}

impl Watcher {
    /// A watcher; its lease owner is unique to this process.
    pub fn new(d: WatcherDeps) -> Self {
        let owner = format!("w-{}-{}", std::process::id(), crate::new_id(""));
        Watcher { d, owner }
    }

    /// Whether the host's gate is on.
    pub fn live_gate(&self) -> bool {
        self.d.live_gate
    }

    /// One tick at `now_ms`: claims and runs every due record it can (the
    /// number run).
    #[tracing::instrument(skip_all, fields(owner = %self.owner))]
    pub async fn tick(&self, now_ms: u64) -> Result<usize, StoreError> {
        let mut ran = 0;
        for id in self.d.store.primitives_due(now_ms, TICK_BATCH).await? {
            let until = now_ms.saturating_add(self.d.lease_ms);
            let Some(row) = self
                .d
                .store
                .claim_primitive(&id, &self.owner, now_ms, until)
                .await?
            else {
                continue;
            };
            match self.step(&row, now_ms).await {
                Ok(true) => ran += 1,
                Ok(false) => {}
                Err(StoreError::Corrupt(e)) => {
                    tracing::warn!(primitive = %id, error = %e, "unreadable record; looked at again after its lease");
                }
                Err(e) => {
                    // A failed step left the record as its last write did
                    // (each write is whole, and a run is keyed, so a retry
                    // never runs twice): free it for the next tick rather
                    // than leave it until the lease lapses.
                    tracing::warn!(primitive = %id, error = %e, "primitive step failed; retried on the next tick");
                    if let Err(e) = self.d.store.free_primitive(&id, &self.owner).await {
                        tracing::warn!(primitive = %id, error = %e, "retried after its lease");
                    }
                }
            }
        }
        Ok(ran)
    }

    async fn step(&self, row: &PrimitiveRow, now_ms: u64) -> Result<bool, StoreError> {
        let corrupt = |e: serde_json::Error| StoreError::Corrupt(format!("{}: {e}", row.id));
        match row.kind.as_str() {
            "schedule" => {
                let s: Schedule = serde_json::from_str(&row.body).map_err(corrupt)?;
                self.step_schedule(row, &s, now_ms).await
            }
            "conditional" => {
                let c: Conditional = serde_json::from_str(&row.body).map_err(corrupt)?;
                self.step_conditional(row, &c, now_ms).await
            }
            _ => {
                self.d
                    .store
                    .release_primitive(&row.id, &self.owner, None)
                    .await?;
                Ok(false)
            }
        }
    }

    async fn step_schedule(
        &self,
        row: &PrimitiveRow,
        s: &Schedule,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let seq = row.seq + 1;
        let key = run_key(&row.id, seq);
        let live = s.live && s.authority == Some(Authority::Owner);
        // A run recorded by an earlier holder is not run again: the record
        // only moves past it.
        let run = match self.d.store.run_by_key(&key).await? {
            Some(_) => None,
            None => match self
                .perform_run(row, seq, (&s.route, live), json!({}), now_ms)
                .await
            {
                Some(run) => Some(run),
                None => {
                    self.d
                        .store
                        .release_primitive(&row.id, &self.owner, row.next_ms)
                        .await?;
                    return Ok(false);
                }
            },
        };
        let after = if seq >= s.count {
            After {
                status: "completed",
                next_ms: None,
            }
        } else {
            After {
                status: "active",
                next_ms: Some(s.due_ms(seq)),
            }
        };
        match run {
            Some(run) => {
                self.record_and_finish(row, seq, &run, after, now_ms)
                    .await?
            }
            None => self.finish(row, seq, after, now_ms).await?,
        }
        Ok(true)
    }

    async fn step_conditional(
        &self,
        row: &PrimitiveRow,
        c: &Conditional,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let key = run_key(&row.id, 1);
        if let Some(done) = self.d.store.run_by_key(&key).await? {
            self.finish_fired(row, fired_state(&done), now_ms).await?;
            return Ok(true);
        }
        if now_ms / 1000 >= c.expires_at {
            let run = json!({"seq": 1, "at": now_ms / 1000, "key": key, "event": "expired"});
            self.record(row, 1, &key, &run, now_ms).await?;
            self.finish_fired(row, "expired", now_ms).await?;
            return Ok(true);
        }
        let observed = match self.holds(&c.when, now_ms) {
            Ok(o) => o,
            Err(wait) => {
                tracing::debug!(primitive = %row.id, why = %wait, "condition not met");
                self.d
                    .store
                    .release_primitive(&row.id, &self.owner, Some(now_ms))
                    .await?;
                return Ok(false);
            }
        };
        self.d
            .store
            .mark_primitive(&row.id, &self.owner, "triggered")
            .await?;
        tracing::info!(primitive = %row.id, observed = %observed, "conditional triggered");
        let live = c.live && c.authority == Some(Authority::Owner);
        let extra = json!({"event": "triggered", "observed": observed});
        if !self
            .run_once(row, 1, (&c.route, live), extra, now_ms)
            .await?
        {
            self.d
                .store
                .mark_primitive(&row.id, &self.owner, "armed")
                .await?;
            self.d
                .store
                .release_primitive(&row.id, &self.owner, Some(now_ms))
                .await?;
            return Ok(false);
        }
        let run = self.d.store.run_by_key(&key).await?;
        let status = run.as_ref().map_or("failed", fired_state);
        self.finish_fired(row, status, now_ms).await?;
        Ok(true)
    }

    /// Ends a conditional after its one run (or its expiry) in `status`.
    async fn finish_fired(
        &self,
        row: &PrimitiveRow,
        status: &'static str,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let after = After {
            status,
            next_ms: None,
        };
        self.finish(row, 1, after, now_ms).await
    }

    /// Whether `when` holds now: what was observed, or why not.
    fn holds(&self, when: &When, now_ms: u64) -> Result<String, String> {
        let (asset, value, above) = match when {
            When::TimeAfter { at } if now_ms / 1000 >= *at => {
                return Ok(format!("time {} >= {at}", now_ms / 1000))
            }
            When::TimeAfter { at } => return Err(format!("before {at}")),
            When::PriceAbove { asset, value } => (asset, value, true),
            When::PriceBelow { asset, value } => (asset, value, false),
        };
        let threshold = Usd::parse(value)?;
        let price = self
            .d
            .prices
            .usd(asset)
            .ok_or_else(|| format!("no usable price for {asset}"))?;
        let met = if above {
            price > threshold
        } else {
            price < threshold
        };
        match met {
            true => Ok(format!("{asset} {price}")),
            false => Err(format!("{asset} {price} vs {value}")),
        }
    }

    /// Runs `seq` once (simulated or live) and records it; `false` when it
    /// is to be retried later (the record released).
    async fn run_once(
        &self,
        row: &PrimitiveRow,
        seq: u64,
        route: (&Value, bool),
        extra: Value,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let Some(run) = self.perform_run(row, seq, route, extra, now_ms).await else {
            return Ok(false);
        };
        let key = run_key(&row.id, seq);
        self.record(row, seq, &key, &run, now_ms).await?;
        Ok(true)
    }

    /// Runs `seq` once (simulated or live): the run's body to record, or
    /// `None` when it is to be retried later.
    async fn perform_run(
        &self,
        row: &PrimitiveRow,
        seq: u64,
        (route, live): (&Value, bool),
        extra: Value,
        now_ms: u64,
    ) -> Option<Value> {
        let live = self.d.live_gate && live;
        let mut run = match perform(self.d.runner.as_ref(), live, (&row.id, seq), route).await {
            Ok(run) => run,
            Err(why) => {
                tracing::info!(primitive = %row.id, seq, why = %why, "primitive run retried later");
                return None;
            }
        };
        merge(&mut run, json!({"seq": seq, "at": now_ms / 1000}));
        merge(&mut run, extra);
        Some(run)
    }

    fn run_row(row: &PrimitiveRow, seq: u64, key: &str, run: &Value, now_ms: u64) -> RunRow {
        RunRow {
            primitive_id: row.id.clone(),
            seq,
            run_key: key.into(),
            body: run.to_string(),
            created_ms: now_ms,
        }
    }

    async fn record(
        &self,
        row: &PrimitiveRow,
        seq: u64,
        key: &str,
        run: &Value,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let r = Self::run_row(row, seq, key, run, now_ms);
        self.d.store.record_run(&r).await?;
        Ok(())
    }

    fn run_end(seq: u64, after: After, now_ms: u64) -> RunEnd {
        RunEnd {
            seq,
            status: after.status.into(),
            next_ms: after.next_ms,
            now_ms,
        }
    }

    async fn finish(
        &self,
        row: &PrimitiveRow,
        seq: u64,
        after: After,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let end = Self::run_end(seq, after, now_ms);
        if !self.d.store.finish_run(&row.id, &self.owner, &end).await? {
            tracing::warn!(primitive = %row.id, seq, "lease lost before the run was moved on");
        }
        Ok(())
    }

    /// Records run `seq` and moves the record past it in one write, so no
    /// reader sees the run with the record's old next run.
    async fn record_and_finish(
        &self,
        row: &PrimitiveRow,
        seq: u64,
        run: &Value,
        after: After,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let r = Self::run_row(row, seq, &run_key(&row.id, seq), run, now_ms);
        let end = Self::run_end(seq, after, now_ms);
        if !self
            .d
            .store
            .record_and_finish(&r, &self.owner, &end)
            .await?
        {
            tracing::warn!(primitive = %row.id, seq, "lease lost before the run was moved on");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{price::MockPriceSource, service::Primitives};
    use std::sync::Mutex;

    /// What the price mock answers, changed by the test.
    type Quoted = Arc<Mutex<Option<Usd>>>;

    /// A watcher's deps over a fresh SQLite store: `runner` runs the live
    /// runs (a bare `MockRunner::new()` fails the test if one is run), the
    /// price source answers what the returned cell holds.
    async fn setup(
        gate: bool,
        runner: MockRunner,
    ) -> (tempfile::TempDir, Primitives, Quoted, WatcherDeps) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/w.db?mode=rwc", dir.path().display());
        let store: Arc<dyn PrimitiveStore> =
            Arc::new(relay_store::Store::connect(&url).await.unwrap());
        let quoted: Quoted = Arc::default();
        let mut prices = MockPriceSource::new();
        let cell = quoted.clone();
        prices
            .expect_usd()
            .returning(move |_| *cell.lock().unwrap());
        let deps = WatcherDeps {
            store: store.clone(),
            runner: Arc::new(runner),
            prices: Arc::new(prices),
            lease_ms: 60_000,
            live_gate: gate,
        };
        (
            dir,
            Primitives::new(store, relay_types::clock::system()),
            quoted,
            deps,
        )
    }

    /// A schedule of `route` from a request body, created at 1,000 s.
    fn schedule(body: Value, route: Value) -> crate::record::Schedule {
        crate::record::Schedule::from_request(&relay_wire::decode(&body).unwrap(), route, 1_000)
            .unwrap()
    }

    #[tokio::test]
    async fn a_schedule_runs_count_times_simulated_then_completes_and_never_doubles() {
        // The gate is off: a live run would fail the test.
        let (_d, p, _, deps) = setup(false, MockRunner::new()).await;
        let body = json!({"everySeconds": 10, "count": 3, "live": true});
        let mut s = schedule(body, json!({"amount": "1"}));
        s.authority = Some(Authority::Owner);
        let id = p.create_schedule(s).await.unwrap().id;
        let w = Watcher::new(deps.clone());
        assert_eq!(w.tick(1_000_000).await.unwrap(), 1);
        assert_eq!(w.tick(1_005_000).await.unwrap(), 0, "not due yet");
        // another replica (a restart) sees the same state: nothing doubled
        let w2 = Watcher::new(deps);
        assert_eq!(w2.tick(1_010_000).await.unwrap(), 1);
        assert_eq!(w.tick(1_010_000).await.unwrap(), 0);
        assert_eq!(w.tick(1_020_000).await.unwrap(), 1);
        let v = p.schedule(&id).await.unwrap();
        assert_eq!(
            (v.status.as_str(), v.active, v.remaining, v.next_run_at),
            ("completed", false, 0, None)
        );
        let seqs: Vec<_> = v.runs.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, [1, 2, 3]);
        let r = &v.runs[0];
        assert_eq!(r["simulated"], true, "the gate is off: {r}");
        assert_eq!(r["wouldExecute"]["body"]["mode"], "self");
        assert_eq!(r["wouldExecute"]["idempotencyKey"], format!("{id}:1"));
        assert_eq!(
            w.tick(9_000_000).await.unwrap(),
            0,
            "nothing after completion"
        );
    }

    #[tokio::test]
    async fn a_failed_live_run_is_recorded_and_the_schedule_goes_on() {
        let mut runner = MockRunner::new();
        // Once, under the run's own idempotency key, even ticked twice.
        runner
            .expect_run()
            .withf(|_, key| key.ends_with(":1"))
            .times(1)
            .returning(|_, _| {
                RunResult::Failed(json!({"error": "no", "errorCode": "INSUFFICIENT_BALANCE"}))
            });
        let (_d, p, _, deps) = setup(true, runner).await;
        let body = json!({"everySeconds": 10, "count": 2, "live": true});
        let mut s = schedule(body, json!({}));
        s.authority = Some(Authority::Owner);
        let id = p.create_schedule(s).await.unwrap().id;
        let w = Watcher::new(deps);
        w.tick(1_000_000).await.unwrap();
        assert_eq!(w.tick(1_000_000).await.unwrap(), 0, "not due again");
        let v = p.schedule(&id).await.unwrap();
        assert_eq!((v.status.as_str(), v.remaining), ("active", 1));
        assert_eq!(v.runs[0]["ok"], false);
        assert_eq!(v.runs[0]["errorCode"], "INSUFFICIENT_BALANCE");
    }

    #[tokio::test]
    async fn a_price_condition_fires_only_once_it_holds_and_expires_otherwise() {
        let (_d, p, prices, deps) = setup(false, MockRunner::new()).await;
        let now = relay_types::Clock::now_secs(&relay_types::SystemClock);
        let req = |v: Value| relay_wire::decode(&v).unwrap();
        let c = Conditional::from_request(
            &req(json!({"when": {"type": "priceBelow", "asset": "ETH/USD", "value": "2500"}})),
            json!({}),
            now,
            100,
        )
        .unwrap();
        let id = p.create_conditional(c).await.unwrap().id;
        let w = Watcher::new(deps);
        let t = now * 1000;
        assert_eq!(w.tick(t).await.unwrap(), 0, "no price: waits");
        *prices.lock().unwrap() = Usd::parse("2500").ok();
        assert_eq!(w.tick(t + 1).await.unwrap(), 0, "not strictly below");
        assert_eq!(p.conditional(&id).await.unwrap().status, "armed");
        *prices.lock().unwrap() = Usd::parse("2499.99").ok();
        assert_eq!(w.tick(t + 2).await.unwrap(), 1);
        let v = p.conditional(&id).await.unwrap();
        assert_eq!(v.status, "executed");
        assert_eq!(v.runs[0]["event"], "triggered");
        assert_eq!(v.runs[0]["simulated"], true);

        let c = Conditional::from_request(
            &req(json!({"when": {"type": "priceAbove", "asset": "ETH/USD", "value": "9000"}})),
            json!({}),
            now,
            100,
        )
        .unwrap();
        let id = p.create_conditional(c).await.unwrap().id;
        assert_eq!(w.tick(t + 100_000).await.unwrap(), 1);
        let v = p.conditional(&id).await.unwrap();
        assert_eq!(
            (v.status.as_str(), &v.runs[0]["event"]),
            ("expired", &json!("expired"))
        );
    }

    #[test]
    fn a_run_sends_the_route_typed_as_its_logged_body_reads() {
        let route = json!({"fromChain": 8453, "toChain": 42161, "amount": "5", "toAddress": "0xabc",
            "rail": "lifi", "mode": "self", "live": "no", "dryRun": "yes"});
        let typed = execute_request(&route).unwrap();
        assert_eq!(
            typed,
            ExecuteRequest::decode(&execute_body(&route)).unwrap()
        );
        assert_eq!(
            (
                typed.execute.mode.as_deref(),
                typed.execute.live,
                typed.execute.dry_run
            ),
            (Some("self"), Some(true), None)
        );
        assert_eq!(typed.execute.rail.as_deref(), Some("lifi"));
        let bad = execute_request(&json!({"amount": "5", "minOut": 5})).unwrap_err();
        assert_eq!(bad.field(), Some("minOut"));
    }
}
