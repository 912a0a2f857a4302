//! Concierge and terms (spec §4.9), thin over [`answer`]:
//!
//! - `POST /api/ask {question}` → `{answer, citations, known, topic,
//!   method}`. The answer is computed, not generated: a code the question
//!   names (errors catalogue, route statuses), a topic answered with live
//!   figures ([`facts::Facts`]: fees, rate limits, chains, mesh, health,
//!   configuration), or the best passage of a search index over the
//!   built-in documentation (the README and the book's pages, [`index`]);
//!   otherwise `known: false` and a plain "I don't know". Each answer
//!   cites its endpoints, configuration
//!   keys or documents. A missing, empty or over-long (> 500 characters)
//!   question, or another field, is 400 `INVALID_QUESTION` naming
//!   `question`. Rate-limited as bucket `ask`.
//! - `GET /api/concierge`: a self-contained page (no external assets) that
//!   asks `/api/ask`.
//! - `GET /api/terms` → `{version, sha256, text}` (also header
//!   `x-relay-terms-version`): the terms of service. Text that other
//!   signed texts reference (the netting terms of §4.7) quotes this
//!   version and hash.

mod answer;
mod book;
mod facts;
mod index;
mod topics;

use super::{
    changelog::SERVICE_RELEASE, edge, error, limits::RateLimiter, ApiError, AppState, ErrorCode,
    MCP_PATH,
};
use axum::{
    extract::State,
    http::{HeaderName, HeaderValue},
    response::{Html, IntoResponse, Response},
    Extension, Json,
};
use relay_engine::{fees::FeeSchedule, gasless, mesh};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

pub use answer::Answer;

/// The terms' version; bump it with every change of [`TERMS_TEXT`].
pub const TERMS_VERSION: &str = "1.0";

/// The terms of service, as served by `GET /api/terms`.
pub const TERMS_TEXT: &str = include_str!("concierge/terms.md");

/// The longest question answered, characters.
pub const MAX_QUESTION_CHARS: usize = 500;

const PAGE: &str = include_str!("concierge/page.html");

/// The concierge (`POST /api/ask`): each question reads the mesh and health.
pub(crate) const FEATURE: relay_feature::Feature<crate::AppState> = relay_feature::Feature {
    name: "concierge",
    home: "host/api/src/concierge",
    spec: "§4.9",
    section: None,
    routes: |_| routes(),
    limits: &[relay_feature::Limit::post("ask", "/api/ask", 30)],
    errors: &[crate::ErrorCode::InvalidQuestion],
    start: None,
};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(ask))
        .routes(routes!(page))
        .routes(routes!(terms))
}

/// The index, built once per process (its sources are compiled in).
fn index() -> &'static index::Index {
    static INDEX: OnceLock<index::Index> = OnceLock::new();
    INDEX.get_or_init(|| index::Index::new(book::PAGES, &error::catalogue(&crate::error_codes())))
}

/// The live facts, from the functions that serve the cited endpoints.
async fn facts(s: &AppState) -> facts::Facts {
    let read = super::with_mesh(s, |i| (mesh::route_chains(i), mesh::status(i))).await;
    let (mesh, status) = match read {
        Ok((m, st)) => (Some(m), Some(st)),
        Err(_) => (None, None),
    };
    facts::Facts {
        config: s.config.clone(),
        fees: FeeSchedule::from_config(&s.config.quote),
        limiter: RateLimiter::new(&s.config.limits, s.clock.clone()),
        gasless: gasless::info(&s.config, None, SERVICE_RELEASE),
        mesh,
        status,
        catalogue: error::catalogue(&crate::error_codes()),
        terms_version: TERMS_VERSION,
        mcp_path: MCP_PATH,
    }
}

fn bad_question(why: &str) -> ApiError {
    ApiError::new(ErrorCode::InvalidQuestion, format!("question: {why}"))
        .field("question")
        .suggest("POST /api/ask {\"question\": \"what fee does a member pay?\"}")
}

/// The question of a body `{question}`.
fn question(body: Option<Extension<edge::ParsedBody>>) -> Result<String, ApiError> {
    let Some(Extension(edge::ParsedBody(Value::Object(fields)))) = body else {
        return Err(bad_question("send a JSON object {\"question\": \"…\"}"));
    };
    edge::only_fields(&fields, &["question"])
        .map_err(|_| bad_question("the body has only the field question"))?;
    let q = match fields.get("question") {
        Some(Value::String(q)) => q.trim(),
        Some(_) => return Err(bad_question("must be a string")),
        None => return Err(bad_question("is required")),
    };
    if q.is_empty() {
        return Err(bad_question("is empty"));
    }
    if q.chars().count() > MAX_QUESTION_CHARS {
        return Err(bad_question(&format!(
            "is longer than {MAX_QUESTION_CHARS} characters"
        )));
    }
    Ok(q.to_string())
}

#[utoipa::path(
    post,
    path = "/api/ask",
    tag = "concierge",
    summary = "Ask the concierge about this service: an answer from its live state and documentation, with citations (retrieval and live figures; no language model)",
    request_body(content = Object, description = "`{question}`: a non-empty string of at most 500 characters", example = json!({"question": "What fee does a member pay?"})),
    responses(
        (status = 200, description = "The answer; known:false when it does not know", body = Answer),
        (status = "default", description = "A typed error (400 INVALID_QUESTION, 429 RATE_LIMITED)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
pub(crate) async fn ask(
    State(s): State<AppState>,
    body: Option<Extension<edge::ParsedBody>>,
) -> Result<Json<Answer>, ApiError> {
    let q = question(body)?;
    let facts = facts(&s).await;
    Ok(Json(answer::answer(&q, &facts, index())))
}

#[utoipa::path(get, path = "/api/concierge", tag = "concierge", summary = "An interactive page that asks /api/ask (self-contained: no external assets)", responses((status = 200, description = "OK", content_type = "text/html", body = String)))]
async fn page() -> Html<&'static str> {
    Html(PAGE)
}

/// `GET /api/terms`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Terms {
    /// The version (also header `x-relay-terms-version`).
    pub version: &'static str,
    /// Hex SHA-256 of `text`: what a signed text referencing the terms quotes.
    pub sha256: String,
    /// The terms, Markdown.
    pub text: &'static str,
}

#[utoipa::path(get, path = "/api/terms", tag = "concierge", summary = "The terms of service: version, SHA-256 and text", responses((status = 200, description = "OK", body = Terms)))]
pub(crate) async fn terms() -> Response {
    let body = Terms {
        version: TERMS_VERSION,
        sha256: hex::encode(Sha256::digest(TERMS_TEXT.as_bytes())),
        text: TERMS_TEXT,
    };
    let mut resp = Json(body).into_response();
    resp.headers_mut().insert(
        HeaderName::from_static("x-relay-terms-version"),
        HeaderValue::from_static(TERMS_VERSION),
    );
    resp
}
