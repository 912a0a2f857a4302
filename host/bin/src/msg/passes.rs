//! `relay msg claim`: Plus passes claimed from the host's issuer
//! (`relay_messaging::passes::client` blinds the requests and finishes
//! the tokens) and kept beside the key file (`<keys>.passes.json`, mode
//! 0600); `relay msg send` spends one for each row the free ceiling
//! refuses.

use std::path::{Path, PathBuf};

use relay_messaging::passes::client;
use serde_json::{json, Value};

use super::{file_error, write_private, Host, MsgError};

/// The passes held, beside the key file.
fn path(keys: &Path) -> PathBuf {
    keys.with_extension("passes.json")
}

fn load(keys: &Path) -> Result<Vec<String>, MsgError> {
    let path = path(keys);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| file_error(&path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(file_error(&path, e)),
    }
}

fn save(keys: &Path, passes: &[String]) -> Result<(), MsgError> {
    let text = serde_json::to_string(passes).expect("strings serialize");
    write_private(&path(keys), &text)
}

/// Claims `count` passes and keeps them; prints how many are held.
pub(super) async fn claim(host: &Host, keys: &Path, count: usize) -> Result<(), MsgError> {
    let dir = host.get("/api/messages/v2/passes/issuer").await?;
    let (Some(key), Some(challenge), Some(uri)) = (
        dir["token-keys"][0]["token-key"].as_str(),
        dir["challenge"].as_str(),
        dir["issuer-request-uri"].as_str(),
    ) else {
        return Err(MsgError::Http("the issuer directory names no key".into()));
    };
    let (requests, pending) =
        client::requests(key, challenge, count).map_err(|e| MsgError::Http(e.to_string()))?;
    let answer = host
        .post(uri, &json!({ "tokenRequests": requests }))
        .await?;
    let responses: Vec<String> = serde_json::from_value(answer["tokenResponses"].clone())
        .map_err(|_| MsgError::Http("the claim answered no tokenResponses".into()))?;
    let tokens =
        client::finalize(pending, &responses).map_err(|e| MsgError::Http(e.to_string()))?;
    let mut held = load(keys)?;
    held.extend(tokens);
    save(keys, &held)?;
    println!(
        "{}",
        json!({"claimed": count, "held": held.len(), "remainingToday": answer["remainingToday"]})
    );
    Ok(())
}

/// One held pass, taken out of the file (a pass is spent or refused once
/// sent, so it is never kept for another try).
pub(super) fn take(keys: &Path) -> Result<Option<String>, MsgError> {
    let mut held = load(keys)?;
    let pass = held.pop();
    if pass.is_some() {
        save(keys, &held)?;
    }
    Ok(pass)
}

/// Keeps `pass` again (the send carrying it never reached the issuer).
pub(super) fn put_back(keys: &Path, pass: String) -> Result<(), MsgError> {
    let mut held = load(keys)?;
    held.push(pass);
    save(keys, &held)
}

/// Whether a refusal of a send with a pass is the pass's (another may
/// pass).
pub(super) fn refused_pass(e: &MsgError) -> bool {
    matches!(e, MsgError::Refused { code, .. } if code.starts_with("PASS_"))
}

/// Whether the answer to a send carrying a pass leaves the pass spent or
/// worthless: stored (the host spent it with the row) or refused for the
/// pass itself. Any other answer — the door's rate limit, a replayed row,
/// a failed store or network — spent nothing: the pass is kept. (Had the
/// host spent it and the answer been lost, its next use is refused as
/// `PASS_SPENT` and dropped then.)
pub(super) fn used_up(sent: &Result<Value, MsgError>) -> bool {
    sent.as_ref().map_or_else(refused_pass, |_| true)
}

/// The body a send spends `pass` with.
pub(super) fn with_pass(body: &Value, pass: &str) -> Value {
    let mut body = body.clone();
    body["pass"] = Value::String(pass.to_string());
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(status: u16, code: &str) -> Result<Value, MsgError> {
        Err(MsgError::Refused {
            status,
            code: code.into(),
            message: String::new(),
        })
    }

    #[test]
    fn a_pass_is_dropped_only_when_the_host_spent_or_refused_it() {
        assert!(used_up(&Ok(json!({"releaseAt": 1}))));
        assert!(used_up(&refused(409, "PASS_SPENT")));
        assert!(used_up(&refused(400, "PASS_INVALID")));
        assert!(
            !used_up(&refused(429, "RATE_LIMITED")),
            "the door never read it"
        );
        assert!(
            !used_up(&refused(409, "MESSAGE_REPLAYED")),
            "rolled back with the row"
        );
        assert!(!used_up(&refused(503, "STORE_UNAVAILABLE")));
        assert!(!used_up(&Err(MsgError::Http("unreachable".into()))));
    }
}
