//! Times of primitives: `at`, `when.at` and `expiresAt` are epoch seconds
//! (an integer or a numeric string) or an ISO-8601 / RFC 3339 date-time
//! (`2026-11-24T10:00:00Z`, `…+02:00`, fractional seconds dropped). The
//! watcher works in epoch ms; due times are pure arithmetic here.

use relay_wire::{Loose, Scalar};

/// Latest time accepted: 9999-12-31T23:59:59Z, epoch seconds.
pub const MAX_EPOCH_SECS: u64 = 253_402_300_799;

/// Parses a time as sent: epoch seconds (a JSON integer or a string of
/// digits) or an ISO-8601 date-time string.
pub fn parse_time(v: &Loose<Scalar>) -> Result<u64, String> {
    match v.typed() {
        Ok(Scalar::Number(n)) => n
            .as_u64()
            .ok_or_else(|| "must be whole epoch seconds (a non-negative integer)".to_string())
            .and_then(bounded),
        Ok(Scalar::Text(s)) => parse_time_text(s),
        Err(_) => Err("must be epoch seconds or an ISO-8601 date-time string".into()),
    }
}

/// Parses a string of epoch seconds or an ISO-8601 date-time (a query
/// parameter, a JSON string).
pub fn parse_time_text(s: &str) -> Result<u64, String> {
    let secs = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse()
            .map_err(|_| "epoch seconds out of range".to_string())?
    } else {
        iso8601(s).ok_or_else(|| {
            format!("{s:?} is neither epoch seconds nor an ISO-8601 date-time like 2026-11-24T10:00:00Z")
        })?
    };
    bounded(secs)
}

fn bounded(secs: u64) -> Result<u64, String> {
    if secs > MAX_EPOCH_SECS {
        return Err("is after the year 9999 (epoch seconds, not milliseconds)".into());
    }
    Ok(secs)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn num(s: &str, range: std::ops::RangeInclusive<i64>) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|v| range.contains(v))
}

/// `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)` (a space for `T` accepted).
fn iso8601(s: &str) -> Option<u64> {
    let (date, rest) = s.split_once(['T', 't', ' '])?;
    let mut d = date.split('-');
    let (y, m, day) = (
        num(d.next()?, 1970..=9999)?,
        num(d.next()?, 1..=12)?,
        num(d.next()?, 1..=31)?,
    );
    if d.next().is_some() {
        return None;
    }
    let (clock, offset) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else {
        let at = rest.rfind(['+', '-'])?;
        let (c, o) = rest.split_at(at);
        let sign = if o.starts_with('-') { -1 } else { 1 };
        let (oh, om) = o[1..].split_once(':')?;
        (c, sign * (num(oh, 0..=23)? * 3600 + num(om, 0..=59)? * 60))
    };
    let mut t = clock.split(':');
    let (h, mi) = (num(t.next()?, 0..=23)?, num(t.next()?, 0..=59)?);
    let sec = match t.next() {
        None => 0,
        Some(sx) => num(sx.split('.').next()?, 0..=60)?,
    };
    if t.next().is_some() {
        return None;
    }
    let secs = days_from_civil(y, m, day) * 86_400 + h * 3600 + mi * 60 + sec - offset;
    u64::try_from(secs).ok()
}

/// When run `done + 1` of a schedule is due (epoch ms): the first run at
/// `first_ms`, then every `every_secs`. A replica that was down catches up
/// one run per tick, so no run is skipped.
pub fn next_due(first_ms: u64, every_secs: Option<u64>, done: u64) -> u64 {
    let step = every_secs.unwrap_or(0).saturating_mul(1000);
    first_ms.saturating_add(step.saturating_mul(done))
}

/// The idempotency key of run `seq` of record `id`.
pub fn run_key(id: &str, seq: u64) -> String {
    format!("{id}:{seq}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn parse(v: &Value) -> Result<u64, String> {
        parse_time(&serde_json::from_value(v.clone()).unwrap())
    }

    #[test]
    fn epoch_seconds_and_iso_agree() {
        let want = 1_795_946_400; // 2026-11-29T10:00:00Z
        for v in [
            json!(want),
            json!(want.to_string()),
            json!("2026-11-29T10:00:00Z"),
            json!("2026-11-29T10:00:00.750Z"),
            json!("2026-11-29T12:00:00+02:00"),
            json!("2026-11-29T07:30:00-02:30"),
            json!("2026-11-29 10:00Z"),
        ] {
            assert_eq!(parse(&v), Ok(want), "{v}");
        }
        assert_eq!(parse(&json!("1970-01-01T00:00:00Z")), Ok(0));
        assert_eq!(parse(&json!("2000-03-01T00:00:00Z")), Ok(951_868_800));
    }

    #[test]
    fn bad_times_are_refused() {
        for v in [
            json!(-1),
            json!(1.5),
            json!(true),
            json!("tomorrow"),
            json!("2026-13-01T00:00:00Z"),
            json!("2026-11-29T25:00:00Z"),
            json!("2026-11-29"),
            json!(MAX_EPOCH_SECS + 1),
            json!(1_795_946_400_000u64),
        ] {
            assert!(parse(&v).is_err(), "{v}");
        }
    }

    #[test]
    fn due_times_step_from_the_first_run() {
        assert_eq!(next_due(1_000, Some(10), 0), 1_000);
        assert_eq!(next_due(1_000, Some(10), 1), 11_000);
        assert_eq!(next_due(1_000, Some(10), 999), 9_991_000);
        assert_eq!(next_due(1_000, None, 0), 1_000);
        assert_eq!(next_due(u64::MAX - 1, Some(10), 5), u64::MAX, "saturates");
        assert_eq!(run_key("sched_ab", 3), "sched_ab:3");
    }
}
