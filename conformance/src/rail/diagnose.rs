//! From what went wrong to what to do: each failure the kit reports names
//! its cause and, where the cause is a setting rather than the rail, the kit
//! flag and the operator config key that supply it.
//!
//! The causes are read from the host's own refusals (the capability
//! broker's denial reasons) and the rail's typed errors, which carry the
//! host's message when a capability call failed.

use relay_plugin_api::{RailError, RailErrorKind};
use relay_runtime::CallError;

/// The operator config section of `rail` (`[rails.<id>]`).
fn section(rail: &str) -> String {
    format!("[rails.{rail}]")
}

/// The generic fix for an upstream that did not answer.
pub fn upstream_down(rail: &str) -> String {
    format!(
        "start the upstream, or point the rail at a reachable upstream with `--config <key>=<url>` \
         (operator config `[rails.{rail}.config] <key>`; the key is the one the rail's docs name, \
         `base_url` for rails on the SDK), or serve a recorded fixture of it with \
         `--fixture fixture/upstream.json`"
    )
}

/// The word after `prefix` in `s`, trimmed of punctuation.
fn word_after<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &s[s.find(prefix)? + prefix.len()..];
    rest.split_whitespace()
        .next()
        .map(|w| w.trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | ',' | ';' | ':' | '.')))
}

/// The word before `suffix` in `s`.
fn word_before<'a>(s: &'a str, suffix: &str) -> Option<&'a str> {
    s[..s.find(suffix)?].split_whitespace().next_back()
}

/// A fix for a capability the host refused or could not serve, read from
/// its message; `None` when the text names no known setting.
pub fn capability_fix(rail: &str, text: &str) -> Option<String> {
    if let Some(host) = word_before(text, " resolves to a private address") {
        return Some(format!(
            "`{host}` resolves to a private address: pass `--allow-private` for a local upstream \
             (operator config `[capabilities] allow_private_networks = true`)"
        ));
    }
    if text.contains("egress allowlist") {
        let host = word_before(text, " is not in rail").unwrap_or("<host>");
        return Some(format!(
            "add `--egress {host}` (operator config `{} egress = [\"{host}\"]`)",
            section(rail)
        ));
    }
    if let Some(chain) = word_after(text, "no RPC endpoint for chain ") {
        return Some(format!(
            "add `--rpc {chain}=<url>` (operator config `[capabilities.rpc] \"{chain}\" = [\"<url>\"]`)"
        ));
    }
    if let Some(chain) =
        word_after(text, "chain ").filter(|_| text.contains("is not declared by rail"))
    {
        return Some(format!(
            "the rail reads chain {chain} without declaring it: add it to the manifest's `rpcChains`"
        ));
    }
    if text.contains("is not a read-only method") {
        return Some("rails may call read-only RPC methods only; remove the write call".into());
    }
    if let Some(env) = word_after(text, "set the environment variable ") {
        let env = env.trim_end_matches(')');
        return Some(format!("set the environment variable `{env}`"));
    }
    let credential = word_after(text, "credential ");
    if let Some(name) =
        credential.filter(|_| text.contains("is not granted") || text.contains("is not configured"))
    {
        return Some(format!(
            "pass `--credential {name}=<header>:<ENV_VAR>` (operator config `[capabilities.credentials.{name}]` \
             `header`/`env`, and `{} credentials = [\"{name}\"]`)",
            section(rail)
        ));
    }
    None
}

/// A fix for an upstream that did not answer (network error or timeout).
fn unreachable_fix(rail: &str, text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    if lower.contains("host timeout") || lower.contains("did not answer in time") {
        return Some(format!(
            "the upstream did not answer within the call deadline: check it is up, or raise \
             `--timeout-ms` (operator config `[runtime] call_timeout_ms`); else {}",
            upstream_down(rail)
        ));
    }
    let down = [
        "host network",
        "error sending request",
        "connection refused",
        "dns error",
        "resolve ",
    ];
    down.iter()
        .any(|n| lower.contains(n))
        .then(|| upstream_down(rail))
}

/// A fix for a typed rail error on a request the kit derived from the
/// manifest.
pub fn rail_error_fix(rail: &str, e: &RailError) -> Option<String> {
    if let Some(f) = capability_fix(rail, &e.message).or_else(|| unreachable_fix(rail, &e.message))
    {
        return Some(f);
    }
    let m = &e.message;
    let lower = m.to_ascii_lowercase();
    let token = lower.contains("token") || lower.contains("asset");
    let setting = ["config", "operator", "enable", "missing"]
        .iter()
        .any(|w| lower.contains(w));
    let config_fix = || {
        format!(
            "give the rail the setting its message names with `--config <key>=<value>` \
             (operator config `[rails.{rail}.config] <key>`)"
        )
    };
    match e.kind {
        RailErrorKind::UnsupportedLane | RailErrorKind::InvalidInput if token => Some(
            "the rail or its upstream does not know the kit's token: pass the real one with \
             `--token <chain>:<SYMBOL>=<address>[:decimals]`"
                .into(),
        ),
        RailErrorKind::FundsRequired => Some(format!(
            "the rail reports the relayer's inventory short: {}",
            config_fix()
        )),
        _ if setting => Some(config_fix()),
        RailErrorKind::UnsupportedLane => Some(
            "the rail answers UNSUPPORTED_LANE for a direction its manifest declares: serve it, \
             or narrow the lane's `from`/`to` in the manifest to the directions the rail serves"
                .into(),
        ),
        RailErrorKind::InvalidInput if lower.contains("address") || lower.contains("recipient") => {
            Some(
                "the rail rejects the kit's sample address: pass one it accepts with \
                 `--address <chain>=<address>`"
                    .into(),
            )
        }
        _ => None,
    }
}

/// A fix for any failed call: typed errors as above, faults as bugs.
pub fn call_fix(rail: &str, e: &CallError) -> Option<String> {
    match e {
        CallError::Rail(r) => rail_error_fix(rail, r),
        e if is_deadline(e) => Some(deadline_fix()),
        _ => Some(fault_fix()),
    }
}

/// Whether a fault is a missed deadline.
pub fn is_deadline(e: &CallError) -> bool {
    let s = e.to_string();
    !matches!(e, CallError::Rail(_)) && (s.contains("deadline") || s.contains("hung"))
}

/// What to do about a call that missed its deadline.
pub fn deadline_fix() -> String {
    "every call must return by its deadline: bound the rail's loops and give its upstream \
     requests a timeout below the deadline (the kit's deadline is `--timeout-ms`, the host's \
     `[runtime] call_timeout_ms`)"
        .into()
}

/// What to do about a panic, trap or broken reply.
pub fn fault_fix() -> String {
    "a panic, trap or broken reply is a bug in the rail: return a typed `RailError` instead".into()
}

/// A fix read from free text (health details, lane errors).
pub fn text_fix(rail: &str, text: &str) -> Option<String> {
    capability_fix(rail, text).or_else(|| unreachable_fix(rail, text))
}

/// Distinct fixes, in order, joined.
pub fn join(fixes: impl IntoIterator<Item = String>) -> Option<String> {
    let mut out: Vec<String> = Vec::new();
    for f in fixes {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    (!out.is_empty()).then(|| out.join("; "))
}

/// What a failed call's cause reads as, plainly.
pub fn cause(e: &CallError) -> String {
    match e {
        CallError::Rail(r) => {
            let lower = r.message.to_ascii_lowercase();
            let plain = if lower.contains("host network") || lower.contains("host timeout") {
                "the upstream never answered: "
            } else if lower.contains("host denied") {
                "the host refused the rail's call: "
            } else if lower.contains("host notconfigured") {
                "a setting the rail needs is missing: "
            } else {
                ""
            };
            format!("{plain}{:?}: {}", r.kind, r.message)
        }
        e => format!("fault: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(kind: RailErrorKind, m: &str) -> RailError {
        RailError::new(kind, m)
    }

    #[test]
    fn a_private_upstream_names_allow_private() {
        let e = err(
            RailErrorKind::Capability,
            "host Denied: 127.0.0.1 resolves to a private address",
        );
        let f = rail_error_fix("acme", &e).unwrap();
        assert!(
            f.contains("`127.0.0.1` resolves to a private address"),
            "{f}"
        );
        assert!(f.contains("--allow-private"), "{f}");
        assert!(f.contains("[capabilities] allow_private_networks"), "{f}");
    }

    #[test]
    fn an_egress_refusal_names_the_flag_and_the_key() {
        let f = capability_fix(
            "acme",
            "host api.acme.example is not in rail acme's egress allowlist",
        )
        .unwrap();
        assert!(f.contains("--egress api.acme.example"), "{f}");
        assert!(f.contains("[rails.acme] egress"), "{f}");
    }

    #[test]
    fn a_missing_rpc_names_the_chain() {
        let f =
            capability_fix("acme", "host NotConfigured: no RPC endpoint for chain 8453").unwrap();
        assert!(f.contains("--rpc 8453=<url>"), "{f}");
        assert!(f.contains("[capabilities.rpc]"), "{f}");
    }

    #[test]
    fn a_refused_connection_is_the_upstream_down() {
        let e = CallError::Rail(err(
            RailErrorKind::Upstream,
            "host Network: error sending request",
        ));
        assert!(cause(&e).starts_with("the upstream never answered"));
        let f = call_fix("acme", &e).unwrap();
        assert!(f.contains("--config <key>=<url>"), "{f}");
    }

    #[test]
    fn a_credential_names_its_section() {
        let f = capability_fix("acme", "credential acme-key is not granted to this rail").unwrap();
        assert!(f.contains("--credential acme-key="), "{f}");
        assert!(f.contains("[capabilities.credentials.acme-key]"), "{f}");
    }
}
