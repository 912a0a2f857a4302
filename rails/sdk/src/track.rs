//! Reading an upstream's status endpoint: the steps every aggregator rail's
//! `track` shares before its own status vocabulary is mapped.

use relay_plugin_api::TrackRequest;
use relay_plugin_api::{Host, HttpRequest, RailError, TrackState, TrackStatus};
use serde::de::DeserializeOwned;

use crate::{upstream::error_report, Upstream};

/// A [`TrackStatus`] with no follow-up actions.
pub fn track_status(
    state: TrackState,
    stage: Option<&str>,
    dest_tx: Option<String>,
    message: impl Into<String>,
) -> TrackStatus {
    TrackStatus {
        state,
        stage: stage.map(str::to_string),
        dest_tx: dest_tx.filter(|t| !t.is_empty()),
        message: Some(message.into()),
        follow_up: vec![],
    }
}

/// The rail's track reference written by [`crate::plan::track_ref`];
/// missing or unreadable, the default (the source transaction alone).
pub fn read_track_ref<T: DeserializeOwned + Default>(req: &TrackRequest) -> T {
    req.reference
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or_default()
}

/// `track` of an aggregator rail: asks `upstream` about the source
/// transaction with `request(src_tx)` and reads its answer with `map`.
///
/// Nothing to read yet is pending: no source transaction (nothing is sent)
/// or a 404 (the upstream has not indexed it). Any other error status is the
/// upstream's typed error; a 200 body that is not `T` is
/// `UPSTREAM_MALFORMED`.
pub fn track_via<T: DeserializeOwned>(
    upstream: &Upstream,
    host: &dyn Host,
    src_tx: Option<&str>,
    request: impl FnOnce(&str) -> HttpRequest,
    map: impl FnOnce(T) -> Result<TrackStatus, RailError>,
) -> Result<TrackStatus, RailError> {
    let Some(src_tx) = src_tx else {
        return Ok(track_status(
            TrackState::Pending,
            None,
            None,
            "source transaction not broadcast yet",
        ));
    };
    let resp = upstream.send(host, request(src_tx))?;
    match resp.status {
        200 => map(upstream.parse("status", &resp.body)?),
        404 => Ok(track_status(
            TrackState::Pending,
            None,
            None,
            format!(
                "{} has not indexed the source transaction yet",
                upstream.name
            ),
        )),
        _ => Err(upstream.status_error(&error_report(&resp))),
    }
}
