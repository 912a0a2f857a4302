//! `POST /api/agent/do` (spec §4.2): one call for an agent that wants value
//! moved. It takes either a sentence, `{intent: "send 5 USDC from base to
//! arbitrum to 0x…", fromAddress?}` ([`relay_engine::intent`] gives the
//! grammar), or the structured form `{fromChain, toChain, token (or
//! fromToken), amountHuman (whole tokens) or amount (smallest units),
//! toAddress?, fromAddress?, toToken?, slippage?}` — chain names and
//! common aliases (`arb`, `op`, `eth` …) work in both.
//!
//! It quotes the route best-of-N and answers:
//!
//! - `status: "sign"` when the sender is known (`fromAddress`, or `from
//!   0x…` in the sentence) and the source is an ERC-20 on an EVM chain:
//!   `signRequest {chainId, spender (the relayer), permit2Contract,
//!   tokenAddress, amount, owner, domain, primaryType, fill, submitTo:
//!   "/api/route/execute", submitBody}` — sign the Permit2 transfer, fill
//!   the fields `fill` lists into `submitBody`, POST it to `submitTo`;
//! - `status: "quoted"` otherwise (`signRequest: null`; send `fromAddress`
//!   to get one);
//! - with header `x-relay-sandbox: 1`, `status: "done"`: the route was run
//!   through the execute service in the sandbox (nothing signed or moved)
//!   and `receipt` is its `sbx_` RouteReceipt (`x-idempotency-key` is
//!   passed on). An execute refusal is answered as execute answers it.
//!
//! Every answer carries `rail`, `receives {units, human, token, chain}`,
//! `durationSec` and `understood` (the structured request the sentence
//! became). An unparseable sentence is a 400 naming `intent`; any field
//! problem found while reading a sentence names `intent` too.
//!
//! Rate limit (spec §8.1 does not list it): its own bucket, 20 a minute,
//! like the solver.

use super::{edge, plan::winner, quote::Quoting, solve::spender, ApiError, AppState, ErrorCode};
use axum::{
    extract::State,
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use relay_engine::{
    intent::{self, AgentAnswer, Receives},
    route::RouteAsk,
    submit, tokens,
};
use serde_json::{json, Map, Value};
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(agent)).with_state(q)
}

fn bad(field: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::InvalidField, format!("{field}: {why}")).field(field)
}

/// The structured request a sentence describes.
fn from_sentence(q: &Quoting, body: &Map<String, Value>) -> Result<Map<String, Value>, ApiError> {
    let Some(Value::String(text)) = body.get("intent") else {
        return Err(bad(
            "intent",
            "must be a sentence such as \"send 5 USDC from base to arbitrum to 0x…\"",
        ));
    };
    let i = intent::parse_sentence(text, &q.app.config).map_err(|why| {
        bad("intent", why)
            .suggest("say it as: send <amount> <TOKEN> from <chain> to <chain> [to 0x…]")
    })?;
    let mut m = Map::new();
    m.insert("fromChain".into(), json!(i.from_chain.to_string()));
    m.insert("toChain".into(), json!(i.to_chain.to_string()));
    m.insert("token".into(), json!(i.token));
    m.insert("amountHuman".into(), json!(i.amount_human));
    let from = i
        .from_address
        .map(Value::String)
        .or_else(|| body.get("fromAddress").cloned());
    m.extend(from.map(|a| ("fromAddress".to_string(), a)));
    m.extend(i.to_address.map(|a| ("toAddress".to_string(), json!(a))));
    Ok(m)
}

/// The RouteRequest fields of a structured request: aliases resolved,
/// `amountHuman` converted to smallest units of the source token.
fn route_fields(q: &Quoting, mut m: Map<String, Value>) -> Result<Value, ApiError> {
    let config = &q.app.config;
    for f in ["fromChain", "toChain"] {
        if let Some(Value::String(name)) = m.get(f) {
            if let Some(c) = intent::chain_named(config, name) {
                m.insert(f.into(), json!(c.to_string()));
            }
        }
    }
    if let Some(t) = m.remove("token") {
        m.entry("fromToken").or_insert(t);
    }
    let Some(human) = m.remove("amountHuman") else {
        return Ok(Value::Object(m));
    };
    let human = match human {
        Value::String(s) => s,
        Value::Number(n) => n.to_string(),
        _ => {
            return Err(bad(
                "amountHuman",
                "must be a decimal string of whole tokens, e.g. \"5.25\"",
            ))
        }
    };
    let chain = m
        .get("fromChain")
        .and_then(Value::as_str)
        .and_then(|c| tokens::parse_chain(c).ok());
    let token = m.get("fromToken").and_then(Value::as_str);
    let decimals = match chain.map(|c| tokens::resolve(config, c, token)) {
        Some(Ok(t)) => t.decimals,
        _ => {
            return Err(bad(
                "fromToken",
                "unknown on the source chain, so amountHuman cannot be converted",
            ))
        }
    };
    let units = intent::human_to_units(&human, decimals).map_err(|why| bad("amountHuman", why))?;
    m.insert("amount".into(), json!(units));
    Ok(Value::Object(m))
}

/// Renames a problem found while reading a sentence to the `intent` field.
fn as_intent(mut e: ApiError) -> ApiError {
    e.message = format!("intent: {}", e.message);
    e.field = Some("intent".into());
    e
}

#[utoipa::path(post, path = "/api/agent/do", tag = "routing", summary = "Plain-language or structured intent to a sign request (x-relay-sandbox: 1 runs it in the sandbox)", request_body = relay_wire::AgentRequest, responses((status = 200, description = "OK", body = AgentAnswer), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(lane, rail, status))]
async fn agent(
    State(q): State<Quoting>,
    headers: HeaderMap,
    body: edge::JsonObject,
) -> Result<Response, ApiError> {
    let body = body.0;
    let sentence = body.contains_key("intent");
    if !sentence && !body.contains_key("fromChain") {
        return Err(ApiError::new(
            ErrorCode::MissingField,
            "intent: required (a sentence), or the structured form with fromChain",
        )
        .field("intent")
        .suggest("send {\"intent\": \"send 5 USDC from base to arbitrum to 0x…\"}"));
    }
    let fields = if sentence {
        from_sentence(&q, &body)?
    } else {
        body.clone()
    };
    let understood = Value::Object(fields.clone());
    let ask = route_fields(&q, fields)
        .and_then(|f| q.parse(&f))
        .map_err(|e| if sentence { as_intent(e) } else { e })?;
    let span = tracing::Span::current();
    span.record("lane", format!("{}->{}", ask.from_chain, ask.to_chain));
    let (o, w) = winner(&q, &ask, None).await?;
    let r = &o.results[w];
    let Ok(p) = &r.outcome else {
        return Err(ApiError::new(
            ErrorCode::RailsUnavailable,
            "the winning answer vanished",
        ));
    };
    span.record("rail", r.rail.as_str());
    let mut answer = AgentAnswer {
        status: String::new(),
        rail: r.rail.clone(),
        receives: Receives {
            units: p.net.estimated,
            human: intent::units_to_human(p.net.estimated, ask.to_token.decimals),
            token: ask.to_token.symbol.clone(),
            chain: ask.to_chain,
        },
        duration_sec: p.quote.duration_sec,
        understood,
        note: String::new(),
        sign_request: None,
        id: None,
        receipt: None,
    };
    if headers.get("x-relay-sandbox").and_then(|v| v.to_str().ok()) == Some("1") {
        return sandbox(&q, &headers, &ask, &r.rail, answer).await;
    }
    let sign = submit::sign_request(&ask, Some(&r.rail), &spender(&q), &q.app.config.permit2);
    let status = if sign.is_some() { "sign" } else { "quoted" };
    span.record("status", status);
    answer.status = status.into();
    answer.note = match status {
        "sign" => {
            "sign the Permit2 transfer, fill signRequest.fill into submitBody, POST it to submitTo"
        }
        _ => "quoted only: send fromAddress (an EVM sender of an ERC-20) to get a signRequest",
    }
    .into();
    answer.sign_request = sign;
    Ok(Json(answer).into_response())
}

/// Runs the route through execute itself, in the sandbox.
async fn sandbox(
    q: &Quoting,
    headers: &HeaderMap,
    ask: &RouteAsk,
    rail: &str,
    mut answer: AgentAnswer,
) -> Result<Response, ApiError> {
    let mut run = HeaderMap::new();
    run.insert("x-relay-sandbox", HeaderValue::from_static("1"));
    if let Some(key) = headers.get("x-idempotency-key") {
        run.insert("x-idempotency-key", key.clone());
    }
    let body = serde_json::to_vec(&submit::route_body(ask, Some(rail))).unwrap_or_default();
    let resp = super::execute::answer(q, &run, &body.into()).await;
    if resp.status() != StatusCode::OK {
        return Ok(resp);
    }
    let bytes = axum::body::to_bytes(resp.into_body(), edge::BODY_LIMIT)
        .await
        .map_err(|e| ApiError::new(ErrorCode::RailsUnavailable, e.to_string()))?;
    let receipt: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    tracing::Span::current().record("status", "done");
    answer.status = "done".into();
    answer.id = Some(receipt["id"].clone());
    answer.receipt = Some(receipt);
    answer.sign_request = None;
    answer.note =
        "sandbox: run through execute with nothing signed or moved; track it at receipt.track"
            .into();
    Ok(Json(answer).into_response())
}
