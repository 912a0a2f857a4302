//! Plus passes over HTTP ([`crate::passes`]): the issuer directory (`GET
//! /api/messages/v2/passes/issuer`, also at RFC 9578 §4's
//! `/.well-known/private-token-issuer-directory`) and the claim (`POST
//! /api/messages/v2/passes/claim`, JSON: the API reads JSON bodies only,
//! so the RFC's binary `application/private-token-request` is carried as
//! base64url strings, up to 100 per claim).

use axum::{
    body::Bytes,
    extract::{ConnectInfo, State},
    http::{header, HeaderMap, HeaderValue},
    response::{IntoResponse, Response},
    Extension, Json,
};
use base64::{engine::general_purpose::URL_SAFE, Engine as _};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::edge::JsonObject;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{service, store_error, Messaging};
use crate::{
    errors,
    passes::{unbase64, ClaimError, IssuerKey, PassError, CLAIM_BODY_MAX, CLAIM_RETRY_MS},
};

/// The issuer directory's path under the API.
pub const ISSUER_PATH: &str = "/api/messages/v2/passes/issuer";
/// The claim's path.
pub const CLAIM_PATH: &str = "/api/messages/v2/passes/claim";

/// One key of the directory (RFC 9578 §4).
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenKey {
    /// 2.
    #[serde(rename = "token-type")]
    pub token_type: u16,
    /// Base64url (with padding) of the key's SubjectPublicKeyInfo.
    #[serde(rename = "token-key")]
    pub token_key: String,
    /// When it starts signing, seconds since 1970.
    #[serde(rename = "not-before")]
    pub not_before: u64,
}

/// The issuer directory: RFC 9578 §4's fields, then this host's.
#[derive(Debug, Serialize, ToSchema)]
pub struct IssuerDirectory {
    /// Where token requests go.
    #[serde(rename = "issuer-request-uri")]
    pub issuer_request_uri: &'static str,
    /// The current key first, then the one before it (still redeeming).
    #[serde(rename = "token-keys")]
    pub token_keys: Vec<TokenKey>,
    /// The TokenChallenge every pass answers, base64url (no redemption
    /// context, no origin info: a pass may be claimed ahead of its use).
    pub challenge: String,
    /// The issuer name in it.
    #[serde(rename = "issuerName")]
    pub issuer_name: String,
    /// The keys as the witness log records them (entry kind `issuer`).
    pub keys: Vec<IssuerKey>,
}

/// `POST /api/messages/v2/passes/claim`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimRequest {
    /// Base64url TokenRequests (RFC 9578 §6.1) for the directory's first
    /// key: 1 to the day's passes, at most 100.
    pub token_requests: Vec<String>,
}

/// A claim's answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimResponse {
    /// Base64url TokenResponses (the blind signatures), in request order.
    pub token_responses: Vec<String>,
    /// Passes this IP may still claim today (UTC).
    pub remaining_today: u32,
    /// The key that signed.
    pub key: IssuerKey,
}

/// The API error of a pass that is not accepted.
pub(super) fn pass_refused(e: PassError) -> ApiError {
    let message = e.to_string();
    let code = match e {
        PassError::Disabled => errors::PassesDisabled,
        PassError::Malformed(_)
        | PassError::WrongChallenge
        | PassError::UnknownKey
        | PassError::BadSignature => errors::PassInvalid,
        PassError::Expired { .. } => errors::PassExpired,
        PassError::KeyConflict(_) | PassError::Log(_) => errors::PassIssuerUnavailable,
        PassError::Store(e) => return store_error(e),
    };
    ApiError::new(code, message).field("pass")
}

fn claim_refused(e: ClaimError) -> ApiError {
    let message = e.to_string();
    match e {
        ClaimError::Disabled => ApiError::new(errors::PassesDisabled, message),
        ClaimError::Count(_) | ClaimError::Malformed(_) => {
            ApiError::new(errors::PassClaimInvalid, message).field("tokenRequests")
        }
        ClaimError::StaleKey(_) => {
            ApiError::new(errors::PassKeyStale, message).field("tokenRequests")
        }
        ClaimError::Over { .. } => ApiError::new(ErrorCode::RateLimited, message)
            .retry_after_ms(CLAIM_RETRY_MS)
            .suggest(
                "wait retryAfterMs (the UTC day turns sooner); passes already claimed stay good",
            ),
        ClaimError::Key(e) => pass_refused(e),
        ClaimError::Store(e) => store_error(e),
    }
}

#[utoipa::path(get, path = "/api/messages/v2/passes/issuer", tag = "messages",
    summary = "The Plus pass issuer directory (RFC 9578 §4): the keys (the current one first; each is in the witness log) and the challenge a pass answers",
    responses((status = 200, description = "The directory", body = IssuerDirectory), (status = "default", description = "A typed error (PASSES_DISABLED)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn issuer(State(m): State<Messaging>) -> Result<Json<IssuerDirectory>, ApiError> {
    let svc = service(&m)?;
    let passes = svc.passes();
    if !passes.config().enabled {
        return Err(pass_refused(PassError::Disabled));
    }
    let keys = passes
        .published(svc.witness(), svc.now_ms())
        .await
        .map_err(pass_refused)?;
    Ok(Json(IssuerDirectory {
        issuer_request_uri: CLAIM_PATH,
        token_keys: keys
            .iter()
            .map(|k| TokenKey {
                token_type: k.token_type,
                token_key: URL_SAFE.encode(unbase64(&k.token_key).unwrap_or_default()),
                not_before: k.not_before / 1000,
            })
            .collect(),
        challenge: passes.challenge(),
        issuer_name: passes.config().issuer_name.clone(),
        keys,
    }))
}

#[utoipa::path(get, path = "/.well-known/private-token-issuer-directory", tag = "messages",
    summary = "The Plus pass issuer directory at RFC 9578 §4's well-known path (application/private-token-issuer-directory)",
    responses((status = 200, description = "The directory", body = IssuerDirectory, content_type = "application/private-token-issuer-directory"), (status = "default", description = "A typed error (PASSES_DISABLED)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn well_known(State(m): State<Messaging>) -> Result<Response, ApiError> {
    let Json(dir) = issuer(State(m)).await?;
    let mut resp = Json(dir).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/private-token-issuer-directory"),
    );
    Ok(resp)
}

#[utoipa::path(post, path = "/api/messages/v2/passes/claim", tag = "messages",
    summary = "Claim Plus passes: blind signatures for up to 100 token requests; 5 claims and 20 passes per IP per UTC day; a body of at most 40 KB",
    request_body = ClaimRequest,
    responses((status = 200, description = "The blind signatures", body = ClaimResponse), (status = "default", description = "A typed error (PASS_CLAIM_INVALID, 409 PASS_KEY_STALE, 413 BODY_TOO_LARGE, 429 RATE_LIMITED with retryAfterMs 86400000)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn claim(
    State(m): State<Messaging>,
    headers: HeaderMap,
    peer: Option<Extension<ConnectInfo<std::net::SocketAddr>>>,
    body: Bytes,
) -> Result<Json<ClaimResponse>, ApiError> {
    if body.len() > CLAIM_BODY_MAX {
        return Err(ApiError::new(
            ErrorCode::BodyTooLarge,
            format!(
                "body: {} bytes; a claim is at most {CLAIM_BODY_MAX}",
                body.len()
            ),
        ));
    }
    let req: ClaimRequest = JsonObject::parse(&body)?.decode()?;
    let svc = service(&m)?;
    let caller = svc.passes().caller(&super::client_ip(svc, &headers, peer));
    let claimed = svc
        .passes()
        .claim(svc.witness(), &caller, &req.token_requests, svc.now_ms())
        .await
        .map_err(claim_refused)?;
    Ok(Json(ClaimResponse {
        token_responses: claimed.responses,
        remaining_today: claimed.remaining_today,
        key: claimed.key,
    }))
}

/// The `WWW-Authenticate: PrivateToken …` challenge (RFC 9577 §2.1) a send
/// over the free ceiling carries, when the issuer can name its key.
pub(super) async fn www_authenticate(svc: &crate::MessagingService) -> Option<HeaderValue> {
    let passes = svc.passes();
    if !passes.config().enabled {
        return None;
    }
    let keys = passes.published(svc.witness(), svc.now_ms()).await.ok()?;
    let key = unbase64(&keys.first()?.token_key)?;
    let value = format!(
        "PrivateToken challenge=\"{}\", token-key=\"{}\"",
        passes.challenge(),
        URL_SAFE.encode(key)
    );
    HeaderValue::from_str(&value).ok()
}
