//! The topics the concierge answers with live figures: when each applies
//! (the question's words) and its answer, computed from [`Facts`] and
//! citing where the figures came from.

use super::{
    answer::{has, known, Answer},
    facts::Facts,
};
use axum::http::Method;

/// A topic: when it applies and how it is answered.
pub(super) struct Topic {
    /// Whether the question's words ask about it.
    pub(super) matches: fn(&[String]) -> bool,
    /// Its answer.
    pub(super) answer: fn(&[String], &Facts) -> Answer,
}

pub(super) const TOPICS: &[Topic] = &[
    Topic {
        matches: |w| {
            has(w, &["limit", "limits", "limited", "throttle", "throttled"])
                && !has(w, &["body", "size", "bytes", "cap", "caps"])
                || has(w, &["minute"])
        },
        answer: limits,
    },
    Topic {
        matches: |w| {
            has(
                w,
                &[
                    "fee", "fees", "bps", "cost", "costs", "charge", "charges", "markup", "tier",
                    "tiers", "pay",
                ],
            )
        },
        answer: fees,
    },
    Topic {
        matches: |w| {
            has(
                w,
                &[
                    "lock",
                    "locked",
                    "attestation",
                    "minout",
                    "guarantee",
                    "guaranteed",
                ],
            )
        },
        answer: price_lock,
    },
    Topic {
        matches: |w| has(w, &["slippage"]),
        answer: slippage,
    },
    Topic {
        matches: |w| {
            has(
                w,
                &[
                    "sign",
                    "signing",
                    "signature",
                    "signatures",
                    "permit2",
                    "eip-712",
                    "eip712",
                ],
            )
        },
        answer: signing,
    },
    Topic {
        matches: |w| has(w, &["gasless", "chain", "chains", "network", "networks"]),
        answer: chains,
    },
    Topic {
        matches: |w| {
            has(
                w,
                &[
                    "lane", "lanes", "rail", "rails", "bridge", "bridges", "mesh",
                ],
            )
        },
        answer: lanes,
    },
    Topic {
        matches: |w| has(w, &["mcp", "tool", "tools", "agent", "agents"]),
        answer: mcp,
    },
    Topic {
        matches: |w| has(w, &["sandbox", "test", "testing", "rehearse", "try"]),
        answer: sandbox,
    },
    Topic {
        matches: |w| has(w, &["body", "size", "bytes", "large"]),
        answer: body_limit,
    },
    Topic {
        matches: |w| has(w, &["terms"]),
        answer: terms,
    },
    Topic {
        matches: |w| {
            has(
                w,
                &[
                    "up",
                    "down",
                    "health",
                    "healthy",
                    "operational",
                    "outage",
                    "working",
                ],
            )
        },
        answer: health,
    },
];

/// Endpoint words → the request a limit is looked up for.
const ENDPOINTS: &[(&str, &str, &str)] = &[
    ("execute", "POST", "/api/route/execute"),
    ("quote", "POST", "/api/route/quote"),
    ("quotes", "POST", "/api/route/quote"),
    ("compare", "POST", "/api/route/compare"),
    ("solve", "POST", "/api/intent/solve"),
    ("preflight", "POST", "/api/route/preflight"),
    ("plan", "POST", "/api/route/plan"),
    ("agent", "POST", "/api/agent/do"),
    ("recent", "GET", "/api/routes/recent"),
    ("session", "POST", "/api/session/execute"),
    ("keys", "POST", "/api/keys/create"),
    ("key", "POST", "/api/keys/create"),
    ("hooks", "POST", "/api/hooks"),
    ("webhook", "POST", "/api/hooks"),
    ("subscribe", "POST", "/api/events/subscribe"),
    ("status", "GET", "/api/status"),
    ("gasless", "GET", "/api/gasless/info"),
];

/// The endpoints a general question about limits is answered for.
const MAIN: &[&str] = &["execute", "quote", "compare", "solve", "status"];

fn limits(ws: &[String], f: &Facts) -> Answer {
    if !f.config.limits.enabled {
        return known(
            "limits",
            "Rate limits are off on this host (limits.enabled = false): no endpoint refuses for volume.".into(),
            &["config limits.enabled"],
        );
    }
    let asked: Vec<&(&str, &str, &str)> =
        ENDPOINTS.iter().filter(|(w, ..)| has(ws, &[w])).collect();
    let shown: Vec<&(&str, &str, &str)> = match asked.is_empty() {
        true => ENDPOINTS
            .iter()
            .filter(|(w, ..)| MAIN.contains(w))
            .collect(),
        false => asked,
    };
    let mut lines = Vec::new();
    let mut cites = vec!["GET /api/errors (RATE_LIMITED)".to_string()];
    for (_, method, path) in shown {
        let m = if *method == "GET" {
            Method::GET
        } else {
            Method::POST
        };
        match f.limiter.bucket(&m, path, Some(path)) {
            Some(b) => {
                let (n, bucket) = (b.limit, &b.name);
                let per = match b.window {
                    crate::limits::Window::Minute => "minute",
                    crate::limits::Window::Hour => "hour",
                    crate::limits::Window::Day => "day",
                };
                lines.push(format!(
                    "{method} {path}: {n} requests per {per} (bucket `{bucket}`)"
                ));
                let key = bucket.split(' ').next().unwrap_or(bucket).to_string();
                cites.push(format!("config limits.per_{per}.{key}"));
            }
            None => lines.push(format!("{method} {path}: not limited")),
        }
    }
    cites.dedup();
    let text = format!(
        "{}. Limits count per IP per endpoint (an issued x-relay-key also has a bucket of its own, and raises no limit of its IP); over the limit the answer is 429 RATE_LIMITED with retryAfterMs, and every limited response carries x-ratelimit-limit, x-ratelimit-remaining and x-ratelimit-reset.",
        lines.join("; ")
    );
    Answer {
        citations: cites,
        ..known("limits", text, &[])
    }
}

fn fees(ws: &[String], f: &Facts) -> Answer {
    let (m, s) = (f.fees.member, f.fees.standard);
    let member = format!(
        "members (holders of a recognised collection) pay a route fee of {} bps and a gas markup of {} bps",
        m.route_fee_bps, m.gas_markup_bps
    );
    let standard = format!(
        "the standard tier pays a route fee of {} bps and a gas markup of {} bps",
        s.route_fee_bps, s.gas_markup_bps
    );
    let lead = match has(ws, &["member", "members", "membership", "vip"]) {
        true => format!("On this host {member}; {standard}"),
        false => format!("On this host {standard}; {member}"),
    };
    known(
        "fees",
        format!("{lead}. The route fee is withheld from the token in flight; the gas markup is over the relayer's gas cost, also paid in the token. A quote's compared[] shows every fee netted; GET /api/membership/status?address=0x… tells an address's tier."),
        &[
            "GET /api/membership/status (benefits)",
            "POST /api/route/quote (fees)",
            "config quote.route_fee_bps, quote.member_route_fee_bps, quote.gas_markup_bps, quote.member_gas_markup_bps",
        ],
    )
}

fn price_lock(_: &[String], f: &Facts) -> Answer {
    known(
        "price-lock",
        format!(
            "Lock a price by sending a quote's signed `attestation` back with POST /api/route/execute (or a `minOut`, the least the recipient must receive). An attestation is valid for {} ms on this host (quote.validity_ms, never past the winning rail's own expiry); when no route still delivers the locked minimum the execute answers 409 PRICE_MOVED (quote again), and an expired, foreign or altered attestation is 400 ATTESTATION_INVALID.",
            f.config.quote.validity_ms
        ),
        &["POST /api/route/quote (attestation)", "POST /api/route/execute (attestation, minOut)", "config quote.validity_ms", "GET /api/errors (PRICE_MOVED, ATTESTATION_INVALID)"],
    )
}

fn slippage(_: &[String], f: &Facts) -> Answer {
    known(
        "slippage",
        format!(
            "When a request gives no `slippage` (a fraction, e.g. 0.005), this host uses {} bps.",
            f.config.quote.default_slippage_bps
        ),
        &[
            "POST /api/route/quote (slippage)",
            "config quote.default_slippage_bps",
        ],
    )
}

fn signing(_: &[String], f: &Facts) -> Answer {
    let g = &f.gasless;
    let forms: Vec<String> = g
        .signature_forms
        .iter()
        .map(|s| format!("{} ({})", s.mode, s.signs))
        .collect();
    known(
        "signing",
        format!(
            "Recommended: {}. Execution authority is a signature, never a key: with mode permit2 you sign a Permit2 PermitTransferFrom (EIP-712, Permit2 at {}) for spender = the relayer ({}), and send it in `permit2` of POST /api/route/execute. Signature forms this host accepts: {}. POST /api/route/intent prepares a router-form intent and returns exactly what to sign.",
            g.recommended,
            g.permit2,
            g.relayer.as_deref().unwrap_or("see relayer in /api/route/chains"),
            forms.join("; ")
        ),
        &["GET /api/gasless/info (signatureForms, recommended, permit2, relayer)", "POST /api/route/intent", "docs/api-quotes.md § Signing: one signature binds the whole route"],
    )
}

fn chains(_: &[String], f: &Facts) -> Answer {
    let list: Vec<String> = f
        .gasless
        .gasless_chains
        .iter()
        .map(|(id, c)| format!("{} ({id})", c.name))
        .collect();
    let non_evm = f
        .mesh
        .as_ref()
        .map(|m| m.routable_non_evm.join(", "))
        .filter(|s| !s.is_empty())
        .map(|s| format!(" Routable non-EVM nodes: {s}."))
        .unwrap_or_default();
    known(
        "chains",
        format!(
            "Gasless chains on this host ({}): {}. On each the user signs and the relayer pays the gas.{non_evm}",
            list.len(),
            list.join(", ")
        ),
        &["GET /api/gasless/info (gaslessChains)", "GET /api/route/chains"],
    )
}

fn lanes(_: &[String], f: &Facts) -> Answer {
    let Some(m) = &f.mesh else {
        return known("lanes", "The mesh could not be read right now (the store did not answer); GET /api/route/chains shows it when it does.".into(), &["GET /api/route/chains"]);
    };
    let rails: Vec<String> = m
        .rails
        .values()
        .map(|r| {
            format!(
                "{} ({}{})",
                r.rail,
                r.scope,
                if r.execute_ready { "" } else { ", quote only" }
            )
        })
        .collect();
    known(
        "lanes",
        format!(
            "The mesh now: {} nodes, {} directed routes, chains {:?}; rails: {}.",
            m.nodes,
            m.directed_routes,
            m.chains,
            rails.join(", ")
        ),
        &["GET /api/route/chains"],
    )
}

fn mcp(_: &[String], f: &Facts) -> Answer {
    known(
        "mcp",
        format!(
            "Agents: the hosted MCP tool endpoint is {} (streamable HTTP, public, read-only: status, chains, gasless_info, quote, compare, solve, preflight, plan, route_status, recent_routes, errors, ask, terms). Tools that sign or move funds (execute, session_execute, agent_do) answer 421 PRIVATE_LANE_REQUIRED there; run `relay mcp --url <host>` locally (MCP over stdio) for them.",
            f.mcp_path
        ),
        &["GET /api/status (mcpUrl)", "GET /api/errors (PRIVATE_LANE_REQUIRED)", "docs/api-agents.md § Agents: MCP tools and the concierge"],
    )
}

fn sandbox(_: &[String], _: &Facts) -> Answer {
    known(
        "sandbox",
        "Send header `x-relay-sandbox: 1` with POST /api/route/execute (or /api/agent/do): no signature needed, nothing is spent; the route gets an sbx_ id whose stages advance on a timer (GET /api/route/status). `dryRun: true` instead shows what would be sent without broadcasting.".into(),
        &["POST /api/route/execute (x-relay-sandbox, dryRun)"],
    )
}

fn body_limit(_: &[String], f: &Facts) -> Answer {
    known(
        "body-limit",
        format!(
            "The largest request body this host reads is {} bytes (http.body_limit_bytes); a larger one is 413 BODY_TOO_LARGE. The path and query may be at most {} bytes (414 URI_TOO_LONG).",
            f.config.http.body_limit_bytes, f.config.http.uri_limit_bytes
        ),
        &["config http.body_limit_bytes, http.uri_limit_bytes", "GET /api/errors (BODY_TOO_LARGE)"],
    )
}

fn terms(_: &[String], f: &Facts) -> Answer {
    known(
        "terms",
        format!("The terms of service are version {} (GET /api/terms gives the text, its version and SHA-256).", f.terms_version),
        &["GET /api/terms"],
    )
}

fn health(_: &[String], f: &Facts) -> Answer {
    let Some(s) = &f.status else {
        return known(
            "health",
            "The health reading is unavailable right now (the store did not answer).".into(),
            &["GET /api/status"],
        );
    };
    let rails_up = s.rails.iter().filter(|r| r.up).count();
    known(
        "health",
        format!(
            "The service is {} right now: {} of {} nodes up, {} of {} rails up, {} directed routes.",
            s.status,
            s.nodes.up,
            s.nodes.total,
            rails_up,
            s.rails.len(),
            s.routes
        ),
        &["GET /api/status", "GET /api/uptime"],
    )
}
