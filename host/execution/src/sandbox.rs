//! The zero-funds sandbox (spec §1.5, §3.1, §8.2): `x-relay-sandbox: 1`
//! gives an `sbx_` route that walks RECEIVING → SWAPPING → SENDING →
//! COMPLETED over about 40 s on a timer, then DONE. Nothing is signed or
//! moved; records live in memory for an hour, are never persisted and never
//! appear in the public feed.
//!
//! Dry runs' receipts are kept here too ([`Sandbox::keep_dry`]), under their
//! `rt_` ids and for the same hour, so the `track` a dry run answers reads
//! `DRY` at `/api/route/status`. A dry run's `wouldSend` is what the live
//! route would send: its Permit2 pull names the amount the executor pulls
//! (the route's amount, [`as_sent`]), not the rail's informational one. A
//! dry run's signature is checked exactly as a live execute's (the execute
//! service does that before it gets here).

use relay_plugin_api::PlanAction;
use relay_types::SharedClock;
use relay_types::{RouteRecord, RouteStatus};
use std::{collections::HashMap, sync::Mutex, time::Duration};

/// Time from acceptance to DONE.
pub const SANDBOX_DURATION: Duration = Duration::from_secs(40);
/// How long a sandbox record is kept.
pub const SANDBOX_RETENTION: Duration = Duration::from_secs(3600);
/// The stages, each a quarter of [`SANDBOX_DURATION`].
pub const STAGES: [&str; 4] = ["RECEIVING", "SWAPPING", "SENDING", "COMPLETED"];

struct Entry {
    record: RouteRecord,
    /// When it was accepted, epoch ms on the sandbox's clock.
    started_ms: u64,
}

/// In-memory sandbox routes, their stages moving on the host's clock.
pub struct Sandbox {
    routes: Mutex<HashMap<String, Entry>>,
    clock: SharedClock,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").finish_non_exhaustive()
    }
}

/// The state of a sandbox route `elapsed` after acceptance.
/// A route accepted in a terminal state (FUNDS_REQUIRED) stays there.
pub fn at(mut r: RouteRecord, elapsed: Duration) -> RouteRecord {
    if r.status.is_terminal() {
        return r;
    }
    if elapsed >= SANDBOX_DURATION {
        r.status = RouteStatus::Done;
        r.stage = Some("COMPLETED".into());
        r.dest_tx = None;
    } else {
        let quarter = SANDBOX_DURATION.as_millis() / STAGES.len() as u128;
        let i = (elapsed.as_millis() / quarter) as usize;
        r.status = RouteStatus::Bridging;
        r.stage = Some(STAGES[i.min(STAGES.len() - 1)].into());
    }
    r
}

/// `r` with its plan's Permit2 pulls naming the amount the executor pulls
/// (the route's amount: [`crate::steps::call_for`]); a rail's
/// `Permit2Pull.amount` is informational.
pub fn as_sent(mut r: RouteRecord) -> RouteRecord {
    for step in &mut r.plan.steps {
        if let PlanAction::Permit2Pull { amount, .. } = step {
            *amount = r.amount;
        }
    }
    r
}

impl Sandbox {
    /// No sandbox routes yet; their stages move on `clock`.
    pub fn new(clock: SharedClock) -> Self {
        Sandbox {
            routes: Mutex::default(),
            clock,
        }
    }

    /// How long ago `e` was accepted.
    fn elapsed(&self, e: &Entry) -> Duration {
        Duration::from_millis(self.clock.now_ms().saturating_sub(e.started_ms))
    }

    /// Starts a sandbox route (its id starts with `sbx_`).
    pub fn start(&self, record: RouteRecord) -> RouteRecord {
        let mut routes = self.routes.lock().expect("sandbox lock");
        routes.retain(|_, e| self.elapsed(e) < SANDBOX_RETENTION);
        let now = at(record.clone(), Duration::ZERO);
        let started_ms = self.clock.now_ms();
        routes.insert(record.id.clone(), Entry { record, started_ms });
        now
    }

    /// Keeps a dry run's record (status `DRY`, which never changes) for
    /// [`SANDBOX_RETENTION`], readable by [`Sandbox::get`].
    /// Its plan is [`as_sent`].
    pub fn keep_dry(&self, record: RouteRecord) -> RouteRecord {
        let mut record = as_sent(record);
        record.status = RouteStatus::Dry;
        self.start(record)
    }

    /// How long until the sandbox route `id` next changes (its stages move
    /// on a timer); `None` for a route that no longer changes or is not
    /// here.
    pub fn next_change(&self, id: &str) -> Option<Duration> {
        let routes = self.routes.lock().expect("sandbox lock");
        let e = routes.get(id)?;
        if e.record.status.is_terminal() {
            return None;
        }
        let quarter = SANDBOX_DURATION / STAGES.len() as u32;
        let elapsed = self.elapsed(e);
        let passed = (elapsed.as_millis() / quarter.as_millis()) as u32;
        (passed < STAGES.len() as u32).then(|| quarter * (passed + 1) - elapsed)
    }

    /// The route's current state and seconds since acceptance.
    pub fn get(&self, id: &str) -> Option<(RouteRecord, f64)> {
        let routes = self.routes.lock().expect("sandbox lock");
        let e = routes
            .get(id)
            .filter(|e| self.elapsed(e) < SANDBOX_RETENTION)?;
        let elapsed = self.elapsed(e);
        Some((at(e.record.clone(), elapsed), elapsed.as_secs_f64()))
    }
}

#[cfg(test)]
mod tests {
    use relay_plugin_api::{Amount, ChainRef, SourceMode};

    use super::*;

    fn record() -> RouteRecord {
        RouteRecord {
            status: RouteStatus::Bridging,
            stage: None,
            estimated: Amount::from_u128(5_000_000),
            min_out: Amount::from_u128(5_000_000),
            relay_fee: Amount::ZERO,
            sender: String::new(),
            recipient: String::new(),
            mode: SourceMode::Operator,
            ..RouteRecord::sample("sbx_test", 0)
        }
    }

    fn sandbox() -> (Sandbox, std::sync::Arc<relay_types::ManualClock>) {
        let clock = relay_types::ManualClock::at(1_700_000_000_000);
        (Sandbox::new(clock.clone()), clock)
    }

    #[test]
    fn stages_walk_on_the_timer_then_done_then_expire() {
        let (sb, clock) = sandbox();
        assert_eq!(sb.start(record()).stage.as_deref(), Some("RECEIVING"));
        let mut seen = vec![];
        for _ in 0..5 {
            let (r, _) = sb.get("sbx_test").unwrap();
            seen.push((r.status.public(), r.stage.unwrap()));
            clock.advance(10_000);
        }
        let expect = [
            ("BRIDGING", "RECEIVING"),
            ("BRIDGING", "SWAPPING"),
            ("BRIDGING", "SENDING"),
            ("BRIDGING", "COMPLETED"),
            ("DONE", "COMPLETED"),
        ];
        let seen: Vec<(&str, &str)> = seen.iter().map(|(a, b)| (*a, b.as_str())).collect();
        assert_eq!(seen, expect);
        clock.advance(SANDBOX_RETENTION.as_millis() as u64);
        assert!(sb.get("sbx_test").is_none(), "kept at most an hour");
    }

    #[test]
    fn a_dry_runs_pull_is_the_amount_the_executor_pulls() {
        let mut r = record();
        r.plan.steps = vec![PlanAction::Permit2Pull {
            chain: ChainRef::Evm(8453),
            token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
            amount: Amount::from_u128(4_990_000),
        }];
        let (sb, _) = sandbox();
        let kept = sb.keep_dry(r.clone());
        let pulled = |r: &RouteRecord| match &r.plan.steps[0] {
            PlanAction::Permit2Pull { amount, .. } => *amount,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            pulled(&kept),
            r.amount,
            "wouldSend pulls what the route pulls"
        );
        let (read, _) = sb.get(&r.id).unwrap();
        assert_eq!(pulled(&read), r.amount, "and its track says the same");
    }

    #[test]
    fn a_dry_run_stays_dry_for_an_hour_then_is_gone() {
        let (sb, clock) = sandbox();
        let mut r = record();
        r.id = "rt_dry".into();
        assert_eq!(sb.keep_dry(r).status, RouteStatus::Dry);
        clock.advance(SANDBOX_DURATION.as_millis() as u64 * 2);
        let (r, _) = sb.get("rt_dry").unwrap();
        assert_eq!((r.status.public(), r.stage.as_deref()), ("DRY", None));
        clock.advance(SANDBOX_RETENTION.as_millis() as u64);
        assert!(sb.get("rt_dry").is_none(), "kept at most an hour");
    }
}
